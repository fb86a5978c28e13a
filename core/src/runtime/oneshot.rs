//! A one-value channel whose receiving end is a future, with no executor behind it: the
//! reply of a session's loop to one command, the same on every async runtime.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use super::{Outcome, ReplySlot};
use crate::api::CallError;
use crate::error::UsageError;

/// The sending end: [`send`](Self::send) once; dropping it unsent closes the channel.
#[derive(Debug)]
pub struct OneshotSender<T> {
    shared: Arc<Mutex<Shared<T>>>,
    /// Runs once the value is handed over, or the sender dropped unsent.
    then: Option<Then>,
}

/// What [`oneshot_then`] runs.
struct Then(Box<dyn FnOnce() + Send + Sync>);

impl std::fmt::Debug for Then {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Then")
    }
}

/// The receiving end: a future of `Some(value)`, or `None` once the sender is gone unsent.
#[derive(Debug)]
pub struct OneshotReceiver<T> {
    shared: Arc<Mutex<Shared<T>>>,
}

#[derive(Debug)]
struct Shared<T> {
    value: Option<T>,
    waker: Option<Waker>,
    /// The sender sent or was dropped.
    done: bool,
}

/// A connected pair.
pub fn oneshot<T>() -> (OneshotSender<T>, OneshotReceiver<T>) {
    let shared = Arc::new(Mutex::new(Shared { value: None, waker: None, done: false }));
    (OneshotSender { shared: shared.clone(), then: None }, OneshotReceiver { shared })
}

/// A connected pair whose sender runs `then` once it has handed its value over (or is
/// dropped unsent), after waking the receiver.
pub fn oneshot_then<T>(
    then: impl FnOnce() + Send + Sync + 'static,
) -> (OneshotSender<T>, OneshotReceiver<T>) {
    let (mut tx, rx) = oneshot();
    tx.then = Some(Then(Box::new(then)));
    (tx, rx)
}

fn lock<T>(shared: &Mutex<Shared<T>>) -> MutexGuard<'_, Shared<T>> {
    // Nothing that could panic runs under the lock: go on with the state.
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

impl<T> OneshotSender<T> {
    /// Hands `value` to the receiver (kept until it looks, dropped if it is gone).
    pub fn send(self, value: T) {
        lock(&self.shared).value = Some(value);
        // Drop marks it done and wakes the receiver.
    }
}

impl<T> Drop for OneshotSender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut st = lock(&self.shared);
            st.done = true;
            st.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        if let Some(Then(then)) = self.then.take() {
            then();
        }
    }
}

impl<T> Future for OneshotReceiver<T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut st = lock(&self.shared);
        if let Some(value) = st.value.take() {
            return Poll::Ready(Some(value));
        }
        if st.done {
            return Poll::Ready(None);
        }
        match &mut st.waker {
            Some(waker) => waker.clone_from(cx.waker()),
            None => st.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

/// A call's outcome goes to its caller's receiver.
impl ReplySlot for OneshotSender<Outcome> {
    fn deliver(self, outcome: Outcome) {
        self.send(outcome);
    }
}

/// Awaits the outcome of a request already handed to a loop with `rx`'s sender. If this
/// future is dropped before the outcome arrives, `cancel` runs (it must not block). A sender
/// dropped without an outcome means the session ended first.
pub async fn outcome(rx: OneshotReceiver<Outcome>, cancel: impl FnOnce()) -> Outcome {
    struct Guard<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for Guard<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f();
            }
        }
    }
    let mut guard = Guard(Some(cancel));
    let result = rx.await;
    guard.0 = None;
    result.unwrap_or(Err(CallError::Usage(UsageError::Closed)))
}

#[cfg(test)]
mod tests {
    use std::task::Waker;

    use super::*;

    fn poll<T>(rx: &mut OneshotReceiver<T>) -> Poll<Option<T>> {
        Pin::new(rx).poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn a_sent_value_arrives_once() {
        let (tx, mut rx) = oneshot();
        assert!(poll(&mut rx).is_pending());
        tx.send(7);
        assert_eq!(poll(&mut rx), Poll::Ready(Some(7)));
    }

    #[test]
    fn a_dropped_sender_closes_the_channel() {
        let (tx, mut rx) = oneshot::<u8>();
        drop(tx);
        assert_eq!(poll(&mut rx), Poll::Ready(None));
    }

    #[test]
    fn the_hook_runs_once_the_value_is_handed_over_or_never_will_be() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let runs = Arc::new(AtomicUsize::new(0));
        for send in [true, false] {
            let counted = runs.clone();
            let (tx, mut rx) = oneshot_then::<u8>(move || {
                counted.fetch_add(1, Ordering::SeqCst);
            });
            assert!(poll(&mut rx).is_pending());
            if send {
                tx.send(1);
                assert_eq!(poll(&mut rx), Poll::Ready(Some(1)));
            } else {
                drop(tx);
                assert_eq!(poll(&mut rx), Poll::Ready(None));
            }
        }
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_send_after_the_receiver_left_is_dropped() {
        let value = Arc::new(());
        let (tx, rx) = oneshot::<Arc<()>>();
        drop(rx);
        tx.send(value.clone());
        assert_eq!(Arc::strong_count(&value), 1, "nobody holds the value sent to nobody");
    }
}
