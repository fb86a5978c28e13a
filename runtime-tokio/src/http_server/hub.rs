//! The one [`Router`] every connection of a server feeds, behind a mutex, and what its
//! outputs set going: transmits to the connection tasks that carry their streams, handler
//! tasks for calls, outcomes to handlers waiting on the client.
//!
//! A connection task locks the hub, feeds its inputs, drains the router and unlocks: no task
//! hop between a socket and the router. Handlers the router asks for are then called and
//! polled once by that same task, unlocked: one that is done at once (most tools) is
//! answered there and then, with no spawn and no wake-up; the others continue in a task. Handler tasks do the same for their answers, reports
//! and requests to the client. Every transmit goes through its connection's inbox (also to
//! the task that drained it), sent while the lock is held, so transmits of one stream keep
//! their order whoever produced them.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use tokio::sync::Notify;
use tokio::task::AbortHandle;
use zest_core::api::CallError;
use zest_core::error::{Rejection, UsageError};
use zest_core::handler::AsyncHandler;
use zest_core::http::server::{Router, SessionId};
use zest_core::io::{StreamId, Transmit, TransportFailure};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::runtime::http_server::{Dispatch, Inbound, ServerStats, Step};
use zest_core::runtime::{CallKeys, CancelFlag, Inbox, OwnedEvent, PeerCall, Report};
use zest_core::server::{Broadcast, Call, CallContext, ListKind};

use crate::calls::{self, CatchUnwind, Reply};
use crate::server::{http_handle, RequestContext, SessionLink};

/// The router's handler type.
type Handler = AsyncHandler<RequestContext>;

/// What a connection task receives from the hub for the stream it carries: an inbox that
/// wakes the task only while it waits (a transmit the task routes to itself while it feeds
/// the hub costs no wake-up).
pub(super) type ToConn = Arc<Inbox<Transmit>>;

/// The shared server state.
pub(crate) struct Hub {
    state: Mutex<State>,
    /// Woken when the router's deadline may have moved.
    pub(super) timer: Notify,
    /// Woken when the last running handler finished.
    pub(super) idle: Notify,
    keys: CallKeys,
}

pub(super) struct State {
    pub(super) router: Router<Handler>,
    /// Which connection carries each exchange, which handler runs for which call, and each
    /// session's requests to the client (zest-core's, shared with every runtime).
    dispatch: Dispatch<ToConn, AbortHandle, Reply>,
    /// The deadline the timer task sleeps until.
    armed: Option<Instant>,
}

impl Hub {
    pub(super) fn new(router: Router<Handler>) -> Arc<Self> {
        let state = State { router, dispatch: Dispatch::new(), armed: None };
        Arc::new(Self {
            state: Mutex::new(state),
            timer: Notify::new(),
            idle: Notify::new(),
            keys: CallKeys::new(),
        })
    }

    /// Feeds one connection's inputs; `conn` carries the exchanges they accept.
    pub(super) fn feed(self: &Arc<Self>, inputs: &[Inbound], conn: &ToConn) {
        let now = Instant::now();
        self.with(|st| {
            for input in inputs {
                st.dispatch.track(input, conn);
                input.feed(now, &mut st.router);
            }
        });
    }

    /// Time passed: fires the router's deadlines. Returns the next one.
    pub(super) fn tick(self: &Arc<Self>) -> Option<Instant> {
        let now = Instant::now();
        self.with(|st| {
            if st.router.poll_timeout().is_some_and(|t| t <= now) {
                st.router.handle_input(zest_core::io::Input::Timeout(now));
            }
        });
        self.lock().router.poll_timeout()
    }

    /// How many handlers run now.
    pub(super) fn running(&self) -> usize {
        self.lock().dispatch.running()
    }

    /// Ends every session: its streams close and its handlers stop.
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
    pub(super) fn change_registry(
        self: &Arc<Self>,
        changed: &[ListKind],
        change: impl FnOnce(&mut zest_core::server::Registry<Handler>),
    ) {
        let now = Instant::now();
        self.with(|st| st.router.change_registry(now, changed, change));
    }

