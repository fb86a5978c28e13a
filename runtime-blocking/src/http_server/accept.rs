//! The polling threads: one per two cores, at most [`MAX_POLLERS`] (Linux; one elsewhere),
//! each with a set of its own ([`Parker`]) that shares the listener. A polling thread
//! accepts connections, which park in the sets in turn, and serves the requests that come to
//! the connections of its set itself, one after another.
//!
//! A quick request (most are) is read, served and answered on the polling thread, with no
//! other thread woken. One that keeps it longer (a slow handler, a partial request, a client
//! that does not read) would hold back the set's other connections: the timer thread watches
//! each serving ([`HubExt::watch`]) and, if it still runs
//! [`WATCH_AFTER`](super::hub::WATCH_AFTER) later, starts another thread polling that set;
//! the busy one serves its connection to the end and then goes. Whichever thread sees the
//! stop runs the shutdown sequence.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use zest_core::http1;
use zest_core::runtime::http_server::StreamIds;

use super::conn::{self, ToConn};
use super::hub::{Hub, HubExt};
use super::park::{Events, Listener, Parker, Ready, PARKS};
use crate::link::lock;
use crate::workers::Workers;

/// [`Poller::busy`] while the polling thread waits for events.
const POLLING: u64 = 0;
/// [`Poller::busy`] once the timer has handed polling on to another thread.
const HANDED_ON: u64 = u64::MAX;

/// At most this many polling threads, however many cores.
const MAX_POLLERS: usize = 8;

pub(super) struct Acceptor {
    pollers: Vec<Poller>,
    shared: conn::Shared,
    hub: Arc<Hub>,
    stop: Arc<AtomicBool>,
    grace: Duration,
    /// Runs once the shutdown sequence is over.
    stopped: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    conns: Arc<Conns>,
    next_id: AtomicU64,
    /// Numbers the servings, for [`Poller::busy`].
    turns: AtomicU64,
    /// The shutdown sequence has begun (on one thread only).
    shutting_down: AtomicBool,
}

