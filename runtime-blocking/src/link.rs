//! The plumbing shared by the client's and the server's session: no thread owns the core
//! machine; whichever thread has an input (a caller with a request, the reader with bytes, a
//! handler with its answer, the supervisor with a due deadline) locks the machine, feeds it
//! and drains it. This module holds what the machine lock does not:
//!
//! - [`Outbox`]: frames drained from the machine wait in zest-core's [`WriteQueue`], in order,
//!   and are written outside the machine lock by one thread at a time (the first that finds
//!   nobody writing performs the queue's steps until it is idle; the frames of one drain go
//!   in one `write_all`). The stream's reader thread never writes (a full pipe must never
//!   stop us reading, or two peers could block each other): for frames it queued itself it
//!   asks the supervisor, which has a worker thread write instead (so that it never blocks
//!   on a write itself). At the end, [`Outbox::finish`] writes what is left and closes the
//!   stream, but waits no longer than a deadline.
//! - the supervisor's wake-up: the one thread that sleeps until the machine's `poll_timeout`
//!   (the only timer), has the reader's frames written, and ends the session.
//! - [`Slot`]: where a blocked thread waits for its one outcome ([`CallSlot`] files one in
//!   zest-core's calls table).
//! - [`Signal`]: a condition variable that costs nothing to ring when nobody waits.
//!
//! Lock order: machine lock → outbox control → slot. The writer lock is taken only by the
//! active writer (or, with `try_lock`, by the supervisor at the end) and never while holding
//! another.

use std::cell::Cell;
use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, WaitTimeoutResult};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use bytes::Bytes;
use zest_core::runtime::{Backlog, BacklogWatch, Outcome, ReplySlot, WriteQueue, WriteStep};

thread_local! {
    /// Set while this thread holds a session's machine lock, or is one of its threads: a
    /// handle dropped here must not wait for the session to end (it would wait for itself).
    static NO_JOIN: Cell<u32> = const { Cell::new(0) };
}

/// Marks the current thread as one that must not wait for a session's end while `f` runs.
pub(crate) fn no_join<T>(f: impl FnOnce() -> T) -> T {
    NO_JOIN.with(|c| c.set(c.get() + 1));
    let out = f();
    NO_JOIN.with(|c| c.set(c.get() - 1));
    out
}

/// True when waiting for a session's end from this thread could deadlock.
pub(crate) fn may_join() -> bool {
    NO_JOIN.with(Cell::get) == 0
}

/// Whether the thread driving a session may block on writing. The reader and the supervisor
/// must not (a peer that stops reading would hold them, and the supervisor must stay free to
/// end the session by its deadline): they ask the supervisor to have the frames written on a
/// worker thread.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Role {
    WritesAside,
    WritesHere,
    /// The stdio server's reader while it runs handlers: it writes at the end of its turn.
    Defers,
}

/// Locks, ignoring poisoning (every critical section leaves its data consistent).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A condition variable that makes no wake-up call when nobody waits (a futex wake is a
/// system call even then). Contract: wait with the guard of the one mutex whose data the
/// ringer changes, and ring while holding that mutex, after the change.
#[derive(Default)]
pub(crate) struct Signal {
    condvar: Condvar,
    /// Threads in `wait`; counted under the mutex, so a ringer holding it sees them.
    waiting: AtomicUsize,
}

impl Signal {
    pub(crate) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let guard = self.condvar.wait(guard).unwrap_or_else(PoisonError::into_inner);
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        guard
    }

    pub(crate) fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> (MutexGuard<'a, T>, WaitTimeoutResult) {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let woken =
            self.condvar.wait_timeout(guard, timeout).unwrap_or_else(PoisonError::into_inner);
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        woken
    }

    pub(crate) fn notify_one(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.condvar.notify_one();
        }
    }

    pub(crate) fn notify_all(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.condvar.notify_all();
        }
    }
}

/// One outcome, set once by any thread, taken by the one waiting thread, which parks until
/// then: setting it wakes that thread only if it sleeps, and it wakes to a free lock.
pub(crate) struct Slot<T> {
    value: Mutex<Option<T>>,
    /// The thread in [`wait`](Self::wait), once one waits.
    waiter: OnceLock<Thread>,
}

impl<T> Slot<T> {
    pub(crate) fn new() -> Self {
        Self { value: Mutex::new(None), waiter: OnceLock::new() }
    }

    /// Sets the outcome unless one is already set.
    pub(crate) fn set(&self, value: T) {
        {
            let mut v = lock(&self.value);
            if v.is_some() {
                return;
            }
            *v = Some(value);
        }
        // A waiter that registered after this looks finds the value before it parks.
        if let Some(waiter) = self.waiter.get() {
            waiter.unpark();
        }
    }

