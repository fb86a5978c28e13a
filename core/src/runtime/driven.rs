//! A session's loop that its callers poll themselves while they wait: a call made from a task
//! on one thread is then sent, answered and delivered on that thread, with no other thread
//! woken. A runtime whose loop would otherwise run on an executor of its own (zest-smol: smol's
//! global executor, so that the client works under any executor) wraps the loop's future in a
//! [`Driven`] and runs its [`Background`] task, which polls it whenever no caller does.
//!
//! ```text
//!  caller: expect(key) ─ send its command ─ drive(key, cx) … until its reply ─ release(key)
//!  the loop's wake-ups: to the callers that wait (each polls it), else to the runtime's task
//! ```
//!
//! - The loop is polled by one thread at a time (`try_lock`); a wake-up that comes while
//!   a thread polls it makes that thread poll again instead of waking anyone. One turn polls
//!   it at most [`POLLS_PER_TURN`] times; if it is still due then, the turn wakes its own
//!   task and the runtime's task (an executor's budget that keeps waking the loop cannot hold
//!   a thread).
//! - A wake-up goes to the waiting callers; to the runtime's task as well when none waits,
//!   or when every one of them owes a poll, unless a caller is handing over its command right
//!   now (it polls next). A caller owes a poll from a wake-up (one absorbed by a poll
//!   included) until it next polls; what came during its own poll of the loop it owes
//!   nothing for. A waiting caller that owes none is active: woken, it polls, and its poll
//!   serves all. A call stops waiting once its answer is handed over, polled or not. A handle
//!   that sends the loop anything but a call (closing the session, new roots) wakes the
//!   runtime's task itself ([`nudge`](Driven::nudge)).
//! - So a call's future kept but no longer polled while its answer is still due can hold
//!   the loop back for one wake-up: the next one (its answer at the latest, or its deadline)
//!   goes to the runtime's task too. A dropped call holds nothing back.
//! - A caller's first poll after handing over its command, while other calls wait, yields once
//!   instead of polling the loop (its task is woken at once): the calls its task starts in
//!   the same turn queue their commands meanwhile, and the loop writes them in one go. The
//!   calls in flight that the others wait on wake the loop when their answers come, so the
//!   queued commands go out then at the latest.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::task::{Context, Poll, Wake, Waker};

use super::CallKey;

/// How many times one turn polls the loop before it leaves the rest to its next turn.
pub const POLLS_PER_TURN: usize = 32;

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
    /// Set once the loop has ended.
    ended: AtomicBool,
    /// Woken since the last poll began: the loop must be polled again.
    due: AtomicBool,
    /// A thread polls the loop now: it checks `due` once that poll returns.
    polling: AtomicBool,
    /// The callers waiting now.
    waiting: Mutex<Vec<Waiting>>,
    /// Callers between [`Driven::expect`] and their first poll: they poll the loop next.
    sending: AtomicUsize,
    /// The runtime's task, for wake-ups no caller takes.
    background: Mutex<Option<Waker>>,
}

