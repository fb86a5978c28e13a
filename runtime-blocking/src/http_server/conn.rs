//! One accepted connection, served by up to two threads at a time around zest-core's
//! [`ServerConn`](zest_core::runtime::http_server::ServerConn):
//!
//! - between requests it is **parked** ([`Parker`]) and has no thread; the polling thread
//!   takes up a request that comes ([`Conn::take_up`]: it reads, serves and answers as a
//!   reader does, then parks the connection again) or the client's close, or starts a reader
//!   ([`Conn::resume`]) for a connection it cannot serve itself;
//! - its **reader** reads the socket, feeds the requests to the hub, runs the handler a
//!   request asks for (the exchange waits for it anyway) and writes what the router sends the
//!   connection meanwhile: a quick call is read, served and answered on this one thread. When
//!   the exchange ends before the handler returns, or when the connection's close cancels the
//!   call (2026-07-28) and it has run for a few milliseconds, a new reader takes the socket
//!   over ([`Conn::read_aside`]) and the old one ends once its handler returns;
//! - a handler this connection asked for that runs on a worker thread (a batch, a legacy
//!   POST's call) serves the connection while it runs: it writes its own progress and
//!   answer, without waking another thread;
//! - its **writer** writes what other threads send the connection (the timer deciding an
//!   answer, another connection's request, a broadcast), so a handler running on the reader
//!   never holds those back. It also keeps the head-read deadline that an exchange it ended
//!   starts, and closes the connection at shutdown. It starts when first needed (a
//!   connection whose reader serves all it carries, as most do, never costs a second thread)
//!   and then stays until the connection ends.
//!
//! The router's transmits wait in a queue filled under the hub lock (so in the router's
//! order); whichever of the two threads holds the connection's IO lock writes them. A thread
//! of this connection queuing for it writes after its hub operation instead of waking the
//! writer. A client that stops reading blocks only this connection's threads; shutdown
//! cuts it by shutting the socket down.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use zest_core::http1::{self, Config};
use zest_core::io::{StreamId, Transmit};
use zest_core::runtime::http_server::{Inbound, ServerConn, StreamIds};
use zest_core::runtime::{backlog_exceeds, transmit_bytes, WriteQueue, WriteStep};

use super::hub::{Hub, HubExt};
use super::park::{Parker, PARKS};
use crate::link::{lock, Signal};
use crate::read_timeout::ReadTimeout;
use crate::workers::Workers;

const READ_BUF: usize = 16 * 1024;

/// What every connection of a server shares.
#[derive(Clone)]
pub(super) struct Shared {
    pub(super) hub: Arc<Hub>,
    pub(super) config: Config,
    pub(super) ids: Arc<StreamIds>,
    /// The connections' threads, kept a while once a connection ends: a client that opens
    /// a connection per request costs no thread spawn per request.
    pub(super) threads: Workers,
}

/// What the hub and the server hold of a connection.
pub(super) type ToConn = Arc<Conn>;

/// One connection's state, shared by its two threads and the hub.
pub(super) struct Conn {
    me: Weak<Self>,
    /// The server's number for it, its token in its [`Parker`].
    id: u64,
    /// The set of the polling thread that accepted it, where it parks.
    parker: Arc<Parker>,
    /// The connection machine and the socket's write half; writes happen under this lock.
    io: Mutex<Io>,
    /// What the writer thread is woken for. Lock order: `io`, then `queue`.
    queue: Mutex<Queue>,
    wake: Signal,
    hub: Arc<Hub>,
    /// The socket again, to cut the connection without the IO lock (whose holder may be
    /// stuck writing to a client that does not read).
    cut: Arc<TcpStream>,
    /// [`Config::max_backlog_bytes`].
    backlog_limit: usize,
    /// Runs once the connection has ended (the last reader calls it).
    done: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    /// Where its reader and writer run (the server's pool of connection threads).
    threads: Workers,
}

struct Io {
    conn: ServerConn,
    /// Shared with the reader and `cut` (one descriptor, not a copy each).
    socket: Arc<TcpStream>,
    /// What the connection sends, joined into one write where small (a response's head
    /// and body went out in two `send`s, each a segment and a wake-up for the client).
    out: WriteQueue,
    write_failed: bool,
}

