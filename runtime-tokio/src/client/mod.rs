//! The stdio client: a server run as a child process, one loop per session (in a task, and
//! polled by waiting calls on a multi-thread runtime), and a cheap-to-clone [`Client`] handle
//! with the typed API of [`ClientApi`](crate::ClientApi).

mod connector;
mod driver;
mod process;

use std::fmt;
use std::future::Future;
use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, OnceLock};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};
use zest_core::client::{Negotiated, ServerNotification};
use zest_core::error::{CloseReason, UsageError};
use zest_core::handler::{replace_roots, AsyncClientHandlers, Roots};
use zest_core::io::TransportFailure;
use zest_core::runtime::http_client::HttpEndpoint;
use zest_core::runtime::{CallKeys, CommandSink, ConnectError, Driven, NOTIFICATION_QUEUE};
use zest_core::schema::Root;

use crate::command::{ClientOptions, StdioCommand};
use driver::{Command, Driver, Host};

/// What [`Client::notifications`] returns: a receiver of the session's one notification
/// queue (`recv().await`, or as a `Stream`).
pub type Notifications = async_channel::Receiver<ServerNotification>;

/// A session with an MCP server running as a child process.
///
/// Cheap to clone; every clone talks to the same session. The session ends on
/// [`close`](Self::close), when the server exits, or when the last clone is dropped; then the
/// child is shut down (close stdin, wait, SIGTERM its process group, wait, SIGKILL) and
/// reaped, in the session's loop or, if the runtime is gone, synchronously.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

struct Shared {
    commands: CloseOnDrop,
    /// The session's loop, which a call's future polls while it waits on a multi-thread
    /// runtime (see [`Client::launch`]).
    driven: Driven,
    /// The runtime is multi-threaded: calls poll the loop.
    callers_drive: bool,
    keys: CallKeys,
    negotiated: Negotiated,
    pid: u32,
    notifications: Notifications,
    exit: watch::Receiver<Option<driver::Exit>>,
    closed: Arc<OnceLock<CloseReason>>,
    /// The root list `set_roots` replaces, shared with the handlers.
    roots: Option<Roots>,
}

impl Client {
    /// Starts `command`, performs the MCP handshake and returns once the session is ready.
    ///
    /// Must be called within a tokio runtime (either flavour) with IO and time enabled.
    pub async fn spawn(
        command: StdioCommand,
        options: ClientOptions,
    ) -> Result<Self, ConnectError> {
        let grace = command.grace();
        let (child, pipes) = process::spawn(command)?;
        let pid = child.id();
        let (mut config, handlers) = options.into_parts();
        config.capabilities = handlers.capabilities(config.capabilities.clone());
        let core = zest_core::client::Client::new(config, std::time::Instant::now());
        Self::launch(core, handlers, pid, move |driver, exit| {
            driver::run(driver, child, pipes, grace, exit)
        })
        .await
    }

    /// Runs a session over any pair of byte streams (newline-delimited JSON-RPC, as over
    /// stdio): `reader` carries the server's frames, `writer` takes ours. Performs the
    /// handshake and returns once the session is ready. There is no child: [`pid`](Self::pid)
    /// is 0, and [`close`](Self::close) writes what is queued, shuts `writer` down (the
    /// server sees the end of its input) and returns a success status.
    ///
    /// For a server in the same process, see [`in_memory`](crate::in_memory). Must be called
    /// within a tokio runtime (either flavour) with time enabled.
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
        config.capabilities = handlers.capabilities(config.capabilities.clone());
        let core = zest_core::client::Client::new(config, std::time::Instant::now());
        Self::launch(core, handlers, 0, move |driver, exit| {
            driver::run_streams(driver, reader, writer, StdioCommand::DEFAULT_GRACE, exit)
        })
        .await
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
    /// `initialize` with [`ConnectError::HttpStatus`]. Must be called within a tokio runtime
    /// with IO and time enabled.
    pub async fn connect_to(
        endpoint: HttpEndpoint,
        options: ClientOptions,
    ) -> Result<Self, ConnectError> {
        let http = zest_net::with_oauth_entropy(endpoint.http_config()?);
        let connector = connector::connector(&endpoint)?;
        let (mut config, handlers) = options.into_parts();
        config.capabilities = handlers.capabilities(config.capabilities.clone());
        let core = zest_core::client::Client::new_http(config, http, std::time::Instant::now())
            .map_err(|e| ConnectError::InvalidConfig(e.to_string()))?;
        Self::launch(core, handlers, 0, move |driver, exit| {
            driver::run_http(driver, connector, exit)
        })
        .await
    }

