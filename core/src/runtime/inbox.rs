//! A queue into a task's loop that wakes the task only while it waits.
//!
//! A channel wakes its receiver on every send, also when the sender is the receiving task
//! itself (a connection task draining the router, which routes the answer back to that same
//! connection) or when the receiver is busy and will look anyway. Waking a running task
//! makes executors queue it once more, and both tokio and smol then wake another worker
//! thread to help: a futex call, a thread hop and an empty poll per message. An [`Inbox`]
//! wakes only a task parked on [`Inbox::poll_recv`]; the task says it is running again with
//! [`Inbox::awake`] and drains with [`Inbox::try_recv`] before it parks.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use super::write::backlog_exceeds;
use crate::io::Transmit;

/// Items for one task, in the order they were sent, from any thread.
#[derive(Debug)]
pub struct Inbox<T> {
    state: Mutex<State<T>>,
}

#[derive(Debug)]
struct State<T> {
    items: VecDeque<T>,
    /// The task parked on `poll_recv`, until it is woken or says it is awake.
    parked: Option<Waker>,
    closed: bool,
    limit: Option<Limit<T>>,
}

/// What a [`limited`](Inbox::limited) inbox holds, against its limit.
#[derive(Debug)]
struct Limit<T> {
    bytes: usize,
    weigh: fn(&T) -> usize,
    /// The weight queued, and the largest item's since the inbox was last empty.
    held: (usize, usize),
    passed: bool,
}

impl<T> Limit<T> {
    fn add(&mut self, item: &T) {
        let w = (self.weigh)(item);
        self.held = (self.held.0 + w, self.held.1.max(w));
    }

    fn remove(&mut self, item: &T, now_empty: bool) {
        let w = (self.weigh)(item);
        self.held = if now_empty { (0, 0) } else { (self.held.0 - w, self.held.1) };
    }
}

impl<T> Default for Inbox<T> {
    fn default() -> Self {
        let state = State { items: VecDeque::new(), parked: None, closed: false, limit: None };
        Self { state: Mutex::new(state) }
    }
}

impl<T> Inbox<T> {
    /// An empty, open inbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// An inbox for a task that may stop taking items (a response body its HTTP stack does
    /// not poll while the client does not read): once more than `bytes` of `weigh`ed items
    /// wait besides the largest ([`backlog_exceeds`]), it drops them and closes: the send
    /// that took it there and later ones fail, and
    /// [`passed_limit`](Self::passed_limit) is true.
    pub fn limited(bytes: usize, weigh: fn(&T) -> usize) -> Self {
        let limit = Limit { bytes, weigh, held: (0, 0), passed: false };
        let inbox = Self::default();
        inbox.lock().limit = Some(limit);
        inbox
    }

    /// True once a [`limited`](Self::limited) inbox gave up.
    pub fn passed_limit(&self) -> bool {
        self.gave_up_at().is_some()
    }

