//! The one [`Router`] every connection of an HTTP server feeds, behind a mutex, with its
//! [`Dispatch`]: the part of an HTTP server's shared state that is the same on every
//! executor.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use super::{Dispatch, Inbound, ServerStats, Step};
use crate::error::UsageError;
use crate::handler::HandlerResult;
use crate::http::server::{Router, SessionId};
use crate::io::{Input, StreamId, Transmit};
use crate::jsonrpc::{RawJson, RequestId};
use crate::runtime::{not_reading, CallKey, CallKeys, CancelFlag, Inbox, OwnedEvent};
use crate::runtime::{PeerCall, ReplySlot, Report};
use crate::server::{Broadcast, Call, CallContext, ListKind, Registry};

/// Where the hub sends the transmits of the exchanges one connection carries (the hub
/// holds it in an `Arc`). The hub calls it with its lock held: it must not call the hub
/// back.
pub trait HubConn {
    /// Hands `transmit` to the connection; `Err` gives it back when the connection is gone
    /// (the router hears that from the connection) or refuses it (see
    /// [`passed_limit`](Self::passed_limit)).
    fn send(&self, transmit: Transmit) -> Result<(), Transmit>;

    /// `Some(limit)` once the connection refused a transmit because its client stopped
    /// reading past `limit` bytes: the hub fails that exchange at once.
    fn passed_limit(&self) -> Option<usize> {
        None
    }
}

/// A connection task's inbox (zest-tokio, zest-smol): a refused transmit past its byte
/// limit means the client does not read.
impl HubConn for Inbox<Transmit> {
    fn send(&self, transmit: Transmit) -> Result<(), Transmit> {
        Self::send(self, transmit)
    }

    fn passed_limit(&self) -> Option<usize> {
        self.gave_up_at()
    }
}

/// What a runtime supplies to its [`Hub`].
pub trait HubHost: Sized + Send + Sync + 'static {
    /// The router's handler type.
    type Handler: Clone;
    /// A connection, as the hub sends to it.
    type Conn: HubConn + Send + Sync;
    /// A running handler's task, as [`stop`](Self::stop) stops it.
    type Task: Send;
    /// Where the outcome of a handler's request to the client goes.
    type Reply: ReplySlot + Send;

    /// The host polls each handler once as it starts it, so a POST whose handlers are all
    /// done by then is answered with one JSON body: the hub has the router decide answers
    /// right after every start (rather than after the router's `json_wait`).
    const POLLS_ONCE: bool;

    /// The clock.
    fn now(&self) -> Instant;

    /// The router's next deadline is now `next`: wake the timer if it sleeps past it.
    /// Called with the hub locked; must not call the hub.
    fn rearm(&self, next: Option<Instant>);

    /// Starts the handlers the router asked for, unlocked; each one's answer goes to
    /// [`Hub::answer`] (a task it needs is filed with [`Hub::started`]).
    fn start(hub: &Arc<Hub<Self>>, starts: Vec<Start<Self::Handler>>);

    /// Stops handler tasks that were cancelled or whose session ended, unlocked (their
    /// cancellation flags are already set).
    fn stop(&self, tasks: Vec<Self::Task>);

    /// No handler runs any more: wake a shutdown waiting for that.
    fn idle(&self);

    /// Called after every hub operation, unlocked (zest-blocking writes what the router
    /// queued for the connection this thread serves).
    fn after(&self) {}
}

/// A handler the router asked for, for [`HubHost::start`].
#[derive(Debug)]
pub struct Start<H> {
    /// The session the call belongs to.
    pub session: SessionId,
    /// The client's request id.
    pub id: RequestId,
    /// The registered handler.
    pub handler: H,
    /// What to do.
    pub call: Box<Call>,
    /// The flag the handler's context reads; set when the call is cancelled.
    pub cancelled: CancelFlag,
    /// The session as the handler sees it.
    pub context: CallContext,
}

impl<H> Start<H> {
    /// True when closing the connection that carries this call cancels it (2026-07-28, where
    /// a closed stream is the client's cancellation): a runtime must notice that close while
    /// the handler runs, so a handler it runs on the connection's reader needs the socket
    /// read elsewhere meanwhile, at least once it runs for long.
    pub fn ends_with_its_connection(&self) -> bool {
        self.context.session.as_ref().is_some_and(|s| !s.protocol_version.is_session_era())
    }
}

/// The shared state of one HTTP server.
///
/// The one [`Router`] every connection of an HTTP server feeds, behind a mutex, with its
/// [`Dispatch`]: the part of an HTTP server's shared state that is the same on every
/// executor.
///
/// Whoever has an input (a connection with a request's bytes, a handler with its answer, a
/// report or a request to the client, the timer with a due deadline) calls the hub, which
/// locks, feeds the router, performs every output and unlocks. Transmits go to their
/// connection while the lock is held, so the transmits of one stream keep their order
/// whoever produced them. What must not run under the lock (starting handlers, stopping
/// their tasks, waking a shutdown) the hub asks of its [`HubHost`] once unlocked.
///
/// A runtime supplies the host (its clock, its way to start and stop handlers, its timer
/// and idle wake-ups) and keeps only its loops: the listener, the connection tasks, the
/// timer that sleeps until [`Hub::tick`]'s deadline, and the shutdown's waits.
pub struct Hub<H: HubHost> {
    state: Mutex<State<H>>,
    host: H,
    keys: CallKeys,
}

