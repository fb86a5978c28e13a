//! The one [`Router`] every connection of a server feeds, behind a mutex, and what its
//! outputs set going: transmits to the connections that carry their streams, handlers for
//! calls, outcomes to handlers waiting on the client.
//!
//! Whichever thread has an input (a connection with a request's bytes, a handler with its
//! answer, a report or a request to the client, the timer with a due deadline) locks the
//! hub, feeds the router, drains it and unlocks. The handler a connection's request asks for
//! goes back to that connection's reader, which runs it ([`Hub::run_here`]); others run on
//! threads of their own. Every transmit is queued on its connection while the lock is held,
//! so transmits of one stream keep their order whoever produced them; a thread serving that
//! connection writes them after its hub operation, any other wakes the connection's writer.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use zest_core::api::CallError;
use zest_core::error::{Rejection, UsageError};
use zest_core::handler::{HandlerResult, SyncHandler};
use zest_core::http::server::{Router, SessionId};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::runtime::http_server::{Dispatch, Inbound, ServerStats, Step};
use zest_core::runtime::{CallKeys, CancelFlag, PeerCall, Report};
use zest_core::server::{Broadcast, Call, CallContext, ListKind};

use super::conn::{self, ToConn};
use crate::link::{lock, CallSlot, Signal, Slot};
use crate::server::{handle_on, Broadcaster, Feed, RequestContext, ServerHandle, SessionLink};
use crate::workers::Workers;

/// The router's handler type.
type Handler = SyncHandler<RequestContext>;

/// The shared server state.
pub(super) struct Hub {
    state: Mutex<State>,
    /// The timer thread's deadline, and the shutdown's wait for idle handlers.
    bell: Mutex<Bell>,
    /// Wakes the timer thread for a deadline sooner than the one it sleeps until.
    rung: Signal,
    /// Wakes the shutdown waiting for handlers to finish.
    idle: Signal,
    keys: CallKeys,
    workers: Workers,
}

struct State {
    router: Router<Handler>,
    /// Which connection carries each exchange, which handler runs for which call, and each
    /// session's requests to the client (zest-core's, shared with every runtime). A blocking
    /// handler cannot be stopped from outside, so its "task" is nothing: its context's
    /// cancellation flag is what it sees.
    dispatch: Dispatch<ToConn, (), CallSlot>,
}

#[derive(Default)]
struct Bell {
    /// The router's next deadline, as the timer thread should see it.
    armed: Option<Instant>,
    /// When the timer thread wakes next by itself (`None`: it waits to be rung).
    wakes_at: Option<Instant>,
    /// The timer thread stops.
    stopped: bool,
}

impl Hub {
    pub(super) fn new(router: Router<Handler>) -> Arc<Self> {
        let state = State { router, dispatch: Dispatch::new() };
        Arc::new(Self {
            state: Mutex::new(state),
            bell: Mutex::default(),
            rung: Signal::default(),
            idle: Signal::default(),
            keys: CallKeys::new(),
            workers: Workers::new("zest-http-handler"),
        })
    }

    /// Feeds one connection's inputs; `conn` carries the exchanges they accept. Writes what
    /// the router sent the connection, and returns the handlers it asked for: the caller runs
    /// them with [`run_here`](Self::run_here) or [`spawn`](Self::spawn).
    pub(super) fn feed(self: &Arc<Self>, inputs: &[Inbound], conn: &ToConn) -> Vec<Start> {
        let now = Instant::now();
        let ((), starts) = self.locked(|st| {
            for input in inputs {
                st.dispatch.track(input, conn);
                input.feed(now, &mut st.router);
            }
        });
        conn::flush_serving();
        starts
    }

    /// The timer thread: sleeps until the router's next deadline and fires it, until
    /// [`stop_timer`](Self::stop_timer).
    pub(super) fn run_timer(self: &Arc<Self>) {
        let mut bell = lock(&self.bell);
        loop {
            if bell.stopped {
                return;
            }
            let due = bell.armed.filter(|at| *at <= Instant::now());
            if due.is_some() {
                drop(bell);
                let now = Instant::now();
                self.with(|st| {
                    if st.router.poll_timeout().is_some_and(|t| t <= now) {
                        st.router.handle_input(zest_core::io::Input::Timeout(now));
                    }
                });
                // Re-arm from the router itself (a deadline the drain left as it was may not
                // be due by the router's clock yet). The state lock, held until the bell is
                // set, keeps another drain's deadline from landing in between and being lost.
                let st = self.lock();
                bell = lock(&self.bell);
                bell.armed = st.router.poll_timeout();
                drop(st);
                continue;
            }
            bell.wakes_at = bell.armed;
            bell = match bell.armed {
                Some(at) => {
                    let wait = at.saturating_duration_since(Instant::now());
                    self.rung.wait_timeout(bell, wait).0
                }
                None => self.rung.wait(bell),
            };
        }
    }

