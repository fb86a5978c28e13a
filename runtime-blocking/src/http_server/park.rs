//! Where connections wait between requests without a thread: epoll sets, each sharing the
//! listener and holding idle connections, each polled by one thread at a time (see
//! `super::accept`).
//!
//! A parked connection costs no thread: a client that keeps many connections open, or one
//! that opens a connection per request (rmcp's does) and whose end is read among the polling
//! thread's other events, no longer holds a sleeping reader per connection. A connection is
//! armed once per wait (one-shot), so exactly one thread takes it up when it is readable.
//!
//! Linux and Android only (epoll); elsewhere nothing parks, and every connection keeps a
//! reader between its requests.

pub(super) use imp::{Events, Parker, PARKS};

use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use super::conn::ToConn;

/// The server's listener, shared by every polling thread; `None` once closed.
pub(super) type Listener = Arc<Mutex<Option<TcpListener>>>;

/// What one wait of the polling thread found.
pub(super) enum Ready {
    /// A connection just accepted.
    Accepted(TcpStream),
    /// A parked connection with something to read, or whose deadline came: no longer parked.
    #[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
    Conn(ToConn),
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod imp {
    use std::collections::{BTreeSet, HashMap};
    use std::io;
    use std::net::TcpStream;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use rustix::event::epoll::{self, CreateFlags, Event, EventData, EventFlags};
    use rustix::event::{eventfd, EventfdFlags, Timespec};
    use rustix::fd::OwnedFd;

    use zest_core::runtime::{accept_pause, ACCEPT_PAUSE};

    use super::{Listener, Ready, ToConn};
    use crate::link::lock;

    /// Whether connections park on this platform.
    pub(in super::super) const PARKS: bool = true;

    /// The listener's token; a connection's token is its id, from 1.
    const LISTENER: u64 = 0;
    /// The token of [`Parker::close`]'s wake-up.
    const CLOSED: u64 = u64::MAX;
    /// The token of the wake-up for a deadline sooner than the wait's.
    const SOONER: u64 = u64::MAX - 1;

    /// What one wait can return at most.
    const EVENTS: usize = 64;

    /// The polling thread's buffer for one wait.
    pub(in super::super) struct Events(Vec<Event>);

    impl Default for Events {
        fn default() -> Self {
            Self(Vec::with_capacity(EVENTS))
        }
    }

    pub(in super::super) struct Parker {
        epoll: OwnedFd,
        listener: Listener,
        /// Readable once closed: every wait returns at once.
        closed: OwnedFd,
        /// Written when a connection parks with a deadline sooner than the waiting thread
        /// wakes by itself; read by that thread.
        sooner: OwnedFd,
        parked: Mutex<Parked>,
    }

    #[derive(Default)]
    struct Parked {
        /// By id, with the deadline its machine wants to hear of.
        conns: HashMap<u64, (ToConn, Option<Instant>)>,
        deadlines: BTreeSet<(Instant, u64)>,
        /// While a thread waits: when it wakes by itself (`Some(None)`: never).
        waiting: Option<Option<Instant>>,
        /// While accepting pauses ([`accept_pause`]): when the listener goes back in the set.
        listener_back: Option<Instant>,
    }

    impl Parked {
        fn remove(&mut self, id: u64) -> Option<ToConn> {
            let (conn, deadline) = self.conns.remove(&id)?;
            if let Some(at) = deadline {
                self.deadlines.remove(&(at, id));
            }
            Some(conn)
        }
    }

    impl Parker {
        /// A set of its own around `listener`, which every set shares: a new connection wakes
        /// one waiting thread (exclusive), and a set whose thread is busy passes it on.
        pub(in super::super) fn new(listener: &Listener) -> io::Result<Self> {
            let epoll = epoll::create(CreateFlags::CLOEXEC)?;
            if let Some(socket) = &*lock(listener) {
                socket.set_nonblocking(true)?;
                epoll::add(&epoll, socket, EventData::new_u64(LISTENER), shared())?;
            }
            let closed = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
            epoll::add(&epoll, &closed, EventData::new_u64(CLOSED), EventFlags::IN)?;
            let sooner = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
            epoll::add(&epoll, &sooner, EventData::new_u64(SOONER), EventFlags::IN)?;
            let listener = listener.clone();
            Ok(Self { epoll, listener, closed, sooner, parked: Mutex::default() })
        }

        /// Closes the listener and wakes the thread waiting here (for good).
        pub(in super::super) fn close(&self) {
            drop(lock(&self.listener).take());
            let _ = rustix::io::write(&self.closed, &1u64.to_ne_bytes());
        }

        /// Parks connection `id` until its socket is readable or `deadline` passes; `armed`
        /// says its socket is in the set already (from an earlier park).
        pub(in super::super) fn park(
            &self,
            id: u64,
            conn: ToConn,
            socket: &TcpStream,
            deadline: Option<Instant>,
            armed: bool,
        ) -> io::Result<()> {
            let mut parked = lock(&self.parked);
            let (data, flags) = (EventData::new_u64(id), readable());
            if armed {
                epoll::modify(&self.epoll, socket, data, flags)?;
            } else {
                epoll::add(&self.epoll, socket, data, flags)?;
            }
            parked.conns.insert(id, (conn, deadline));
            if let Some(at) = deadline {
                parked.deadlines.insert((at, id));
                // A reader parking while the polling thread waits: wake it if it would
                // sleep past this deadline.
                if parked.waiting.is_some_and(|wakes| wakes.is_none_or(|wakes| at < wakes)) {
                    parked.waiting = Some(Some(at));
                    let _ = rustix::io::write(&self.sooner, &1u64.to_ne_bytes());
                }
            }
            Ok(())
        }

        /// Takes connection `id` out, if it is still parked (its socket stays in the set,
        /// armed only for a hang-up or an error, which finds it no longer parked).
        pub(in super::super) fn take(&self, id: u64) -> Option<ToConn> {
            let conn = lock(&self.parked).remove(id)?;
            let _ = epoll::modify(&self.epoll, conn.socket(), EventData::new_u64(id), off());
            Some(conn)
        }

        /// Waits for the listener, a parked connection or the first deadline, and gives what
        /// is ready: every connection the listener has, then the connections taken out.
        pub(in super::super) fn wait(&self, events: &mut Events, ready: &mut Vec<Ready>) {
            self.listener_back();
            let first = {
                let mut parked = lock(&self.parked);
                let first = parked.deadlines.first().map(|(at, _)| *at);
                let first = first.into_iter().chain(parked.listener_back).min();
                parked.waiting = Some(first);
                first
            };
            let timeout = first.map(|at| {
                // A millisecond late rather than early: a wake-up before the deadline would
                // find nothing due and wait again.
                let wait = at.saturating_duration_since(Instant::now()) + Duration::from_millis(1);
                Timespec::try_from(wait).unwrap_or(Timespec { tv_sec: i64::MAX, tv_nsec: 0 })
            });
            events.0.clear();
            let buffer = rustix::buffer::spare_capacity(&mut events.0);
            let waited = epoll::wait(&self.epoll, buffer, timeout.as_ref());
            lock(&self.parked).waiting = None;
            if waited.is_err() {
                return; // EINTR: the caller waits again.
            }
            if events.0.iter().any(|event| event.data.u64() == SOONER) {
                let _ = rustix::io::read(&self.sooner, &mut [0u8; 8]);
            }
            if events.0.iter().any(|event| event.data.u64() == LISTENER) {
                self.accept_all(ready);
            }
            let mut parked = lock(&self.parked);
            for event in &events.0 {
                match event.data.u64() {
                    LISTENER | CLOSED | SOONER => {}
                    // Fired, so disarmed (one-shot): nothing to undo in the set.
                    id => ready.extend(parked.remove(id).map(Ready::Conn)),
                }
            }
            let now = Instant::now();
            while parked.deadlines.first().is_some_and(|(at, _)| *at <= now) {
                let Some((_, id)) = parked.deadlines.pop_first() else { break };
                if let Some(conn) = parked.remove(id) {
                    let _ =
                        epoll::modify(&self.epoll, conn.socket(), EventData::new_u64(id), off());
                    ready.push(Ready::Conn(conn));
                }
            }
        }

        fn accept_all(&self, ready: &mut Vec<Ready>) {
            let listener = lock(&self.listener);
            let Some(listener) = listener.as_ref() else { return };
            let error = loop {
                match listener.accept() {
                    Ok((socket, _)) => ready.push(Ready::Accepted(socket)),
                    Err(e) => break e,
                }
            };
            // Out of descriptors: the backlog keeps the listener readable, so it leaves the
            // set for the pause. Otherwise (none left, or one reset) the next wait goes on.
            if let Some(pause) = accept_pause(&error) {
                if epoll::delete(&self.epoll, listener).is_ok() {
                    lock(&self.parked).listener_back = Some(Instant::now() + pause);
                }
            }
        }

        /// Puts the listener back in the set once its pause is over; should the set refuse
        /// it (short of memory itself), tries again after another pause.
        fn listener_back(&self) {
            let due = |parked: &Parked| parked.listener_back.is_some_and(|at| at <= Instant::now());
            // The shared listener's lock only when a pause is over: not on every wait.
            if !due(&lock(&self.parked)) {
                return;
            }
            let listener = lock(&self.listener);
            let mut parked = lock(&self.parked);
            if due(&parked) {
                let data = EventData::new_u64(LISTENER);
                let back = |socket| epoll::add(&self.epoll, socket, data, shared());
                let refused = listener.as_ref().is_some_and(|socket| back(socket).is_err());
                parked.listener_back = refused.then(|| Instant::now() + ACCEPT_PAUSE);
            }
        }
    }

    /// The listener's flags: a new connection wakes one waiting thread of all the sets.
    fn shared() -> EventFlags {
        EventFlags::IN | EventFlags::EXCLUSIVE
    }

    fn readable() -> EventFlags {
        EventFlags::IN | EventFlags::RDHUP | EventFlags::ONESHOT
    }

    /// Armed for nothing but what epoll always reports (a hang-up or an error), which
    /// finds the connection no longer parked and is dropped.
    fn off() -> EventFlags {
        EventFlags::ONESHOT
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod imp {
    use std::io;
    use std::net::{TcpListener, TcpStream};
    use std::time::Instant;

    use super::{Listener, Ready, ToConn};
    use crate::link::lock;

    /// Whether connections park on this platform.
    pub(in super::super) const PARKS: bool = false;

    #[derive(Default)]
    pub(in super::super) struct Events;

    /// Accepts only: no connection parks here.
    pub(in super::super) struct Parker {
        listener: Listener,
    }

    impl Parker {
        pub(in super::super) fn new(listener: &Listener) -> io::Result<Self> {
            Ok(Self { listener: listener.clone() })
        }

        /// Closes the listener.
        pub(in super::super) fn close(&self) {
            drop(lock(&self.listener).take());
        }

        pub(in super::super) fn park(
            &self,
            _id: u64,
            _conn: ToConn,
            _socket: &TcpStream,
            _deadline: Option<Instant>,
            _armed: bool,
        ) -> io::Result<()> {
            Err(io::ErrorKind::Unsupported.into())
        }

        pub(in super::super) fn take(&self, _id: u64) -> Option<ToConn> {
            None
        }

        /// Accepts one connection (blocking): only one thread polls here, and it is never
        /// handed on (nothing parks, so the polling thread serves nothing).
        pub(in super::super) fn wait(&self, _events: &mut Events, ready: &mut Vec<Ready>) {
            let accepted = lock(&self.listener).as_ref().map(TcpListener::accept);
            match accepted {
                Some(Ok((socket, _))) => ready.push(Ready::Accepted(socket)),
                // Out of descriptors: a pause, not a spin.
                Some(Err(e)) => {
                    if let Some(pause) = zest_core::runtime::accept_pause(&e) {
                        std::thread::sleep(pause);
                    }
                }
                None => {}
            }
        }
    }
}
