//! Carrying outcomes from a driver to the futures awaiting them.
//!
//! A caller's future allocates a key, sends its request to the driver and awaits a oneshot.
//! The driver issues the request on the core machine and files the oneshot in zest-core's
//! [`Calls`](zest_core::runtime::Calls) table; the core's `Event::Response` (exactly one per
//! request) completes it. Dropping the future early sends a cancel command for its key, so the
//! driver can call the core's `cancel`. This is routing only: ids, deadlines and outcomes are
//! the core's.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::oneshot;
use zest_core::api::CallError;
use zest_core::error::{Rejection, UsageError};
use zest_core::jsonrpc::{ErrorObject, RawJson};
use zest_core::runtime::{Outcome, ReplySlot};

/// Where a request's one outcome goes.
pub(crate) struct Reply(pub(crate) oneshot::Sender<Outcome>);

impl ReplySlot for Reply {
    fn deliver(self, outcome: Outcome) {
        // The caller may have dropped its future; then nobody wants the outcome.
        let _ = self.0.send(outcome);
    }
}

/// A reply sender and the receiver its caller awaits.
pub(crate) fn reply() -> (Reply, oneshot::Receiver<Outcome>) {
    let (tx, rx) = oneshot::channel();
    (Reply(tx), rx)
}

/// Awaits the outcome of a call already sent to a driver. If this future is dropped before
/// the outcome arrives, `cancel` runs (it must not block: a channel send).
pub(crate) async fn outcome(
    rx: oneshot::Receiver<Outcome>,
    cancel: impl FnOnce(),
) -> Result<RawJson, CallError> {
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
    // A dropped sender means the driver ended the session before answering.
    result.unwrap_or(Err(CallError::Usage(UsageError::Closed)))
}

/// Runs a handler's future, turning a panic into an internal JSON-RPC error so that the
/// request still gets its one answer.
pub(crate) struct CatchUnwind<F>(pub(crate) F);

impl<F> Future for CatchUnwind<F>
where
    F: Future<Output = Result<RawJson, ErrorObject>> + Unpin,
{
    type Output = Result<RawJson, ErrorObject>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(poll) => poll,
            Err(_) => {
                Poll::Ready(Err(Rejection::Internal("the handler panicked".into()).to_jsonrpc()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_handler_still_answers() {
        let fut: zest_core::handler::BoxFuture<'static, Result<RawJson, ErrorObject>> =
            Box::pin(async { panic!("boom") });
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let out = rt.block_on(CatchUnwind(fut));
        let err = out.unwrap_err();
        assert!(err.message.contains("panicked"), "{err:?}");
    }
}
