//! The server: [`serve`] drives the core's server machine over any pair of byte streams,
//! [`serve_stdio`] over this process's stdin and stdout. Each call's handler is polled once
//! by the driver; one that does not finish then runs on as its own task, dropped if the call
//! is cancelled.

use std::fmt;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use smol::channel::{self, Receiver, Sender};
use smol::io::{AsyncRead, AsyncWrite};
use smol::{future, Executor, Task};
use zest_core::api::CallError;
use zest_core::error::{CloseReason, UsageError};
use zest_core::handler::{AsyncHandler, BoxFuture};
use zest_core::io::{Input, Receive, StreamEvent, StreamId, TransportFailure};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::runtime::{
    not_reading, CallKey, Link, PeerCall, Report, SessionDispatch, SessionStep, StdioOutput,
    StdioOutputs, FINAL_FLUSH_LIMIT,
};
use zest_core::server::{Broadcast, BroadcastBudget, Server, ServerConfig};
use zest_core::RequestOptions;

use crate::call::{self, Outgoing, ReplyTx, Submit};
use crate::handle::{stdio_handle, ServerHandle};
use crate::stdio;
use crate::wire::{self, Alarm, ReadOutcome};
use crate::writer::{self, Writer};

/// What a server offers: typed async handlers whose parameters are the arguments (a
/// `Deserialize + JsonSchema` type), a [`RequestContext`] and `State<S>` in any order (see
/// [`zest_core::handler::typed`]).
pub type Registry = zest_core::server::Registry<AsyncHandler<RequestContext>>;

/// Serves one MCP session on this process's stdin and stdout until stdin ends; returns why
/// the session ended. Stdout carries only protocol frames; log to stderr.
///
/// When stdin and stdout are pipes (as when an MCP client spawned us), they are driven by
/// async-io's reactor in non-blocking mode for the session's duration and put back in
/// blocking mode afterwards; a terminal, a file or a stdout shared with stderr is read and
/// written by threads of smol's blocking pool instead.
///
/// The lists are fixed and subscriptions not offered, unless the config says otherwise
/// ([`ServerConfig::announce_changes`]); [`StdioServer::stdio`](crate::StdioServer::stdio)
/// serves with a [`ServerHandle`] to change them.
pub async fn serve_stdio(config: ServerConfig, registry: Registry) -> CloseReason {
    serve_stdio_on(config, registry, Commands::new()).await
}

/// A stdio session's command queue: what its handles and handlers send its loop, and the
/// handles' budget for logs and updates ([`BROADCAST_QUEUE`](zest_core::server::BROADCAST_QUEUE)).
pub(crate) struct Commands {
    tx: Sender<Command>,
    rx: Receiver<Command>,
    budget: BroadcastBudget,
}

impl Commands {
    pub(crate) fn new() -> Self {
        let (tx, rx) = channel::unbounded();
        Self { tx, rx, budget: BroadcastBudget::new() }
    }

    /// A handle on the session these commands feed.
    pub(crate) fn handle(&self) -> ServerHandle {
        stdio_handle(self.tx.clone(), self.budget.clone())
    }
}

/// [`serve_stdio`] on a given command queue.
pub(crate) async fn serve_stdio_on(
    config: ServerConfig,
    registry: Registry,
    commands: Commands,
) -> CloseReason {
    let (reader, writer, restore) = stdio::open();
    let reason = serve_on(config, registry, reader, writer, commands).await;
    drop(restore);
    reason
}

/// Serves one MCP session over `reader` and `writer` until `reader` ends or a write fails;
/// returns why the session ended. Frames are flushed as soon as they are written.
///
/// Everything runs inside the returned future, on the caller's executor: the driver (which
/// also writes) polls each call's handler once, answering at once if it is done; a handler
/// that is not goes on as a task of a session-local executor (so handlers run concurrently
/// with each other and with the driver, on the thread polling this future).
pub async fn serve<R, W>(
    config: ServerConfig,
    registry: Registry,
    reader: R,
    writer: W,
) -> CloseReason
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    serve_on(config, registry, reader, writer, Commands::new()).await
}

