//! Carrying outcomes from a driver to the futures awaiting them.
//!
//! A caller's future allocates a key, sends its request to the driver and awaits a oneshot.
//! The driver issues the request on the core machine and remembers which oneshot the core's
//! request id belongs to; the core's `Event::Response` (exactly one per request) completes it.
//! Dropping the future early sends a cancel command for its key, so the driver can call the
//! core's `cancel`. This is routing only: ids, deadlines and outcomes are the core's.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::sync::oneshot;
use zest_core::api::{CallError, ProgressFn};
use zest_core::error::{Rejection, UsageError};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::schema::ProgressParams;

/// Where a request's one outcome goes.
pub(crate) type Reply = oneshot::Sender<Result<RawJson, CallError>>;

/// Our requests in flight on one session, by core request id.
#[derive(Default)]
pub(crate) struct Calls {
    by_id: HashMap<RequestId, Waiting>,
    by_key: HashMap<u64, RequestId>,
}

struct Waiting {
    key: u64,
    reply: Reply,
    on_progress: Option<ProgressFn>,
}

impl Calls {
    /// Remembers that the outcome of request `id` goes to `reply`.
    pub(crate) fn insert(
        &mut self,
        key: u64,
        id: RequestId,
        reply: Reply,
        on_progress: Option<ProgressFn>,
    ) {
        self.by_key.insert(key, id.clone());
        self.by_id.insert(id, Waiting { key, reply, on_progress });
    }

    /// Delivers the outcome of `id` (ignored if its caller has gone).
    pub(crate) fn complete(&mut self, id: &RequestId, outcome: Result<RawJson, CallError>) {
        if let Some(w) = self.by_id.remove(id) {
            self.by_key.remove(&w.key);
            // The caller may have dropped its future; then nobody wants the outcome.
            let _ = w.reply.send(outcome);
        }
    }

    /// Hands a progress report on `id` to its callback, if it has one. A callback that panics
    /// is dropped (the call itself goes on), so it cannot take the driver down.
    pub(crate) fn progress(&mut self, id: &RequestId, progress: ProgressParams) {
        let Some(waiting) = self.by_id.get_mut(id) else { return };
        if let Some(f) = waiting.on_progress.as_mut() {
            if std::panic::catch_unwind(AssertUnwindSafe(|| f(progress))).is_err() {
                waiting.on_progress = None;
            }
        }
    }

    /// Forgets the call with `key` (its caller has gone) and returns its request id.
    pub(crate) fn abandon(&mut self, key: u64) -> Option<RequestId> {
        let id = self.by_key.remove(&key)?;
        self.by_id.remove(&id);
        Some(id)
    }
}

/// Allocates the keys that name calls before the core has given them an id.
#[derive(Debug, Default)]
pub(crate) struct Keys(AtomicU64);

impl Keys {
    pub(crate) fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}

/// Awaits the outcome of a call already sent to a driver. If this future is dropped before
/// the outcome arrives, `cancel` runs (it must not block: a channel send).
pub(crate) async fn outcome(
    rx: oneshot::Receiver<Result<RawJson, CallError>>,
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

    fn raw(n: u32) -> RawJson {
        RawJson::from_serialize(&n)
    }

    #[test]
    fn an_outcome_reaches_its_caller_once() {
        let mut calls = Calls::default();
        let (tx, mut rx) = oneshot::channel();
        calls.insert(7, RequestId::Number(1), tx, None);
        calls.complete(&RequestId::Number(1), Ok(raw(5)));
        assert_eq!(rx.try_recv().unwrap().unwrap().get(), "5");
        assert_eq!(calls.abandon(7), None, "completed calls are forgotten");
    }

    #[test]
    fn abandoning_forgets_the_call_and_names_its_id() {
        let mut calls = Calls::default();
        let (tx, _rx) = oneshot::channel();
        calls.insert(3, RequestId::Number(9), tx, None);
        assert_eq!(calls.abandon(3), Some(RequestId::Number(9)));
        assert_eq!(calls.abandon(3), None);
        calls.complete(&RequestId::Number(9), Ok(raw(1))); // a late outcome is ignored
    }

    #[test]
    fn progress_goes_to_the_callback() {
        let mut calls = Calls::default();
        let (tx, _rx) = oneshot::channel();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let s = seen.clone();
        let f: ProgressFn = Box::new(move |p| s.lock().unwrap().push(p.progress));
        calls.insert(1, RequestId::Number(1), tx, Some(f));
        let token = RequestId::Number(1);
        calls.progress(&RequestId::Number(1), ProgressParams::new(token, 2.0));
        assert_eq!(*seen.lock().unwrap(), vec![2.0]);
    }

    #[test]
    fn a_panicking_progress_callback_is_dropped() {
        let mut calls = Calls::default();
        let (tx, mut rx) = oneshot::channel();
        let f: ProgressFn = Box::new(|_| panic!("callback bug"));
        calls.insert(1, RequestId::Number(1), tx, Some(f));
        let report = || ProgressParams::new(RequestId::Number(1), 1.0);
        calls.progress(&RequestId::Number(1), report());
        calls.progress(&RequestId::Number(1), report()); // no callback left to panic
        calls.complete(&RequestId::Number(1), Ok(raw(3)));
        assert_eq!(rx.try_recv().unwrap().unwrap().get(), "3", "the call still completes");
    }

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
