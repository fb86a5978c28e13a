//! The server: [`serve`] drives the core's server machine over any pair of byte streams,
//! [`serve_stdio`] over this process's stdin and stdout. Each call's handler is polled once
//! by the driver; one that does not finish then runs on as its own task, dropped if the call
//! is cancelled.

use std::collections::HashMap;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use serde_json::Value;
use smol::channel::{self, Receiver, Sender};
use smol::io::{AsyncRead, AsyncWrite};
use smol::{future, Executor, Task};
use zest_core::api::{CallError, PeerApi};
use zest_core::error::{CloseReason, RequestError, UsageError};
use zest_core::handler::{AsyncHandler, BoxFuture};
use zest_core::io::{
    Input, Output, Receive, StdioTransmit, StreamEvent, StreamId, TransportFailure,
};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::schema::methods::Method;
use zest_core::schema::LoggingLevel;
use zest_core::server::{Event, Server, ServerConfig};
use zest_core::RequestOptions;

use crate::call::{self, Calls, Outgoing, Submit};
use crate::stdio;
use crate::wire::{self, Alarm, ReadOutcome};
use crate::writer::Writer;

/// What a server offers, with async handlers that get a [`RequestContext`].
pub type Registry = zest_core::server::Registry<AsyncHandler<RequestContext>>;

/// Serves one MCP session on this process's stdin and stdout until stdin ends; returns why
/// the session ended. Stdout carries only protocol frames; log to stderr.
///
/// When stdin and stdout are pipes (as when an MCP client spawned us), they are driven by
/// async-io's reactor in non-blocking mode for the session's duration and put back in
/// blocking mode afterwards; a terminal, a file or a stdout shared with stderr is read and
/// written by threads of smol's blocking pool instead.
pub async fn serve_stdio(config: ServerConfig, registry: Registry) -> CloseReason {
    let (reader, writer, restore) = stdio::open();
    let reason = serve(config, registry, reader, writer).await;
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
    let (commands, queue) = channel::unbounded();
    let executor = Executor::new();
    let driver = Driver {
        core: Server::new(config, registry, Instant::now()),
        executor: &executor,
        commands,
        closed: Arc::new(OnceLock::new()),
        calls: Calls::default(),
        running: HashMap::new(),
        writer: Writer::new(writer),
    };
    executor.run(driver.run(reader, queue)).await
}

/// What handler contexts ask of the driver.
enum Command {
    /// A handler's request to the client, made while serving the client's request `related`.
    Call { out: Outgoing, related: RequestId },
    /// A handler dropped the future of its request to the client.
    Cancel(u64),
    /// A handler sends a log record.
    Log {
        related: RequestId,
        level: LoggingLevel,
        data: Value,
        reply: Sender<Result<(), UsageError>>,
    },
    /// A handler reports progress on its call.
    Progress {
        id: RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        reply: Sender<Result<(), UsageError>>,
    },
    /// A handler finished.
    Respond { id: RequestId, result: Result<RawJson, ErrorObject> },
}

