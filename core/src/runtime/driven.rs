//! A session's loop that its callers poll themselves while they wait: a call made from a task
//! on one thread is then sent, answered and delivered on that thread, with no other thread
//! woken. A runtime whose loop would otherwise run on an executor of its own (zest-smol: smol's
//! global executor, so that the client works under any executor) wraps the loop's future in a
//! [`Driven`] and keeps one task of its own that polls it whenever no caller waits.
//!
//! ```text
//!  caller: expect(key) ─ send its command ─ drive(key, cx) … until its reply ─ release(key)
//!  the loop's wake-ups: to the callers that wait (each polls it), else to the runtime's task
//! ```
//!
//! The loop is polled by one thread at a time (`try_lock`); a wake that comes while another
//! thread polls makes that thread poll again, so no wake-up is lost. When no caller has
//! polled since the last wake-up (a caller's future kept but left unpolled), the next one
//! goes to the runtime's task too.
//!
//! A caller's first poll after handing over its command yields once instead of polling the
//! loop (its task is woken at once): the other calls its task starts in the same turn queue
//! their commands meanwhile, and the loop then writes them all in one go.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::task::{Context, Poll, Wake, Waker};

use super::CallKey;

/// The loop's future.
type Loop = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A session's loop, polled by whoever waits on it (see the module docs). Cheap to clone.
#[derive(Clone)]
pub struct Driven {
    shared: Arc<Shared>,
}

struct Shared {
    /// `None` once the loop has ended (or panicked).
    future: Mutex<Option<Loop>>,
    /// Woken since the last poll began: the loop must be polled again.
    due: AtomicBool,
    /// The callers waiting now.
    waiting: Mutex<Vec<Waiting>>,
    /// A caller has polled (or is about to) since the last wake-up.
    attended: AtomicBool,
    /// The runtime's task, for wake-ups no caller takes.
    background: Mutex<Option<Waker>>,
}

/// A caller waiting on the loop.
struct Waiting {
    key: CallKey,
    /// Its task, once it has polled.
    waker: Option<Waker>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing that can panic runs under these locks (the loop's poll is caught).
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Driven {
    /// Wraps a session's loop; it is due at once (the runtime's task polls it first).
    pub fn new(future: impl Future<Output = ()> + Send + 'static) -> Self {
        let shared = Shared {
            future: Mutex::new(Some(Box::pin(future))),
            due: AtomicBool::new(true),
            waiting: Mutex::new(Vec::new()),
            attended: AtomicBool::new(false),
            background: Mutex::new(None),
        };
        Self { shared: Arc::new(shared) }
    }

    /// A call `key` is about to hand the loop its command: the wake-up that command causes
    /// goes to the caller, which then polls the loop (in [`drive`](Self::drive)).
    pub fn expect(&self, key: CallKey) {
        lock(&self.shared.waiting).push(Waiting { key, waker: None });
        self.shared.attended.store(true, Ordering::SeqCst);
    }

    /// The caller's poll while it waits for its reply: notes its task for the loop's
    /// wake-ups, and polls the loop if it is due.
    pub fn drive(&self, key: CallKey, cx: &mut Context<'_>) {
        self.shared.attended.store(true, Ordering::SeqCst);
        let first = {
            let mut waiting = lock(&self.shared.waiting);
            match waiting.iter_mut().find(|w| w.key == key) {
                Some(Waiting { waker: Some(waker), .. }) => {
                    waker.clone_from(cx.waker());
                    false
                }
                Some(w) => {
                    w.waker = Some(cx.waker().clone());
                    true
                }
                None => {
                    waiting.push(Waiting { key, waker: Some(cx.waker().clone()) });
                    false
                }
            }
        };
        if first && self.shared.due.load(Ordering::SeqCst) {
            // Yield once: the task's other calls queue their commands before the loop runs.
            cx.waker().wake_by_ref();
            return;
        }
        self.poll_if_due();
    }

    /// The caller no longer waits (its reply came, or it gave up): a wake-up it may have
    /// been sent last goes to the runtime's task.
    pub fn release(&self, key: CallKey) {
        let nobody = {
            let mut waiting = lock(&self.shared.waiting);
            waiting.retain(|w| w.key != key);
            waiting.is_empty()
        };
        if nobody && self.shared.due.load(Ordering::SeqCst) {
            self.shared.wake_background();
        }
    }

    /// The runtime's task: a future that polls the loop whenever no caller does, ready once
    /// the loop has ended. Dropping it (its executor went away) ends the loop, as dropping a
    /// task that ran the loop would.
    pub fn background(&self) -> Background {
        Background(self.clone())
    }

    /// Polls the loop while it is due, unless another thread polls it (that one then polls
    /// again for a wake-up that came meanwhile).
    fn poll_if_due(&self) {
        let shared = &self.shared;
        while shared.due.load(Ordering::SeqCst) {
            let mut future = match shared.future.try_lock() {
                Ok(future) => future,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => return,
            };
            shared.due.store(false, Ordering::SeqCst);
            let Some(running) = future.as_mut() else { return };
            let waker = Waker::from(shared.clone());
            let mut cx = Context::from_waker(&waker);
            // A panic ends the loop as its end would: its replies are dropped, so every
            // caller hears that the session is over.
            let polled = catch_unwind(AssertUnwindSafe(|| running.as_mut().poll(&mut cx)));
            if !matches!(polled, Ok(Poll::Pending)) {
                *future = None;
                drop(future);
                shared.wake_all();
                return;
            }
        }
    }
}

/// The runtime's task of a [`Driven`] loop (see [`Driven::background`]).
#[derive(Debug)]
pub struct Background(Driven);

impl Future for Background {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let driven = &self.0;
        {
            let mut background = lock(&driven.shared.background);
            match &mut *background {
                Some(waker) => waker.clone_from(cx.waker()),
                None => *background = Some(cx.waker().clone()),
            }
        }
        driven.poll_if_due();
        if lock(&driven.shared.future).is_none() {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        // Waits for a caller that polls the loop right now; the loop's own drop may then
        // clean up (a child process killed and reaped).
        let ended = lock(&self.0.shared.future).take();
        drop(ended);
        self.0.shared.wake_all();
    }
}

impl Shared {
    fn wake_background(&self) {
        if let Some(waker) = lock(&self.background).as_ref() {
            waker.wake_by_ref();
        }
    }

    /// Wakes every caller and the runtime's task (the loop ended).
    fn wake_all(&self) {
        let wakers: Vec<Waker> =
            lock(&self.waiting).iter().filter_map(|w| w.waker.clone()).collect();
        wakers.into_iter().for_each(Waker::wake);
        self.wake_background();
    }
}

/// The loop's own waker: the loop is due; the callers that wait poll it, or the runtime's
/// task when none does (or one has not polled since its last wake-up).
impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.due.store(true, Ordering::SeqCst);
        let attended = self.attended.swap(false, Ordering::SeqCst);
        let (wakers, nobody) = {
            let waiting = lock(&self.waiting);
            (waiting.iter().filter_map(|w| w.waker.clone()).collect::<Vec<_>>(), waiting.is_empty())
        };
        wakers.into_iter().for_each(Waker::wake);
        if nobody || !attended {
            self.wake_background();
        }
    }
}

impl std::fmt::Debug for Driven {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waiting = lock(&self.shared.waiting).len();
        f.debug_struct("Driven").field("waiting", &waiting).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