/// [`serve`] on a given command queue, whose [`ServerHandle`]s may exist already.
pub(crate) async fn serve_on<R, W>(
    config: ServerConfig,
    registry: Registry,
    reader: R,
    writer: W,
    commands: Commands,
) -> CloseReason
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let executor = Executor::new();
    let Commands { tx, rx: queue, budget } = commands;
    let link = StdioLink { commands: tx, budget, closed: Arc::new(OnceLock::new()) };
    let driver = Driver {
        backlog_limit: config.max_backlog_bytes,
        core: Server::new(config, registry, Instant::now()),
        executor: &executor,
        dispatch: SessionDispatch::new(link.closed.clone()),
        link,
        writer: writer::recycling(writer),
    };
    executor.run(driver.run(reader, queue)).await
}

/// What handler contexts and server handles ask of the driver.
pub(crate) enum Command {
    /// A [`ServerHandle`] command.
    Broadcast(Broadcast<AsyncHandler<RequestContext>>),
    /// A handler's request to the client, made while serving the client's request `related`.
    Call { out: Outgoing, related: RequestId },
    /// A handler dropped the future of its request to the client.
    Cancel(CallKey),
    /// A handler reports progress or sends a log record; the machine's verdict goes to `reply`.
    Report { report: Report, reply: Sender<Result<(), UsageError>> },
    /// A handler finished.
    Respond { id: RequestId, result: Result<RawJson, ErrorObject> },
}

struct Driver<'e, W> {
    core: Server<AsyncHandler<RequestContext>>,
    /// Runs the handlers.
    executor: &'e Executor<'static>,
    /// What every handler's context holds; its `closed` is set once the session closes.
    link: StdioLink,
    /// Running handler tasks (dropping one cancels it) and handlers' requests to the client;
    /// records the close reason in `link.closed`.
    dispatch: SessionDispatch<AsyncHandler<RequestContext>, Task<()>, ReplyTx>,
    writer: Writer<W>,
    /// `ServerConfig::max_backlog_bytes`: past it, a client that does not read is cut off.
    backlog_limit: usize,
}

enum Wake {
    Read(ReadOutcome),
    Command(Command),
    Written(std::io::Result<()>),
    Timeout,
}

