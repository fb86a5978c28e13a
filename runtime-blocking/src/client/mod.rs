//! The stdio client: spawns a server and offers blocking calls from any thread. The calling
//! threads drive the session themselves (see [`driver`]).

mod connector;
mod driver;
mod pending;
pub(crate) mod process;
mod progress;

use std::fmt;
use std::io::{self, Read, Write};
use std::process::ExitStatus;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use zest_core::api::{CallError, ClientApi, PageWalk, Paged, ProgressFn};
use zest_core::client::{self as machine, Negotiated, ServerNotification};
use zest_core::error::{CloseReason, RequestError, UsageError};
use zest_core::handler::{replace_roots, Roots, SyncClientHandlers};
use zest_core::jsonrpc::RawJson;
use zest_core::runtime::http_client::HttpEndpoint;
use zest_core::runtime::ConnectError;
use zest_core::schema::methods::Method;
use zest_core::schema::Root;
use zest_core::RequestOptions;

use crate::link::{self, Slot};
use driver::{Pipe, ReadySlot, Session};
pub use pending::{CancelHandle, PendingCall};
use zest_core::stdio::StdioCommand;

pub use zest_core::runtime::NOTIFICATION_QUEUE;

/// The client's configuration and its handlers for server requests (sampling, elicitation,
/// roots); each such request runs on a thread of its own.
pub type ClientOptions = zest_core::stdio::ClientOptions<SyncClientHandlers>;

/// A connected MCP client over a child's stdio. Cheap to clone, `Send + Sync`; calls block
/// the calling thread and may be made from many threads at once.
///
/// Dropping the last handle (or [`close`](Self::close)) ends the session and the child:
/// close stdin, wait `shutdown_grace`, SIGTERM its process group, wait, SIGKILL, reap.
/// Handles held by [`PendingCall`]s do not count: dropping the last `Client` fails them.
///
/// There is no driver thread: each caller drives the session itself under a lock, and the
/// child's stdout is read on a thread that completes calls directly. Progress callbacks run
/// on one thread of the session's, in order and never under that lock, so a callback may
/// call this client (later reports wait until it returns).
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    session: Arc<Session>,
    negotiated: Negotiated,
    notifications: Notifications,
    /// The root list `set_roots` replaces, shared with the handlers.
    roots: Option<Roots>,
    pid: u32,
    /// The supervisor: it owns the child and reaps it.
    supervisor: Mutex<Option<JoinHandle<()>>>,
    supervisor_thread: ThreadId,
    exit: Arc<ExitSlot>,
}

/// The child's exit status, set once by the driver after reaping it.
#[derive(Default)]
struct ExitSlot {
    status: Mutex<Option<Result<ExitStatus, String>>>,
    set: Condvar,
}

impl Client {
    /// Spawns the server and performs the handshake; returns once the session is ready.
    pub fn spawn(mut command: StdioCommand, options: ClientOptions) -> Result<Self, ConnectError> {
        let program = command.program_name();
        let spawned =
            process::spawn(&command).map_err(|e| ConnectError::spawn(program.clone(), &e))?;
        let process::Spawned { child, stdin, stdout, stderr } = spawned;
        let pid = child.id();
        let grace = command.grace();
        let machine = |config| Ok(machine::Client::new(config, Instant::now()));
        let opening = Opening::new(options, machine, Pipe::Stdin(stdin), None, grace)?;
        let session = opening.session.clone();
        // `initialize` is written before anything is read.
        session.start();
        let on_stderr = command.take_stderr_sink().unwrap_or_else(|| {
            let prefix = program.clone();
            Box::new(move |line| eprintln!("[{prefix}] {line}"))
        });
        let reader = session.clone();
        let readers = process::read_stream(stdout, move |event| reader.feed_stdout(event))
            .and_then(|()| process::read_stderr(stderr, on_stderr));
        // The child is handed to the supervisor through a cell, so that if the thread cannot
        // start, it is still here to be reaped.
        let cell = Arc::new(Mutex::new(Some(child)));
        let supervisor = readers.and_then(|()| {
            let cell = cell.clone();
            opening.supervise(move |session| {
                let Some(mut child) = link::lock(&cell).take() else {
                    return Ok(Default::default());
                };
                session.supervise(&mut child).map_err(|e| e.to_string())
            })
        });
        match supervisor {
            Ok(supervisor) => opening.ready(pid, supervisor),
            Err(e) => {
                if let Some(mut child) = link::lock(&cell).take() {
                    let first = Instant::now() + grace;
                    let _ = process::shutdown(&mut child, session.take_stdin(), first, grace);
                }
                session.ask_close();
                Err(ConnectError::spawn(program, &e))
            }
        }
    }