struct Driver<'e, W> {
    core: Server<AsyncHandler<RequestContext>>,
    /// Runs the handlers.
    executor: &'e Executor<'static>,
    commands: Sender<Command>,
    closed: Arc<OnceLock<CloseReason>>,
    /// Handlers' requests to the client.
    calls: Calls,
    /// Running handler tasks by the client's request id; dropping one cancels it.
    running: HashMap<RequestId, (Task<()>, Arc<AtomicBool>)>,
    writer: Writer<W>,
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
            if let Some(reason) = self.drain() {
                // Requests, progress and logs from handlers still running fail at once.
                wire::close_queue(&queue);
                self.running.clear();
                self.writer.finish().await;
                return reason;
            }
            self.writer.try_progress();
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
            Command::Call { out, related } => self.calls.start(out, |method, params, opts| {
                self.core.request(now, Some(&related), method, params, opts)
            }),
            Command::Cancel(key) => {
                if let Some(id) = self.calls.take_key(key) {
                    let _ = self.core.cancel(now, &id, None);
                }
            }
            Command::Log { related, level, data, reply } => {
                let _ = reply.try_send(self.core.log(now, Some(&related), level, None, data));
            }
            Command::Progress { id, progress, total, message, reply } => {
                let _ = reply.try_send(self.core.progress(now, &id, progress, total, message));
            }
            Command::Respond { id, result } => {
                self.running.remove(&id);
                // Err only when the client cancelled meanwhile: nothing to send.
                let _ = self.core.respond(now, id, result);
            }
        }
    }

    /// Drains the machine's outputs; the close reason once the session has closed.
    fn drain(&mut self) -> Option<CloseReason> {
        let mut closed = None;
        // A transmit a pipe cannot carry fails the session, fed back once drained.
        let mut unsupported = None;
        loop {
            while let Some(output) = self.core.poll_output() {
                match output {
                    Output::Transmit(t) => match t.into_stdio() {
                        Ok(StdioTransmit::Write(bytes)) => self.writer.send(&bytes),
                        Ok(StdioTransmit::Close) => self.writer.close(),
                        Err(failure) => unsupported = Some(failure),
                    },
                    Output::Event(Event::Call { id, handler, call, .. }) => {
                        let cancelled = Arc::new(AtomicBool::new(false));
                        let ctx = RequestContext {
                            id: id.clone(),
                            commands: self.commands.clone(),
                            cancelled: cancelled.clone(),
                            closed: self.closed.clone(),
                        };
                        let mut answer = wire::answering(handler.run(ctx, call));
                        // Most handlers finish in their first poll: those are answered in this
                        // drain, with no task, no command and no wake-up. The others become a
                        // task, which the executor polls again (with its own waker) at once.
                        let mut cx = Context::from_waker(Waker::noop());
                        if let Poll::Ready(outcome) = Pin::new(&mut answer).poll(&mut cx) {
                            // Err only if the client cancelled meanwhile: nothing to send.
                            let _ = self.core.respond(Instant::now(), id, wire::answer_of(outcome));
                            continue;
                        }
                        let commands = self.commands.clone();
                        let task_id = id.clone();
                        let task = self.executor.spawn(async move {
                            let result = wire::answer_of(answer.await);
                            let _ = commands.try_send(Command::Respond { id: task_id, result });
                        });
                        self.running.insert(id, (task, cancelled));
                    }
                    Output::Event(Event::Cancelled { id }) => {
                        if let Some((task, cancelled)) = self.running.remove(&id) {
                            cancelled.store(true, Ordering::Release);
                            drop(task);
                        }
                    }
                    Output::Event(Event::Response { id, result }) => {
                        // `Closed` follows these: record it first (see the client driver).
                        if let Err(RequestError::Closed(reason)) = &result {
                            let _ = self.closed.set(reason.clone());
                        }
                        self.calls.complete(&id, result)
                    }
                    Output::Event(Event::Progress { id, progress }) => {
                        self.calls.progress(&id, progress)
                    }
                    Output::Event(Event::Closed(reason)) => {
                        let _ = self.closed.set(reason.clone());
                        closed = Some(reason);
                    }
                    Output::Event(_) => {}
                }
            }
            let Some(failure) = unsupported.take() else { break };
            let event = StreamEvent::Failed(failure);
            let input = Input::Receive(Instant::now(), Receive { stream: StreamId::STDIO, event });
            self.core.handle_input(input);
        }
        closed
    }
}

/// What a handler gets: its request's id, cancellation, progress, logging, and requests to
/// the client ([`PeerApi`]: sampling, elicitation, roots).
#[derive(Clone)]
pub struct RequestContext {
    id: RequestId,
    commands: Sender<Command>,
    cancelled: Arc<AtomicBool>,
    closed: Arc<OnceLock<CloseReason>>,
}

impl RequestContext {
    /// The client's id for the request being served.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// True once the client cancelled this request (the handler's task is then dropped at
    /// its next await; this is for work handed elsewhere, such as a blocking thread).
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Reports progress, if the client asked for it (otherwise nothing is sent). `progress`
    /// must increase from one report to the next.
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        let (reply, answer) = channel::bounded(1);
        let id = self.id.clone();
        self.ask(Command::Progress { id, progress, total, message, reply }, answer).await
    }

    /// Sends a log record (`notifications/message`) if `level` is at or above the level the
    /// client set.
    pub async fn log(&self, level: LoggingLevel, data: Value) -> Result<(), UsageError> {
        let (reply, answer) = channel::bounded(1);
        let related = self.id.clone();
        self.ask(Command::Log { related, level, data, reply }, answer).await
    }

    async fn ask(
        &self,
        command: Command,
        answer: Receiver<Result<(), UsageError>>,
    ) -> Result<(), UsageError> {
        if self.commands.try_send(command).is_err() {
            return Err(UsageError::Closed);
        }
        answer.recv().await.unwrap_or(Err(UsageError::Closed))
    }
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl Submit for RequestContext {
    fn submit(&self, out: Outgoing) -> bool {
        self.closed.get().is_none()
            && self.commands.try_send(Command::Call { out, related: self.id.clone() }).is_ok()
    }

    fn cancel(&self, key: u64) {
        let _ = self.commands.try_send(Command::Cancel(key));
    }

    fn close_reason(&self) -> Option<CloseReason> {
        self.closed.get().cloned()
    }
}

impl PeerApi for RequestContext {
    type Call<'a, T: 'a> = BoxFuture<'a, Result<T, CallError>>;

    fn peer_request<M: Method>(&self, params: M::Params) -> Self::Call<'_, M::Result>
    where
        M::Result: 'static,
    {
        call::call::<M, _>(self, &params, RequestOptions::default(), None)
    }
}