impl<W: AsyncWrite + Unpin> Driver<'_, W> {
    /// The loop: drain (its frames leave in one write), then wait for bytes, a command, the
    /// deadline or the rest of that write, and feed one. Once the session has closed, the
    /// handlers still running are cancelled and what is queued is written before the writer
    /// is closed.
    async fn run<R: AsyncRead + Unpin>(
        mut self,
        mut reader: R,
        queue: Receiver<Command>,
    ) -> CloseReason {
        let mut buf = vec![0u8; 64 * 1024];
        let mut alarm = Alarm::default();
        loop {
            // The last written frame's buffer goes back to the machine for the next large one.
            if let Some(spare) = self.writer.take_spare() {
                self.core.recycle(spare);
            }
            if let Some(reason) = self.drain() {
                // Requests, progress and logs from handlers still running fail at once.
                wire::close_queue(&queue);
                writer::finish(&mut self.writer, Instant::now() + FINAL_FLUSH_LIMIT).await;
                return reason;
            }
            self.writer.try_progress();
            if self.writer.is_backlogged(self.backlog_limit) {
                // The client does not take what it is sent: stop holding it for the client.
                self.writer.abandon();
                let event = StreamEvent::Failed(not_reading(self.backlog_limit));
                let input =
                    Input::Receive(Instant::now(), Receive { stream: StreamId::STDIO, event });
                self.core.handle_input(input);
                continue;
            }
            alarm.arm(self.core.poll_timeout());
            let writing = self.writer.busy();
            let writer = &mut self.writer;
            let wake = future::race(
                async { Wake::Read(wire::read_some(&mut reader, &mut buf).await) },
                future::race(
                    async {
                        if writing {
                            Wake::Written(writer.progress().await)
                        } else {
                            future::pending().await
                        }
                    },
                    future::race(
                        async {
                            match queue.recv().await {
                                Ok(command) => Wake::Command(command),
                                // Unreachable while we hold a sender; a stalled read ends it anyway.
                                Err(_) => future::pending().await,
                            }
                        },
                        async {
                            alarm.fired().await;
                            Wake::Timeout
                        },
                    ),
                ),
            )
            .await;
            let now = Instant::now();
            match wake {
                Wake::Read(outcome) => self.core.handle_input(outcome.input(now, &buf)),
                Wake::Command(command) => {
                    // Commands already queued go in the same turn, so that their frames
                    // leave in one write.
                    self.apply(now, command);
                    while let Ok(command) = queue.try_recv() {
                        self.apply(now, command);
                    }
                }
                Wake::Written(Err(e)) => {
                    let why = TransportFailure::Reset(format!("write failed: {e}"));
                    let event = StreamEvent::Failed(why);
                    let input = Input::Receive(now, Receive { stream: StreamId::STDIO, event });
                    self.core.handle_input(input);
                }
                Wake::Written(Ok(())) => {}
                Wake::Timeout => self.core.handle_input(Input::Timeout(now)),
            }
        }
    }

    fn apply(&mut self, now: Instant, command: Command) {
        match command {
            Command::Broadcast(command) => {
                self.link.budget.taken(&command);
                command.apply(now, &mut self.core);
            }
            Command::Call { out, related } => {
                let Outgoing { key, method, params, opts, on_progress, reply } = out;
                let core = &mut self.core;
                let send = || core.request(now, Some(&related), method, params, opts);
                self.dispatch.start(Some(key), reply, on_progress, send);
            }
            Command::Cancel(key) => {
                if let Some(id) = self.dispatch.abandon(key) {
                    let _ = self.core.cancel(now, &id, None);
                }
            }
            Command::Report { report, reply } => {
                let _ = reply.try_send(report.apply(now, &mut self.core));
            }
            Command::Respond { id, result } => {
                self.dispatch.finished(&id);
                // Err only when the client cancelled meanwhile: nothing to send.
                let _ = self.core.respond(now, id, result);
            }
        }
    }

    /// Drains the machine's outputs; the close reason once the session has closed.
    fn drain(&mut self) -> Option<CloseReason> {
        let mut closed = None;
        let mut outputs = StdioOutputs::new();
        while let Some(output) = outputs.next(&mut self.core, Instant::now()) {
            match output {
                StdioOutput::Write(bytes) => self.writer.send(bytes),
                StdioOutput::Close => self.writer.close(),
                StdioOutput::Event(event) => {
                    self.dispatch.route(event);
                    while let Some(step) = self.dispatch.poll_step() {
                        closed = closed.or(self.perform(step));
                    }
                }
            }
        }
        closed
    }

    /// Performs one step of the session's dispatch; the close reason for `Closed`.
    fn perform(&mut self, step: Step) -> Option<CloseReason> {
        match step {
            SessionStep::Run { id, handler, call, cancelled, context } => {
                let link = SessionLink::stdio(self.link.clone());
                let ctx = RequestContext::new(id.clone(), cancelled, link).with_session(context);
                let mut answer = wire::answering(handler.run(ctx, *call));
                // Most handlers finish in their first poll: those are answered in this drain,
                // with no task, no command and no wake-up. The others become a task, which the
                // executor polls again (with its own waker) at once.
                let mut cx = Context::from_waker(Waker::noop());
                if let Poll::Ready(outcome) = Pin::new(&mut answer).poll(&mut cx) {
                    self.dispatch.finished(&id);
                    // Err only if the client cancelled meanwhile: nothing to send.
                    let _ = self.core.respond(Instant::now(), id, wire::answer_of(outcome));
                    return None;
                }
                let commands = self.link.commands.clone();
                let task_id = id.clone();
                let task = self.executor.spawn(async move {
                    let result = wire::answer_of(answer.await);
                    let _ = commands.try_send(Command::Respond { id: task_id, result });
                });
                // A task whose call was cancelled meanwhile is dropped, which cancels it.
                drop(self.dispatch.started(id, task));
            }
            SessionStep::Stop(task) => drop(task),
            SessionStep::Deliver(delivery) => delivery.deliver(),
            SessionStep::Closed(reason) => return Some(reason),
        }
        None
    }
}