    /// Starts the session's loop with `run` and waits for the handshake's outcome. A task
    /// polls the loop; on a multi-thread runtime a call's future also polls it while it waits,
    /// so that the call is sent, answered and delivered by the worker that runs the caller
    /// (on a current-thread runtime they share one thread anyway, and the task alone polls).
    async fn launch<F>(
        core: zest_core::client::Client,
        handlers: AsyncClientHandlers,
        pid: u32,
        run: impl FnOnce(Driver, watch::Sender<Option<driver::Exit>>) -> F,
    ) -> Result<Self, ConnectError>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let (commands, command_rx) = mpsc::unbounded_channel();
        let (ready_tx, ready_rx) = oneshot::channel();
        let (notes_tx, notifications) = async_channel::bounded(NOTIFICATION_QUEUE);
        let (exit_tx, exit) = watch::channel(None);
        let closed = Arc::new(OnceLock::new());
        let roots = handlers.root_list();
        let host = Host::new((commands.clone(), command_rx), handlers, notes_tx, ready_tx);
        let session = run(Driver::new(core, closed.clone(), host), exit_tx);
        // A caller may poll the loop from a thread outside this runtime: each poll enters it,
        // so that what the loop spawns, and its timers, stay on this runtime.
        let runtime = tokio::runtime::Handle::current();
        let driven = Driven::new(async move {
            let mut session = std::pin::pin!(session);
            std::future::poll_fn(|cx| {
                let _inside = runtime.enter();
                session.as_mut().poll(cx)
            })
            .await;
        });
        // Dropped with the runtime: the loop then ends (the child is killed and reaped).
        tokio::spawn(driven.background());
        // Dropped with the last handle, or with this future before the handshake ends.
        let commands = CloseOnDrop(commands);
        let negotiated = match ready_rx.await {
            Ok(outcome) => outcome?,
            Err(_) => {
                let why = "the session driver stopped during the handshake".to_owned();
                let failure = TransportFailure::Other(why);
                return Err(ConnectError::Handshake(CloseReason::TransportFailed(failure)));
            }
        };
        let callers_drive = tokio::runtime::Handle::current().runtime_flavor()
            == tokio::runtime::RuntimeFlavor::MultiThread;
        let shared = Shared {
            commands,
            driven,
            callers_drive,
            keys: CallKeys::new(),
            negotiated,
            pid,
            notifications,
            exit,
            closed,
            roots,
        };
        Ok(Self { shared: Arc::new(shared) })
    }

    /// What the handshake settled: revision, server info, capabilities, instructions.
    pub fn negotiated(&self) -> &Negotiated {
        &self.shared.negotiated
    }

    /// The server's notifications (log messages, list changes, resource updates), in arrival
    /// order. Every clone of the client and every receiver returned here share one queue:
    /// each notification goes to exactly one reader. The queue holds the oldest
    /// [`NOTIFICATION_QUEUE`] unread ones from the handshake on; while it is full, newer ones
    /// are dropped (the session never waits for a reader). `recv` fails once the session is
    /// over and the queue is empty. The same on every runtime.
    pub fn notifications(&self) -> Notifications {
        self.shared.notifications.clone()
    }

    /// Replaces the roots this client answers `roots/list` with (the list given with
    /// `ClientOptions::roots`) and, when the session declared `roots.listChanged` (it does
    /// with such a list), tells the server with `notifications/roots/list_changed`, so it
    /// asks again. Each root MUST be a `file://` URI with no `..` segment; otherwise, or
    /// without a root list, nothing changes and the error says why.
    pub fn set_roots(&self, roots: Vec<Root>) -> Result<(), UsageError> {
        replace_roots(self.shared.roots.as_ref(), roots)?;
        self.shared.commands.0.send(Command::RootsChanged).map_err(|_| UsageError::Closed)?;
        self.shared.driven.nudge();
        Ok(())
    }

    /// The child's process id, which is also its process group id; 0 for a session over
    /// HTTP or over streams ([`over`](Self::over)).
    pub fn pid(&self) -> u32 {
        self.shared.pid
    }

    /// Why the session ended, once it has (every call fails from then on).
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared.closed.get().cloned()
    }

    /// Ends the session for every clone: pending calls fail with `Closed(Local)`, then the
    /// child is shut down (close stdin, wait, SIGTERM, wait, SIGKILL) and reaped. Returns its
    /// exit status; calling it again, or after the server exited, returns the same status.
    ///
    /// Over HTTP the session ends with a DELETE (when the server gave a session id; up to
    /// 2 s), and the status returned is a success. Over streams ([`over`](Self::over)) what
    /// is queued is written and the writer shut down (up to 2 s), and the status returned is
    /// a success.
    pub async fn close(&self) -> io::Result<ExitStatus> {
        // If the driver is already gone the session is over and the status is recorded.
        let _ = self.shared.commands.0.send(Command::Close);
        self.shared.driven.nudge();
        let mut exit = self.shared.exit.clone();
        let recorded = exit.wait_for(Option::is_some).await;
        match recorded.as_deref() {
            Ok(Some(Ok(status))) => Ok(*status),
            Ok(Some(Err((kind, message)))) => Err(io::Error::new(*kind, message.clone())),
            Ok(None) | Err(_) => Err(io::Error::other("the session driver stopped")),
        }
    }
}

/// The handles' command sender, which closes the session when dropped: the driver holds a
/// sender of its own (for handler answers), so the queue alone never tells it the handles
/// are gone.
struct CloseOnDrop(mpsc::UnboundedSender<Command>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        // If the driver is already gone the session is over.
        let _ = self.0.send(Command::Close);
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("pid", &self.shared.pid)
            .field("server", &self.shared.negotiated.server_info)
            .field("protocol_version", &self.shared.negotiated.protocol_version)
            .finish()
    }
}

/// Every call of [`ClientApi`](crate::ClientApi) goes to the session's loop as a command (zest-core's
/// [`CommandSink`]); dropping a call's future cancels its request.
impl CommandSink for Client {
    fn send_command(&self, command: Command) -> bool {
        self.shared.commands.0.send(command).is_ok()
    }

    fn call_keys(&self) -> &CallKeys {
        &self.shared.keys
    }

    fn close_reason(&self) -> Option<CloseReason> {
        self.shared.closed.get().cloned()
    }

    fn driven(&self) -> Option<&Driven> {
        self.shared.callers_drive.then_some(&self.shared.driven)
    }
}
