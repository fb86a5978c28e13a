//! The stdio client: spawns a server, drives the session on one thread, and offers blocking
//! calls from any thread.

mod driver;
mod pending;

use std::fmt;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{Child, ChildStdin, ExitStatus};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use zest_core::api::{CallError, ClientApi, Paged, ProgressFn, MAX_PAGES};
use zest_core::client::{self as machine, ClientConfig, Negotiated, ServerNotification};
use zest_core::error::{CloseReason, RequestError, UsageError};
use zest_core::handler::SyncClientHandlers;
use zest_core::jsonrpc::{ErrorObject, RawJson};
use zest_core::schema::methods::Method;
use zest_core::schema::PaginatedParams;
use zest_core::RequestOptions;

use crate::child;
use crate::command::StdioCommand;
use driver::{CallRequest, Driver, DriverInput, Links, Reply};
pub use pending::{CancelHandle, PendingCall};

/// How many unread server notifications are kept; later ones are dropped until some are read.
pub const NOTIFICATION_QUEUE: usize = 1024;

/// The client's configuration and its handlers for server requests.
#[derive(Debug)]
pub struct ClientOptions {
    /// The core client configuration (name, version, timeouts, limits).
    pub config: ClientConfig,
    handlers: SyncClientHandlers,
}

impl ClientOptions {
    /// Options with our name and version and every default.
    pub fn new(name: &str, version: &str) -> Self {
        Self { config: ClientConfig::new(name, version), handlers: SyncClientHandlers::default() }
    }

    /// Sets the handlers for sampling, elicitation and roots; the capabilities they serve are
    /// declared in `initialize`. Each request runs on a thread of its own.
    pub fn handlers(mut self, handlers: SyncClientHandlers) -> Self {
        self.handlers = handlers;
        self
    }
}

/// Why [`Client::spawn`] failed. The child, if it started, has been shut down and reaped.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ConnectError {
    /// The program could not be started (not found, not executable, …).
    Spawn {
        /// The program as given.
        program: String,
        /// What the OS said.
        kind: io::ErrorKind,
        /// The OS error, as text.
        message: String,
    },
    /// The child closed the connection or died before the handshake finished.
    Died(CloseReason),
    /// The server answered `initialize` with an error.
    Rejected(ErrorObject),
    /// No `initialize` result within `init_timeout`.
    TimedOut,
    /// The `initialize` result was unusable (bad shape or unsupported revision).
    Invalid(String),
}

impl ConnectError {
    fn from_close(reason: CloseReason) -> Self {
        match reason {
            CloseReason::InitializeRejected(e) => Self::Rejected(e),
            CloseReason::InitializeTimedOut => Self::TimedOut,
            CloseReason::InitializeInvalid(d) => Self::Invalid(d),
            other => Self::Died(other),
        }
    }

    fn spawn(program: String, e: &io::Error) -> Self {
        Self::Spawn { program, kind: e.kind(), message: e.to_string() }
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Spawn { program, message, .. } => write!(f, "cannot run {program}: {message}"),
            Self::Died(reason) => write!(f, "the server ended before the handshake: {reason}"),
            Self::Rejected(e) => write!(f, "the server rejected initialize: {e}"),
            Self::TimedOut => f.write_str("the server did not answer initialize in time"),
            Self::Invalid(d) => write!(f, "unusable initialize result: {d}"),
        }
    }
}

impl std::error::Error for ConnectError {}

