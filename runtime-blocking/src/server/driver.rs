//! The server's session: the core machine under one lock, driven by whichever thread has an
//! input (see [`crate::link`]):
//!
//! - the reader feeds the client's bytes and drains, runs the handlers they start itself and
//!   writes their answers at the end of its turn (see [`super::reader`]); a handler started
//!   elsewhere, or queued behind one that runs long, runs on a thread of its own;
//! - that handler thread feeds its answer (and its progress, logs and requests to the client)
//!   and writes the resulting frames itself;
//! - the supervisor (the thread that called `serve`) feeds due deadlines, has what a feed
//!   queued written on a worker thread (the reader writes only at the end of its turn, which
//!   the supervisor's tick watches), and returns once the session has closed and its last
//!   frames are written (or 5 s have passed).

use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

use bytes::Bytes;
use zest_core::api::CallError;
use zest_core::error::{CloseReason, Rejection, UsageError};
use zest_core::handler::SyncHandler;
use zest_core::io::{Input, Receive, StreamEvent, StreamId, TransportFailure};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::runtime::answer_caught;
use zest_core::runtime::{
    not_reading, BacklogWatch, CancelFlag, Delivery, PeerCall, Report, SessionDispatch,
    SessionStep, FINAL_FLUSH_LIMIT,
};
use zest_core::runtime::{StdioOutput, StdioOutputs};
use zest_core::server::{Broadcast, Call, CallContext, Server};

use super::context::{Feed, SessionLink};
use super::reader::{ReadInto, Reading, Tick, TICK};
use super::{handle_on, Broadcaster, RequestContext};
use crate::link::{self, lock, CallSlot, Outbox, Role, Slot, Wake};
use crate::workers::Workers;

pub(crate) struct ServerSession<W> {
    me: Weak<Self>,
    state: Mutex<State>,
    out: Arc<Outbox<W>>,
    /// The reader's backlog rule (`ServerConfig::max_backlog_bytes`: past it, nothing more is
    /// read from the client, and one that does not read is cut off).
    watch: Mutex<BacklogWatch>,
    /// The client's input and its reader threads, once supervising started.
    reading: OnceLock<Arc<Reading>>,
}

/// A handler to run, as a thread runs it.
type Job = Box<dyn FnOnce() + Send>;

struct State {
    machine: Server<SyncHandler<RequestContext>>,
    /// Calls whose handler runs (a thread cannot be stopped: a cancelled one sees its flag)
    /// and handler threads waiting for the client's answer to our requests.
    dispatch: SessionDispatch<SyncHandler<RequestContext>, (), CallSlot>,
    /// Frames drained but not yet queued in the outbox.
    pending: Vec<Bytes>,
    closed: Option<CloseReason>,
    workers: Workers,
    /// Handlers the active reader runs in its turn, in the order they were read.
    on_reader: VecDeque<(RequestId, Job)>,
}