    /// Runs a session over any pair of byte streams (newline-delimited JSON-RPC, as over
    /// stdio): `reader` carries the server's frames, `writer` takes ours. Performs the
    /// handshake and returns once the session is ready. `reader` is read on a thread of its
    /// own (which may outlive the session if `reader` never ends); `writer` is written by the
    /// threads that produced the frames. There is no child: [`pid`](Self::pid) is 0, and
    /// [`close`](Self::close) writes what is queued, drops `writer` (closing it, so the server
    /// sees the end of its input; within 2 s) and returns a success status.
    ///
    /// For a server in the same process, see [`in_memory`](crate::in_memory).
    pub fn over<R, W>(reader: R, writer: W, options: ClientOptions) -> Result<Self, ConnectError>
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        let machine = |config| Ok(machine::Client::new(config, Instant::now()));
        let pipe = Pipe::Stream(Box::new(writer));
        let opening = Opening::new(options, machine, pipe, None, StdioCommand::DEFAULT_GRACE)?;
        let supervisor = opening.supervise(|session| Ok(session.supervise_streams()));
        let supervisor = supervisor.map_err(|e| ConnectError::spawn("zest-client thread", &e))?;
        let session = opening.session.clone();
        // `initialize` is written before anything is read.
        session.start();
        if let Err(e) = process::read_stream(reader, move |event| session.feed_stdout(event)) {
            opening.session.ask_close();
            let _ = supervisor.join();
            return Err(ConnectError::spawn("zest-reader thread", &e));
        }
        opening.ready(0, supervisor)
    }

    /// Connects to the MCP server at `url` (`http://` or `https://`) with every
    /// [`HttpEndpoint`] default, performs the handshake and returns once the session is
    /// ready. See [`connect_to`](Self::connect_to).
    pub fn connect(url: &str, options: ClientOptions) -> Result<Self, ConnectError> {
        Self::connect_to(HttpEndpoint::new(url), options)
    }

    /// Connects to an MCP server over HTTP: Streamable HTTP, legacy HTTP+SSE, or detection
    /// between them ([`HttpEndpoint::mode`]), with the endpoint's headers, bearer token,
    /// timeouts and trust roots. Requests travel on keep-alive connections (an SSE stream
    /// holds one of its own, read by a thread of its own, while it lasts), with `TCP_NODELAY`,
    /// and TLS by rustls for `https`. [`close`](Self::close) ends the session with a DELETE.
    ///
    /// A server that cannot be reached fails with [`ConnectError::Transport`] (refused, timed
    /// out, a TLS failure such as an untrusted certificate); an HTTP error status answering
    /// `initialize` with [`ConnectError::HttpStatus`].
    pub fn connect_to(
        endpoint: HttpEndpoint,
        options: ClientOptions,
    ) -> Result<Self, ConnectError> {
        let http = zest_net::with_oauth_entropy(endpoint.http_config()?);
        let connector = connector::connector(&endpoint)?;
        let machine = |config| {
            machine::Client::new_http(config, http, Instant::now())
                .map_err(|e| ConnectError::InvalidConfig(e.to_string()))
        };
        let opening = Opening::new(options, machine, Pipe::Http, Some(connector), Duration::ZERO)?;
        let supervisor = opening.supervise(|session| Ok(session.supervise_http()));
        let supervisor = supervisor.map_err(|e| ConnectError::spawn("zest-client thread", &e))?;
        // `initialize` goes out once the supervisor is there to fire its deadline.
        opening.session.start();
        opening.ready(0, supervisor)
    }

    /// What the handshake settled.
    pub fn negotiated(&self) -> &Negotiated {
        &self.inner.negotiated
    }

    /// Replaces the roots this client answers `roots/list` with (the list given with
    /// `ClientOptions::roots`) and, when the session declared `roots.listChanged` (it does
    /// with such a list), tells the server with `notifications/roots/list_changed`, so it
    /// asks again. Each root MUST be a `file://` URI with no `..` segment; otherwise, or
    /// without a root list, nothing changes and the error says why.
    pub fn set_roots(&self, roots: Vec<Root>) -> Result<(), UsageError> {
        replace_roots(self.inner.roots.as_ref(), roots)?;
        self.inner.session.roots_changed()
    }

    /// The server's notifications (log messages, list changes, resource updates), in arrival
    /// order. Every clone of the client shares one queue: each notification goes to exactly
    /// one reader. The queue holds the oldest [`NOTIFICATION_QUEUE`] unread ones from
    /// the handshake on; while it is full, newer ones are dropped (the session never waits
    /// for a reader). Receiving yields `None` once the session is over and the queue is
    /// empty. The same on every runtime.
    pub fn notifications(&self) -> &Notifications {
        &self.inner.notifications
    }

    /// The child's process id (also its process group id); 0 over HTTP or over streams
    /// ([`over`](Self::over)).
    pub fn pid(&self) -> u32 {
        self.inner.pid
    }

    /// Why the session ended, once it has (every call fails from then on).
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.inner.session.close_reason()
    }

    /// Sends a request without waiting; the returned call can be cancelled from any thread.
    pub fn start<M: Method>(
        &self,
        params: M::Params,
        opts: RequestOptions,
    ) -> PendingCall<M::Result>
    where
        M::Result: 'static,
    {
        self.start_with_progress::<M>(params, opts, None)
    }

    /// [`start`](Self::start) with progress reports delivered to `on_progress` (set
    /// `opts.progress` to ask the server for them). Callbacks run on one thread of the
    /// session's, in the order the reports came, never under its lock: a callback may call
    /// this client (the reports behind it wait until it returns).
    pub fn start_with_progress<M: Method>(
        &self,
        params: M::Params,
        opts: RequestOptions,
        on_progress: Option<ProgressFn>,
    ) -> PendingCall<M::Result>
    where
        M::Result: 'static,
    {
        let decode: fn(RawJson) -> Result<M::Result, String> = |raw| raw.parse();
        let slot = Arc::new(Slot::new());
        let params = RawJson::from_serialize(&params);
        let session = &self.inner.session;
        let (on_progress, progress) = session.wrap_progress(on_progress);
        match session.request(M::NAME, params, opts, on_progress, slot.clone(), false) {
            Ok(id) => PendingCall::new(id, slot, progress, session.clone(), decode),
            Err(e) => PendingCall::failed(e),
        }
    }

    /// Ends the session and the child (close stdin, wait, SIGTERM, wait, SIGKILL) and returns
    /// its exit status. Calls in flight fail with `Closed(Local)`. Later calls fail with
    /// `UsageError::Closed`; calling `close` again returns the same status. Over HTTP the
    /// session ends with a DELETE, over streams ([`over`](Self::over)) the writer is closed;
    /// either returns a success status.
    pub fn close(&self) -> io::Result<ExitStatus> {
        self.inner.session.ask_close();
        self.inner.exit.wait().map_err(io::Error::other)
    }

    fn call_raw(
        &self,
        method: &'static str,
        params: RawJson,
        opts: RequestOptions,
        on_progress: Option<ProgressFn>,
    ) -> Result<RawJson, CallError> {
        let slot = Arc::new(Slot::new());
        let session = &self.inner.session;
        let (on_progress, progress) = session.wrap_progress(on_progress);
        session.request(method, params, opts, on_progress, slot.clone(), true)?;
        let outcome = slot.wait();
        // Every report that came before the answer is seen before the caller returns.
        if let Some(progress) = progress {
            progress.run_queued();
        }
        outcome
    }
}