    /// The limit a [`limited`](Self::limited) inbox passed, once it gave up.
    pub fn gave_up_at(&self) -> Option<usize> {
        self.lock().limit.as_ref().filter(|l| l.passed).map(|l| l.bytes)
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // No code runs under the lock that could panic halfway: go on with the state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `item`, waking the task if it is parked. `Err(item)` once the inbox is closed
    /// (its task is gone), or when `item` takes a limited inbox past its limit (it closes).
    pub fn send(&self, item: T) -> Result<(), T> {
        let (parked, sent) = {
            let mut st = self.lock();
            if st.closed {
                return Err(item);
            }
            let sent = if st.admits(&item) {
                st.items.push_back(item);
                Ok(())
            } else {
                Err(item)
            };
            (st.parked.take(), sent)
        };
        if let Some(waker) = parked {
            waker.wake();
        }
        sent
    }

    /// The next item, without parking.
    pub fn try_recv(&self) -> Option<T> {
        self.lock().pop()
    }

    /// The next item; when there is none, parks the task of `cx` until one is sent.
    pub fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<T> {
        let mut st = self.lock();
        match st.pop() {
            Some(item) => Poll::Ready(item),
            None => {
                match &mut st.parked {
                    Some(waker) => waker.clone_from(cx.waker()),
                    None => st.parked = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }

    /// The task runs again (it was woken by something else): sends no longer wake it until
    /// it parks again. Without this a send while it runs would wake it for nothing.
    pub fn awake(&self) {
        self.lock().parked = None;
    }

    /// Refuses later sends and drops what is queued (the task is ending).
    pub fn close(&self) {
        let items = {
            let mut st = self.lock();
            st.closed = true;
            st.parked = None;
            std::mem::take(&mut st.items)
        };
        drop(items);
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.lock().items.is_empty()
    }
}

impl<T> State<T> {
    /// False when `item` takes a limited inbox past its limit: it gives up then.
    fn admits(&mut self, item: &T) -> bool {
        let Some(limit) = self.limit.as_mut() else { return true };
        limit.add(item);
        let (bytes, largest) = limit.held;
        if !backlog_exceeds(bytes, largest, limit.bytes) {
            return true;
        }
        limit.passed = true;
        self.closed = true;
        self.items.clear();
        false
    }

    fn pop(&mut self) -> Option<T> {
        let item = self.items.pop_front()?;
        if let Some(limit) = self.limit.as_mut() {
            limit.remove(&item, self.items.is_empty());
        }
        Some(item)
    }
}

/// The bytes a router transmit carries (a [`Transmit::Write`]'s), for
/// [`Inbox::limited`] and for a runtime counting what waits for a connection.
pub fn transmit_bytes(transmit: &Transmit) -> usize {
    match transmit {
        Transmit::Write { bytes, .. } => bytes.len(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    use super::*;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn only_a_parked_task_is_woken_and_items_keep_their_order() {
        let inbox = Inbox::new();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        // Running: sends queue without waking.
        inbox.send(1).unwrap();
        inbox.send(2).unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        assert_eq!(inbox.try_recv(), Some(1));
        assert_eq!(inbox.poll_recv(&mut cx), Poll::Ready(2));
        // Parked: the next send wakes it, once.
        assert_eq!(inbox.poll_recv(&mut cx), Poll::Pending);
        inbox.send(3).unwrap();
        inbox.send(4).unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        // Parked again, then running again before anything came: no wake-up.
        assert_eq!(inbox.try_recv(), Some(3));
        assert_eq!(inbox.try_recv(), Some(4));
        assert_eq!(inbox.poll_recv(&mut cx), Poll::Pending);
        inbox.awake();
        inbox.send(5).unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(!inbox.is_empty());
    }

    #[test]
    fn a_closed_inbox_refuses_and_drops() {
        let inbox = Inbox::new();
        inbox.send("kept until close").unwrap();
        inbox.close();
        assert!(inbox.is_empty());
        assert_eq!(inbox.send("late"), Err("late"));
        assert_eq!(inbox.try_recv(), None);
    }

    #[test]
    fn a_limited_inbox_gives_up_past_its_limit_and_wakes_its_task() {
        let inbox: Inbox<Vec<u8>> = Inbox::limited(10, Vec::len);
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        // One item, however large, is never too much, nor small ones beside it.
        inbox.send(vec![0; 100]).unwrap();
        inbox.send(vec![0; 6]).unwrap();
        inbox.send(vec![0; 4]).unwrap();
        assert!(!inbox.passed_limit(), "10 bytes besides the largest is within the limit");
        // Taken items count no more; once empty, the largest is forgotten.
        assert_eq!(inbox.poll_recv(&mut cx), Poll::Ready(vec![0; 100]));
        assert_eq!(inbox.try_recv(), Some(vec![0; 6]));
        assert_eq!(inbox.try_recv(), Some(vec![0; 4]));
        assert_eq!(inbox.poll_recv(&mut cx), Poll::Pending);
        inbox.send(vec![0; 6]).unwrap();
        inbox.send(vec![0; 6]).unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "the first send woke the parked task");
        assert_eq!(inbox.poll_recv(&mut cx), Poll::Ready(vec![0; 6]));
        inbox.send(vec![0; 5]).unwrap();
        assert_eq!(inbox.poll_recv(&mut cx), Poll::Ready(vec![0; 6]));
        assert_eq!(inbox.poll_recv(&mut cx), Poll::Ready(vec![0; 5]));
        assert_eq!(inbox.poll_recv(&mut cx), Poll::Pending);
        // 6 + 5 + 6 is 11 besides the largest: that send fails, and the inbox is emptied and
        // closed (a task parked then is woken to find out).
        inbox.send(vec![0; 6]).unwrap();
        inbox.send(vec![0; 5]).unwrap();
        assert_eq!(inbox.send(vec![0; 6]), Err(vec![0; 6]));
        assert!(inbox.passed_limit());
        assert!(inbox.is_empty());
        assert_eq!(inbox.send(vec![1]), Err(vec![1]));
        assert_eq!(count.0.load(Ordering::SeqCst), 2, "woken once per park");
    }
}
