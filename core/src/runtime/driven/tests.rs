use std::sync::atomic::AtomicUsize;

use super::*;
use crate::runtime::CallKeys;

/// A loop that counts its polls and keeps its last waker, for the test to wake it.
#[derive(Clone, Default)]
struct Probe {
    polls: Arc<AtomicUsize>,
    waker: Arc<Mutex<Option<Waker>>>,
    end: Arc<AtomicBool>,
    panic: Arc<AtomicBool>,
    /// Wakes itself during each poll while set (as a command sent from inside the loop, or an
    /// executor's exhausted budget, would).
    wake_itself: Arc<AtomicUsize>,
}

impl Probe {
    fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    fn wake(&self) {
        lock(&self.waker).as_ref().expect("polled once").wake_by_ref();
    }

    fn run(self) -> impl Future<Output = ()> + Send {
        std::future::poll_fn(move |cx| {
            self.polls.fetch_add(1, Ordering::SeqCst);
            assert!(!self.panic.load(Ordering::SeqCst), "the loop fails");
            if self.end.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            *lock(&self.waker) = Some(cx.waker().clone());
            let more = self.wake_itself.load(Ordering::SeqCst);
            if more > 0 {
                self.wake_itself.store(more - 1, Ordering::SeqCst);
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        })
    }
}

/// A waker that counts its wake-ups.
#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counter() -> (Arc<Count>, Waker) {
    let count = Arc::new(Count::default());
    (count.clone(), Waker::from(count))
}

fn woken(count: &Count) -> usize {
    count.0.load(Ordering::SeqCst)
}

fn poll_task(task: &mut Background, waker: &Waker) -> Poll<()> {
    Pin::new(task).poll(&mut Context::from_waker(waker))
}

/// A driven probe whose runtime task has polled it once; the task's wake-up counter.
struct Started {
    driven: Driven,
    probe: Probe,
    background: Arc<Count>,
    task: Background,
    keys: CallKeys,
}

fn started() -> Started {
    let probe = Probe::default();
    let driven = Driven::new(probe.clone().run());
    let mut task = driven.background();
    let (background, waker) = counter();
    assert!(poll_task(&mut task, &waker).is_pending());
    assert_eq!(probe.polls(), 1);
    Started { driven, probe, background, task, keys: CallKeys::new() }
}

/// A caller that expected its call and polled once; its wake-up counter and waker.
fn caller(s: &Started) -> (CallKey, Arc<Count>, Waker) {
    let key = s.keys.next();
    s.driven.expect(key);
    let (count, waker) = counter();
    s.driven.drive(key, &mut Context::from_waker(&waker));
    (key, count, waker)
}

#[test]
fn a_waiting_caller_takes_the_wake_ups_and_polls_the_loop_itself() {
    let s = started();
    let key = s.keys.next();
    s.driven.expect(key);
    s.probe.wake();
    assert_eq!(woken(&s.background), 0, "the caller is about to poll");
    let (caller, waker) = counter();
    s.driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!(s.probe.polls(), 2, "polled on the caller's first poll (nobody else waits)");
    s.probe.wake();
    assert_eq!((woken(&caller), woken(&s.background)), (1, 0));
    s.driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!(s.probe.polls(), 3);
    s.driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!(s.probe.polls(), 3, "not polled again until woken");
    s.driven.release(key);
    assert_eq!(woken(&s.background), 0, "nothing was due");
}

#[test]
fn with_nobody_waiting_the_runtime_task_is_woken() {
    let mut s = started();
    s.probe.wake();
    assert_eq!(woken(&s.background), 1);
    let (_, waker) = counter();
    assert!(poll_task(&mut s.task, &waker).is_pending());
    assert_eq!(s.probe.polls(), 2);
    s.driven.nudge();
    assert_eq!(woken(&s.background), 1, "the task's latest waker is the one woken");
}

#[test]
fn a_caller_that_stopped_polling_hands_the_next_wake_up_on() {
    let s = started();
    let (key, caller, waker) = caller(&s);
    s.probe.wake();
    assert_eq!((woken(&caller), woken(&s.background)), (1, 0));
    // The caller's future is kept but not polled: the next wake-up reaches the task too.
    s.probe.wake();
    assert_eq!((woken(&caller), woken(&s.background)), (2, 1));
    s.driven.drive(key, &mut Context::from_waker(&waker));
    s.probe.wake();
    assert_eq!((woken(&caller), woken(&s.background)), (3, 1), "it polled again");
}

#[test]
fn a_caller_about_to_poll_holds_the_wake_up_for_itself() {
    let s = started();
    let (_, _, _) = caller(&s);
    s.probe.wake(); // owed by the first caller from now on
    let key = s.keys.next();
    s.driven.expect(key);
    s.probe.wake(); // the second caller's command: it polls next
    assert_eq!(woken(&s.background), 0);
    let (_, waker) = counter();
    s.driven.drive(key, &mut Context::from_waker(&waker));
    s.probe.wake();
    assert_eq!(woken(&s.background), 0, "the second caller polled since: it polls again");
    s.probe.wake();
    assert_eq!(woken(&s.background), 1, "neither has polled since the last wake-up");
}

#[test]
fn a_wake_up_left_by_the_last_caller_goes_to_the_runtime_task() {
    let s = started();
    let key = s.keys.next();
    s.driven.expect(key);
    s.probe.wake();
    s.driven.release(key);
    assert_eq!(woken(&s.background), 1);
    assert_eq!(s.probe.polls(), 1, "the release itself does not poll");
}

