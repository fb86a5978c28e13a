//! zest-core's [`Hub`](zest_core::runtime::http_server::Hub) on threads: what this
//! runtime supplies to the one router every connection feeds.
//!
//! Whichever thread has an input (a connection with a request's bytes, a handler with its
//! answer, the timer with a due deadline) calls the hub. The handler a connection's request
//! asks for goes back to that connection's reader, which runs it ([`HubExt::run_here`]);
//! others run on threads of their own. A call that its connection's close cancels
//! (2026-07-28) runs there too: the timer thread has another thread read the socket once it
//! has run for [`WATCH_AFTER`] ([`HubExt::watch_close`]); the accepting thread's own
//! serving is watched the same way ([`HubExt::watch`]). Transmits are queued on
//! their connection while the hub is locked; a thread serving that connection writes them
//! after its hub operation, any other wakes the connection's writer.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zest_core::api::CallError;
use zest_core::error::{Rejection, UsageError};
use zest_core::handler::{HandlerResult, SyncHandler};
use zest_core::http::server::SessionId;
use zest_core::io::{StreamId, Transmit};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::runtime::answer_caught;
use zest_core::runtime::http_server::{self, HubConn, HubHost, Start};
use zest_core::runtime::{PeerCall, Report};
use zest_core::server::Broadcast;

use super::conn::{self, Conn};
use crate::link::{lock, CallSlot, Signal, Slot};
use crate::server::{handle_on, Broadcaster, Feed, RequestContext, ServerHandle, SessionLink};
use crate::workers::Workers;

/// The router's handler type.
type Handler = SyncHandler<RequestContext>;

/// The shared server state.
pub(super) type Hub = http_server::Hub<Threads>;

/// A handler the router asked for.
pub(super) type Started = Start<Handler>;

/// How long a thread may be busy with one thing before the timer thread has another take up
/// what it would otherwise hold back: a call that its connection's close cancels, run on
/// the connection's reader, before another thread reads the socket for that close; a
/// connection served on the accepting thread, before another thread accepts and polls. A
/// quick call (most tools) never needs that thread; a longer one is rescued this much later,
/// or up to twice this: the timer thread takes the due watches at most once per this period
/// (one wake-up per call cost a tenth of the server's time under concurrent quick calls).
pub(super) const WATCH_AFTER: Duration = Duration::from_millis(5);

/// The hub's host on threads. A blocking handler cannot be stopped from outside, so its
/// "task" is nothing: its context's cancellation flag is what it sees.
pub(super) struct Threads {
    /// The timer thread's deadline, and the shutdown's wait for idle handlers.
    timer: Mutex<TimerState>,
    /// Wakes the timer thread for a deadline sooner than the one it sleeps until.
    sooner: Signal,
    /// Wakes the shutdown waiting for handlers to finish.
    idle: Signal,
    workers: Workers,
}

#[derive(Default)]
struct TimerState {
    /// The router's next deadline, as the timer thread should see it.
    armed: Option<Instant>,
    /// When the timer thread wakes next by itself (`None`: it waits to be woken).
    wakes_at: Option<Instant>,
    /// The timer thread stops.
    stopped: bool,
    /// What must be rescued if still running once due, oldest first (each due
    /// [`WATCH_AFTER`] after it started, so in deadline order).
    watches: VecDeque<Watch>,
    /// When the timer thread last took the due watches.
    swept: Option<Instant>,
}

/// Something running on a thread that others wait behind (see [`HubExt::watch`]).
struct Watch {
    at: Instant,
    /// Run by the timer thread once due; it finds out itself whether what it watched still
    /// runs.
    rescue: Box<dyn FnOnce() + Send>,
}

impl TimerState {
    /// When the timer thread must wake next: the router's deadline or the oldest watch.
    fn next(&self) -> Option<Instant> {
        let watch = self.watches.front().map(|w| self.sweep_at(w.at));
        self.armed.into_iter().chain(watch).min()
    }

    /// When a watch due at `at` is taken: no sooner than a period after the last sweep.
    fn sweep_at(&self, at: Instant) -> Instant {
        self.swept.map_or(at, |swept| at.max(swept + WATCH_AFTER))
    }

    /// Takes every watch due by `now`.
    fn sweep(&mut self, now: Instant) -> Vec<Watch> {
        let due = self.watches.iter().take_while(|w| w.at <= now).count();
        self.swept = Some(now);
        self.watches.drain(..due).collect()
    }

