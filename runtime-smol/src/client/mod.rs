//! The stdio client: [`Client::spawn`] starts a server process, runs the core's client
//! machine in a loop its waiting calls poll ([`Driven`]) and hands back a cheap handle.

mod connector;
mod driver;
mod process;

use std::fmt;
use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use smol::channel::{self, Receiver, Sender};
use smol::io::{AsyncRead, AsyncWrite};
use zest_core::client::{Client as CoreClient, Negotiated, ServerNotification};
use zest_core::error::{CloseReason, UsageError};
use zest_core::handler::{replace_roots, AsyncClientHandlers, Roots};
use zest_core::runtime::http_client::HttpEndpoint;
use zest_core::runtime::{CallKeys, CommandSink, ConnectError, Driven, NOTIFICATION_QUEUE};
use zest_core::schema::Root;

use crate::command::{ClientOptions, StdioCommand};
use crate::timer::Alarm;
use driver::{Command, Driver, Ending, Host};

/// What [`Client::notifications`] returns: a receiver of the session's one notification
/// queue (`recv().await`, or as a `Stream`).
pub type Notifications = Receiver<ServerNotification>;

/// A connected MCP client over a child's stdio. Cheap to clone; every clone speaks for the same
/// session. When the last clone is dropped the child is shut down as by [`Client::close`].
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    commands: CloseOnDrop,
    /// The session's loop, which a call's future polls while it waits.
    driven: Driven,
    keys: CallKeys,
    negotiated: Negotiated,
    notifications: Receiver<ServerNotification>,
    shared: Arc<Shared>,
    /// The root list `set_roots` replaces, shared with the handlers.
    roots: Option<Roots>,
    pid: u32,
}

/// What the driver leaves behind for the handles.
struct Shared {
    /// Set once, when the machine reports `Closed`.
    closed: Arc<OnceLock<CloseReason>>,
    /// The child's exit, once reaped.
    exit: Mutex<Option<Result<ExitStatus, (io::ErrorKind, String)>>>,
    /// Closes (never carries a message) when the driver has reaped the child and ended.
    done: Receiver<()>,
}

/// The command sender, which asks the driver to close the session when dropped: dropping the
/// last handle, or the `spawn` future before it finishes, shuts the child down.
struct CloseOnDrop(Sender<Command>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        let _ = self.0.try_send(Command::Close);
    }
}

impl Client {
    /// Starts `command`, performs the MCP handshake and returns once it is done.
    ///
    /// On failure the child has already been shut down and reaped. Dropping this future
    /// before it completes shuts the child down too.
    pub async fn spawn(
        command: StdioCommand,
        options: ClientOptions,
    ) -> Result<Self, ConnectError> {
        let program = command.program_name();
        let spawned =
            process::spawn(command).map_err(|e| ConnectError::spawn(program.clone(), &e))?;
        let pid = spawned.supervisor.pid();
        let (mut config, handlers) = options.into_parts();
        config.capabilities = handlers.capabilities(config.capabilities);
        let core = CoreClient::new(config, Instant::now());
        let (driver, ending, starting) = Starting::new(core, handlers);
        starting.ready(driver::run(driver, spawned, ending), pid, true).await
    }