    pub(super) fn stop_timer(&self) {
        let mut bell = lock(&self.bell);
        bell.stopped = true;
        self.rung.notify_all();
    }

    /// Waits until no handler runs, or until `deadline`.
    pub(super) fn wait_idle(&self, deadline: Instant) {
        while self.running() > 0 {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            // Woken when a handler finishes; the slice bounds a wake-up lost between the
            // count and the wait.
            let bell = lock(&self.bell);
            let slice = (deadline - now).min(Duration::from_millis(50));
            drop(self.idle.wait_timeout(bell, slice));
        }
    }

    /// How many handlers run now.
    pub(super) fn running(&self) -> usize {
        self.lock().dispatch.running()
    }

    /// Ends every session: its streams close and its handlers see cancellation.
    pub(super) fn close_sessions(self: &Arc<Self>) {
        let now = Instant::now();
        self.with(|st| {
            let ids: Vec<SessionId> = st.router.sessions().cloned().collect();
            for id in ids {
                st.router.close_session(now, &id);
            }
        });
    }

    /// Changes the shared registry and announces the lists in `changed`.
    /// A server handle on every session of this hub.
    pub(super) fn handle(self: &Arc<Self>) -> ServerHandle {
        let me: Arc<dyn Broadcaster> = self.clone();
        handle_on(Arc::downgrade(&me))
    }

    pub(super) fn change_registry(
        self: &Arc<Self>,
        changed: &[ListKind],
        change: impl FnOnce(&mut zest_core::server::Registry<Handler>),
    ) {
        let now = Instant::now();
        self.with(|st| st.router.change_registry(now, changed, change));
    }

    /// How many sessions the router holds.
    pub(super) fn session_count(&self) -> usize {
        self.lock().router.session_count()
    }

    /// What the router and the dispatch hold now.
    pub(super) fn stats(&self) -> ServerStats {
        let st = self.lock();
        st.dispatch.stats(&st.router)
    }

    /// Runs `f` on the state under the lock and drains the router, then (unlocked) starts
    /// the handlers the router asked for on threads of their own and, on a thread serving a
    /// connection, writes what the router sent that connection.
    fn with<T>(self: &Arc<Self>, f: impl FnOnce(&mut State) -> T) -> T {
        let (out, starts) = self.locked(f);
        self.spawn(starts);
        conn::flush_serving();
        out
    }

    /// Runs `f` on the state under the lock and drains the router; returns what `f` did and
    /// the handlers the router asked for.
    fn locked<T>(&self, f: impl FnOnce(&mut State) -> T) -> (T, Vec<Start>) {
        let mut starts = Vec::new();
        let mut st = self.lock();
        let out = f(&mut st);
        self.drain(&mut st, &mut starts);
        (out, starts)
    }

    /// Runs one handler on this thread (a connection's reader, whose exchange waits for
    /// the answer anyway); `returned` runs once it has returned, before its answer is fed.
    pub(super) fn run_here(self: &Arc<Self>, start: Start, returned: impl FnOnce()) {
        let (session, id, result) = self.run(start);
        returned();
        self.answer(session, id, result);
    }

    /// Runs handlers on threads of their own.
    pub(super) fn spawn(self: &Arc<Self>, starts: Vec<Start>) {
        for start in starts {
            let (session, id) = (start.session.clone(), start.id.clone());
            let hub = self.clone();
            if let Err(e) = self.workers.run(move || hub.call(start)) {
                let why = format!("cannot start a handler thread: {e}");
                self.answer(session, id, Err(internal(&why)));
            }
        }
    }

    /// Calls a handler on this thread and feeds its answer.
    fn call(self: &Arc<Self>, start: Start) {
        let (session, id, result) = self.run(start);
        self.answer(session, id, result);
    }