#[derive(Default)]
struct Queue {
    /// Router transmits for this connection, in the router's order, not yet applied.
    transmits: VecDeque<Transmit>,
    /// The bytes they carry, and the largest one's since the queue was last empty.
    waiting: (usize, usize),
    /// Cut for holding too much for a client that does not read: later transmits are
    /// dropped.
    cut: bool,
    /// The server is shutting down: close when between requests.
    stop: bool,
    /// The connection is closed: the writer ends.
    ended: bool,
    /// The writer thread has started.
    writer: bool,
    /// The exchange whose handler the reader is running, and that reader's flag.
    inline: Option<(StreamId, Retired)>,
    /// The socket is in the [`Parker`]'s set (it has parked before).
    armed: bool,
}

/// Set when a reader's exchange ended before its handler returned (cancelled, say) and a
/// new reader took over the socket (the client may send its next request meanwhile): the
/// old one ends once its handler returns.
type Retired = Arc<AtomicBool>;

thread_local! {
    /// The connection this thread serves: its writer, or a reader with its flag (a retired
    /// reader serves it no more: what it queues is the writer's to write).
    static SERVING: RefCell<Option<(ToConn, Option<Retired>)>> = const { RefCell::new(None) };
}

/// The connection this thread serves now, if any.
fn serving() -> Option<ToConn> {
    SERVING.with(|s| match &*s.borrow() {
        Some((conn, retired)) if !retired.as_ref().is_some_and(|r| r.load(Ordering::Acquire)) => {
            Some(conn.clone())
        }
        _ => None,
    })
}

/// Starts the threads of one accepted connection; `done` runs once it has ended.
pub(super) fn spawn(
    shared: &Shared,
    parker: Arc<Parker>,
    id: u64,
    socket: TcpStream,
    done: impl FnOnce() + Send + 'static,
) -> io::Result<ToConn> {
    // Nagle would hold small SSE events and JSON answers back
    // (docs/design-notes.md#latency-tcp_nodelay).
    let _ = socket.set_nodelay(true);
    let socket = Arc::new(socket);
    let (reading, cut) = (socket.clone(), socket.clone());
    let Shared { hub, config, ids, threads } = shared.clone();
    let backlog_limit = config.max_backlog_bytes;
    let conn = ServerConn::new(config, Instant::now(), ids);
    let io = Io { conn, socket, out: WriteQueue::new(), write_failed: false };
    let conn = Arc::new_cyclic(|me| Conn {
        me: me.clone(),
        id,
        parker,
        io: Mutex::new(io),
        queue: Mutex::default(),
        wake: Signal::default(),
        hub,
        cut,
        backlog_limit,
        done: Mutex::new(Some(Box::new(done))),
        threads,
    });
    // Its first request is served by the polling thread; until then it costs no thread.
    if !conn.try_park() {
        if let Err(e) = conn.start_reader(reading) {
            conn.end();
            return Err(e);
        }
    }
    Ok(conn)
}

/// Runs `f` with this thread serving `conn` (a handler that connection asked for, on a
/// worker): what the router queues for `conn` meanwhile this thread writes after its hub
/// operation.
pub(super) fn serving_as<R>(conn: ToConn, f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            SERVING.with(|s| s.borrow_mut().take());
        }
    }
    SERVING.with(|s| *s.borrow_mut() = Some((conn, None)));
    let _leave = Leave;
    f()
}

/// Called after every hub operation: on a thread serving a connection, writes what the
/// router queued for it meanwhile.
pub(super) fn flush_serving() {
    if let Some(conn) = serving() {
        conn.flush();
    }
}

