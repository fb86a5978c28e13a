use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

/// Counts the session task's wake-ups.
#[derive(Default)]
struct Task(AtomicUsize);

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Task {
    fn woken(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A socket stand-in: the exchange waits until the test opens it.
#[derive(Default)]
struct Gate {
    open: Mutex<(bool, Option<Waker>)>,
}

impl Gate {
    fn open(&self) {
        let waker = {
            let mut st = lock(&self.open);
            st.0 = true;
            st.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    async fn wait(&self) {
        std::future::poll_fn(|cx| {
            let mut st = lock(&self.open);
            if st.0 {
                Poll::Ready(())
            } else {
                st.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
    }
}

/// Drops to count the exchanges dropped.
struct Dropped(Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// An exchange on `stream` that reports a chunk at once, then its end once `gate` opens.
async fn exchange(
    events: ExchangeEvents,
    stream: StreamId,
    gate: Arc<Gate>,
    dropped: Arc<AtomicUsize>,
) {
    let _guard = Dropped(dropped);
    let _ = events.send((stream, OwnedEvent::Data(bytes::Bytes::from_static(b"head"))));
    gate.wait().await;
    let _ = events.send((stream, OwnedEvent::End));
}

#[test]
fn exchanges_run_in_the_polling_task_and_wake_it_only_from_their_own_wakers() {
    let task = Arc::new(Task::default());
    let waker = Waker::from(task.clone());
    let mut cx = Context::from_waker(&waker);
    let mut exchanges = Exchanges::new();
    let (gate, dropped) = (Arc::new(Gate::default()), Arc::new(AtomicUsize::new(0)));
    exchanges.start(
        StreamId(1),
        exchange(exchanges.events(), StreamId(1), gate.clone(), dropped.clone()),
    );
    assert_eq!(exchanges.len(), 1);
    // The first poll runs it up to its gate; what it reported is ready, and nothing woke.
    assert_eq!(exchanges.poll_reported(&mut cx), Poll::Ready(()));
    assert!(matches!(exchanges.try_event(), Some((StreamId(1), OwnedEvent::Data(_)))));
    assert!(exchanges.try_event().is_none());
    assert_eq!(exchanges.poll_reported(&mut cx), Poll::Pending);
    assert_eq!(task.woken(), 0);
    // Its socket is ready: the session task is woken, and the next poll finishes it.
    gate.open();
    assert_eq!(task.woken(), 1);
    assert_eq!(exchanges.poll_reported(&mut cx), Poll::Ready(()));
    assert!(matches!(exchanges.try_event(), Some((StreamId(1), OwnedEvent::End))));
    assert!(exchanges.is_empty());
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    assert_eq!(exchanges.poll_finished(&mut cx), Poll::Ready(()));
}

#[test]
fn an_abort_drops_the_exchange_unless_it_already_ended() {
    let task = Arc::new(Task::default());
    let waker = Waker::from(task.clone());
    let mut cx = Context::from_waker(&waker);
    let mut exchanges = Exchanges::new();
    let dropped = Arc::new(AtomicUsize::new(0));
    let gates: Vec<Arc<Gate>> = (0..3).map(|_| Arc::new(Gate::default())).collect();
    for (i, gate) in gates.iter().enumerate() {
        let stream = StreamId(i as u64 + 1);
        exchanges
            .start(stream, exchange(exchanges.events(), stream, gate.clone(), dropped.clone()));
    }
    assert_eq!(exchanges.poll_reported(&mut cx), Poll::Ready(()));
    while exchanges.try_event().is_some() {}
    // Cut mid-response: dropped at once, its slot reused by the next exchange.
    exchanges.abort(StreamId(2));
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    assert_eq!(exchanges.len(), 2);
    let late = Arc::new(Gate::default());
    exchanges.start(
        StreamId(4),
        exchange(exchanges.events(), StreamId(4), late.clone(), dropped.clone()),
    );
    assert_eq!(exchanges.len(), 3);
    // Stream 1 reports its end; an abort after that is too late to cut it.
    gates[0].open();
    assert_eq!(exchanges.poll_reported(&mut cx), Poll::Ready(()));
    let mut ended = Vec::new();
    while let Some((stream, event)) = exchanges.try_event() {
        if matches!(event, OwnedEvent::End) {
            ended.push(stream);
        }
    }
    assert_eq!(ended, [StreamId(1)]);
    exchanges.abort(StreamId(1));
    // The others finish; poll_finished waits for them and drops their reports.
    assert_eq!(exchanges.poll_finished(&mut cx), Poll::Pending);
    gates[2].open();
    late.open();
    assert_eq!(exchanges.poll_finished(&mut cx), Poll::Ready(()));
    assert_eq!(dropped.load(Ordering::SeqCst), 4);
    assert!(exchanges.try_event().is_none());
}

#[test]
fn a_closed_set_drops_its_exchanges_and_refuses_their_events() {
    let mut exchanges = Exchanges::new();
    let dropped = Arc::new(AtomicUsize::new(0));
    let events = exchanges.events();
    let gate = Arc::new(Gate::default());
    exchanges.start(StreamId(1), exchange(events.clone(), StreamId(1), gate, dropped.clone()));
    let waker = Waker::from(Arc::new(Task::default()));
    assert_eq!(exchanges.poll_reported(&mut Context::from_waker(&waker)), Poll::Ready(()));
    exchanges.close();
    assert!(exchanges.is_empty());
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    assert!(events.send((StreamId(1), OwnedEvent::End)).is_err());
}

/// An exchange that keeps the waker it was polled with, then ends.
async fn keep_waker(kept: Arc<Mutex<Vec<Waker>>>) {
    std::future::poll_fn(|cx| {
        lock(&kept).push(cx.waker().clone());
        Poll::Ready(())
    })
    .await;
}

#[test]
fn an_exchange_in_a_reused_slot_is_polled_with_the_same_waker_as_the_one_before() {
    let waker = Waker::from(Arc::new(Task::default()));
    let mut cx = Context::from_waker(&waker);
    let mut exchanges = Exchanges::new();
    let kept = Arc::new(Mutex::new(Vec::new()));
    for stream in 1..=2 {
        exchanges.start(StreamId(stream), keep_waker(kept.clone()));
        assert_eq!(exchanges.poll_reported(&mut cx), Poll::Pending);
        assert!(exchanges.is_empty());
    }
    // A timer the first exchange left registered with its waker (a pooled connection's read
    // timeout) need not be registered again by the second.
    let kept = lock(&kept);
    assert!(kept[1].will_wake(&kept[0]));
    // Two exchanges at once run in two slots, each with its own waker.
    let gates = [Arc::new(Gate::default()), Arc::new(Gate::default())];
    let dropped = Arc::new(AtomicUsize::new(0));
    for (i, gate) in gates.iter().enumerate() {
        let stream = StreamId(10 + i as u64);
        exchanges
            .start(stream, exchange(exchanges.events(), stream, gate.clone(), dropped.clone()));
    }
    assert_eq!(exchanges.poll_reported(&mut cx), Poll::Ready(()));
    let wakers: Vec<Waker> =
        gates.iter().map(|g| lock(&g.open).1.clone().expect("waiting")).collect();
    assert!(!wakers[0].will_wake(&wakers[1]));
}