/// A caller waiting on the loop.
struct Waiting {
    key: CallKey,
    /// Its task, once it has polled.
    waker: Option<Waker>,
    /// A wake-up came (it was woken, or a poll absorbed it) and it has not polled since.
    owes: bool,
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
            ended: AtomicBool::new(false),
            due: AtomicBool::new(true),
            polling: AtomicBool::new(false),
            waiting: Mutex::new(Vec::new()),
            sending: AtomicUsize::new(0),
            background: Mutex::new(None),
        };
        Self { shared: Arc::new(shared) }
    }

    /// A call `key` is about to hand the loop its command: the wake-up that command causes
    /// goes to the caller (or, during another thread's poll, to that thread), which then
    /// polls the loop (in [`drive`](Self::drive)).
    pub fn expect(&self, key: CallKey) {
        self.shared.sending.fetch_add(1, Ordering::SeqCst);
        lock(&self.shared.waiting).push(Waiting { key, waker: None, owes: false });
    }

    /// The caller's poll while it waits for its reply: notes its task for the loop's
    /// wake-ups, and polls the loop if it is due.
    pub fn drive(&self, key: CallKey, cx: &mut Context<'_>) {
        let yields = {
            let mut waiting = lock(&self.shared.waiting);
            let others = waiting.iter().any(|w| w.key != key);
            let Some(entry) = waiting.iter_mut().find(|w| w.key == key) else {
                // Not expected (or released): nothing to wait for here.
                return;
            };
            entry.owes = false;
            let first = entry.waker.is_none();
            match &mut entry.waker {
                Some(waker) => waker.clone_from(cx.waker()),
                None => {
                    entry.waker = Some(cx.waker().clone());
                    self.shared.sending.fetch_sub(1, Ordering::SeqCst);
                }
            }
            first && others && self.shared.due.load(Ordering::SeqCst)
        };
        if yields {
            cx.waker().wake_by_ref();
            return;
        }
        if !self.poll_if_due(cx.waker()) {
            // Another thread polls, or the turn was given back: this caller may owe a poll.
            return;
        }
        // What woke the loop during that poll was served by it. A wake-up between its end
        // and this mark is served by looking again: it set `due` before marking anyone.
        if let Some(entry) = lock(&self.shared.waiting).iter_mut().find(|w| w.key == key) {
            entry.owes = false;
        }
        fence(Ordering::SeqCst);
        if self.shared.due.load(Ordering::SeqCst) {
            self.poll_if_due(cx.waker());
        }
    }

    /// The caller no longer waits (its reply came, or it gave up): a wake-up it may have
    /// been sent last goes to the runtime's task unless another waiting caller will poll.
    pub fn release(&self, key: CallKey) {
        let unattended = {
            let mut waiting = lock(&self.shared.waiting);
            if let Some(at) = waiting.iter().position(|w| w.key == key) {
                if waiting.swap_remove(at).waker.is_none() {
                    self.shared.sending.fetch_sub(1, Ordering::SeqCst);
                }
            }
            waiting.iter().all(|w| w.owes)
        };
        fence(Ordering::SeqCst);
        if unattended && self.shared.due.load(Ordering::SeqCst) {
            self.shared.wake_background();
        }
    }

    /// Wakes the runtime's task: a handle sent the loop something no waiting caller will
    /// poll for (closing the session, new roots).
    pub fn nudge(&self) {
        self.shared.wake_background();
    }

    /// The runtime's task: a future that polls the loop whenever no caller does, ready once
    /// the loop has ended. Dropping it (its executor went away) ends the loop, as dropping a
    /// task that ran the loop would.
    pub fn background(&self) -> Background {
        Background(self.clone())
    }

    /// Polls the loop while it is due, unless another thread polls it (that one then polls
    /// again for a wake-up that came meanwhile); after [`POLLS_PER_TURN`] polls, wakes
    /// `turn` to come back for the rest. True if it stopped because nothing was due.
    fn poll_if_due(&self, turn: &Waker) -> bool {
        let shared = &self.shared;
        for _ in 0..POLLS_PER_TURN {
            fence(Ordering::SeqCst);
            if !shared.due.load(Ordering::SeqCst) {
                return true;
            }
            let mut future = match shared.future.try_lock() {
                Ok(future) => future,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => return false,
            };
            let Some(running) = future.as_mut() else { return false };
            shared.polling.store(true, Ordering::SeqCst);
            shared.due.swap(false, Ordering::SeqCst);
            let waker = Waker::from(shared.clone());
            let mut cx = Context::from_waker(&waker);
            // A panic ends the loop as its end would: its replies are dropped, so every
            // caller hears that the session is over.
            let polled = catch_unwind(AssertUnwindSafe(|| running.as_mut().poll(&mut cx)));
            // A wake-up from here on finds nobody polling; one before it is seen as `due` at
            // the top of the next round.
            shared.polling.store(false, Ordering::SeqCst);
            if !matches!(polled, Ok(Poll::Pending)) {
                *future = None;
                drop(future);
                shared.end();
                return false;
            }
        }
        fence(Ordering::SeqCst);
        if shared.due.load(Ordering::SeqCst) {
            turn.wake_by_ref();
            shared.wake_background();
        }
        false
    }
}

/// The runtime's task of a [`Driven`] loop (see [`Driven::background`]).
#[derive(Debug)]
pub struct Background(Driven);

impl Future for Background {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let shared = &self.0.shared;
        {
            let mut background = lock(&shared.background);
            match &mut *background {
                Some(waker) => waker.clone_from(cx.waker()),
                None => *background = Some(cx.waker().clone()),
            }
        }
        let _ = self.0.poll_if_due(cx.waker());
        if shared.ended.load(Ordering::SeqCst) {
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
        self.0.shared.end();
    }
}

impl Shared {
    fn wake_background(&self) {
        let waker = lock(&self.background).clone();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The loop has ended: wakes every caller and the runtime's task.
    fn end(&self) {
        self.ended.store(true, Ordering::SeqCst);
        let wakers: Vec<Waker> =
            lock(&self.waiting).iter().filter_map(|w| w.waker.clone()).collect();
        wakers.into_iter().for_each(Waker::wake);
        self.wake_background();
    }
}

/// The loop's own waker: the loop is due; the thread polling it now polls again, else the
/// callers that wait poll it, and the runtime's task does when none waits, or all of them
/// owe a poll and no caller is about to poll.
impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.due.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if self.polling.load(Ordering::SeqCst) {
            // The poller polls again; a kept caller still owes a poll for this one, so that
            // the release of the last active caller hands the loop to the runtime's task.
            lock(&self.waiting).iter_mut().for_each(|w| w.owes = true);
            return;
        }
        let sending = self.sending.load(Ordering::SeqCst) > 0;
        let (wakers, unattended) = {
            let mut waiting = lock(&self.waiting);
            let all_owe = waiting.iter().all(|w| w.owes);
            let mut wakers = Vec::with_capacity(waiting.len());
            for w in waiting.iter_mut() {
                w.owes = true;
                wakers.extend(w.waker.clone());
            }
            (wakers, waiting.is_empty() || (all_owe && !sending))
        };
        wakers.into_iter().for_each(Waker::wake);
        if unattended {
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