/// A step of this session's dispatch.
type Step = SessionStep<AsyncHandler<RequestContext>, Task<()>, ReplyTx>;

/// What a handler gets: its request's id, cancellation, progress, logging, and requests to
/// the client ([`PeerApi`](crate::PeerApi): sampling, elicitation, roots); zest-core's
/// [`RequestContext`](zest_core::runtime::RequestContext), the same on every runtime.
///
/// Its methods return futures: `ctx.progress(1.0, None, None).await`. A cancelled request's
/// task is dropped at its next await; `is_cancelled()` is for work handed elsewhere, such as
/// a blocking thread. A request to the client is cancelled when its future is dropped.
pub type RequestContext = zest_core::runtime::RequestContext<SessionLink>;

/// The session end of this runtime's [`RequestContext`]: carries a handler's reports and
/// requests to the client to the session's driver (stdio) or to its session in the HTTP
/// router. Handlers never need to name it.
#[derive(Clone)]
pub struct SessionLink {
    inner: Inner,
    server: ServerHandle,
}

#[derive(Clone)]
enum Inner {
    Stdio(StdioLink),
    Http(crate::http_server::HttpLink),
}

#[derive(Clone)]
struct StdioLink {
    commands: Sender<Command>,
    budget: BroadcastBudget,
    closed: Arc<OnceLock<CloseReason>>,
}

impl SessionLink {
    pub(crate) fn http(link: crate::http_server::HttpLink, server: ServerHandle) -> Self {
        Self { inner: Inner::Http(link), server }
    }

    fn stdio(link: StdioLink) -> Self {
        let server = stdio_handle(link.commands.clone(), link.budget.clone());
        Self { inner: Inner::Stdio(link), server }
    }
}

impl fmt::Debug for SessionLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            Inner::Stdio(link) => {
                f.debug_struct("SessionLink").field("closed", &link.closed.get()).finish()
            }
            Inner::Http(_) => f.write_str("SessionLink(http)"),
        }
    }
}

impl Link for SessionLink {
    type Reply<'a, T: 'a> = BoxFuture<'a, T>;
    type Server = ServerHandle;

    fn server(&self) -> &ServerHandle {
        &self.server
    }

    fn report(&self, report: Report) -> BoxFuture<'_, Result<(), UsageError>> {
        match &self.inner {
            Inner::Http(link) => Box::pin(future::ready(link.report(report))),
            Inner::Stdio(link) => Box::pin(async move {
                let (reply, answer) = channel::bounded(1);
                if link.commands.try_send(Command::Report { report, reply }).is_err() {
                    return Err(UsageError::Closed);
                }
                answer.recv().await.unwrap_or(Err(UsageError::Closed))
            }),
        }
    }

    fn peer_request(&self, call: PeerCall) -> BoxFuture<'_, Result<RawJson, CallError>> {
        match &self.inner {
            Inner::Http(link) => Box::pin(link.peer_request(call)),
            Inner::Stdio(link) => Box::pin(async move {
                let peer = Peer { link, related: call.related };
                let opts = RequestOptions::default();
                call::call_raw(&peer, call.method, call.params, opts, None).await
            }),
        }
    }

    fn map<'a, T: 'a, U: 'a>(reply: BoxFuture<'a, T>, f: fn(T) -> U) -> BoxFuture<'a, U> {
        Box::pin(async move { f(reply.await) })
    }
}

/// A handler's request to the client on its way: the link and the request it serves.
struct Peer<'a> {
    link: &'a StdioLink,
    related: RequestId,
}

impl Submit for Peer<'_> {
    fn submit(&self, out: Outgoing) -> bool {
        let related = self.related.clone();
        self.link.closed.get().is_none()
            && self.link.commands.try_send(Command::Call { out, related }).is_ok()
    }

    fn cancel(&self, key: CallKey) {
        let _ = self.link.commands.try_send(Command::Cancel(key));
    }

    fn close_reason(&self) -> Option<CloseReason> {
        self.link.closed.get().cloned()
    }
}