impl Conn {
    /// Queues a router transmit for this connection (the hub calls it under its lock).
    pub(super) fn queue_transmit(&self, transmit: Transmit) {
        let mut queue = lock(&self.queue);
        if queue.cut {
            return;
        }
        let (bytes, largest) = queue.waiting;
        let size = transmit_bytes(&transmit);
        queue.waiting = (bytes + size, largest.max(size));
        queue.transmits.push_back(transmit);
        let (bytes, largest) = queue.waiting;
        if backlog_exceeds(bytes, largest, self.backlog_limit) {
            // The client does not take what it is sent (the thread writing to it is stuck):
            // stop holding it. That write fails, and the connection's exchange with it.
            queue.transmits.clear();
            queue.cut = true;
            let _ = self.cut.shutdown(Shutdown::Both);
        }
        if !serving().is_some_and(|c| std::ptr::eq(Arc::as_ptr(&c), self)) {
            self.wake_writer(&mut queue);
        }
    }

    /// Shuts the socket down at once (past the shutdown's grace period).
    pub(super) fn cut(&self) {
        let _ = self.cut.shutdown(Shutdown::Both);
    }

    /// The server is shutting down: close now if between requests, else once the answer
    /// under way is written.
    pub(super) fn stop(self: &Arc<Self>) {
        let mut queue = lock(&self.queue);
        queue.stop = true;
        // A parked connection is between requests: it closes here (nothing polls once the
        // server stops accepting), with no thread started for it.
        if self.parker.take(self.id).is_some() {
            drop(queue);
            self.close_parked();
            return;
        }
        self.wake_writer(&mut queue);
    }

    /// Closes a connection taken out of the [`Parker`] at shutdown; if its IO lock is held
    /// (a writer stuck on a client that does not read), a reader closes it instead, so that
    /// the shutdown never waits on a client.
    fn close_parked(self: &Arc<Self>) {
        let mut io = match self.io.try_lock() {
            Ok(io) => io,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return self.resume(),
        };
        io.conn.handle_failed("the server is shutting down".into());
        io.write_out();
        drop(io);
        self.end();
        self.finish();
    }

    /// The socket, for the [`Parker`].
    #[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
    pub(super) fn socket(&self) -> &TcpStream {
        &self.cut
    }

    /// Parks the connection if it is between requests (no exchange under way, not closing):
    /// its thread may go.
    fn try_park(self: &Arc<Self>) -> bool {
        if !PARKS {
            return false;
        }
        let io = lock(&self.io);
        if io.conn.stream().is_some() || io.conn.is_closed() {
            return false;
        }
        let mut queue = lock(&self.queue);
        if queue.stop {
            return false;
        }
        let deadline = io.conn.poll_timeout();
        let parked = self.parker.park(self.id, self.clone(), &io.socket, deadline, queue.armed);
        queue.armed |= parked.is_ok();
        parked.is_ok()
    }

    /// Out of the [`Parker`], on the polling thread (under its watch): serves the request
    /// that came here, as a reader would, or closes the connection if the client has; a
    /// deadline (or an error to read) goes to a reader, whose read loop keeps deadlines.
    pub(super) fn take_up(self: &Arc<Self>) {
        let mut byte = [0u8; 1];
        let flags = rustix::net::RecvFlags::PEEK | rustix::net::RecvFlags::DONTWAIT;
        match rustix::net::recv(&*self.cut, &mut byte, flags) {
            Ok((_, 0)) => {
                lock(&self.io).conn.handle_end(Instant::now());
                match self.serve(None) {
                    Served::Closed => self.finish(),
                    Served::Open | Served::Retired => self.resume(),
                }
            }
            Ok(_) => {
                let end = self.read_loop(self.cut.clone(), true);
                SERVING.with(|s| s.borrow_mut().take());
                match end {
                    ReadEnd::Closed => self.finish(),
                    ReadEnd::Waits => self.resume(),
                    ReadEnd::Retired | ReadEnd::Parked => {}
                }
            }
            Err(_) => self.resume(),
        }
    }

    /// Ends a connection whose serving panicked on a polling thread.
    pub(super) fn abandon(self: &Arc<Self>) {
        SERVING.with(|s| s.borrow_mut().take());
        let _ = self.cut.shutdown(Shutdown::Both);
        self.end();
        self.finish();
    }

    /// Starts a reader for a connection that has none (parked, or left by the polling
    /// thread).
    pub(super) fn resume(self: &Arc<Self>) {
        // The socket without the IO lock, which a writer stuck on a client may hold.
        if self.start_reader(self.cut.clone()).is_err() {
            self.end();
            self.finish();
        }
    }