    /// Runs a session over any pair of byte streams (newline-delimited JSON-RPC, as over
    /// stdio): `reader` carries the server's frames, `writer` takes ours. Performs the
    /// handshake and returns once the session is ready. There is no child: [`pid`](Self::pid)
    /// is 0, and [`close`](Self::close) writes what is queued, closes `writer` (the server
    /// sees the end of its input) and returns a success status.
    ///
    /// For a server in the same process, see [`in_memory`](crate::in_memory). The session's
    /// loop needs no executor of the caller's (see [`crate`]), so this works under any.
    pub async fn over<R, W>(
        reader: R,
        writer: W,
        options: ClientOptions,
    ) -> Result<Self, ConnectError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (mut config, handlers) = options.into_parts();
        config.capabilities = handlers.capabilities(config.capabilities);
        let core = CoreClient::new(config, Instant::now());
        let (driver, ending, starting) = Starting::new(core, handlers);
        let grace = StdioCommand::DEFAULT_GRACE;
        starting.ready(driver::run_streams(driver, reader, writer, grace, ending), 0, false).await
    }

    /// Connects to the MCP server at `url` (`http://` or `https://`) with every
    /// [`HttpEndpoint`] default, performs the handshake and returns once the session is
    /// ready. See [`connect_to`](Self::connect_to).
    pub async fn connect(url: &str, options: ClientOptions) -> Result<Self, ConnectError> {
        Self::connect_to(HttpEndpoint::new(url), options).await
    }

    /// Connects to an MCP server over HTTP: Streamable HTTP, legacy HTTP+SSE, or detection
    /// between them ([`HttpEndpoint::mode`]), with the endpoint's headers, bearer token,
    /// timeouts and trust roots. Requests travel on keep-alive connections (an SSE stream
    /// holds one of its own while it lasts), with `TCP_NODELAY`, and TLS by rustls for
    /// `https`. [`close`](Self::close) ends the session with a DELETE.
    ///
    /// A server that cannot be reached fails with [`ConnectError::Transport`] (refused, timed
    /// out, a TLS failure such as an untrusted certificate); an HTTP error status answering
    /// `initialize` with [`ConnectError::HttpStatus`]. The session's loop needs no executor
    /// of the caller's (see [`crate`]), so this works under any.
    pub async fn connect_to(
        endpoint: HttpEndpoint,
        options: ClientOptions,
    ) -> Result<Self, ConnectError> {
        let http = zest_net::with_oauth_entropy(endpoint.http_config()?);
        let connector = connector::connector(&endpoint)?;
        let (mut config, handlers) = options.into_parts();
        config.capabilities = handlers.capabilities(config.capabilities);
        let core = CoreClient::new_http(config, http, Instant::now())
            .map_err(|e| ConnectError::InvalidConfig(e.to_string()))?;
        let (driver, ending, starting) = Starting::new(core, handlers);
        starting.ready(driver::run_http(driver, connector, ending), 0, false).await
    }

    /// What the handshake settled: the server's info, capabilities, revision.
    pub fn negotiated(&self) -> &Negotiated {
        &self.inner.negotiated
    }

    /// The server's notifications (log messages, list changes, resource updates), in arrival
    /// order. Every clone of the client and every receiver returned here share one queue:
    /// each notification goes to exactly one reader. The queue holds the oldest
    /// [`NOTIFICATION_QUEUE`] unread ones from the handshake on; while it is full, newer ones
    /// are dropped (the session never waits for a reader). `recv` fails once the session is
    /// over and the queue is empty. The same on every runtime.
    pub fn notifications(&self) -> Notifications {
        self.inner.notifications.clone()
    }

    /// Replaces the roots this client answers `roots/list` with (the list given with
    /// `ClientOptions::roots`) and, when the session declared `roots.listChanged` (it does
    /// with such a list), tells the server with `notifications/roots/list_changed`, so it
    /// asks again. Each root MUST be a `file://` URI with no `..` segment; otherwise, or
    /// without a root list, nothing changes and the error says why.
    pub fn set_roots(&self, roots: Vec<Root>) -> Result<(), UsageError> {
        replace_roots(self.inner.roots.as_ref(), roots)?;
        self.inner.commands.0.try_send(Command::RootsChanged).map_err(|_| UsageError::Closed)?;
        self.inner.driven.nudge();
        Ok(())
    }

    /// The child's process id (also its process group id); 0 for a session over HTTP or over
    /// streams ([`over`](Self::over)).
    pub fn pid(&self) -> u32 {
        self.inner.pid
    }

    /// Why the session ended, once it has (every call fails from then on).
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.inner.shared.closed.get().cloned()
    }

    /// Ends the session and the child: pending calls fail with `Closed(Local)`, stdin is
    /// closed, then after the grace period SIGTERM goes to the child's process group, then
    /// SIGKILL; the child is reaped. Returns its exit status. Safe to call from any clone, any
    /// number of times, and after the child died on its own.
    ///
    /// Over HTTP the session ends with a DELETE (when the server gave a session id; up to
    /// 2 s), and the status returned is a success. Over streams ([`over`](Self::over)) what
    /// is queued is written and the writer closed (up to 2 s), and the status returned is a
    /// success.
    pub async fn close(&self) -> io::Result<ExitStatus> {
        let _ = self.inner.commands.0.try_send(Command::Close);
        self.inner.driven.nudge();
        wait_done(&self.inner.shared).await
    }
}

