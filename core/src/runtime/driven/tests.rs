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
    /// Wakes itself during its next poll (as a command sent from inside the loop would).
    wake_itself: Arc<AtomicBool>,
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
            if self.wake_itself.swap(false, Ordering::SeqCst) {
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

/// Polls the runtime's task once.
fn poll_task(task: &mut Background, waker: &Waker) -> Poll<()> {
    Pin::new(task).poll(&mut Context::from_waker(waker))
}

/// A driven probe whose runtime task has polled it once.
fn started() -> (Driven, Probe, Arc<Count>, Background) {
    let probe = Probe::default();
    let driven = Driven::new(probe.clone().run());
    let mut task = driven.background();
    let (background, waker) = counter();
    assert!(poll_task(&mut task, &waker).is_pending());
    assert_eq!(probe.polls(), 1);
    (driven, probe, background, task)
}

#[test]
fn a_waiting_caller_takes_the_wake_ups_and_polls_the_loop_itself() {
    let (driven, probe, background, _task) = started();
    let key = CallKeys::new().next();
    driven.expect(key);
    probe.wake();
    assert_eq!(woken(&background), 0, "the caller is about to poll");
    let (caller, waker) = counter();
    driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!((probe.polls(), woken(&caller)), (1, 1), "the first poll yields once");
    driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!(probe.polls(), 2, "polled on the caller's poll");
    probe.wake();
    assert_eq!((woken(&caller), woken(&background)), (2, 0));
    driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!(probe.polls(), 3);
    driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!(probe.polls(), 3, "not polled again until woken");
    driven.release(key);
    assert_eq!(woken(&background), 0, "nothing was due");
}

#[test]
fn with_nobody_waiting_the_runtime_task_is_woken() {
    let (_driven, probe, background, mut task) = started();
    probe.wake();
    assert_eq!(woken(&background), 1);
    let (_, waker) = counter();
    assert!(poll_task(&mut task, &waker).is_pending());
    assert_eq!(probe.polls(), 2);
}

#[test]
fn a_caller_that_stopped_polling_hands_the_next_wake_up_on() {
    let (driven, probe, background, _task) = started();
    let key = CallKeys::new().next();
    driven.expect(key);
    let (caller, waker) = counter();
    driven.drive(key, &mut Context::from_waker(&waker));
    probe.wake();
    assert_eq!((woken(&caller), woken(&background)), (1, 0));
    // The caller's future is kept but not polled: the next wake-up reaches the task too.
    probe.wake();
    assert_eq!((woken(&caller), woken(&background)), (2, 1));
    driven.drive(key, &mut Context::from_waker(&waker));
    probe.wake();
    assert_eq!((woken(&caller), woken(&background)), (3, 1), "attended again");
}

#[test]
fn a_wake_up_left_by_the_last_caller_goes_to_the_runtime_task() {
    let (driven, probe, background, _task) = started();
    let key = CallKeys::new().next();
    driven.expect(key);
    probe.wake();
    driven.release(key);
    assert_eq!(woken(&background), 1);
    assert_eq!(probe.polls(), 1, "the release itself does not poll");
}

#[test]
fn a_wake_up_during_a_poll_makes_the_poller_poll_again() {
    let (_driven, probe, _, mut task) = started();
    probe.wake_itself.store(true, Ordering::SeqCst);
    probe.wake();
    let (_, waker) = counter();
    let _ = poll_task(&mut task, &waker);
    assert_eq!(probe.polls(), 3, "the wake-up from inside the poll is not lost");
}

#[test]
fn the_loop_ends_and_a_panic_ends_it_too() {
    for panic in [false, true] {
        let (driven, probe, _, mut task) = started();
        let key = CallKeys::new().next();
        driven.expect(key);
        let (caller, waker) = counter();
        driven.drive(key, &mut Context::from_waker(&waker));
        probe.end.store(!panic, Ordering::SeqCst);
        probe.panic.store(panic, Ordering::SeqCst);
        probe.wake();
        driven.drive(key, &mut Context::from_waker(&waker));
        assert!(woken(&caller) >= 1);
        let (_, waker) = counter();
        assert!(poll_task(&mut task, &waker).is_ready());
        // Polling an ended loop is harmless.
        driven.drive(key, &mut Context::from_waker(&waker));
        driven.release(key);
    }
}

#[test]
fn callers_on_other_threads_poll_one_at_a_time_and_miss_nothing() {
    let (driven, probe, _, _task) = started();
    let keys = CallKeys::new();
    std::thread::scope(|s| {
        for _ in 0..4 {
            let (driven, probe, key) = (driven.clone(), probe.clone(), keys.next());
            s.spawn(move || {
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
    // Every wake-up was followed by a poll that saw it: nothing is left due.
    assert!(!driven.shared.due.load(Ordering::SeqCst));
    assert!(probe.polls() > 1);
}

#[test]
fn dropping_the_runtime_task_ends_the_loop() {
    let (driven, probe, _, task) = started();
    let ended = Arc::new(());
    let witness = ended.clone();
    let driven2 = Driven::new(async move {
        let _held = witness;
        std::future::pending::<()>().await;
    });
    let mut task2 = driven2.background();
    let (_, waker) = counter();
    assert!(poll_task(&mut task2, &waker).is_pending());
    assert_eq!(Arc::strong_count(&ended), 2, "the loop holds its state");
    drop(task2);
    assert_eq!(Arc::strong_count(&ended), 1, "the loop was dropped with its task");
    drop(task);
    let key = CallKeys::new().next();
    driven.expect(key);
    probe.wake();
    driven.drive(key, &mut Context::from_waker(&waker));
    driven.drive(key, &mut Context::from_waker(&waker));
    assert_eq!(probe.polls(), 1, "an ended loop is not polled");
}