impl ClientApi for Client {
    type Call<'a, T: 'a>
        = Result<T, CallError>
    where
        Self: 'a;

    fn request_with<M: Method>(
        &self,
        params: M::Params,
        opts: RequestOptions,
        on_progress: Option<ProgressFn>,
    ) -> Result<M::Result, CallError>
    where
        M::Result: 'static,
    {
        let raw = self.call_raw(M::NAME, RawJson::from_serialize(&params), opts, on_progress)?;
        raw.parse().map_err(|e| CallError::Request(RequestError::InvalidResult(e)))
    }

    fn list_all<M: Paged>(&self) -> Result<Vec<M::Item>, CallError>
    where
        M::Item: 'static,
        M::Result: 'static,
    {
        let mut walk = PageWalk::<M>::new();
        while let Some(params) = walk.next_params() {
            walk.page(self.call_raw(M::NAME, params, RequestOptions::default(), None)?)?;
        }
        walk.items()
    }

    fn fail<T: 'static>(&self, error: CallError) -> Result<T, CallError> {
        Err(error)
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("pid", &self.inner.pid)
            .field("server", &self.inner.negotiated.server_info)
            .finish_non_exhaustive()
    }
}

/// A session being opened: what every constructor sets up alike.
struct Opening {
    session: Arc<Session>,
    ready: ReadySlot,
    notifications: Receiver<ServerNotification>,
    roots: Option<Roots>,
    exit: Arc<ExitSlot>,
}

