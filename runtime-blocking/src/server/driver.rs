//! The server's session: the core machine under one lock, driven by whichever thread has an
//! input (see [`crate::link`]):
//!
//! - the reader feeds the client's bytes and drains; a call to a handler starts it on a
//!   thread of its own;
//! - that handler thread feeds its answer (and its progress, logs and requests to the client)
//!   and writes the resulting frames itself;
//! - the supervisor (the thread that called `serve`) feeds due deadlines, writes what the
//!   reader queued (the reader never writes), and returns once the session has closed.

use std::collections::HashMap;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use serde_json::Value;
use zest_core::api::CallError;
use zest_core::error::{CloseReason, Rejection, RequestError, UsageError};
use zest_core::handler::SyncHandler;
use zest_core::io::{
    Input, Output, Receive, StdioTransmit, StreamEvent, StreamId, TransportFailure,
};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::schema::LoggingLevel;
use zest_core::server::{Call, Event, Server};
use zest_core::RequestOptions;

use super::RequestContext;
use crate::link::{self, lock, Outbox, Slot, Wake};
use crate::workers::Workers;

/// What a handler's [`RequestContext`] asks of the session.
pub(crate) trait Link: Send + Sync {
    fn progress(
        &self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), UsageError>;
    fn log(&self, related: &RequestId, level: LoggingLevel, data: Value) -> Result<(), UsageError>;
    /// Sends a request to the client and blocks until its outcome.
    fn peer(
        &self,
        related: &RequestId,
        method: &'static str,
        params: RawJson,
    ) -> Result<RawJson, CallError>;
}

type PeerSlot = Arc<Slot<Result<RawJson, CallError>>>;

/// Which thread drives: the reader must never block on writing.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    Reader,
    Other,
}

pub(crate) struct ServerSession<W> {
    me: Weak<Self>,
    state: Mutex<State>,
    out: Outbox<W>,
}

struct State {
    machine: Server<SyncHandler<RequestContext>>,
    /// The cancellation flag of each call whose handler is running.
    running: HashMap<RequestId, Arc<AtomicBool>>,
    /// Handler threads waiting for the client's answer to our requests.
    peer_waiters: HashMap<RequestId, PeerSlot>,
    /// Frames drained but not yet queued in the outbox.
    pending: Vec<u8>,
    closed: Option<CloseReason>,
    workers: Workers,
}