    /// Wakes the writer, starting it first if it has not started (`queue` is this
    /// connection's, locked). Without a thread for it, the connection is cut: its reader
    /// then ends it.
    fn wake_writer(&self, queue: &mut Queue) {
        if !queue.writer && !queue.ended {
            let Some(me) = self.me.upgrade() else { return };
            queue.writer = true;
            if self.threads.run(move || me.write_loop()).is_err() {
                queue.transmits.clear();
                queue.cut = true;
                let _ = self.cut.shutdown(Shutdown::Both);
            }
        }
        self.wake.notify_one();
    }

    fn start_reader(self: &Arc<Self>, socket: Arc<TcpStream>) -> io::Result<()> {
        let reader = self.clone();
        self.threads.run(move || {
            if let ReadEnd::Closed = reader.read_loop(socket, false) {
                reader.finish();
            }
            SERVING.with(|s| s.borrow_mut().take());
        })
    }

    /// The reader: serves and reads until the connection is closed, a new reader took over
    /// while this one ran a handler, or the connection parks between requests. It serves
    /// before its first read: a reader that takes over may find a pipelined request
    /// waiting. `polling`: this is the polling thread, which reads once, serves, and leaves
    /// a connection it cannot park to a reader of its own ([`ReadEnd::Waits`]).
    fn read_loop(self: &Arc<Self>, socket: Arc<TcpStream>, polling: bool) -> ReadEnd {
        let retired = Retired::default();
        SERVING.with(|s| *s.borrow_mut() = Some((self.clone(), Some(retired.clone()))));
        let mut buf = vec![0u8; READ_BUF];
        let mut timeout = ReadTimeout::default();
        // A reader started for a parked connection's request reads that request first.
        let mut has_read = false;
        loop {
            match self.serve(Some(&retired)) {
                Served::Open => {}
                Served::Closed => return ReadEnd::Closed,
                Served::Retired => return ReadEnd::Retired,
            }
            if has_read && self.try_park() {
                return ReadEnd::Parked;
            }
            if has_read && polling {
                return ReadEnd::Waits;
            }
            let deadline = lock(&self.io).conn.poll_timeout();
            timeout.set(&socket, deadline.map(|at| until(at, Instant::now())));
            let read = (&*socket).read(&mut buf);
            let mut io = lock(&self.io);
            let now = Instant::now();
            match read {
                Ok(0) => io.conn.handle_end(now),
                Ok(n) => {
                    has_read = true;
                    io.conn.handle_data(now, &buf[..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) => io.conn.handle_timeout(now),
                Err(e) => io.conn.handle_failed(format!("reading from the client failed: {e}")),
            }
        }
    }

    /// The connection has closed: the router hears about an exchange cut short (a no-op
    /// when none is under way), and `done` runs.
    fn finish(self: &Arc<Self>) {
        let inputs = {
            let mut io = lock(&self.io);
            io.conn.handle_failed("the connection closed".into());
            std::iter::from_fn(|| io.conn.poll_inbound()).collect::<Vec<_>>()
        };
        if !inputs.is_empty() {
            let starts = self.hub.feed_taking(&inputs, self);
            self.hub.spawn(starts);
        }
        if let Some(done) = lock(&self.done).take() {
            done();
        }
    }

    /// The writer: writes what other threads queue, keeps the deadlines of the exchanges it
    /// ends, and closes the connection at shutdown.
    fn write_loop(self: &Arc<Self>) {
        SERVING.with(|s| *s.borrow_mut() = Some((self.clone(), None)));
        self.write_until_ended();
        SERVING.with(|s| s.borrow_mut().take());
    }

    fn write_until_ended(self: &Arc<Self>) {
        // The stop is acted on once here (a connection mid-answer closes when it ends).
        let mut stop_seen = false;
        loop {
            let deadline = lock(&self.io).conn.poll_timeout();
            {
                let mut queue = lock(&self.queue);
                if queue.ended {
                    break;
                }
                let stop_news = queue.stop && !stop_seen;
                stop_seen = queue.stop;
                if queue.transmits.is_empty() && !stop_news {
                    queue = match deadline {
                        Some(at) => self.wake.wait_timeout(queue, until(at, Instant::now())).0,
                        None => self.wake.wait(queue),
                    };
                    if queue.ended {
                        break;
                    }
                }
            }
            {
                let mut io = lock(&self.io);
                if io.conn.poll_timeout().is_some_and(|at| at <= Instant::now()) {
                    io.conn.handle_timeout(Instant::now());
                }
            }
            if !matches!(self.serve(None), Served::Open) {
                break;
            }
        }
    }

    /// Writes what is queued and feeds the hub what came in, until both settle (an answer
    /// ending may release a pipelined request). A reader (with its flag) runs the handler a
    /// request asks for itself; the writer hands handlers to threads.
    fn serve(self: &Arc<Self>, reader: Option<&Retired>) -> Served {
        loop {
            self.flush();
            let (inputs, fed) = {
                let mut io = lock(&self.io);
                if lock(&self.queue).stop && io.conn.stream().is_none() && !io.conn.is_closed() {
                    // Shutting down and between requests: nothing is lost by closing now.
                    io.conn.handle_failed("the server is shutting down".into());
                    io.write_out();
                }
                if io.conn.is_closed() {
                    drop(io);
                    self.end();
                    return Served::Closed;
                }
                let inputs: Vec<Inbound> = std::iter::from_fn(|| io.conn.poll_inbound()).collect();
                (inputs, io.conn.stream())
            };
            if inputs.is_empty() {
                return Served::Open;
            }
            let mut starts = self.hub.feed_taking(&inputs, self);
            let single = starts.len() == 1;
            let inline = reader.filter(|_| single).filter(|retired| {
                // Checked and published under the IO lock: an end of the exchange applied
                // after this sees the handler running and gives the socket a new reader.
                let io = lock(&self.io);
                let waits = fed.is_some() && io.conn.stream() == fed;
                if let Some(stream) = fed.filter(|_| waits) {
                    lock(&self.queue).inline = Some((stream, (*retired).clone()));
                }
                waits
            });
            if let Some(retired) = inline {
                // The exchange waits for this handler's answer: run it here.
                let start = starts.pop().expect("one start");
                if let Some(stream) = fed.filter(|_| start.ends_with_its_connection()) {
                    // Its client cancels it by closing the connection: a thread must read
                    // the socket while it runs, if it runs for long.
                    self.hub.watch_close(self, stream);
                }
                self.hub.run_here(start, || {
                    let mut queue = lock(&self.queue);
                    if queue.inline.as_ref().is_some_and(|(_, r)| Arc::ptr_eq(r, retired)) {
                        queue.inline = None;
                    }
                });
                if retired.load(Ordering::Acquire) {
                    return Served::Retired;
                }
            } else {
                // Answered already (a legacy POST's 202: the client may send its next request
                // on this connection), a batch, or on the writer: threads of their own, which
                // write what they answer here themselves; the writer keeps the deadlines
                // meanwhile.
                if !starts.is_empty() {
                    self.wake_writer(&mut lock(&self.queue));
                }
                self.hub.spawn_serving(self, starts);
            }
        }
    }

    /// Applies the queued transmits and writes what the connection has to send.
    fn flush(self: &Arc<Self>) {
        let mut io = lock(&self.io);
        loop {
            let batch = lock(&self.queue).take_transmits();
            let now = Instant::now();
            for transmit in batch {
                io.conn.handle_transmit(now, transmit);
            }
            io.write_out();
            let mut queue = lock(&self.queue);
            if queue.transmits.is_empty() {
                let cut_short =
                    queue.inline.as_ref().is_some_and(|(s, _)| io.conn.stream() != Some(*s));
                if cut_short {
                    // The reader's handler still runs but its exchange is over: a new
                    // reader serves the connection's next request meanwhile.
                    self.hand_reading_over(&io, &mut queue);
                }
                return;
            }
        }
    }

    /// The call on `stream`, running on this connection's reader, must learn of the
    /// connection's close (see [`HubExt::watch_close`]): if it still runs, a new reader
    /// takes the socket over.
    /// It runs on a thread of the pool: the timer thread, which calls it, must not wait on
    /// the IO lock (a thread stuck writing to a client that does not read may hold it).
    pub(super) fn read_aside(self: &Arc<Self>, stream: StreamId) {
        // Most calls have returned by now (the queue lock is never held across blocking IO):
        // then there is nothing to hand over and no thread to wake.
        if lock(&self.queue).inline.as_ref().is_none_or(|(s, _)| *s != stream) {
            return;
        }
        let me = self.clone();
        let _ = self.threads.run(move || me.read_aside_here(stream));
    }

    fn read_aside_here(self: &Arc<Self>, stream: StreamId) {
        let io = lock(&self.io);
        let mut queue = lock(&self.queue);
        if queue.inline.as_ref().is_some_and(|(s, _)| *s == stream) {
            self.hand_reading_over(&io, &mut queue);
        }
    }

    /// Starts a new reader on the socket while the current one runs its handler; that one
    /// ends once its handler returns.
    fn hand_reading_over(self: &Arc<Self>, io: &Io, queue: &mut Queue) {
        if io.conn.is_closed() {
            return;
        }
        if self.start_reader(io.socket.clone()).is_ok() {
            let (_, retired) = queue.inline.take().expect("a reader runs a handler");
            retired.store(true, Ordering::Release);
        }
    }

    /// Closes the socket (the reader's read returns) and ends the writer.
    fn end(&self) {
        let _ = lock(&self.io).socket.shutdown(Shutdown::Both);
        let mut queue = lock(&self.queue);
        queue.ended = true;
        self.wake.notify_one();
    }
}

impl Queue {
    /// The transmits waiting, oldest first; none wait afterwards.
    fn take_transmits(&mut self) -> VecDeque<Transmit> {
        self.waiting = (0, 0);
        std::mem::take(&mut self.transmits)
    }
}

/// Why a reader stopped reading.
enum ReadEnd {
    /// The connection is closed.
    Closed,
    /// A new reader took over while this thread ran a handler.
    Retired,
    /// The connection waits in the [`Parker`].
    Parked,
    /// The polling thread served what came, and the connection still has an exchange under
    /// way (an event stream): it needs a reader.
    Waits,
}

/// How a turn of [`Conn::serve`] left the connection.
enum Served {
    Open,
    Closed,
    /// A new reader took over while this thread ran a handler.
    Retired,
}

impl Io {
    /// Writes what the connection has to send (a client that stops reading blocks the
    /// thread writing, holding this connection's IO lock, and nothing else).
    fn write_out(&mut self) {
        loop {
            let mut close = false;
            while let Some(t) = self.conn.poll_transmit() {
                match t {
                    http1::Transmit::Write(bytes) => self.out.push(bytes),
                    http1::Transmit::Close => {
                        close = true;
                        break;
                    }
                }
            }
            if !self.write_failed {
                if let Err(e) = self.write_queued() {
                    self.write_failed = true;
                    self.out.handle_failed();
                    self.conn.handle_failed(format!("writing to the client failed: {e}"));
                    // The failure may have queued a transmit of its own.
                    continue;
                }
            }
            if !close {
                return;
            }
            let _ = (&*self.socket).flush();
            let _ = self.socket.shutdown(Shutdown::Write);
        }
    }

    /// Writes everything queued (blocking), small frames joined into one write.
    fn write_queued(&mut self) -> io::Result<()> {
        loop {
            match self.out.poll_step() {
                WriteStep::Write(bytes) => {
                    let result = (&*self.socket).write(&bytes);
                    drop(bytes);
                    self.out.handle_write_result(result)?;
                }
                WriteStep::Flush => self.out.handle_flushed(),
                WriteStep::Close | WriteStep::Done | WriteStep::Idle => return Ok(()),
            }
        }
    }
}

/// How long until `at`, at least a millisecond (a zero read timeout means none).
fn until(at: Instant, now: Instant) -> Duration {
    at.saturating_duration_since(now).max(Duration::from_millis(1))
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}