/// The handle's side of a session whose driver is being started.
struct Starting {
    commands: CloseOnDrop,
    ready: Receiver<Negotiated>,
    notifications: Receiver<ServerNotification>,
    shared: Arc<Shared>,
    roots: Option<Roots>,
}

impl Starting {
    /// A driver for `core` and the channels that link it to the handles.
    fn new(core: CoreClient, handlers: AsyncClientHandlers) -> (Driver, Ending, Self) {
        let (command_tx, command_rx) = channel::unbounded();
        let (ready_tx, ready_rx) = channel::bounded(1);
        let (notification_tx, notification_rx) = channel::bounded(NOTIFICATION_QUEUE);
        let (done_tx, done_rx) = channel::bounded(1);
        let shared =
            Arc::new(Shared { closed: Arc::default(), exit: Mutex::new(None), done: done_rx });
        let roots = handlers.root_list();
        let host = Host {
            commands: Box::pin(command_rx),
            answers: command_tx.clone(),
            handlers,
            notifications: notification_tx,
            ready: Some(ready_tx),
            alarm: Alarm::default(),
        };
        let driver = Driver::new(core, shared.closed.clone(), host);
        let ending = Ending { shared: shared.clone(), done: done_tx };
        let starting = Self {
            commands: CloseOnDrop(command_tx),
            ready: ready_rx,
            notifications: notification_rx,
            shared,
            roots,
        };
        (driver, ending, starting)
    }

    /// Runs the session's loop (see [`crate`]) and waits for the handshake's outcome; on
    /// failure with `reaps`, first for the driver to reap the child, whose status it carries.
    async fn ready<F>(self, session: F, pid: u32, reaps: bool) -> Result<Client, ConnectError>
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let driven = Driven::new(session);
        smol::spawn(driven.background()).detach();
        let Self { commands, ready, notifications, shared, roots } = self;
        match ready.recv().await {
            Ok(negotiated) => {
                let keys = CallKeys::new();
                let inner =
                    Inner { commands, driven, keys, negotiated, notifications, shared, roots, pid };
                Ok(Client { inner: Arc::new(inner) })
            }
            Err(_) => {
                let status = if reaps { wait_done(&shared).await.ok() } else { None };
                // The driver records why before it lets go of `ready`.
                let reason = shared.closed.get().cloned().unwrap_or(CloseReason::Local);
                Err(ConnectError::from_close(reason, status))
            }
        }
    }
}

/// Waits until the driver has reaped the child; returns how it exited.
async fn wait_done(shared: &Shared) -> io::Result<ExitStatus> {
    let _ = shared.done.recv().await;
    // Invariant: the driver stores the exit before it drops the `done` sender.
    let exit = shared.exit.lock().expect("no panics while holding the lock").clone();
    match exit {
        Some(Ok(status)) => Ok(status),
        Some(Err((kind, message))) => Err(io::Error::new(kind, message)),
        None => Err(io::Error::other("the driver ended without reaping the child")),
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("pid", &self.inner.pid)
            .field("server", &self.inner.negotiated.server_info)
            .field("closed", &self.inner.shared.closed.get())
            .finish()
    }
}

/// Every call of [`ClientApi`](crate::ClientApi) goes to the session's loop as a command
/// (zest-core's [`CommandSink`]); dropping a call's future cancels its request.
impl CommandSink for Client {
    fn send_command(&self, command: Command) -> bool {
        self.inner.commands.0.try_send(command).is_ok()
    }

    fn call_keys(&self) -> &CallKeys {
        &self.inner.keys
    }

    fn close_reason(&self) -> Option<CloseReason> {
        self.inner.shared.closed.get().cloned()
    }

    fn driven(&self) -> Option<&Driven> {
        Some(&self.inner.driven)
    }
}