#[test]
fn a_release_beside_callers_that_all_owe_a_poll_wakes_the_runtime_task() {
    let s = started();
    let (kept, _, _) = caller(&s);
    let (active, _, _) = caller(&s);
    s.probe.wake(); // both owe a poll now
    assert_eq!(woken(&s.background), 0);
    s.driven.release(active);
    assert_eq!(woken(&s.background), 1, "the kept caller will not poll");
    s.driven.release(kept);
}

#[test]
fn a_first_poll_beside_other_calls_yields_once_so_that_commands_go_out_together() {
    let s = started();
    let (_, _, _) = caller(&s);
    let key = s.keys.next();
    s.driven.expect(key);
    s.probe.wake(); // its command
    let (second, waker) = counter();
    s.driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!((s.probe.polls(), woken(&second)), (1, 1), "yielded, its task woken");
    s.driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!(s.probe.polls(), 2, "polled on its next poll");
}

#[test]
fn a_wake_up_during_a_poll_makes_the_poller_poll_again() {
    let mut s = started();
    s.probe.wake_itself.store(1, Ordering::SeqCst);
    s.probe.wake();
    let (_, waker) = counter();
    let _ = poll_task(&mut s.task, &waker);
    assert_eq!(s.probe.polls(), 3, "the wake-up from inside the poll is not lost");
}

#[test]
fn a_wake_up_during_a_poll_wakes_nobody_else() {
    let s = started();
    let (key, caller, waker) = caller(&s);
    let (_, other, _) = self::caller(&s);
    s.probe.wake();
    let before = (woken(&caller), woken(&other));
    s.probe.wake_itself.store(1, Ordering::SeqCst);
    s.driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!(s.probe.polls(), 3, "the poller polled again");
    assert_eq!((woken(&caller), woken(&other)), before, "no caller was woken for it");
    assert_eq!(woken(&s.background), 0, "nor the runtime's task");
    s.probe.wake();
    assert_eq!(woken(&s.background), 0, "the poller owes nothing for what came in its poll");
}

#[test]
fn a_wake_up_during_a_poll_counts_against_a_kept_caller() {
    let s = started();
    let active = s.keys.next();
    s.driven.expect(active);
    // The active call's command.
    s.probe.wake();
    // A caller polls once (yielding beside the other) and is then kept, owing nothing.
    let (_kept, _, _) = caller(&s);
    let (_, waker) = counter();
    s.driven.drive(active, &mut Context::from_waker(&waker)); // yields beside the kept one
    s.probe.wake_itself.store(1, Ordering::SeqCst);
    s.driven.drive(active, &mut Context::from_waker(&waker)); // polls; a wake-up comes meanwhile
    s.driven.release(active);
    assert_eq!(woken(&s.background), 0, "nothing is due");
    s.probe.wake();
    assert_eq!(woken(&s.background), 1, "the kept caller owes a poll for what came meanwhile");
}

#[test]
fn a_loop_that_keeps_waking_itself_gives_its_turn_back() {
    let s = started();
    let (key, caller, waker) = caller(&s);
    s.probe.wake_itself.store(usize::MAX, Ordering::SeqCst);
    s.probe.wake();
    let before = (s.probe.polls(), woken(&caller));
    s.driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!(s.probe.polls(), before.0 + POLLS_PER_TURN);
    assert!(s.driven.shared.due.load(Ordering::SeqCst), "the rest is left for the next turn");
    assert!(woken(&caller) > before.1, "the caller is woken to come back");
    assert!(woken(&s.background) > 0, "and the runtime task, should the caller not");
}

#[test]
fn the_loop_ends_and_a_panic_ends_it_too() {
    for panic in [false, true] {
        let mut s = started();
        let (key, caller, waker) = caller(&s);
        s.probe.end.store(!panic, Ordering::SeqCst);
        s.probe.panic.store(panic, Ordering::SeqCst);
        s.probe.wake();
        s.driven.drive(key, &mut Context::from_waker(&waker));
        assert_eq!(woken(&caller), 2, "woken for the poll, then for the end");
        assert!(woken(&s.background) >= 1, "the task hears of the end");
        assert!(poll_task(&mut s.task, &waker).is_ready());
        let polls = s.probe.polls();
        s.driven.drive(key, &mut Context::from_waker(&waker));
        s.driven.release(key);
        assert_eq!(s.probe.polls(), polls, "an ended loop is not polled");
    }
}

#[test]
fn dropping_the_runtime_task_ends_the_loop() {
    let state = Arc::new(());
    let held = state.clone();
    let driven = Driven::new(async move {
        let _held = held;
        std::future::pending::<()>().await;
    });
    let mut task = driven.background();
    let (_, waker) = counter();
    assert!(poll_task(&mut task, &waker).is_pending());
    assert_eq!(Arc::strong_count(&state), 2, "the loop holds its state");
    drop(task);
    assert_eq!(Arc::strong_count(&state), 1, "the loop was dropped with its task");
}

#[test]
fn callers_on_other_threads_leave_nothing_due() {
    let s = started();
    std::thread::scope(|scope| {
        // Wake-ups from a thread of their own too (a reactor's), often during a caller's poll.
        let probe = s.probe.clone();
        scope.spawn(move || (0..800).for_each(|_| probe.wake()));
        for _ in 0..4 {
            let (driven, probe, key) = (s.driven.clone(), s.probe.clone(), s.keys.next());
            scope.spawn(move || {
                driven.expect(key);
                let (_, waker) = counter();
                for _ in 0..200 {
                    probe.wake();
                    driven.drive(key, &mut Context::from_waker(&waker));
                }
                driven.release(key);
            });
        }
    });
    // Every wake-up was followed by a poll that saw it, or by the task's wake-up.
    let due = s.driven.shared.due.load(Ordering::SeqCst);
    assert!(!due || woken(&s.background) > 0);
    assert!(s.probe.polls() > 1);
}