/// A connected MCP client over a child's stdio. Cheap to clone, `Send + Sync`; calls block
/// the calling thread and may be made from many threads at once.
///
/// Dropping the last handle (or [`close`](Self::close)) ends the session and the child:
/// close stdin, wait `shutdown_grace`, SIGTERM its process group, wait, SIGKILL, reap.
/// Handles held by [`PendingCall`]s do not count: dropping the last `Client` fails them.
///
/// Progress callbacks run on the driver thread; they MUST NOT call this client (the call
/// would wait for the thread it blocks).
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    commands: mpsc::Sender<DriverInput>,
    negotiated: Negotiated,
    notifications: Notifications,
    pid: u32,
    driver: Mutex<Option<JoinHandle<()>>>,
    driver_thread: ThreadId,
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
    pub fn spawn(command: StdioCommand, options: ClientOptions) -> Result<Self, ConnectError> {
        let (to_driver, inputs) = mpsc::channel();
        let (pid_tx, pid_rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let (notes_tx, notes_rx) = mpsc::sync_channel(NOTIFICATION_QUEUE);
        let mut config = options.config;
        config.capabilities = options.handlers.capabilities(config.capabilities);
        let handlers = options.handlers;
        let exit = Arc::new(ExitSlot::default());
        let exit_slot = exit.clone();
        let to_self = to_driver.clone();
        let program = command.program();
        // The child is spawned on the driver thread, so every child has a thread to reap it.
        let started = thread::Builder::new().name("zest-client".into()).spawn(move || {
            let Some((mut child, stdin, grace)) = start_child(command, &to_self, &pid_tx) else {
                return;
            };
            let machine = machine::Client::new(config, Instant::now());
            let links = Links { inputs, to_self, notifications: notes_tx, ready: ready_tx };
            let mut driver = Driver::new(machine, stdin, handlers, links, grace);
            // Even if app code run here (a progress callback) panics, the child is shut down
            // and reaped, and dropping the driver releases every caller.
            let _ = catch_unwind(AssertUnwindSafe(|| driver.run()));
            let stdin = driver.take_stdin();
            drop(driver);
            let status = child::shutdown(&mut child, stdin, grace);
            exit_slot.set(status.map_err(|e| e.to_string()));
        });
        let handle = started.map_err(|e| ConnectError::spawn(program, &e))?;
        let pid = match pid_rx.recv() {
            Ok(Ok(pid)) => pid,
            Ok(Err(e)) => {
                let _ = handle.join();
                return Err(e);
            }
            Err(_) => {
                let _ = handle.join();
                let why = CloseReason::TransportFailed("the driver stopped".into());
                return Err(ConnectError::Died(why));
            }
        };
        let driver_thread = handle.thread().id();
        match ready_rx.recv() {
            Ok(Ok(negotiated)) => Ok(Self {
                inner: Arc::new(Inner {
                    commands: to_driver,
                    negotiated,
                    notifications: Notifications(Arc::new(Mutex::new(notes_rx))),
                    pid,
                    driver: Mutex::new(Some(handle)),
                    driver_thread,
                    exit,
                }),
            }),
            Ok(Err(e)) => {
                let _ = handle.join();
                Err(e)
            }
            Err(_) => {
                let _ = handle.join();
                Err(ConnectError::Died(CloseReason::TransportFailed("the driver stopped".into())))
            }
        }
    }

    /// What the handshake settled.
    pub fn negotiated(&self) -> &Negotiated {
        &self.inner.negotiated
    }

    /// The server's notifications (log messages, list changes, resource updates).
    pub fn notifications(&self) -> &Notifications {
        &self.inner.notifications
    }

    /// The child's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.inner.pid
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
    /// `opts.progress` to ask the server for them). The callback runs on the driver thread:
    /// keep it short.
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
        let (reply, replies) = mpsc::channel();
        let call = CallRequest {
            method: M::NAME,
            params: RawJson::from_serialize(&params),
            opts,
            on_progress,
            want_id: true,
            reply,
        };
        if self.inner.commands.send(DriverInput::Request(call)).is_err() {
            return PendingCall::failed(CallError::Usage(UsageError::Closed));
        }
        match replies.recv() {
            Ok(Reply::Started(id)) => {
                PendingCall::new(id, replies, self.inner.commands.clone(), decode)
            }
            Ok(Reply::Done(Err(e))) => PendingCall::failed(e),
            // The driver sends `Started` first or fails the call; anything else means it died.
            Ok(Reply::Done(Ok(_))) | Err(_) => {
                PendingCall::failed(CallError::Usage(UsageError::Closed))
            }
        }
    }

    /// Ends the session and the child (close stdin, wait, SIGTERM, wait, SIGKILL) and returns
    /// its exit status. Calls in flight fail with `Closed(Local)`. Later calls fail with
    /// `UsageError::Closed`; calling `close` again returns the same status.
    pub fn close(&self) -> io::Result<ExitStatus> {
        let _ = self.inner.commands.send(DriverInput::Shutdown);
        self.inner.exit.wait().map_err(io::Error::other)
    }

    fn call_raw(
        &self,
        method: &'static str,
        params: RawJson,
        opts: RequestOptions,
        on_progress: Option<ProgressFn>,
    ) -> Result<RawJson, CallError> {
        let (reply, replies) = mpsc::channel();
        let call = CallRequest { method, params, opts, on_progress, want_id: false, reply };
        if self.inner.commands.send(DriverInput::Request(call)).is_err() {
            return Err(CallError::Usage(UsageError::Closed));
        }
        loop {
            match replies.recv() {
                Ok(Reply::Done(result)) => return result,
                Ok(Reply::Started(_)) => continue,
                Err(_) => return Err(CallError::Usage(UsageError::Closed)),
            }
        }
    }
}

/// Spawns the child and its pipe readers on the driver thread; reports the pid, or why there
/// is none, through `pid_tx`.
fn start_child(
    mut command: StdioCommand,
    to_driver: &mpsc::Sender<DriverInput>,
    pid_tx: &mpsc::Sender<Result<u32, ConnectError>>,
) -> Option<(Child, ChildStdin, Duration)> {
    let program = command.program();
    let spawned = match child::spawn(&command) {
        Ok(spawned) => spawned,
        Err(e) => {
            let _ = pid_tx.send(Err(ConnectError::spawn(program, &e)));
            return None;
        }
    };
    let child::Spawned { mut child, stdin, stdout, stderr } = spawned;
    let grace = command.shutdown_grace;
    let on_stderr = command.on_stderr.take().unwrap_or_else(|| {
        let prefix = program.clone();
        Box::new(move |line| eprintln!("[{prefix}] {line}"))
    });
    let readers = child::read_chunks(stdout, to_driver.clone(), DriverInput::Stdout)
        .and_then(|_| child::read_stderr(stderr, on_stderr));
    if let Err(e) = readers {
        let _ = child::shutdown(&mut child, Some(stdin), grace);
        let _ = pid_tx.send(Err(ConnectError::spawn(program, &e)));
        return None;
    }
    let _ = pid_tx.send(Ok(child.id()));
    Some((child, stdin, grace))
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
        let mut items = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let page = self.request::<M>(PaginatedParams { cursor, ..Default::default() })?;
            let (mut page_items, next) = M::split(page);
            items.append(&mut page_items);
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(items),
            }
        }
        let detail = format!("the server's cursors did not end after {MAX_PAGES} pages");
        Err(CallError::Request(RequestError::InvalidResult(detail)))
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

impl Drop for Inner {
    fn drop(&mut self) {
        let _ = self.commands.send(DriverInput::Shutdown);
        // Dropped on the driver thread itself (a callback held the last handle): it finishes
        // the shutdown on its own after this returns.
        if thread::current().id() == self.driver_thread {
            return;
        }
        let handle = self.driver.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }
}

impl ExitSlot {
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
