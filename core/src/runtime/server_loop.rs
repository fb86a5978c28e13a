//! The one loop of a server session on one byte stream (stdio, or any pair of async
//! streams) on an async runtime, written once: drain the machine's outputs (frames to the
//! writer, calls to handlers), then wait for bytes, a command, a write's progress or the
//! deadline, and feed exactly one of them back. The runtime supplies a [`ServerHost`] (its
//! timer and how it runs a task) and its IO.
//!
//! ```text
//!  loop { drain poll_output ─▶ wait { read (unless held) | command | written | deadline } ─▶ feed }
//!  on Closed: the command queue closes (handlers' reports and requests fail at once), the
//!  handlers still running are stopped, and what is queued is written within FINAL_FLUSH_LIMIT.
//! ```
//!
//! Handlers, their contexts and the app's [`ServerHandle`](crate::server::ServerHandle) reach
//! the loop through a [`StdioLink`]: commands in an [`Inbox`], answered through
//! [`oneshot`] channels, so no runtime channel is involved.

use std::fmt;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Instant;

use super::answering::{Answer, Answering};
use super::oneshot::{oneshot, outcome, OneshotSender};
use super::{not_reading, CallKey, CallKeys, Inbox, Link, Outcome, PeerCall, PollRead, PollSink};
use super::{Backlog, BacklogWatch, Writer, FINAL_FLUSH_LIMIT};
use super::{Report, RequestContext, SessionDispatch, SessionStep, StdioOutput, StdioOutputs};
use crate::api::CallError;
use crate::error::{CloseReason, RequestError, UsageError};
use crate::handler::AsyncHandler;
use crate::io::{Input, Receive, StreamEvent, StreamId, TransportFailure};
use crate::jsonrpc::{RawJson, RequestId};
use crate::server::{Broadcast, BroadcastBudget, BroadcastSink, Registry, Server, ServerConfig};

/// One command to a server session's loop.
pub enum ServerCommand<H> {
    /// A handler running as a task answered call `id`.
    Answer {
        /// The client's request.
        id: RequestId,
        /// The handler's answer.
        result: Answer,
    },
    /// A handler's progress report or log record; the machine's verdict goes to `reply`.
    Report {
        /// What to report.
        report: Report,
        /// Where the verdict goes.
        reply: OneshotSender<Result<(), UsageError>>,
    },
    /// A handler's request to the client; its outcome goes to `reply`.
    Request {
        /// The handler's name for it, to cancel it by.
        key: CallKey,
        /// The request.
        call: PeerCall,
        /// Where the outcome goes.
        reply: OneshotSender<Outcome>,
    },
    /// The handler that asked with this key stopped waiting: cancel its request.
    Cancel(CallKey),
    /// A server handle's command.
    Broadcast(Broadcast<H>),
}

/// How handlers, their contexts and server handles reach one session's loop (the stdio half
/// of a runtime's `SessionLink`). Cheap to clone.
pub struct StdioLink<H> {
    commands: Arc<Inbox<ServerCommand<H>>>,
    budget: BroadcastBudget,
    keys: Arc<CallKeys>,
    closed: Arc<OnceLock<CloseReason>>,
}

impl<H> Clone for StdioLink<H> {
    fn clone(&self) -> Self {
        Self {
            commands: self.commands.clone(),
            budget: self.budget.clone(),
            keys: self.keys.clone(),
            closed: self.closed.clone(),
        }
    }
}

impl<H> fmt::Debug for StdioLink<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioLink").field("closed", &self.closed.get()).finish()
    }
}

impl<H> Default for StdioLink<H> {
    fn default() -> Self {
        Self::new()
    }
}

impl<H> StdioLink<H> {
    /// The link of a session not yet served (handles made from it work once it is).
    pub fn new() -> Self {
        Self {
            commands: Arc::default(),
            budget: BroadcastBudget::new(),
            keys: Arc::new(CallKeys::new()),
            closed: Arc::default(),
        }
    }