/// One set and the thread polling it.
struct Poller {
    parker: Arc<Parker>,
    /// Connections out of the set that its thread takes up next, in turn.
    pending: Mutex<VecDeque<ToConn>>,
    /// The serving its thread is busy with (a number from `turns`), [`POLLING`] while it
    /// waits, or [`HANDED_ON`].
    busy: AtomicU64,
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
        listener: TcpListener,
        hub: &Arc<Hub>,
        config: http1::Config,
        stop: &Arc<AtomicBool>,
        grace: Duration,
        stopped: impl FnOnce() + Send + 'static,
    ) -> io::Result<Self> {
        let listener: Listener = Arc::new(Mutex::new(Some(listener)));
        // Half the cores: a polling thread serves quick requests itself, one after another,
        // and the other cores are left to readers, handlers on threads of their own and the
        // clients beside. On 2 cores one polling thread spent a quarter less CPU per call
        // than two (`bench/rmcp-compare`, 64 B over HTTP at concurrency 8).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let count = if PARKS { (cores / 2).clamp(1, MAX_POLLERS) } else { 1 };
        let pollers = (0..count)
            .map(|_| {
                let parker = Arc::new(Parker::new(&listener)?);
                Ok(Poller { parker, pending: Mutex::default(), busy: AtomicU64::new(POLLING) })
            })
            .collect::<io::Result<_>>()?;
        let shared = conn::Shared {
            hub: hub.clone(),
            config,
            ids: Arc::new(StreamIds::new()),
            threads: Workers::new("zest-http-conn"),
        };
        Ok(Self {
            pollers,
            shared,
            hub: hub.clone(),
            stop: stop.clone(),
            grace,
            stopped: Mutex::new(Some(Box::new(stopped))),
            conns: Arc::default(),
            next_id: AtomicU64::new(0),
            turns: AtomicU64::new(0),
            shutting_down: AtomicBool::new(false),
        })
    }

    /// How many polling threads [`Acceptor::poll`] wants.
    pub(super) fn pollers(&self) -> usize {
        self.pollers.len()
    }

    /// Polls set `set` until the server stops (and then shuts it down) or until polling was
    /// handed on while this thread served a connection.
    pub(super) fn poll(self: &Arc<Self>, set: usize) {
        let poller = &self.pollers[set];
        poller.busy.store(POLLING, Ordering::Release);
        let (mut events, mut ready) = (Events::default(), Vec::new());
        let mut serving = ServingTime::default();
        loop {
            // What the last wait found, one after another; a thread that took polling over
            // starts here, with what its busy predecessor had not reached.
            loop {
                // Not locked while serving: a thread that takes polling over takes the rest.
                let next = lock(&poller.pending).pop_front();
                let Some(conn) = next else { break };
                let started = Instant::now();
                if !self.take_up(set, conn) {
                    return;
                }
                serving.add(started.elapsed());
            }
            if self.stop.load(Ordering::Acquire) {
                return self.shut_down();
            }
            poller.parker.wait(&mut events, &mut ready);
            let mut found = Vec::new();
            for item in ready.drain(..) {
                match item {
                    Ready::Accepted(socket) => self.accept(socket),
                    Ready::Conn(conn) => found.push(conn),
                }
            }
            if serving.is_long() && found.len() > 1 {
                // Requests that came together run side by side: all but one on readers.
                let last = found.pop();
                found.drain(..).for_each(|conn| conn.resume());
                found.extend(last);
            }
            lock(&poller.pending).extend(found);
        }
    }

    /// Files a new connection and parks it in a set, the sets taken in turn (the kernel
    /// wakes the first waiting thread for every connection, so the one that accepts is
    /// mostly the same).
    fn accept(&self, socket: TcpStream) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        // Filed before it can be served, so that its end (which removes it) comes after.
        let mut open = lock(&self.conns.open);
        if self.stop.load(Ordering::Acquire) {
            // The shutdown has begun (on another set's thread) and stops only what it
            // found filed: this one closes unserved.
            return;
        }
        let parker = &self.pollers[id as usize % self.pollers.len()].parker;
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
        if let Ok(conn) = conn::spawn(&self.shared, parker.clone(), id, socket, done) {
            open.insert(id, conn);
        }
    }

    /// Takes `conn` up on this thread ([`Conn::take_up`]), watched; false if polling was
    /// handed on meanwhile.
    fn take_up(self: &Arc<Self>, set: usize, conn: ToConn) -> bool {
        let busy = &self.pollers[set].busy;
        let turn = self.turns.fetch_add(1, Ordering::Relaxed) + 1;
        busy.store(turn, Ordering::Release);
        // Weak: a watch left in the timer's queue at shutdown keeps nothing alive.
        let me = Arc::downgrade(self);
        self.hub.watch(Box::new(move || {
            if let Some(me) = me.upgrade() {
                me.rescue(set, turn);
            }
        }));
        // A panic here is zest's own bug, not a handler's (those are answered as errors): the
        // connection ends, and the thread goes on polling.
        if catch_unwind(AssertUnwindSafe(|| conn.take_up())).is_err() {
            conn.abandon();
        }
        busy.compare_exchange(turn, POLLING, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// On the timer thread: if set `set`'s polling thread is still busy with `turn`,
    /// another thread polls that set from now on (and serves what it had not reached).
    fn rescue(self: &Arc<Self>, set: usize, turn: u64) {
        if self.pollers[set].busy.load(Ordering::Acquire) != turn {
            return;
        }
        let me = self.clone();
        // Taken over on the new thread, so that a thread that cannot start changes nothing:
        // the busy one polls again once done.
        let _ = self.shared.threads.run(move || {
            let busy = &me.pollers[set].busy;
            if busy.compare_exchange(turn, HANDED_ON, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                me.poll(set);
            }
        });
    }

    /// Stops accepting, lets running handlers finish (up to the grace period), ends every
    /// session, lets connections write what is left (up to the grace period again).
    fn shut_down(&self) {
        if self.shutting_down.swap(true, Ordering::AcqRel) {
            return;
        }
        // Closed, and every other thread still polling is woken (and sees the stop).
        for poller in &self.pollers {
            poller.parker.close();
        }
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