    /// Applies a server handle's command to every session.
    pub(crate) fn broadcast(self: &Arc<Self>, now: Instant, command: Broadcast<Handler>) {
        self.with(|st| command.apply_all(now, &mut st.router));
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
    /// the handlers the router asked for, then has the router decide the answers they
    /// serve.
    pub(super) fn with<T>(self: &Arc<Self>, f: impl FnOnce(&mut State) -> T) -> T {
        let mut starts = Vec::new();
        let out = {
            let mut st = self.lock();
            let out = f(&mut st);
            self.drain(&mut st, &mut starts);
            out
        };
        self.start_all(starts);
        out
    }

    /// Starts handlers, then has the router decide the answers they serve: each has had
    /// its first poll, so a POST they all answered gets one JSON body.
    fn start_all(self: &Arc<Self>, starts: Vec<Start>) {
        if starts.is_empty() {
            return;
        }
        for start in starts {
            self.start(start);
        }
        self.with(|st| st.router.decide_answers());
    }

    /// Calls a handler and polls it once, here, unlocked: one that is done at once is
    /// answered without a task (no spawn, no wake-up); one that is not moves into a task of
    /// its own. A handler that panics is answered with an internal error.
    fn start(self: &Arc<Self>, start: Start) {
        let Start { session, id, handler, call, cancelled, context } = start;
        let link = HttpLink { hub: self.clone(), session: session.clone() };
        let link = SessionLink::http(link, http_handle(self));
        let ctx = RequestContext::new(id.clone(), cancelled, link).with_session(context);
        let mut work = match catch_unwind(AssertUnwindSafe(|| handler.run(ctx, *call))) {
            Ok(work) => CatchUnwind(work),
            Err(_) => return self.answer(session, id, Err(panicked())),
        };
        let mut cx = Context::from_waker(Waker::noop());
        if let Poll::Ready(result) = Pin::new(&mut work).poll(&mut cx) {
            return self.answer(session, id, result);
        }
        let hub = self.clone();
        self.with(|st| {
            let (s, answer_id) = (session.clone(), id.clone());
            let task = tokio::spawn(async move {
                let result = work.await;
                hub.answer(s, answer_id, result);
            });
            if let Err(task) = st.dispatch.started(session, id, task.abort_handle()) {
                // Cancelled while it was polled: it is not wanted any more.
                task.abort();
            }
        });
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while locked leaves the router as it was between two inputs: go on.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Performs every router output.
    fn drain(self: &Arc<Self>, st: &mut State, starts: &mut Vec<Start>) {
        let mut cut: Vec<(StreamId, ToConn)> = Vec::new();
        loop {
            self.drain_once(st, starts, &mut cut);
            if cut.is_empty() {
                break;
            }
            // An SSE body its HTTP stack stopped polling gave up past its limit (the tower
            // service; its client does not read): its exchange fails now, not when the stack
            // polls it again.
            let now = Instant::now();
            for (stream, conn) in cut.drain(..) {
                let failure = TransportFailure::Reset("the client is not reading".into());
                let input = Inbound { stream, event: OwnedEvent::Failed(failure) };
                st.dispatch.track(&input, &conn);
                input.feed(now, &mut st.router);
            }
        }
        // A drain that asked for handlers leaves the timer to the decision that follows their
        // first poll (`start_all`): it clears the `json_wait` deadline of each POST they serve,
        // which the timer then never needs to see.
        if !starts.is_empty() {
            return;
        }
        let next = st.router.poll_timeout();
        if next != st.armed {
            st.armed = next;
            self.timer.notify_one();
        }
    }

    /// Performs the router's outputs until there are none.
    fn drain_once(
        self: &Arc<Self>,
        st: &mut State,
        starts: &mut Vec<Start>,
        cut: &mut Vec<(StreamId, ToConn)>,
    ) {
        while let Some(output) = st.router.poll_output() {
            match st.dispatch.route(output) {
                Step::Nothing => {}
                Step::Send { conn, transmit } => {
                    // The connection may be gone; the router hears that from it.
                    if let Err(transmit) = conn.send(transmit) {
                        let stream = transmit.stream();
                        if conn.passed_limit() && !cut.iter().any(|(s, _)| *s == stream) {
                            cut.push((stream, conn));
                        }
                    }
                }
                Step::Run { session, id, handler, call, cancelled, context } => {
                    starts.push(Start { session, id, handler, call, cancelled, context });
                }
                Step::Stop(tasks) => {
                    tasks.iter().for_each(AbortHandle::abort);
                    self.maybe_idle(st);
                }
            }
        }
    }

    /// A handler finished.
    fn answer(
        self: &Arc<Self>,
        session: SessionId,
        id: RequestId,
        result: Result<RawJson, ErrorObject>,
    ) {
        let now = Instant::now();
        self.with(|st| {
            st.dispatch.answer(&mut st.router, now, &session, id, result);
            self.maybe_idle(st);
        });
    }

    fn maybe_idle(&self, st: &State) {
        if st.dispatch.running() == 0 {
            self.idle.notify_waiters();
        }
    }
}

/// A handler the router asked for, started once the lock is released.
struct Start {
    session: SessionId,
    id: RequestId,
    handler: Handler,
    call: Box<Call>,
    cancelled: CancelFlag,
    context: CallContext,
}

fn panicked() -> ErrorObject {
    Rejection::Internal("the handler panicked".into()).to_jsonrpc()
}

/// The HTTP half of [`SessionLink`]: a handler's line to its session in the router.
#[derive(Clone)]
pub(crate) struct HttpLink {
    hub: Arc<Hub>,
    session: SessionId,
}

impl HttpLink {
    pub(crate) fn report(&self, report: Report) -> Result<(), UsageError> {
        let now = Instant::now();
        self.hub.with(|st| st.dispatch.report(&mut st.router, now, &self.session, report))
    }

    pub(crate) async fn peer_request(&self, call: PeerCall) -> Result<RawJson, CallError> {
        let key = self.hub.keys.next();
        let (reply, rx) = calls::reply();
        let now = Instant::now();
        self.hub.with(|st| st.dispatch.ask(&mut st.router, now, &self.session, key, reply, call));
        calls::outcome(rx, || {
            let now = Instant::now();
            self.hub.with(|st| st.dispatch.stop_waiting(&mut st.router, now, &self.session, key));
        })
        .await
    }
}