    /// A progress report or log record, applied by the loop; its verdict.
    pub fn report(&self, report: Report) -> impl Future<Output = Result<(), UsageError>> + '_ {
        let (reply, verdict) = oneshot();
        let sent = self.commands.send(ServerCommand::Report { report, reply }).is_ok();
        async move {
            match sent {
                true => verdict.await.unwrap_or(Err(UsageError::Closed)),
                false => Err(UsageError::Closed),
            }
        }
    }

    /// A request to the client; its raw outcome. Dropping the future cancels the request.
    pub async fn peer_request(&self, call: PeerCall) -> Result<RawJson, CallError> {
        let key = self.keys.next();
        let (reply, rx) = oneshot();
        if self.closed.get().is_some()
            || self.commands.send(ServerCommand::Request { key, call, reply }).is_err()
        {
            return Err(self.closed_error());
        }
        let cancel = || drop(self.commands.send(ServerCommand::Cancel(key)));
        match outcome(rx, cancel).await {
            Err(CallError::Usage(UsageError::Closed)) => Err(self.closed_error()),
            other => other,
        }
    }

    /// Why a request to the client cannot be made: the session's close reason, once known.
    fn closed_error(&self) -> CallError {
        match self.closed.get() {
            Some(reason) => CallError::Request(RequestError::Closed(reason.clone())),
            None => CallError::Usage(UsageError::Closed),
        }
    }
}

/// A server handle on one session: logs and updates past the session's budget are dropped;
/// once the loop is gone there is nobody left to tell.
impl<H: Send + Sync + 'static> BroadcastSink<H> for StdioLink<H> {
    fn send(&self, command: Broadcast<H>) {
        if self.budget.admit(&command) {
            drop(self.commands.send(ServerCommand::Broadcast(command)));
        }
    }
}

/// What a server session's loop needs of its async runtime.
pub trait ServerHost {
    /// A handler running as a task (stopped by [`stop`](Self::stop)).
    type Task;

    /// Resolves at `at` or later (early is harmless: the loop re-checks its deadlines).
    fn poll_timer(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()>;
    /// The runtime's clock.
    fn now(&self) -> Instant;
    /// True where a handler is first polled in the loop, so one that is done at once is
    /// answered with no task (a single-threaded executor, where a task would not run in
    /// parallel anyway); false to give every handler its task at once.
    fn polls_first(&self) -> bool;
    /// Runs `work` as a task.
    fn spawn(&mut self, work: Pin<Box<dyn Future<Output = ()> + Send>>) -> Self::Task;
    /// Stops a handler's task whose answer is no longer wanted.
    fn stop(&mut self, task: Self::Task);
}

/// A server session over one byte stream: its machine, its dispatch, its link and its
/// runtime's host. `L` is the runtime's `SessionLink`.
pub struct ServerLoop<L: Link, H: ServerHost> {
    core: Server<AsyncHandler<RequestContext<L>>>,
    dispatch: SessionDispatch<AsyncHandler<RequestContext<L>>, H::Task, OneshotSender<Outcome>>,
    stdio: StdioLink<AsyncHandler<RequestContext<L>>>,
    /// What every handler's context holds (it reaches `stdio`).
    link: L,
    host: H,
    /// `ServerConfig::max_backlog_bytes`: past it, nothing more is read from the client, and
    /// one that does not read is cut off.
    backlog_limit: usize,
}

impl<L: Link + 'static, H: ServerHost> ServerLoop<L, H> {
    /// A session serving `registry`; its handlers' contexts hold `link`, which reaches the
    /// loop through `stdio`.
    pub fn new(
        config: ServerConfig,
        registry: Registry<AsyncHandler<RequestContext<L>>>,
        stdio: StdioLink<AsyncHandler<RequestContext<L>>>,
        link: L,
        host: H,
    ) -> Self {
        let backlog_limit = config.max_backlog_bytes;
        let core = Server::new(config, registry, host.now());
        let dispatch = SessionDispatch::new(stdio.closed.clone());
        Self { core, dispatch, stdio, link, host, backlog_limit }
    }