impl Opening {
    /// The session of the machine `machine` makes of the options' configuration, with the
    /// options' handlers, writing to `pipe`.
    fn new(
        options: ClientOptions,
        machine: impl FnOnce(machine::ClientConfig) -> Result<machine::Client, ConnectError>,
        pipe: Pipe,
        http: Option<Arc<dyn connector::Exchanger>>,
        grace: Duration,
    ) -> Result<Self, ConnectError> {
        let (notes_tx, notifications) = mpsc::sync_channel(NOTIFICATION_QUEUE);
        let (mut config, handlers) = options.into_parts();
        config.capabilities = handlers.capabilities(config.capabilities);
        let roots = handlers.root_list();
        let ready = Arc::new(Slot::new());
        let machine = machine(config)?;
        let session = Session::new(machine, pipe, http, handlers, notes_tx, ready.clone(), grace);
        let exit = Arc::new(ExitSlot::default());
        Ok(Self { session, ready, notifications, roots, exit })
    }

    /// Starts the supervisor thread: `run` supervises the session to its end and returns
    /// the exit status `close` reports.
    fn supervise(
        &self,
        run: impl FnOnce(&Session) -> Result<ExitStatus, String> + Send + 'static,
    ) -> io::Result<JoinHandle<()>> {
        let (session, exit) = (self.session.clone(), self.exit.clone());
        let builder = thread::Builder::new().name("zest-client".into());
        builder.spawn(move || exit.set(link::no_join(|| run(&session))))
    }

    /// Waits for the handshake: the client, or why it failed (the session then closed and
    /// its supervisor done).
    fn ready(self, pid: u32, supervisor: JoinHandle<()>) -> Result<Client, ConnectError> {
        match self.ready.wait() {
            Ok(negotiated) => Ok(Client {
                inner: Arc::new(Inner {
                    session: self.session,
                    negotiated,
                    notifications: Notifications(Arc::new(Mutex::new(self.notifications))),
                    roots: self.roots,
                    pid,
                    supervisor_thread: supervisor.thread().id(),
                    supervisor: Mutex::new(Some(supervisor)),
                    exit: self.exit,
                }),
            }),
            Err(mut e) => {
                self.session.ask_close();
                let _ = supervisor.join();
                // Only a child (pid 0: none) has an exit status to report.
                if let (ConnectError::Exited { status, .. }, 1..) = (&mut e, pid) {
                    *status = self.exit.get().and_then(Result::ok);
                }
                Err(e)
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.session.ask_close();
        // Dropped by the session's own threads, or while its lock is held (a progress
        // callback held the last handle): the supervisor finishes the shutdown on its own.
        if !link::may_join() || thread::current().id() == self.supervisor_thread {
            return;
        }
        let handle = self.supervisor.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }
}

impl ExitSlot {
    /// The status, if the supervisor has set it.
    fn get(&self) -> Option<Result<ExitStatus, String>> {
        self.status.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn set(&self, status: Result<ExitStatus, String>) {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner) = Some(status);
        self.set.notify_all();
    }

    fn wait(&self) -> Result<ExitStatus, String> {
        let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(status) = status.as_ref() {
                return status.clone();
            }
            status = self.set.wait(status).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The server's notifications, in arrival order. Shared by all clones of a [`Client`].
#[derive(Clone)]
pub struct Notifications(Arc<Mutex<Receiver<ServerNotification>>>);

impl Notifications {
    /// The next notification, waiting at most `timeout`; `None` on timeout or once the
    /// session is over and the queue is empty.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<ServerNotification> {
        let receiver = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        receiver.recv_timeout(timeout).ok()
    }

    /// The next notification if one is queued.
    pub fn try_recv(&self) -> Option<ServerNotification> {
        let receiver = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        receiver.try_recv().ok()
    }
}

impl fmt::Debug for Notifications {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Notifications")
    }
}
