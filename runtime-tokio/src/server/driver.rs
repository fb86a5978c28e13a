//! The one loop of a server session: drain the core's outputs (frames to the writer, calls
//! to handler tasks), then wait for input bytes, a command from a handler or the core's
//! deadline, and feed exactly one of them back.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use zest_core::error::{CloseReason, UsageError};
use zest_core::handler::AsyncHandler;
use zest_core::io::{Input, Receive, StreamEvent, StreamId, TransportFailure};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::runtime::{
    not_reading, CallKey, CallKeys, PeerCall, Report, SessionDispatch, SessionStep, StdioOutput,
    StdioOutputs, FINAL_FLUSH_LIMIT,
};
use zest_core::server::{Broadcast, BroadcastBudget, Server, ServerConfig};

use super::{handle, Registry, RequestContext, ServerHandle, SessionLink};
use crate::calls::{CatchUnwind, Reply};
use crate::writer::{self, Writer};

/// What handler tasks and their contexts ask of the driver.
pub(super) enum Command {
    /// A handler finished.
    Answer { id: RequestId, result: Result<RawJson, ErrorObject> },
    /// `RequestContext::progress` or `log`: the machine's verdict goes to `reply`.
    Report { report: Report, reply: oneshot::Sender<Result<(), UsageError>> },
    /// A request to the client made by a handler; its outcome goes to `reply`.
    Request { key: CallKey, call: PeerCall, reply: Reply },
    /// The caller of request `key` stopped waiting.
    Cancel { key: CallKey },
    /// A [`ServerHandle`](super::ServerHandle) command.
    Broadcast(Broadcast<AsyncHandler<RequestContext>>),
}

pub(super) struct Driver {
    core: Server<AsyncHandler<RequestContext>>,
    link: SessionLink,
    /// Where handler tasks send their answers (the sending end of `commands`).
    answers: mpsc::UnboundedSender<Command>,
    commands: mpsc::UnboundedReceiver<Command>,
    /// Handler tasks and requests to the client in flight.
    dispatch: SessionDispatch<AsyncHandler<RequestContext>, AbortHandle, Reply>,
    /// True on a current-thread runtime: handlers get their first poll in the driver.
    inline_first_poll: bool,
    /// `ServerConfig::max_backlog_bytes`: past it, a client that does not read is cut off.
    backlog_limit: usize,
    /// The session's handles' budget for logs and updates waiting in `commands`.
    budget: BroadcastBudget,
}

