//! The client's session: the core machine under one lock, driven by whichever thread has an
//! input (see [`crate::link`]):
//!
//! - a caller locks it, sends its request, drains, and writes the frames to the child's stdin
//!   itself, then waits on its own [`Slot`];
//! - the stdout reader feeds bytes, drains, and completes the callers' slots directly;
//! - a handler thread (a server request) feeds its answer and writes it;
//! - the supervisor feeds due deadlines (`poll_timeout`, and the grace after stdin broke),
//!   has what the reader queued written on a worker thread, and ends the session: it owns
//!   the child and reaps it.
//!
//! Every lock holder drains the machine before unlocking. App code that runs under the lock:
//! progress callbacks (on whichever thread drained the report). Outcomes are delivered and
//! dropped waiters released after unlocking.

use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{Child, ChildStdin};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use zest_core::api::{CallError, ProgressFn};
use zest_core::client::{self, Event, Negotiated, ServerNotification, ServerRequest};
use zest_core::error::{CloseReason, ProtocolViolation, Rejection};
use zest_core::handler::SyncClientHandlers;
use zest_core::io::{
    Input, Output, Receive, StdioTransmit, StreamEvent, StreamId, TransportFailure,
};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::runtime::{Calls, ConnectError, Delivery};
use zest_core::RequestOptions;

use crate::link::{self, lock, CallSlot, Outbox, Role, Slot, Wake};
use crate::workers::Workers;

/// Where one call's outcome is delivered.
pub(crate) type Outcome = Arc<Slot<Result<RawJson, CallError>>>;

/// Where the handshake's outcome is delivered.
pub(crate) type ReadySlot = Arc<Slot<Result<Negotiated, ConnectError>>>;

pub(crate) struct Session {
    me: Weak<Self>,
    state: Mutex<State>,
    out: Arc<Outbox<ChildStdin>>,
    grace: Duration,
}

struct State {
    machine: client::Client,
    handlers: SyncClientHandlers,
    /// Dropped once the session closes, so readers of notifications see the end.
    notifications: Option<SyncSender<ServerNotification>>,
    ready: Option<ReadySlot>,
    /// Our requests in flight.
    calls: Calls<CallSlot>,
    /// Why writing to the child failed, and until when we wait for its stdout to end so the
    /// answers it wrote are not lost.
    broken: Option<(String, Instant)>,
    /// Frames drained but not yet queued in the outbox.
    pending: Vec<Bytes>,
    closed: bool,
    workers: Workers,
}

/// Outcomes to deliver once the lock is released (and waiters to drop there: a progress
/// callback may hold the last `Client`).
#[derive(Default)]
struct Deliveries {
    outcomes: Vec<Delivery<CallSlot>>,
    ready: Option<(ReadySlot, Result<Negotiated, ConnectError>)>,
    /// Reported to the handlers' violation sink once the lock is released.
    violations: Vec<(SyncClientHandlers, ProtocolViolation)>,
}