    /// Wakes the timer thread if `at` comes before its own wake-up.
    fn wake_by(&mut self, at: Instant, sooner: &Signal) {
        if self.wakes_at.is_none_or(|wakes| at < wakes) {
            self.wakes_at = Some(at);
            sooner.notify_all();
        }
    }
}

impl Threads {
    pub(super) fn new() -> Self {
        Self {
            timer: Mutex::default(),
            sooner: Signal::default(),
            idle: Signal::default(),
            workers: Workers::new("zest-http-handler"),
        }
    }
}

impl HubConn for Conn {
    fn send(&self, transmit: Transmit) -> Result<(), Transmit> {
        // The connection may be gone, or cut; the router hears that from it.
        self.queue_transmit(transmit);
        Ok(())
    }
}

impl HubHost for Threads {
    type Handler = Handler;
    type Conn = Conn;
    type Task = ();
    type Reply = CallSlot;
    /// Handlers run on threads: the router decides each POST when its answer is clear, or
    /// after `json_wait`.
    const POLLS_ONCE: bool = false;

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn rearm(&self, next: Option<Instant>) {
        let mut timer = lock(&self.timer);
        timer.armed = next;
        // Only a deadline sooner than the timer thread's own wake-up needs it woken: woken
        // at a later one, it finds nothing due and sleeps again (so a call answered before
        // its `json_wait` costs the timer thread nothing).
        if let Some(next) = next {
            timer.wake_by(next, &self.sooner);
        }
    }

    fn start(hub: &Arc<Hub>, starts: Vec<Started>) {
        start_on_workers(hub, starts, None);
    }

    fn stop(&self, _tasks: Vec<()>) {}

    fn idle(&self) {
        let _bell = lock(&self.timer);
        self.idle.notify_all();
    }

    fn after(&self) {
        conn::flush_serving();
    }
}

/// What this runtime does with its hub besides core's operations.
pub(super) trait HubExt {
    /// Runs handlers on threads of their own.
    fn spawn(&self, starts: Vec<Started>);
    /// Runs handlers `conn` asked for on threads of their own, which write to `conn`
    /// themselves while they run.
    fn spawn_serving(&self, conn: &Arc<Conn>, starts: Vec<Started>);
    /// Runs one handler on this thread (a connection's reader, whose exchange waits for
    /// the answer anyway); `returned` runs once it has returned, before its answer is fed.
    fn run_here(&self, start: Started, returned: impl FnOnce());
    /// The call on `stream` runs on `conn`'s reader and its connection's close cancels it:
    /// if it still runs [`WATCH_AFTER`] from now (or up to twice that: see there), the
    /// timer thread has another thread read the socket ([`Conn::read_aside`]).
    fn watch_close(&self, conn: &Arc<Conn>, stream: StreamId);
    /// Has the timer thread run `rescue` [`WATCH_AFTER`] from now (up to twice that).
    fn watch(&self, rescue: Box<dyn FnOnce() + Send>);
    /// The timer thread: sleeps until the router's next deadline and fires it, until
    /// [`stop_timer`](Self::stop_timer).
    fn run_timer(&self);
    fn stop_timer(&self);
    /// Waits until no handler runs, or until `deadline`.
    fn wait_idle(&self, deadline: Instant);
    /// A server handle on every session of this hub.
    fn handle(&self) -> ServerHandle;
}

impl HubExt for Arc<Hub> {
    fn spawn(&self, starts: Vec<Started>) {
        Threads::start(self, starts);
    }

    fn spawn_serving(&self, conn: &Arc<Conn>, starts: Vec<Started>) {
        start_on_workers(self, starts, Some(conn));
    }

    fn run_here(&self, start: Started, returned: impl FnOnce()) {
        let (session, id, result) = run(self, start);
        returned();
        self.answer(session, id, result);
    }

    fn run_timer(&self) {
        let host = self.host();
        let mut timer = lock(&host.timer);
        loop {
            if timer.stopped {
                return;
            }
            let now = Instant::now();
            if timer.armed.is_some_and(|at| at <= now) {
                drop(timer);
                // Fires what is due; the drain re-arms the timer with the next deadline.
                self.tick();
                timer = lock(&host.timer);
                continue;
            }
            if timer.watches.front().is_some_and(|w| timer.sweep_at(w.at) <= now) {
                let due = timer.sweep(now);
                drop(timer);
                for watch in due {
                    (watch.rescue)();
                }
                timer = lock(&host.timer);
                continue;
            }
            timer.wakes_at = timer.next();
            timer = match timer.wakes_at {
                Some(at) => {
                    let wait = at.saturating_duration_since(Instant::now());
                    host.sooner.wait_timeout(timer, wait).0
                }
                None => host.sooner.wait(timer),
            };
        }
    }

