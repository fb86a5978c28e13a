//! The polling thread: accepts connections and serves the parked ones that have a request,
//! itself, one after another; at most one thread polls at a time.
//!
//! A quick request (most are) is read, served and answered on the polling thread, with no
//! other thread woken. One that keeps it longer (a slow handler, a partial request, a client
//! that does not read) would hold back every other connection: the timer thread watches each
//! serving ([`HubExt::watch`]) and, if it still runs [`WATCH_AFTER`](super::hub::WATCH_AFTER)
//! later, starts another thread polling; the busy one serves its connection to the end and
//! then goes. Whichever thread sees the stop runs the shutdown sequence.

use std::collections::HashMap;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use zest_core::http1;
use zest_core::runtime::http_server::StreamIds;

use super::conn::{self, ToConn};
use super::hub::{Hub, HubExt};
use super::park::{Events, Parker, Ready};
use crate::link::lock;
use crate::workers::Workers;

/// [`Acceptor::busy`] while the polling thread waits for events.
const POLLING: u64 = 0;
/// [`Acceptor::busy`] once the timer has handed polling on to another thread.
const HANDED_ON: u64 = u64::MAX;

pub(super) struct Acceptor {
    parker: Arc<Parker>,
    shared: conn::Shared,
    hub: Arc<Hub>,
    stop: Arc<AtomicBool>,
    grace: Duration,
    /// Runs once the shutdown sequence is over.
    stopped: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    conns: Arc<Conns>,
    next_id: AtomicU64,
    /// The serving the polling thread is busy with (a number from `turns`), [`POLLING`]
    /// while it waits, or [`HANDED_ON`].
    busy: AtomicU64,
    turns: AtomicU64,
    /// The shutdown sequence has begun (on one thread only).
    shutting_down: AtomicBool,
}

/// How long serving a request on the polling thread takes, averaged (the last eight or so
/// weigh most).
#[derive(Default)]
struct ServingTime {
    average: Duration,
}

impl ServingTime {
    /// Serving this long makes a thread hand-off (tens of microseconds of wake-up) worth it
    /// for requests that come together.
    const LONG: Duration = Duration::from_micros(200);

    fn add(&mut self, took: Duration) {
        self.average = (self.average * 7 + took) / 8;
    }

    fn is_long(&self) -> bool {
        self.average >= Self::LONG
    }
}

/// The open connections, by id.
#[derive(Default)]
struct Conns {
    open: Mutex<HashMap<u64, ToConn>>,
    changed: Condvar,
}

impl Acceptor {
    /// `stopped` runs once the server has shut down.
    pub(super) fn new(
        parker: Parker,
        hub: &Arc<Hub>,
        config: http1::Config,
        stop: &Arc<AtomicBool>,
        grace: Duration,
        stopped: impl FnOnce() + Send + 'static,
    ) -> Self {
        let parker = Arc::new(parker);
        let shared = conn::Shared {
            hub: hub.clone(),
            config,
            ids: Arc::new(StreamIds::new()),
            threads: Workers::new("zest-http-conn"),
            parker: parker.clone(),
        };
        Self {
            parker,
            shared,
            hub: hub.clone(),
            stop: stop.clone(),
            grace,
            stopped: Mutex::new(Some(Box::new(stopped))),
            conns: Arc::default(),
            next_id: AtomicU64::new(0),
            busy: AtomicU64::new(POLLING),
            turns: AtomicU64::new(0),
            shutting_down: AtomicBool::new(false),
        }
    }

    /// Polls until the server stops (and then shuts it down) or until polling was handed
    /// on while this thread served a connection.
    pub(super) fn poll(self: &Arc<Self>) {
        self.busy.store(POLLING, Ordering::Release);
        let (mut events, mut ready, mut requests) = (Events::default(), Vec::new(), Vec::new());
        let mut serving = ServingTime::default();
        loop {
            if self.stop.load(Ordering::Acquire) {
                return self.shut_down();
            }
            self.parker.wait(&mut events, &mut ready);
            for item in ready.drain(..) {
                match item {
                    Ready::Accepted(socket) => self.accept(socket),
                    Ready::Conn(conn) => {
                        if conn.unparked() {
                            requests.push(conn);
                        }
                    }
                }
            }
            if serving.is_long() && requests.len() > 1 {
                // Requests that came together run side by side: all but one on readers.
                let last = requests.pop();
                requests.drain(..).for_each(|conn| conn.resume());
                requests.extend(last);
            }
            let mut found = requests.drain(..);
            while let Some(conn) = found.next() {
                let started = Instant::now();
                if !self.serve(conn) {
                    // Polling was handed on: what is left gets readers.
                    found.for_each(|conn| conn.resume());
                    return;
                }
                serving.add(started.elapsed());
            }
        }
    }

    fn accept(&self, socket: TcpStream) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        // Filed before it can be served, so that its end (which removes it) comes after.
        let mut open = lock(&self.conns.open);
        let (ended, stopping) = (self.conns.clone(), self.stop.clone());
        let done = move || {
            let mut open = lock(&ended.open);
            open.remove(&id);
            // Only the shutdown waits for connections to end: no wake-up call for each one
            // before (under a client that opens a connection per request, one per call).
            if stopping.load(Ordering::Acquire) {
                ended.changed.notify_all();
            }
        };
        // Without a thread for it the connection is dropped (closed) at once.
        if let Ok(conn) = conn::spawn(&self.shared, id, socket, done) {
            open.insert(id, conn);
        }
    }

    /// Serves `conn`'s request on this thread, watched; false if polling was handed on
    /// meanwhile.
    fn serve(self: &Arc<Self>, conn: ToConn) -> bool {
        let turn = self.turns.fetch_add(1, Ordering::Relaxed) + 1;
        self.busy.store(turn, Ordering::Release);
        let me = self.clone();
        self.hub.watch(Box::new(move || me.rescue(turn)));
        conn.serve_here();
        self.busy.compare_exchange(turn, POLLING, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// On the timer thread: if the polling thread is still busy with `turn`, another
    /// thread polls from now on.
    fn rescue(self: &Arc<Self>, turn: u64) {
        let handed =
            self.busy.compare_exchange(turn, HANDED_ON, Ordering::AcqRel, Ordering::Acquire);
        if handed.is_err() {
            return;
        }
        let me = self.clone();
        if self.shared.threads.run(move || me.poll()).is_err() {
            // No thread to poll on: the busy one polls again once done.
            let _ =
                self.busy.compare_exchange(HANDED_ON, turn, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// Stops accepting, lets running handlers finish (up to the grace period), ends every
    /// session, lets connections write what is left (up to the grace period again).
    fn shut_down(&self) {
        if self.shutting_down.swap(true, Ordering::AcqRel) {
            return;
        }
        // Closed, and any other thread still polling is woken (and sees the stop).
        self.parker.close();
        // Connections between requests close now; the others once their answer is written.
        let open: Vec<ToConn> = lock(&self.conns.open).values().cloned().collect();
        for conn in open {
            conn.stop();
        }
        self.hub.wait_idle(Instant::now() + self.grace);
        self.hub.close_sessions();
        let deadline = Instant::now() + self.grace;
        let mut open = lock(&self.conns.open);
        while !open.is_empty() {
            let now = Instant::now();
            if now >= deadline {
                // Past the grace period: cut what is left (a client that stopped reading).
                for conn in open.values() {
                    conn.cut();
                }
                break;
            }
            open = self
                .conns
                .changed
                .wait_timeout(open, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        drop(open);
        if let Some(stopped) = lock(&self.stopped).take() {
            stopped();
        }
    }
}