    /// Whether a value is there (not yet taken by [`wait`](Self::wait)).
    pub(crate) fn is_set(&self) -> bool {
        lock(&self.value).is_some()
    }

    /// Blocks until the outcome is set, and takes it. One thread waits on a slot.
    pub(crate) fn wait(&self) -> T {
        let _ = self.waiter.set(thread::current());
        loop {
            if let Some(value) = lock(&self.value).take() {
                return value;
            }
            // Wakes on the setter's unpark (or spuriously: looked at again).
            thread::park();
        }
    }
}

/// A blocked caller's slot, as zest-core's calls table files it.
pub(crate) struct CallSlot(pub(crate) Arc<Slot<Outcome>>);

impl ReplySlot for CallSlot {
    fn deliver(self, outcome: Outcome) {
        self.0.set(outcome);
    }
}

/// What the supervisor is woken for.
pub(crate) enum Wake {
    /// The reader queued frames and nobody is writing them.
    Write,
    /// The deadline it was given has passed.
    Due,
    /// A handle asked to end the session.
    CloseAsked,
    /// The session has closed.
    Closed,
}

/// Frames waiting to be written, and the supervisor's wake-up.
pub(crate) struct Outbox<W> {
    ctl: Mutex<Ctl>,
    wake: Condvar,
    /// Rung (under `ctl`) when the peer took bytes or the stream failed.
    taken: Signal,
    writer: Mutex<Option<W>>,
}

#[derive(Default)]
struct Ctl {
    /// Queued frames, in the order the machine produced them, and whether to close after.
    queue: WriteQueue,
    /// A thread is writing; others only queue.
    writing: bool,
    /// The reader asked the supervisor to write.
    write_asked: bool,
    /// When the supervisor wakes next (it may wake early, never late).
    timer_at: Option<Instant>,
    close_asked: bool,
    closed: bool,
}

