//! The plumbing shared by the client's and the server's session: no thread owns the core
//! machine; whichever thread has an input (a caller with a request, the reader with bytes, a
//! handler with its answer, the supervisor with a due deadline) locks the machine, feeds it
//! and drains it. This module holds what the machine lock does not:
//!
//! - [`Outbox`]: frames drained from the machine wait here, in order, and are written outside
//!   the machine lock by one thread at a time (the first that finds nobody writing writes
//!   everything queued, batched into one `write_all` per round). The stream's reader thread
//!   never writes (a full pipe must never stop us reading, or two peers could block each
//!   other): it asks the supervisor to write instead.
//! - the supervisor's bell: the one thread that sleeps until the machine's `poll_timeout`
//!   (the only timer), writes for the reader, and ends the session.
//! - [`Slot`]: where a blocked thread waits for its one outcome.
//!
//! Lock order: machine lock → outbox control → slot. The writer lock is taken only by the
//! active writer (or, with `try_lock`, by the supervisor at the end) and never while holding
//! another.

use std::cell::Cell;
use std::io::{self, Write};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

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

/// Locks, ignoring poisoning (every critical section leaves its data consistent).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One outcome, set once by any thread, taken by the one waiting thread.
pub(crate) struct Slot<T> {
    value: Mutex<Option<T>>,
    set: Condvar,
}

impl<T> Slot<T> {
    pub(crate) fn new() -> Self {
        Self { value: Mutex::new(None), set: Condvar::new() }
    }

    /// Sets the outcome unless one is already set.
    pub(crate) fn set(&self, value: T) {
        let mut v = lock(&self.value);
        if v.is_none() {
            *v = Some(value);
            self.set.notify_one();
        }
    }

    /// Blocks until the outcome is set, and takes it.
    pub(crate) fn wait(&self) -> T {
        let mut v = lock(&self.value);
        loop {
            if let Some(value) = v.take() {
                return value;
            }
            v = self.set.wait(v).unwrap_or_else(PoisonError::into_inner);
        }
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

/// Frames waiting to be written, and the supervisor's bell.
pub(crate) struct Outbox<W> {
    ctl: Mutex<Ctl>,
    bell: Condvar,
    writer: Mutex<Option<W>>,
}

#[derive(Default)]
struct Ctl {
    /// Queued frames, in the order the machine produced them.
    out: Vec<u8>,
    /// The buffer the active writer hands back, reused for the next round.
    spare: Vec<u8>,
    /// Close the stream once `out` is written.
    close: bool,
    /// A thread is writing; others only queue.
    writing: bool,
    /// The reader asked the supervisor to write.
    write_asked: bool,
    /// When the supervisor wakes next (it may wake early, never late).
    timer_at: Option<Instant>,
    close_asked: bool,
    closed: bool,
}

impl<W: Write> Outbox<W> {
    pub(crate) fn new(writer: W) -> Self {
        Self { ctl: Mutex::default(), bell: Condvar::new(), writer: Mutex::new(Some(writer)) }
    }

    /// Queues frames (called with the machine lock held, in production order). `pending` is
    /// left empty.
    pub(crate) fn queue(&self, pending: &mut Vec<u8>, close: bool) {
        if pending.is_empty() && !close {
            return;
        }
        let mut ctl = lock(&self.ctl);
        if ctl.out.is_empty() {
            std::mem::swap(&mut ctl.out, pending);
        } else {
            ctl.out.append(pending);
        }
        ctl.close |= close;
    }

    /// Makes sure the supervisor wakes by `deadline` (called with the machine lock held after
    /// each drain). Rings only when `deadline` is earlier than its current wake-up.
    pub(crate) fn wake_by(&self, deadline: Option<Instant>) {
        let Some(deadline) = deadline else { return };
        let mut ctl = lock(&self.ctl);
        if ctl.timer_at.is_none_or(|at| deadline < at) {
            ctl.timer_at = Some(deadline);
            self.bell.notify_all();
        }
    }

    /// Writes everything queued unless another thread is already doing it (it will write
    /// ours too). `may_block: false` (the reader) hands the writing to the supervisor.
    /// Returns the write error, once; the stream is then dropped and later frames discarded.
    pub(crate) fn flush(&self, may_block: bool) -> Option<io::Error> {
        let mut ctl = lock(&self.ctl);
        if ctl.writing || (ctl.out.is_empty() && !ctl.close) {
            return None;
        }
        if !may_block {
            ctl.write_asked = true;
            self.bell.notify_all();
            return None;
        }
        ctl.writing = true;
        let mut buf = std::mem::take(&mut ctl.spare);
        loop {
            std::mem::swap(&mut buf, &mut ctl.out);
            let close = std::mem::take(&mut ctl.close);
            drop(ctl);
            let result = {
                let mut writer = lock(&self.writer);
                let result = match writer.as_mut() {
                    Some(w) if !buf.is_empty() => w.write_all(&buf).and_then(|()| w.flush()),
                    _ => Ok(()),
                };
                if close || result.is_err() {
                    *writer = None;
                }
                result
            };
            buf.clear();
            ctl = lock(&self.ctl);
            if result.is_err() || (ctl.out.is_empty() && !ctl.close) {
                if result.is_err() {
                    ctl.out.clear();
                }
                ctl.writing = false;
                ctl.spare = buf;
                if ctl.closed {
                    // The supervisor may be waiting in `finish` for this last write.
                    self.bell.notify_all();
                }
                return result.err();
            }
        }
    }

    /// Asks the supervisor to end the session.
    pub(crate) fn ask_close(&self) {
        lock(&self.ctl).close_asked = true;
        self.bell.notify_all();
    }

    /// Tells the supervisor the session has closed.
    pub(crate) fn set_closed(&self) {
        lock(&self.ctl).closed = true;
        self.bell.notify_all();
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
                    self.bell.wait_timeout(ctl, at - now).unwrap_or_else(PoisonError::into_inner).0
                }
                None => self.bell.wait(ctl).unwrap_or_else(PoisonError::into_inner),
            };
        }
    }

    /// After the session closed: writes what is still queued (unless another thread is
    /// writing: then waits for it), and returns the stream if no writer holds it.
    pub(crate) fn finish(&self) -> Option<W> {
        let _ = self.flush(true);
        let mut ctl = lock(&self.ctl);
        while ctl.writing {
            ctl = self.bell.wait(ctl).unwrap_or_else(PoisonError::into_inner);
        }
        drop(ctl);
        self.writer.try_lock().ok().and_then(|mut w| w.take())
    }

    /// Takes the stream without waiting for a writer that may be stuck on a full pipe.
    pub(crate) fn take_writer(&self) -> Option<W> {
        self.writer.try_lock().ok().and_then(|mut w| w.take())
    }
}