struct State<H: HubHost> {
    router: Router<H::Handler>,
    dispatch: Dispatch<Arc<H::Conn>, H::Task, H::Reply>,
    /// The deadline last given to [`HubHost::rearm`].
    armed: Option<Instant>,
}

/// What one locked operation left for the host, performed unlocked.
struct Unlocked<H: HubHost> {
    starts: Vec<Start<H::Handler>>,
    stopped: Vec<H::Task>,
    /// A handler finished or stopped and none runs now.
    idle: bool,
}

impl<H: HubHost> Hub<H> {
    /// A hub around `router`, on `host`.
    pub fn new(router: Router<H::Handler>, host: H) -> Arc<Self> {
        let state = State { router, dispatch: Dispatch::new(), armed: None };
        Arc::new(Self { state: Mutex::new(state), host, keys: CallKeys::new() })
    }

    /// The host.
    pub fn host(&self) -> &H {
        &self.host
    }

    /// Feeds one connection's inputs; `conn` carries the exchanges they accept. The
    /// handlers they ask for start through the host.
    pub fn feed(self: &Arc<Self>, inputs: &[Inbound], conn: &Arc<H::Conn>) {
        let now = self.host.now();
        self.with(|st| Self::track_all(st, now, inputs, conn));
    }

    /// [`feed`](Self::feed), but the handlers the inputs ask for are returned, not started:
    /// the caller starts them (a blocking connection's reader runs one itself) with
    /// [`HubHost::start`] or by calling them and passing their answers to
    /// [`answer`](Self::answer).
    pub fn feed_taking(
        self: &Arc<Self>,
        inputs: &[Inbound],
        conn: &Arc<H::Conn>,
    ) -> Vec<Start<H::Handler>> {
        let now = self.host.now();
        let ((), mut unlocked) = self.locked(|st| Self::track_all(st, now, inputs, conn));
        let starts = std::mem::take(&mut unlocked.starts);
        self.finish(unlocked);
        starts
    }

    /// Time passed: fires the router's deadlines that are due. Returns the next one.
    pub fn tick(self: &Arc<Self>) -> Option<Instant> {
        let now = self.host.now();
        self.with(|st| {
            if st.router.poll_timeout().is_some_and(|t| t <= now) {
                st.router.handle_input(Input::Timeout(now));
            }
            st.router.poll_timeout()
        })
    }

    /// How many handlers run now.
    pub fn running(&self) -> usize {
        self.lock().dispatch.running()
    }

    /// How many sessions the router holds.
    pub fn session_count(&self) -> usize {
        self.lock().router.session_count()
    }

    /// What the router and the dispatch hold now.
    pub fn stats(&self) -> ServerStats {
        let st = self.lock();
        st.dispatch.stats(&st.router)
    }

    /// Ends every session: its streams close and its handlers stop.
    pub fn close_sessions(self: &Arc<Self>) {
        let now = self.host.now();
        self.with(|st| {
            let ids: Vec<SessionId> = st.router.sessions().cloned().collect();
            for id in ids {
                st.router.close_session(now, &id);
            }
        });
    }

    /// Changes the shared registry and announces the lists in `changed`.
    pub fn change_registry(
        self: &Arc<Self>,
        changed: &[ListKind],
        change: impl FnOnce(&mut Registry<H::Handler>),
    ) {
        let now = self.host.now();
        self.with(|st| st.router.change_registry(now, changed, change));
    }

    /// Applies a server handle's command to every session.
    pub fn broadcast(self: &Arc<Self>, command: Broadcast<H::Handler>) {
        let now = self.host.now();
        self.with(|st| command.apply_all(now, &mut st.router));
    }

    /// Has the router decide the answers of the POSTs whose handlers have all had their
    /// first poll (see [`HubHost::POLLS_ONCE`]).
    pub fn decide_answers(self: &Arc<Self>) {
        self.with(|st| st.router.decide_answers());
    }

    /// Files the task started for `start`'s call. `Err(task)` when the call was cancelled,
    /// or its session ended, meanwhile: stop the task.
    pub fn started(&self, session: SessionId, id: RequestId, task: H::Task) -> Result<(), H::Task> {
        self.lock().dispatch.started(session, id, task)
    }

    /// A handler finished with `result`: it answers its call, unless the call was cancelled
    /// or its session ended meanwhile.
    pub fn answer(
        self: &Arc<Self>,
        session: SessionId,
        id: RequestId,
        result: HandlerResult<RawJson>,
    ) {
        let now = self.host.now();
        let (idle, mut unlocked) = self.locked(|st| {
            st.dispatch.answer(&mut st.router, now, &session, id, result);
            st.dispatch.running() == 0
        });
        unlocked.idle |= idle;
        self.perform(unlocked);
    }