impl Driver {
    pub(super) fn new(config: ServerConfig, registry: Registry) -> Self {
        let (tx, commands) = mpsc::unbounded_channel();
        let backlog_limit = config.max_backlog_bytes;
        let budget = BroadcastBudget::new();
        Self {
            backlog_limit,
            core: Server::new(config, registry, Instant::now()),
            link: SessionLink::stdio(tx.clone(), Arc::new(CallKeys::new()), budget.clone()),
            budget,
            answers: tx,
            commands,
            dispatch: SessionDispatch::new(Arc::default()),
            inline_first_poll: tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread),
        }
    }

    /// The app's handle on this session.
    pub(super) fn handle(&self) -> ServerHandle {
        handle::stdio_handle(self.answers.clone(), self.budget.clone())
    }

    /// Serves until the core reports `Closed` (which stops every handler), then flushes what
    /// is left to write and returns the reason.
    pub(super) async fn run<R, W>(mut self, mut reader: R, sink: W) -> CloseReason
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let mut writer = writer::recycling(sink);
        let mut buf = vec![0u8; 64 * 1024];
        let sleep = tokio::time::sleep(Duration::from_secs(3600));
        tokio::pin!(sleep);
        let reason = loop {
            // The last written frame's buffer goes back to the machine for the next large one.
            if let Some(spare) = writer.take_spare() {
                self.core.recycle(spare);
            }
            if let Some(reason) = self.drain(&mut writer) {
                break reason;
            }
            writer.try_progress();
            if writer.is_backlogged(self.backlog_limit) {
                // The client does not take what it is sent: stop holding it for the client.
                writer.abandon();
                let failure = not_reading(self.backlog_limit);
                self.feed(Instant::now(), StreamEvent::Failed(failure));
                continue;
            }
            if let Some(at) = self.core.poll_timeout().map(tokio::time::Instant::from_std) {
                // Re-arming the timer costs a trip to the timer wheel; skip it when unchanged.
                if sleep.deadline() != at {
                    sleep.as_mut().reset(at);
                }
            }
            tokio::select! {
                read = reader.read(&mut buf) => {
                    let now = Instant::now();
                    match read {
                        Ok(0) => self.feed(now, StreamEvent::End),
                        Ok(n) => self.feed(now, StreamEvent::Data(&buf[..n])),
                        Err(e) => {
                            let why = format!("reading from the client failed: {e}");
                            self.feed(now, StreamEvent::Failed(TransportFailure::Reset(why)));
                        }
                    }
                }
                Some(command) = self.commands.recv() => self.apply(command),
                written = writer.progress(), if writer.busy() => {
                    if let Err(failure) = written {
                        let why = format!("writing to the client failed: {failure}");
                        self.feed(Instant::now(), StreamEvent::Failed(TransportFailure::Reset(why)));
                    }
                }
                () = &mut sleep, if self.core.poll_timeout().is_some() => {
                    self.core.handle_input(Input::Timeout(Instant::now()));
                }
            }
        };
        writer::finish(&mut writer, Instant::now() + FINAL_FLUSH_LIMIT).await;
        reason
    }

    fn feed(&mut self, now: Instant, event: StreamEvent<'_>) {
        self.core.handle_input(Input::Receive(now, Receive { stream: StreamId::STDIO, event }));
    }

    fn apply(&mut self, command: Command) {
        let now = Instant::now();
        // Each `reply` may have been dropped by an aborted handler; then nobody waits.
        match command {
            Command::Answer { id, result } => {
                self.dispatch.finished(&id);
                // Err only if the session closed meanwhile; the answer has nowhere to go.
                let _ = self.core.respond(now, id, result);
            }
            Command::Report { report, reply } => {
                let _ = reply.send(report.apply(now, &mut self.core));
            }
            Command::Request { key, call, reply } => {
                let core = &mut self.core;
                self.dispatch.start(Some(key), reply, None, || call.send(now, core));
            }
            Command::Broadcast(command) => {
                self.budget.taken(&command);
                command.apply(now, &mut self.core);
            }
            Command::Cancel { key } => {
                if let Some(id) = self.dispatch.abandon(key) {
                    // Err only if the outcome was already decided; nothing to cancel then.
                    let _ = self.core.cancel(now, &id, Some("the handler stopped waiting"));
                }
            }
        }
    }

    /// Performs every pending output; the close reason once the session is over.
    fn drain<W: AsyncWrite + Unpin>(&mut self, writer: &mut Writer<W>) -> Option<CloseReason> {
        let mut closed = None;
        let mut outputs = StdioOutputs::new();
        while let Some(output) = outputs.next(&mut self.core, Instant::now()) {
            match output {
                StdioOutput::Write(bytes) => writer.send(bytes),
                StdioOutput::Close => writer.close(),
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
                let ctx = RequestContext::new(id.clone(), cancelled, self.link.clone())
                    .with_session(context);
                let mut work = CatchUnwind(handler.run(ctx, *call));
                // On a current-thread runtime, where a task would not run in parallel anyway,
                // a handler that is done at once is answered here, without a task: its answer
                // is written in this same drain. One that is not moves, polled once, into a
                // task of its own, whose first poll registers its waker.
                let mut cx = Context::from_waker(Waker::noop());
                let done = match self.inline_first_poll {
                    true => Pin::new(&mut work).poll(&mut cx),
                    false => Poll::Pending,
                };
                if let Poll::Ready(result) = done {
                    self.dispatch.finished(&id);
                    // Err only if the session closed meanwhile; nobody awaits the answer.
                    let _ = self.core.respond(Instant::now(), id, result);
                    return None;
                }
                let link = self.answers.clone();
                let answer_id = id.clone();
                let task = tokio::spawn(async move {
                    let result = work.await;
                    // The driver may be gone; then the answer has nowhere to go.
                    let _ = link.send(Command::Answer { id: answer_id, result });
                });
                if let Some(late) = self.dispatch.started(id, task.abort_handle()) {
                    late.abort();
                }
            }
            SessionStep::Stop(task) => task.abort(),
            SessionStep::Deliver(delivery) => delivery.deliver(),
            SessionStep::Closed(reason) => return Some(reason),
        }
        None
    }
}

/// A step of this session's dispatch.
type Step = SessionStep<AsyncHandler<RequestContext>, AbortHandle, Reply>;