    /// Calls a handler on this thread; one that panics is answered with an internal error.
    fn run(self: &Arc<Self>, start: Start) -> (SessionId, RequestId, HandlerResult<RawJson>) {
        let Start { session, id, handler, call, cancelled, context } = start;
        let feed = HttpFeed { hub: self.clone(), session: session.clone() };
        let link = SessionLink::new(Arc::new(feed), self.handle());
        let ctx = RequestContext::new(id.clone(), cancelled, link).with_session(context);
        let result = catch_unwind(AssertUnwindSafe(|| handler.run(&ctx, *call)))
            .unwrap_or_else(|_| Err(internal("the handler panicked")));
        (session, id, result)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while locked leaves the router as it was between two inputs: go on.
        lock(&self.state)
    }

    /// Performs every router output. Answers are not decided here: handlers run on threads,
    /// so the router decides each POST when its answer is clear or after `json_wait`.
    fn drain(&self, st: &mut State, starts: &mut Vec<Start>) {
        self.drain_outputs(st, starts);
        let next = st.router.poll_timeout();
        let mut bell = lock(&self.bell);
        bell.armed = next;
        // Only a deadline sooner than the timer thread's own wake-up needs it woken: woken
        // at a later one, it finds nothing due and sleeps again (so a call answered before
        // its `json_wait` costs the timer thread nothing).
        let sooner = match (next, bell.wakes_at) {
            (Some(next), Some(wakes)) => next < wakes,
            (next, None) => next.is_some(),
            (None, Some(_)) => false,
        };
        if sooner {
            bell.wakes_at = next;
            self.rung.notify_all();
        }
    }

    fn drain_outputs(&self, st: &mut State, starts: &mut Vec<Start>) {
        while let Some(output) = st.router.poll_output() {
            match st.dispatch.route(output) {
                Step::Nothing => {}
                // The connection may be gone; the router hears that from it.
                Step::Send { conn, transmit } => conn.send(transmit),
                Step::Run { session, id, handler, call, cancelled, context } => {
                    // Filed at once: a cancellation from now on sets the flag and counts it
                    // out of `running`.
                    let _ = st.dispatch.started(session.clone(), id.clone(), ());
                    starts.push(Start { session, id, handler, call, cancelled, context });
                }
                Step::Stop(_) => self.ring(),
            }
        }
    }

    /// A handler finished.
    fn answer(self: &Arc<Self>, session: SessionId, id: RequestId, result: HandlerResult<RawJson>) {
        let now = Instant::now();
        self.with(|st| {
            if st.dispatch.finished(&session, &id) {
                if let Some(machine) = st.router.session_mut(&session) {
                    // Err only if the session closed meanwhile; the answer has nowhere to go.
                    let _ = machine.respond(now, id, result);
                }
            }
            // (Not finished: cancelled meanwhile, and its answer is dropped.)
        });
        self.ring();
    }

    /// Wakes the shutdown if it waits for idle handlers.
    fn ring(&self) {
        let _bell = lock(&self.bell);
        self.idle.notify_all();
    }
}

/// A handler the router asked for, started once the lock is released.
pub(super) struct Start {
    session: SessionId,
    id: RequestId,
    handler: Handler,
    call: Box<Call>,
    cancelled: CancelFlag,
    context: CallContext,
}

fn internal(detail: &str) -> ErrorObject {
    Rejection::Internal(detail.to_owned()).to_jsonrpc()
}

impl Broadcaster for Hub {
    fn broadcast(self: Arc<Self>, command: Broadcast<Handler>) {
        let now = Instant::now();
        self.with(|st| command.apply_all(now, &mut st.router));
    }
}

/// The HTTP end of a handler's [`SessionLink`]: its line to its session in the router.
struct HttpFeed {
    hub: Arc<Hub>,
    session: SessionId,
}

impl Feed for HttpFeed {
    fn report(&self, report: Report) -> Result<(), UsageError> {
        let now = Instant::now();
        self.hub.with(|st| match st.router.session_mut(&self.session) {
            Some(machine) => report.apply(now, machine),
            None => Err(UsageError::Closed),
        })
    }

    fn peer_request(&self, call: PeerCall) -> Result<RawJson, CallError> {
        let key = self.hub.keys.next();
        let slot = Arc::new(Slot::new());
        let reply = CallSlot(slot.clone());
        let now = Instant::now();
        self.hub.with(|st| {
            let State { router, dispatch } = st;
            match router.session_mut(&self.session) {
                Some(machine) => {
                    dispatch.peer_request(&self.session, key, reply, || call.send(now, machine));
                }
                None => slot.set(Err(CallError::Usage(UsageError::Closed))),
            }
        });
        // The machine's request timeout, the client's answer or the session's end settles it.
        slot.wait()
    }
}