impl<W: Write + Send + 'static> Outbox<W> {
    pub(crate) fn new(writer: W) -> Arc<Self> {
        let writer = Mutex::new(Some(writer));
        // Written frames' buffers are kept for the machine to encode the next large one into.
        let ctl = Mutex::new(Ctl { queue: WriteQueue::recycling(), ..Ctl::default() });
        Arc::new(Self { ctl, wake: Condvar::new(), taken: Signal::default(), writer })
    }

    /// A written frame's buffer to hand back to the machine (`recycle`), if one was kept.
    pub(crate) fn take_spare(&self) -> Option<Vec<u8>> {
        lock(&self.ctl).queue.take_spare()
    }

    /// Queues frames (called with the machine lock held, in production order), and the
    /// stream's close after them if `close`. `frames` is left empty. Returns whether there
    /// was anything to queue.
    pub(crate) fn queue(&self, frames: &mut Vec<Bytes>, close: bool) -> bool {
        if frames.is_empty() && !close {
            return false;
        }
        let mut ctl = lock(&self.ctl);
        for frame in frames.drain(..) {
            ctl.queue.push(frame);
        }
        if close {
            ctl.queue.close();
        }
        true
    }

    /// Blocks the stream's reader while more than `watch`'s limit waits for the peer and it
    /// still takes bytes (zest-core's [`BacklogWatch`]); false (and what waits is dropped,
    /// later frames with it) once it took none for zest-core's `BACKLOG_STALL`.
    pub(crate) fn hold_reader(&self, watch: &mut BacklogWatch) -> bool {
        let mut ctl = lock(&self.ctl);
        loop {
            match watch.check(&ctl.queue, Instant::now()) {
                Backlog::Clear => return true,
                Backlog::Stalled => {
                    ctl.queue.handle_failed();
                    return false;
                }
                Backlog::Holding(until) => {
                    let wait = until.saturating_duration_since(Instant::now());
                    ctl = self.taken.wait_timeout(ctl, wait).0;
                }
            }
        }
    }

    /// Makes sure the supervisor wakes by `deadline` (called with the machine lock held after
    /// each drain). Rings only when `deadline` is earlier than its current wake-up.
    pub(crate) fn wake_by(&self, deadline: Option<Instant>) {
        let Some(deadline) = deadline else { return };
        let mut ctl = lock(&self.ctl);
        if ctl.timer_at.is_none_or(|at| deadline < at) {
            ctl.timer_at = Some(deadline);
            self.wake.notify_all();
        }
    }

    /// Writes everything queued unless another thread is already doing it (it will write
    /// ours too). `may_block: false` (the reader) hands the writing to the supervisor.
    /// Returns the write error, once; the stream is then dropped and later frames discarded.
    pub(crate) fn flush(&self, may_block: bool) -> Option<io::Error> {
        let mut ctl = lock(&self.ctl);
        if ctl.writing || !ctl.queue.is_busy() {
            return None;
        }
        if !may_block {
            ctl.write_asked = true;
            self.wake.notify_all();
            return None;
        }
        ctl.writing = true;
        let failure = loop {
            let step = ctl.queue.poll_step();
            if matches!(step, WriteStep::Idle) {
                break None;
            }
            drop(ctl);
            let result = self.perform(&step);
            ctl = lock(&self.ctl);
            match (step, result) {
                (_, Err(e)) => {
                    ctl.queue.handle_failed();
                    self.taken.notify_all();
                    break Some(e);
                }
                (WriteStep::Write(bytes), Ok(())) => {
                    let n = bytes.len();
                    // The queue can keep a written frame's buffer only if we let go of it.
                    drop(bytes);
                    ctl.queue.handle_written(n);
                    self.taken.notify_all();
                }
                (WriteStep::Flush, Ok(())) => ctl.queue.handle_flushed(),
                (WriteStep::Close, Ok(())) => ctl.queue.handle_closed(),
                (WriteStep::Done | WriteStep::Idle, Ok(())) => break None,
            }
        };
        ctl.writing = false;
        if ctl.closed {
            // The supervisor may be waiting in `finish` for this last write.
            self.wake.notify_all();
        }
        failure
    }

    /// Performs one step on the stream (outside the control lock). A stream already taken
    /// or closed takes nothing more: its frames are discarded.
    fn perform(&self, step: &WriteStep) -> io::Result<()> {
        let mut writer = lock(&self.writer);
        let Some(w) = writer.as_mut() else { return Ok(()) };
        let result = match step {
            WriteStep::Write(bytes) => w.write_all(bytes),
            WriteStep::Flush => w.flush(),
            WriteStep::Close | WriteStep::Done | WriteStep::Idle => Ok(()),
        };
        if result.is_err() || matches!(step, WriteStep::Close | WriteStep::Done) {
            *writer = None;
        }
        result
    }

    /// Asks the supervisor to end the session.
    pub(crate) fn ask_close(&self) {
        lock(&self.ctl).close_asked = true;
        self.wake.notify_all();
    }

    /// Tells the supervisor the session has closed.
    pub(crate) fn set_closed(&self) {
        lock(&self.ctl).closed = true;
        self.wake.notify_all();
    }

    /// The supervisor's wait: returns what it must do next.
    pub(crate) fn next(&self) -> Wake {
        let mut ctl = lock(&self.ctl);
        loop {
            if ctl.closed {
                return Wake::Closed;
            }
            if std::mem::take(&mut ctl.close_asked) {
                return Wake::CloseAsked;
            }
            if std::mem::take(&mut ctl.write_asked) {
                return Wake::Write;
            }
            ctl = match ctl.timer_at {
                Some(at) => {
                    let now = Instant::now();
                    if at <= now {
                        ctl.timer_at = None;
                        return Wake::Due;
                    }
                    self.wake.wait_timeout(ctl, at - now).unwrap_or_else(PoisonError::into_inner).0
                }
                None => self.wake.wait(ctl).unwrap_or_else(PoisonError::into_inner),
            };
        }
    }

    /// After the session closed: writes what is still queued and closes the stream, waiting
    /// no later than `deadline` (the writing happens on a thread of its own, so that a peer
    /// that stopped reading cannot hold the caller: past the deadline that thread is left to
    /// its blocked write and the rest is dropped). Returns the stream if it is still open and
    /// no writer holds it.
    pub(crate) fn finish(self: &Arc<Self>, deadline: Instant) -> Option<W> {
        let mut ctl = lock(&self.ctl);
        ctl.queue.finish(deadline);
        if !ctl.writing && ctl.queue.is_busy() {
            let bytes_left = !ctl.queue.is_empty();
            drop(ctl);
            let out = self.clone();
            let writer = thread::Builder::new().name("zest-writer".into());
            // Only bytes can block; a flush after complete writes, or the close (a drop),
            // cannot, and is done here.
            if !bytes_left || writer.spawn(move || drop(out.flush(true))).is_err() {
                // (Without a thread to spare: written here, unbounded, rather than lost.)
                let _ = self.flush(true);
            }
            ctl = lock(&self.ctl);
        }
        while ctl.writing || ctl.queue.is_busy() {
            let now = Instant::now();
            if now >= deadline {
                ctl.queue.handle_timeout(now);
                break;
            }
            let waited = self.wake.wait_timeout(ctl, deadline - now);
            ctl = waited.unwrap_or_else(PoisonError::into_inner).0;
        }
        drop(ctl);
        self.take_writer()
    }

    /// Takes the stream without waiting for a writer that may be stuck on a full pipe.
    pub(crate) fn take_writer(&self) -> Option<W> {
        self.writer.try_lock().ok().and_then(|mut w| w.take())
    }
}