impl Session {
    pub(crate) fn new(
        machine: client::Client,
        stdin: ChildStdin,
        handlers: SyncClientHandlers,
        notifications: SyncSender<ServerNotification>,
        ready: ReadySlot,
        grace: Duration,
    ) -> Arc<Self> {
        let state = State {
            machine,
            handlers,
            notifications: Some(notifications),
            ready: Some(ready),
            calls: Calls::new(),
            broken: None,
            pending: Vec::new(),
            closed: false,
            workers: Workers::new("zest-client-handler"),
        };
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            state: Mutex::new(state),
            out: Outbox::new(stdin),
            grace,
        })
    }

    /// Sends a request; its outcome goes to `slot`. Returns its id.
    pub(crate) fn request(
        &self,
        method: &'static str,
        params: RawJson,
        opts: RequestOptions,
        on_progress: Option<ProgressFn>,
        slot: Outcome,
    ) -> Result<RequestId, CallError> {
        self.drive(Role::WritesHere, |st, now| {
            let id =
                st.machine.request(now, method, Some(params), opts).map_err(CallError::Usage)?;
            st.calls.insert(id.clone(), None, CallSlot(slot), on_progress);
            Ok(id)
        })
    }

    /// Cancels a request (a no-op once it has finished).
    pub(crate) fn cancel(&self, id: &RequestId) {
        // UnknownRequest: it already finished, which is fine.
        self.drive(Role::WritesHere, |st, now| {
            let _ = st.machine.cancel(now, id, None);
        });
    }

    /// Drains what the machine queued at creation (the `initialize` request).
    pub(crate) fn start(&self) {
        self.drive(Role::WritesHere, |_, _| ());
    }

    /// Feeds one read of the child's stdout (on the reader thread); false once the session
    /// is over.
    pub(crate) fn feed_stdout(&self, event: StreamEvent<'_>) -> bool {
        self.drive(Role::WritesAside, |st, now| {
            let receive = Receive { stream: StreamId::STDIO, event };
            st.machine.handle_input(Input::Receive(now, receive));
            !st.closed
        })
    }

    /// The child's stdin, unless a writer holds it (used when the supervisor cannot start).
    pub(crate) fn take_stdin(&self) -> Option<ChildStdin> {
        self.out.take_writer()
    }

    /// Asks the supervisor to end the session.
    pub(crate) fn ask_close(&self) {
        self.out.ask_close();
    }

    /// The supervisor: runs until the session closes, then shuts the child down (close stdin,
    /// wait, SIGTERM, wait, SIGKILL) and reaps it.
    pub(crate) fn supervise(&self, child: &mut Child) -> io::Result<std::process::ExitStatus> {
        loop {
            match self.out.next() {
                Wake::Write => self.write_aside(),
                Wake::Due => self.drive(Role::WritesAside, |st, now| {
                    if st.broken.as_ref().is_some_and(|(_, at)| *at <= now) {
                        // The child's stdout did not end in time after its stdin broke.
                        let why = st.broken.take().map(|(why, _)| why).unwrap_or_default();
                        let receive = Receive {
                            stream: StreamId::STDIO,
                            event: StreamEvent::Failed(TransportFailure::Reset(why)),
                        };
                        st.machine.handle_input(Input::Receive(now, receive));
                    } else if st.machine.poll_timeout().is_some_and(|at| at <= now) {
                        st.machine.handle_input(Input::Timeout(now));
                    }
                }),
                Wake::CloseAsked => self.drive(Role::WritesAside, |st, now| st.machine.close(now)),
                Wake::Closed => break,
            }
        }
        // What is still queued is written, then stdin closed, within the first grace period.
        let deadline = Instant::now() + self.grace;
        let stdin = self.out.finish(deadline);
        crate::child::shutdown(child, stdin, deadline, self.grace)
    }

    /// Locks the machine, runs `f`, drains, unlocks; then delivers outcomes and writes the
    /// frames (or, on the reader, has them written).
    fn drive<T>(&self, role: Role, f: impl FnOnce(&mut State, Instant) -> T) -> T {
        let mut deliveries = Deliveries::default();
        let out = link::no_join(|| {
            let mut st = lock(&self.state);
            let out = f(&mut st, Instant::now());
            self.drain(&mut st, &mut deliveries);
            out
        });
        for delivery in deliveries.outcomes {
            delivery.deliver();
        }
        if let Some((slot, result)) = deliveries.ready {
            slot.set(result);
        }
        for (handlers, violation) in deliveries.violations {
            handlers.report_violation(&violation);
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
        if let Some(e) = self.out.flush(role == Role::WritesHere) {
            self.stdin_broke(&e);
        }
    }

    /// Stops writing. The session fails once the child's stdout ends (usually at once: the
    /// child died), or after `grace` if it does not, so answers it wrote first still arrive.
    fn stdin_broke(&self, e: &io::Error) {
        let mut st = lock(&self.state);
        let why = format!("writing to the child's stdin: {e}");
        let at = st.broken.get_or_insert((why, Instant::now() + self.grace)).1;
        self.out.wake_by(Some(at));
    }

    /// Drains the machine: frames to the outbox, events to their waiters.
    fn drain(&self, st: &mut State, deliveries: &mut Deliveries) {
        let mut close = false;
        // A transmit a pipe cannot carry fails the session, fed back once drained.
        let mut unsupported = None;
        loop {
            while let Some(out) = st.machine.poll_output() {
                match out {
                    Output::Transmit(t) => match t.into_stdio() {
                        Ok(StdioTransmit::Write(bytes)) => st.pending.push(bytes),
                        Ok(StdioTransmit::Close) => close = true,
                        Err(failure) => unsupported = Some(failure),
                    },
                    Output::Event(Event::Closed(reason)) => self.closed(st, &reason, deliveries),
                    Output::Event(event) => self.event(st, event, deliveries),
                }
            }
            let Some(failure) = unsupported.take() else { break };
            let event = StreamEvent::Failed(failure);
            let input = Input::Receive(Instant::now(), Receive { stream: StreamId::STDIO, event });
            st.machine.handle_input(input);
        }
        let State { pending, .. } = st;
        self.out.queue(pending, close);
        let broken = st.broken.as_ref().map(|(_, at)| *at);
        self.out.wake_by(match (st.machine.poll_timeout(), broken) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        });
    }

    fn event(&self, st: &mut State, event: Event, deliveries: &mut Deliveries) {
        match event {
            Event::Ready(negotiated) => {
                if let Some(ready) = st.ready.take() {
                    deliveries.ready = Some((ready, Ok(*negotiated)));
                }
            }
            Event::Response { id, result } => {
                deliveries.outcomes.extend(st.calls.settle(&id, result));
            }
            Event::Progress { id, progress } => {
                // A callback that panics gets no more reports; the call goes on.
                st.calls.progress(&id, progress);
            }
            Event::Request { id, request } => self.serve_request(st, id, request),
            Event::Notification(n) => {
                // A full queue means nobody reads notifications; dropping beats blocking.
                if let Some(notifications) = &st.notifications {
                    let _ = notifications.try_send(n);
                }
            }
            Event::Violation(v) => deliveries.violations.push((st.handlers.clone(), v)),
            _ => {}
        }
    }

    /// Runs the app's handler for a server request on its own thread, which then answers.
    fn serve_request(&self, st: &mut State, id: RequestId, request: ServerRequest) {
        let handlers = st.handlers.clone();
        let me = self.me.clone();
        let reply_id = id.clone();
        let spawned = st.workers.run(move || {
            let result = catch_unwind(AssertUnwindSafe(|| handlers.run(request)))
                .unwrap_or_else(|_| Err(internal("the handler panicked")));
            if let Some(session) = me.upgrade() {
                // Err: the server cancelled it or the session closed; nothing to send.
                session.drive(Role::WritesHere, |st, now| {
                    let _ = st.machine.respond(now, reply_id, result);
                });
            }
        });
        if let Err(e) = spawned {
            let result = Err(internal(&format!("cannot start a handler thread: {e}")));
            let _ = st.machine.respond(Instant::now(), id, result);
        }
    }

    fn closed(&self, st: &mut State, reason: &CloseReason, deliveries: &mut Deliveries) {
        st.closed = true;
        st.notifications = None;
        if let Some(ready) = st.ready.take() {
            let error = ConnectError::from_close(reason.clone(), None);
            deliveries.ready = Some((ready, Err(error)));
        }
        // The machine has already answered every request; this only covers a broken promise.
        deliveries.outcomes.extend(st.calls.close(reason));
        self.out.set_closed();
    }
}

fn internal(detail: &str) -> ErrorObject {
    Rejection::Internal(detail.to_owned()).to_jsonrpc()
}