impl<W: Write + Send + 'static> ServerSession<W> {
    /// A session whose reader holds while more than `backlog_limit` bytes wait for the client
    /// (`ServerConfig::max_backlog_bytes`), and cuts off a client that does not read.
    pub(crate) fn new(
        machine: Server<SyncHandler<RequestContext>>,
        writer: W,
        backlog_limit: usize,
    ) -> Arc<Self> {
        let state = State {
            machine,
            dispatch: SessionDispatch::new(Arc::default()),
            pending: Vec::new(),
            closed: None,
            workers: Workers::new("zest-handler"),
            on_reader: VecDeque::new(),
        };
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            state: Mutex::new(state),
            out: Outbox::new(writer),
            watch: Mutex::new(BacklogWatch::new(backlog_limit)),
            reading: OnceLock::new(),
        })
    }

    /// Starts reading `input` on a reader thread.
    pub(crate) fn start_reading(self: &Arc<Self>, reading: Arc<Reading>) -> std::io::Result<()> {
        let reading = self.reading.get_or_init(|| reading);
        reading.start(self.clone())
    }

    /// Whether this thread is this session's active reader.
    fn on_reader(&self) -> bool {
        self.reading.get().is_some_and(|reading| reading.active_here())
    }

    /// Retires the active reader and starts a new one; the handlers queued behind the old
    /// one go to threads of their own, and what it had not written is written aside.
    fn hand_reading_over(self: &Arc<Self>) {
        let Some(reading) = self.reading.get() else { return };
        let (jobs, workers) = {
            let mut st = lock(&self.state);
            if reading.hand_over(self.clone()).is_err() {
                // No thread to spare: the old reader goes on, and is looked at again.
                return;
            }
            (std::mem::take(&mut st.on_reader), st.workers.clone())
        };
        for (id, job) in jobs {
            if let Err(e) = workers.run(job) {
                self.drive(Role::WritesAside, |st, now| cannot_start(st, now, id, &e));
            }
        }
        self.write_aside();
    }

    /// The supervisor: runs until the session closes, writes what is left, returns why.
    pub(crate) fn supervise(&self) -> CloseReason {
        self.drive(Role::WritesAside, |_, _| ());
        loop {
            match self.out.next() {
                Wake::Write => self.write_aside(),
                Wake::Due => {
                    self.drive(Role::WritesAside, |st, now| {
                        if st.machine.poll_timeout().is_some_and(|at| at <= now) {
                            st.machine.handle_input(Input::Timeout(now));
                        }
                    });
                    self.watch_reader();
                }
                Wake::CloseAsked => {}
                Wake::Closed => break,
            }
        }
        drop(self.out.finish(Instant::now() + FINAL_FLUSH_LIMIT));
        let closed = lock(&self.state).closed.clone();
        // Invariant: `Closed` is set before the supervisor is told the session closed.
        closed.unwrap_or_else(|| {
            CloseReason::TransportFailed(TransportFailure::Other("the session stopped".into()))
        })
    }

    /// The supervisor's look at a busy reader: one stuck in its turn is replaced.
    fn watch_reader(&self) {
        let (Some(reading), Some(me)) = (self.reading.get(), self.me.upgrade()) else { return };
        match reading.tick() {
            Tick::Idle => return,
            Tick::Stuck => me.hand_reading_over(),
            Tick::Again => {}
        }
        self.out.wake_by(Some(Instant::now() + TICK));
    }

    /// Locks the machine, runs `f`, drains, unlocks; then completes peer requests and writes
    /// the frames (or, on the reader, has them written). `Role::Defers` (a handler's inputs)
    /// leaves them to the reader's turn if this thread is the active reader, decided under
    /// the lock (where readers are retired), and writes them here otherwise.
    fn drive<T>(&self, role: Role, f: impl FnOnce(&mut State, Instant) -> T) -> T {
        let mut answered = Vec::new();
        let (out, role) = link::no_join(|| {
            let mut st = lock(&self.state);
            let out = f(&mut st, Instant::now());
            self.drain(&mut st, &mut answered);
            let defers = role == Role::Defers;
            (out, if defers && !self.on_reader() { Role::WritesHere } else { role })
        });
        for delivery in answered {
            delivery.deliver();
        }
        self.write(role);
        out
    }

    /// Writes what the reader queued on a worker thread: a peer that stopped reading then
    /// blocks that thread, never the supervisor, which must stay free to end the session.
    fn write_aside(&self) {
        let workers = lock(&self.state).workers.clone();
        let Some(me) = self.me.upgrade() else { return };
        if workers.run(move || me.write(Role::WritesHere)).is_err() {
            self.write(Role::WritesHere);
        }
    }

    fn write(&self, role: Role) {
        if role == Role::Defers {
            return;
        }
        if let Some(e) = self.out.flush(role == Role::WritesHere) {
            let why = format!("writing: {e}");
            self.drive(Role::WritesHere, |st, now| {
                let receive = Receive {
                    stream: StreamId::STDIO,
                    event: StreamEvent::Failed(TransportFailure::Reset(why)),
                };
                st.machine.handle_input(Input::Receive(now, receive));
            });
        }
    }

    fn drain(&self, st: &mut State, answered: &mut Vec<Delivery<CallSlot>>) {
        let mut close = false;
        let mut outputs = StdioOutputs::new();
        while let Some(output) = outputs.next(&mut st.machine, Instant::now()) {
            match output {
                StdioOutput::Write(bytes) => st.pending.push(bytes),
                StdioOutput::Close => close = true,
                StdioOutput::Event(event) => {
                    st.dispatch.route(event);
                    while let Some(step) = st.dispatch.poll_step() {
                        match step {
                            SessionStep::Run { id, handler, call, cancelled, context } => {
                                self.run_handler(st, id, handler, *call, cancelled, context);
                            }
                            SessionStep::Stop(()) => {}
                            SessionStep::Deliver(delivery) => answered.push(delivery),
                            SessionStep::Closed(reason) => {
                                st.closed = Some(reason);
                                self.out.set_closed();
                            }
                        }
                    }
                }
            }
        }
        let State { pending, .. } = st;
        self.out.queue(pending, close);
        // The last written frame's buffer goes back to the machine for the next large one.
        if let Some(spare) = self.out.take_spare() {
            st.machine.recycle(spare);
        }
        self.out.wake_by(st.machine.poll_timeout());
    }

    /// Runs a handler on the active reader (when it drains) or on a thread of its own; that
    /// thread then feeds the answer.
    fn run_handler(
        &self,
        st: &mut State,
        id: RequestId,
        handler: SyncHandler<RequestContext>,
        call: Call,
        cancelled: CancelFlag,
        context: CallContext,
    ) {
        let Some(me) = self.me.upgrade() else { return };
        let server = handle_on(self.me.clone() as _);
        let link = SessionLink::new(me.clone(), server);
        let ctx = RequestContext::new(id.clone(), cancelled.clone(), link).with_session(context);
        let done_id = id.clone();
        let job = move || {
            let result = answer_caught(|| handler.run(&ctx, call));
            drop(ctx);
            me.drive(Role::Defers, |st, now| {
                st.dispatch.finished(&done_id);
                // Err: the client cancelled it or the session closed; nothing to send.
                let _ = st.machine.respond(now, done_id, result);
            });
        };
        if self.on_reader() {
            st.on_reader.push_back((id, Box::new(job)));
        } else if let Err(e) = st.workers.run(job) {
            cannot_start(st, Instant::now(), id, &e);
        }
    }
}