    fn watch_close(&self, conn: &Arc<Conn>, stream: StreamId) {
        let conn = Arc::downgrade(conn);
        self.watch(Box::new(move || {
            if let Some(conn) = conn.upgrade() {
                conn.read_aside(stream);
            }
        }));
    }

    fn watch(&self, rescue: Box<dyn FnOnce() + Send>) {
        let host = self.host();
        let mut timer = lock(&host.timer);
        // Taken under the lock, so the watches stay in deadline order.
        let at = Instant::now() + WATCH_AFTER;
        timer.watches.push_back(Watch { at, rescue });
        let due = timer.sweep_at(at);
        timer.wake_by(due, &host.sooner);
    }

    fn stop_timer(&self) {
        let host = self.host();
        lock(&host.timer).stopped = true;
        host.sooner.notify_all();
    }

    fn wait_idle(&self, deadline: Instant) {
        while self.running() > 0 {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            // Woken when a handler finishes; the slice bounds a wake-up lost between the
            // count and the wait.
            let timer = lock(&self.host().timer);
            let slice = (deadline - now).min(Duration::from_millis(50));
            drop(self.host().idle.wait_timeout(timer, slice));
        }
    }

    fn handle(&self) -> ServerHandle {
        let me: Arc<dyn Broadcaster> = self.clone();
        handle_on(Arc::downgrade(&me))
    }
}

/// Runs each handler on a worker thread; with `conn`, the worker serves that connection
/// while the handler runs: what the router sends it then (progress, the answer) the worker
/// writes itself instead of waking the connection's writer.
fn start_on_workers(hub: &Arc<Hub>, starts: Vec<Started>, conn: Option<&Arc<Conn>>) {
    for start in starts {
        let (session, id) = (start.session.clone(), start.id.clone());
        let task_hub = hub.clone();
        let conn = conn.cloned();
        let job = move || match conn {
            Some(conn) => conn::serving_as(conn, || call(&task_hub, start)),
            None => call(&task_hub, start),
        };
        if let Err(e) = hub.host().workers.run(job) {
            let why = format!("cannot start a handler thread: {e}");
            hub.answer(session, id, Err(internal(&why)));
        }
    }
}

/// Calls a handler on this thread and feeds its answer.
fn call(hub: &Arc<Hub>, start: Started) {
    let (session, id, result) = run(hub, start);
    hub.answer(session, id, result);
}

/// Calls a handler on this thread; one that panics is answered with an internal error.
fn run(hub: &Arc<Hub>, start: Started) -> (SessionId, RequestId, HandlerResult<RawJson>) {
    let Start { session, id, handler, call, cancelled, context } = start;
    let feed = HttpFeed { hub: hub.clone(), session: session.clone() };
    let link = SessionLink::new(Arc::new(feed), hub.handle());
    let ctx = RequestContext::new(id.clone(), cancelled, link).with_session(context);
    let result = answer_caught(|| handler.run(&ctx, *call));
    (session, id, result)
}

fn internal(detail: &str) -> ErrorObject {
    Rejection::Internal(detail.to_owned()).to_jsonrpc()
}

impl Broadcaster for Hub {
    fn broadcast(self: Arc<Self>, command: Broadcast<Handler>) {
        Self::broadcast(&self, command);
    }
}

/// The HTTP end of a handler's [`SessionLink`]: its line to its session in the router.
struct HttpFeed {
    hub: Arc<Hub>,
    session: SessionId,
}

impl Feed for HttpFeed {
    fn report(&self, report: Report) -> Result<(), UsageError> {
        self.hub.report(&self.session, report)
    }

    fn peer_request(&self, call: PeerCall) -> Result<RawJson, CallError> {
        let slot = Arc::new(Slot::new());
        self.hub.ask(&self.session, self.hub.next_key(), CallSlot(slot.clone()), call);
        // The machine's request timeout, the client's answer or the session's end settles it.
        slot.wait()
    }
}