    /// A handler's progress report or log record, applied to its session;
    /// `Err(UsageError::Closed)` once the session is gone.
    pub fn report(self: &Arc<Self>, session: &SessionId, report: Report) -> Result<(), UsageError> {
        let now = self.host.now();
        self.with(|st| st.dispatch.report(&mut st.router, now, session, report))
    }

    /// A fresh key for a handler's request to the client.
    pub fn next_key(&self) -> CallKey {
        self.keys.next()
    }

    /// A handler's request to the client, filed under `key` with `reply` for its one
    /// outcome (`Usage(Closed)` at once when the session is gone).
    pub fn ask(
        self: &Arc<Self>,
        session: &SessionId,
        key: CallKey,
        reply: H::Reply,
        call: PeerCall,
    ) {
        let now = self.host.now();
        self.with(|st| st.dispatch.ask(&mut st.router, now, session, key, reply, call));
    }

    /// The handler stopped waiting for its request `key`: the request is cancelled.
    pub fn stop_waiting(self: &Arc<Self>, session: &SessionId, key: CallKey) {
        let now = self.host.now();
        self.with(|st| st.dispatch.stop_waiting(&mut st.router, now, session, key));
    }

    fn track_all(st: &mut State<H>, now: Instant, inputs: &[Inbound], conn: &Arc<H::Conn>) {
        for input in inputs {
            st.dispatch.track(input, conn);
            input.feed(now, &mut st.router);
        }
    }

    /// Runs `f` under the lock, performs the router's outputs, then (unlocked) what they
    /// left for the host.
    fn with<T>(self: &Arc<Self>, f: impl FnOnce(&mut State<H>) -> T) -> T {
        let (out, unlocked) = self.locked(f);
        self.perform(unlocked);
        out
    }

    fn perform(self: &Arc<Self>, mut unlocked: Unlocked<H>) {
        let starts = std::mem::take(&mut unlocked.starts);
        self.finish(unlocked);
        if !starts.is_empty() {
            H::start(self, starts);
            if H::POLLS_ONCE {
                self.decide_answers();
            }
        }
    }

    fn finish(&self, unlocked: Unlocked<H>) {
        if !unlocked.stopped.is_empty() {
            self.host.stop(unlocked.stopped);
        }
        if unlocked.idle {
            self.host.idle();
        }
        self.host.after();
    }

    fn locked<T>(&self, f: impl FnOnce(&mut State<H>) -> T) -> (T, Unlocked<H>) {
        let mut unlocked = Unlocked { starts: Vec::new(), stopped: Vec::new(), idle: false };
        let mut st = self.lock();
        let out = f(&mut st);
        self.drain(&mut st, &mut unlocked);
        (out, unlocked)
    }

    fn lock(&self) -> MutexGuard<'_, State<H>> {
        // A panic while locked leaves the router as it was between two inputs: go on.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Performs every router output; a connection that refused a transmit past its limit
    /// fails that exchange, and the outputs that follow are performed too.
    fn drain(&self, st: &mut State<H>, unlocked: &mut Unlocked<H>) {
        let mut cut: Vec<(StreamId, Arc<H::Conn>, usize)> = Vec::new();
        loop {
            self.drain_once(st, unlocked, &mut cut);
            if cut.is_empty() {
                break;
            }
            let now = self.host.now();
            for (stream, conn, limit) in cut.drain(..) {
                let input = Inbound { stream, event: OwnedEvent::Failed(not_reading(limit)) };
                st.dispatch.track(&input, &conn);
                input.feed(now, &mut st.router);
            }
        }
        // A drain that asked for handlers a host polls once leaves the timer to the decision
        // that follows their first poll: it clears the `json_wait` deadline of each POST
        // they serve, which the timer then never needs to see.
        if H::POLLS_ONCE && !unlocked.starts.is_empty() {
            return;
        }
        let next = st.router.poll_timeout();
        if next != st.armed {
            st.armed = next;
            self.host.rearm(next);
        }
    }

    fn drain_once(
        &self,
        st: &mut State<H>,
        unlocked: &mut Unlocked<H>,
        cut: &mut Vec<(StreamId, Arc<H::Conn>, usize)>,
    ) {
        while let Some(output) = st.router.poll_output() {
            match st.dispatch.route(output) {
                Step::Nothing => {}
                Step::Send { conn, transmit } => {
                    if let Err(transmit) = conn.send(transmit) {
                        let stream = transmit.stream();
                        let known = cut.iter().any(|(s, ..)| *s == stream);
                        if let (Some(limit), false) = (conn.passed_limit(), known) {
                            cut.push((stream, conn, limit));
                        }
                    }
                }
                Step::Run { session, id, handler, call, cancelled, context } => {
                    unlocked.starts.push(Start { session, id, handler, call, cancelled, context });
                }
                Step::Stop(tasks) => {
                    unlocked.stopped.extend(tasks);
                    unlocked.idle |= st.dispatch.running() == 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