/// Answers a call whose handler thread could not start.
fn cannot_start(st: &mut State, now: Instant, id: RequestId, e: &std::io::Error) {
    st.dispatch.finished(&id);
    let result = Err(internal(&format!("cannot start a handler thread: {e}")));
    let _ = st.machine.respond(now, id, result);
}

impl<W: Write + Send + 'static> ReadInto for ServerSession<W> {
    /// While more than `max_backlog_bytes` wait for the client, the reader reads nothing more;
    /// a client that takes nothing meanwhile is cut off.
    fn feed(&self, event: StreamEvent<'_>) -> bool {
        let feed = |st: &mut State, now, event| {
            st.machine
                .handle_input(Input::Receive(now, Receive { stream: StreamId::STDIO, event }));
            st.closed.is_none()
        };
        if !self.drive(Role::WritesAside, |st, now| feed(st, now, event)) {
            return false;
        }
        let mut watch = lock(&self.watch);
        if self.out.hold_reader(&mut watch) {
            return true;
        }
        // The client does not take what it is sent: what waits was dropped; the session ends.
        let event = StreamEvent::Failed(not_reading(watch.limit()));
        drop(watch);
        self.drive(Role::WritesAside, |st, now| feed(st, now, event))
    }

    fn run_next(&self) -> bool {
        let job = {
            let mut st = lock(&self.state);
            if !self.on_reader() {
                return false;
            }
            st.on_reader.pop_front()
        };
        job.map(|(_, job)| job()).is_some()
    }

    fn write_turn(&self) {
        self.write(Role::WritesHere);
    }

    fn tick_soon(&self) {
        self.out.wake_by(Some(Instant::now() + TICK));
    }
}

impl<W: Write + Send + 'static> Feed for ServerSession<W> {
    fn report(&self, report: Report) -> Result<(), UsageError> {
        self.drive(Role::Defers, |st, now| report.apply(now, &mut st.machine))
    }

    fn peer_request(&self, call: PeerCall) -> Result<RawJson, CallError> {
        if self.on_reader() {
            // The client's answer must be read while this handler waits for it.
            if let Some(me) = self.me.upgrade() {
                me.hand_reading_over();
            }
        }
        let slot = Arc::new(Slot::new());
        // A request the machine refuses is answered at once, in the slot.
        self.drive(Role::WritesHere, |st, now| {
            let State { machine, dispatch, .. } = st;
            dispatch.start(None, CallSlot(slot.clone()), None, || call.send(now, machine));
        });
        slot.wait()
    }
}

impl<W: Write + Send + 'static> Broadcaster for ServerSession<W> {
    /// Applied under the lock; the frames are written aside (as the reader's are), so the
    /// app's thread never waits on the client.
    fn broadcast(self: Arc<Self>, command: Broadcast<SyncHandler<RequestContext>>) {
        self.drive(Role::WritesAside, |st, now| command.apply(now, &mut st.machine));
    }
}

fn internal(detail: &str) -> ErrorObject {
    Rejection::Internal(detail.to_owned()).to_jsonrpc()
}