    /// Serves until the machine reports `Closed`, then writes what is left within
    /// [`FINAL_FLUSH_LIMIT`] and returns the reason. While more than
    /// `ServerConfig::max_backlog_bytes` wait for the client, nothing more is read from it; one
    /// that takes nothing for [`BACKLOG_STALL`](super::BACKLOG_STALL) meanwhile is cut off.
    pub async fn run<R: PollRead, S: PollSink>(
        mut self,
        reader: &mut R,
        mut writer: Writer<S>,
    ) -> CloseReason {
        let mut backlog = BacklogWatch::new(self.backlog_limit);
        let mut buf = vec![0u8; 64 * 1024];
        let mut reads_first = false;
        let reason = loop {
            // The last written frame's buffer goes back to the machine for the next large one.
            if let Some(spare) = writer.take_spare() {
                self.core.recycle(spare);
            }
            if let Some(reason) = self.drain(&mut writer) {
                break reason;
            }
            writer.try_progress();
            // Past the limit, nothing more is read from a client until it catches up; one
            // that takes nothing meanwhile is cut off.
            let held = match writer.backlog(&mut backlog, self.host.now()) {
                Backlog::Clear => None,
                Backlog::Holding(until) => Some(until),
                Backlog::Stalled => {
                    writer.abandon();
                    self.feed(StreamEvent::Failed(not_reading(backlog.limit())));
                    continue;
                }
            };
            let reading = held.is_none();
            let deadline = match (self.core.poll_timeout(), held) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            // Reads and commands take turns at going first, so that a client that never
            // stops sending cannot starve handlers' answers, nor handlers the client.
            reads_first = !reads_first;
            let wake = poll_fn(|cx| {
                if deadline.is_some_and(|at| at <= self.host.now()) {
                    return Poll::Ready(Wake::Timeout);
                }
                if reading && reads_first {
                    if let Poll::Ready(read) = reader.poll_read(cx, &mut buf) {
                        return Poll::Ready(Wake::Read(read));
                    }
                }
                if let Poll::Ready(command) = self.stdio.commands.poll_recv(cx) {
                    return Poll::Ready(Wake::Command(command));
                }
                if reading && !reads_first {
                    if let Poll::Ready(read) = reader.poll_read(cx, &mut buf) {
                        return Poll::Ready(Wake::Read(read));
                    }
                }
                if writer.busy() {
                    if let Poll::Ready(written) = writer.poll_progress(cx) {
                        return Poll::Ready(Wake::Written(written));
                    }
                }
                match deadline {
                    Some(at) => self.host.poll_timer(cx, at).map(|()| Wake::Timeout),
                    None => Poll::Pending,
                }
            })
            .await;
            self.stdio.commands.awake();
            match wake {
                Wake::Read(Ok(0)) => self.feed(StreamEvent::End),
                Wake::Read(Ok(n)) => self.feed(StreamEvent::Data(&buf[..n])),
                Wake::Read(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Wake::Read(Err(e)) => {
                    let why = format!("reading from the client failed: {e}");
                    self.feed(StreamEvent::Failed(TransportFailure::Reset(why)));
                }
                Wake::Written(Ok(())) => {}
                Wake::Written(Err(e)) => {
                    let why = format!("writing to the client failed: {e}");
                    self.feed(StreamEvent::Failed(TransportFailure::Reset(why)));
                }
                Wake::Command(command) => {
                    // Commands already queued go in the same turn, so that their frames
                    // leave in one write.
                    let now = self.host.now();
                    self.apply(now, command);
                    while let Some(command) = self.stdio.commands.try_recv() {
                        self.apply(now, command);
                    }
                }
                // An early timer is harmless: the machine ignores a timeout before its deadline.
                Wake::Timeout => self.core.handle_input(Input::Timeout(self.host.now())),
            }
        };
        // Reports and requests from handlers still running fail at once.
        self.stdio.commands.close();
        let host = &mut self.host;
        let deadline = host.now() + FINAL_FLUSH_LIMIT;
        writer.finish(deadline, |at| poll_fn(move |cx| host.poll_timer(cx, at))).await;
        reason
    }

    fn feed(&mut self, event: StreamEvent<'_>) {
        let input = Input::Receive(self.host.now(), Receive { stream: StreamId::STDIO, event });
        self.core.handle_input(input);
    }

    fn apply(&mut self, now: Instant, command: ServerCommand<AsyncHandler<RequestContext<L>>>) {
        match command {
            ServerCommand::Answer { id, result } => self.answer(now, id, result),
            // The handler may have stopped waiting for the verdict; then nobody wants it.
            ServerCommand::Report { report, reply } => {
                reply.send(report.apply(now, &mut self.core))
            }
            ServerCommand::Request { key, call, reply } => {
                let core = &mut self.core;
                self.dispatch.start(Some(key), reply, None, || call.send(now, core));
            }
            ServerCommand::Cancel(key) => {
                if let Some(id) = self.dispatch.abandon(key) {
                    // Err only if the outcome was already decided; nothing to cancel then.
                    let _ = self.core.cancel(now, &id, Some("the handler stopped waiting"));
                }
            }
            ServerCommand::Broadcast(command) => {
                self.stdio.budget.taken(&command);
                command.apply(now, &mut self.core);
            }
        }
    }

    fn answer(&mut self, now: Instant, id: RequestId, result: Answer) {
        self.dispatch.finished(&id);
        // Err only if the client cancelled or the session closed meanwhile: nobody awaits it.
        let _ = self.core.respond(now, id, result);
    }

    /// Performs every pending output; the close reason once the session is over.
    fn drain<S: PollSink>(&mut self, writer: &mut Writer<S>) -> Option<CloseReason> {
        let mut closed = None;
        // One reading of the clock for the whole drain: `next` needs it only for a failure.
        let (mut outputs, now) = (StdioOutputs::new(), self.host.now());
        while let Some(output) = outputs.next(&mut self.core, now) {
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
    fn perform(&mut self, step: Step<L, H>) -> Option<CloseReason> {
        match step {
            SessionStep::Run { id, handler, call, cancelled, context } => {
                let ctx = RequestContext::new(id.clone(), cancelled, self.link.clone())
                    .with_session(context);
                let mut work = Answering::start(|| handler.run(ctx, *call));
                if self.host.polls_first() {
                    if let Poll::Ready(result) = work.poll_once() {
                        self.answer(self.host.now(), id, result);
                        return None;
                    }
                }
                let commands = self.stdio.commands.clone();
                let answer_id = id.clone();
                let task = self.host.spawn(Box::pin(async move {
                    let result = work.await;
                    // The loop may be gone; then the answer has nowhere to go.
                    let _ = commands.send(ServerCommand::Answer { id: answer_id, result });
                }));
                // A call cancelled meanwhile has its task handed back: stop it.
                if let Some(late) = self.dispatch.started(id, task) {
                    self.host.stop(late);
                }
            }
            SessionStep::Stop(task) => self.host.stop(task),
            SessionStep::Deliver(delivery) => delivery.deliver(),
            SessionStep::Closed(reason) => return Some(reason),
        }
        None
    }
}

/// A loop dropped before its session ended (its `run` future was dropped) lets nothing
/// hang: queued reports and requests fail, later ones are refused, running handlers stop.
impl<L: Link, H: ServerHost> Drop for ServerLoop<L, H> {
    fn drop(&mut self) {
        self.stdio.commands.close();
        for task in self.dispatch.stop_all() {
            self.host.stop(task);
        }
    }
}

/// A step of a session's dispatch.
type Step<L, H> =
    SessionStep<AsyncHandler<RequestContext<L>>, <H as ServerHost>::Task, OneshotSender<Outcome>>;

/// What woke the loop.
enum Wake<H> {
    Read(io::Result<usize>),
    Written(io::Result<()>),
    Command(ServerCommand<H>),
    Timeout,
}
