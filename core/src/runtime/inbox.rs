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
}

impl<T> Default for Inbox<T> {
    fn default() -> Self {
        Self { state: Mutex::new(State { items: VecDeque::new(), parked: None, closed: false }) }
    }
}

impl<T> Inbox<T> {
    /// An empty, open inbox.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // No code runs under the lock that could panic halfway: go on with the state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `item`, waking the task if it is parked. `Err(item)` once the inbox is closed
    /// (its task is gone).
    pub fn send(&self, item: T) -> Result<(), T> {
        let parked = {
            let mut st = self.lock();
            if st.closed {
                return Err(item);
            }
            st.items.push_back(item);
            st.parked.take()
        };
        if let Some(waker) = parked {
            waker.wake();
        }
        Ok(())
    }

    /// The next item, without parking.
    pub fn try_recv(&self) -> Option<T> {
        self.lock().items.pop_front()
    }

    /// The next item; when there is none, parks the task of `cx` until one is sent.
    pub fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<T> {
        let mut st = self.lock();
        match st.items.pop_front() {
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
}