impl<W: Write + Send + 'static> ServerSession<W> {
    pub(crate) fn new(machine: Server<SyncHandler<RequestContext>>, writer: W) -> Arc<Self> {
        let state = State {
            machine,
            running: HashMap::new(),
            peer_waiters: HashMap::new(),
            pending: Vec::new(),
            closed: None,
            workers: Workers::new("zest-handler"),
        };
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            state: Mutex::new(state),
            out: Outbox::new(writer),
        })
    }

    /// Feeds one read of the client's bytes (on the reader thread); false once the session
    /// is over.
    pub(crate) fn feed_read(&self, event: StreamEvent<'_>) -> bool {
        self.drive(Role::Reader, |st, now| {
            st.machine
                .handle_input(Input::Receive(now, Receive { stream: StreamId::STDIO, event }));
            st.closed.is_none()
        })
    }

    /// The supervisor: runs until the session closes, writes what is left, returns why.
    pub(crate) fn supervise(&self) -> CloseReason {
        self.drive(Role::Other, |_, _| ());
        loop {
            match self.out.next() {
                Wake::Write => self.write(Role::Other),
                Wake::Due => self.drive(Role::Other, |st, now| {
                    if st.machine.poll_timeout().is_some_and(|at| at <= now) {
                        st.machine.handle_input(Input::Timeout(now));
                    }
                }),
                Wake::CloseAsked => {}
                Wake::Closed => break,
            }
        }
        drop(self.out.finish());
        let closed = lock(&self.state).closed.clone();
        // Invariant: `Closed` is set before the supervisor is told the session closed.
        closed.unwrap_or_else(|| {
            CloseReason::TransportFailed(TransportFailure::Other("the session stopped".into()))
        })
    }

    /// Locks the machine, runs `f`, drains, unlocks; then completes peer requests and writes
    /// the frames (or, on the reader, has them written).
    fn drive<T>(&self, role: Role, f: impl FnOnce(&mut State, Instant) -> T) -> T {
        let mut answered = Vec::new();
        let out = link::no_join(|| {
            let mut st = lock(&self.state);
            let out = f(&mut st, Instant::now());
            self.drain(&mut st, &mut answered);
            out
        });
        for (slot, result) in answered {
            slot.set(result);
        }
        self.write(role);
        out
    }

    fn write(&self, role: Role) {
        if let Some(e) = self.out.flush(role != Role::Reader) {
            let why = format!("writing: {e}");
            self.drive(Role::Other, |st, now| {
                let receive = Receive {
                    stream: StreamId::STDIO,
                    event: StreamEvent::Failed(TransportFailure::Reset(why)),
                };
                st.machine.handle_input(Input::Receive(now, receive));
            });
        }
    }

    fn drain(&self, st: &mut State, answered: &mut Vec<(PeerSlot, Result<RawJson, CallError>)>) {
        let mut close = false;
        // A transmit a pipe cannot carry fails the session, fed back once drained.
        let mut unsupported = None;
        loop {
            while let Some(out) = st.machine.poll_output() {
                match out {
                    Output::Transmit(t) => match t.into_stdio() {
                        Ok(StdioTransmit::Write(bytes)) => st.pending.extend_from_slice(&bytes),
                        Ok(StdioTransmit::Close) => close = true,
                        Err(failure) => unsupported = Some(failure),
                    },
                    Output::Event(Event::Closed(reason)) => {
                        for (_, flag) in st.running.drain() {
                            flag.store(true, Ordering::Release);
                        }
                        // The machine has already answered each of our requests; this covers a
                        // broken promise.
                        for (_, slot) in st.peer_waiters.drain() {
                            let error = RequestError::Closed(reason.clone());
                            answered.push((slot, Err(CallError::Request(error))));
                        }
                        st.closed = Some(reason);
                        self.out.set_closed();
                    }
                    Output::Event(Event::Call { id, handler, call, .. }) => {
                        self.run_handler(st, id, handler, call);
                    }
                    Output::Event(Event::Cancelled { id }) => {
                        if let Some(flag) = st.running.remove(&id) {
                            flag.store(true, Ordering::Release);
                        }
                    }
                    Output::Event(Event::Response { id, result }) => {
                        if let Some(slot) = st.peer_waiters.remove(&id) {
                            answered.push((slot, result.map_err(CallError::Request)));
                        }
                    }
                    Output::Event(_) => {}
                }
            }
            let Some(failure) = unsupported.take() else { break };
            let event = StreamEvent::Failed(failure);
            let input = Input::Receive(Instant::now(), Receive { stream: StreamId::STDIO, event });
            st.machine.handle_input(input);
        }
        let State { pending, .. } = st;
        self.out.queue(pending, close);
        self.out.wake_by(st.machine.poll_timeout());
    }

    /// Runs a handler on a thread of its own; that thread then feeds the answer.
    fn run_handler(
        &self,
        st: &mut State,
        id: RequestId,
        handler: SyncHandler<RequestContext>,
        call: Call,
    ) {
        let Some(me) = self.me.upgrade() else { return };
        let cancelled = Arc::new(AtomicBool::new(false));
        let link: Arc<dyn Link> = me.clone();
        let ctx = RequestContext::new(id.clone(), cancelled.clone(), link);
        let done_id = id.clone();
        let spawned = st.workers.run(move || {
            let result = catch_unwind(AssertUnwindSafe(|| handler.run(&ctx, call)))
                .unwrap_or_else(|_| Err(internal("the handler panicked")));
            drop(ctx);
            me.drive(Role::Other, |st, now| {
                st.running.remove(&done_id);
                // Err: the client cancelled it or the session closed; nothing to send.
                let _ = st.machine.respond(now, done_id, result);
            });
        });
        match spawned {
            Ok(()) => {
                st.running.insert(id, cancelled);
            }
            Err(e) => {
                let result = Err(internal(&format!("cannot start a handler thread: {e}")));
                let _ = st.machine.respond(Instant::now(), id, result);
            }
        }
    }
}

impl<W: Write + Send + 'static> Link for ServerSession<W> {
    fn progress(
        &self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        self.drive(Role::Other, |st, now| st.machine.progress(now, id, progress, total, message))
    }

    fn log(&self, related: &RequestId, level: LoggingLevel, data: Value) -> Result<(), UsageError> {
        self.drive(Role::Other, |st, now| st.machine.log(now, Some(related), level, None, data))
    }

    fn peer(
        &self,
        related: &RequestId,
        method: &'static str,
        params: RawJson,
    ) -> Result<RawJson, CallError> {
        let slot: PeerSlot = Arc::new(Slot::new());
        self.drive(Role::Other, |st, now| {
            let opts = RequestOptions::default();
            let id = st.machine.request(now, Some(related), method, Some(params), opts)?;
            st.peer_waiters.insert(id, slot.clone());
            Ok(())
        })
        .map_err(CallError::Usage)?;
        slot.wait()
    }
}

fn internal(detail: &str) -> ErrorObject {
    Rejection::Internal(detail.to_owned()).to_jsonrpc()
}
