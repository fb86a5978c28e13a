//! Requests awaiting an outcome, from the caller's end ([`call`]): the driver files each in
//! zest-core's [`Calls`](zest_core::runtime::Calls) table. Shared by the client (its requests
//! to the server) and the server (a handler's requests to the client).
//!
//! The machine allocates request ids inside the driver, so a caller names its request by a
//! [`CallKey`]; dropping the caller's future sends a cancel for that key.

use smol::channel::{self, Receiver, Sender};
use zest_core::api::{CallError, ProgressFn};
use zest_core::error::{CloseReason, RequestError, UsageError};
use zest_core::handler::BoxFuture;
use zest_core::jsonrpc::RawJson;
use zest_core::runtime::{CallKey, CallKeys, Outcome, ReplySlot};
use zest_core::schema::methods::Method;
use zest_core::RequestOptions;

/// The outcome delivered to a caller.
pub(crate) type Reply = Outcome;

/// Where a call's one outcome goes: a channel with room for it.
pub(crate) struct ReplyTx(Sender<Reply>);

impl ReplySlot for ReplyTx {
    fn deliver(self, outcome: Outcome) {
        // The caller may have dropped its future; then nobody wants the outcome.
        let _ = self.0.try_send(outcome);
    }
}

/// A reply slot and the receiver its caller awaits (see [`outcome`]).
pub(crate) fn reply() -> (ReplyTx, Receiver<Reply>) {
    let (tx, rx) = channel::bounded(1);
    (ReplyTx(tx), rx)
}

/// Awaits the outcome of a request already filed with `rx`'s slot. If this future is dropped
/// before the outcome arrives, `cancel` runs (it must not block). A slot dropped without an
/// outcome means the session is over.
pub(crate) async fn outcome(rx: Receiver<Reply>, cancel: impl FnOnce()) -> Reply {
    struct Guard<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for Guard<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f();
            }
        }
    }
    let mut guard = Guard(Some(cancel));
    let outcome = rx.recv().await;
    guard.0 = None;
    outcome.unwrap_or(Err(CallError::Usage(UsageError::Closed)))
}

/// A request a handle asks its driver to send.
pub(crate) type Outgoing = zest_core::runtime::OutgoingCall<ReplyTx>;

/// The handle side: how a call reaches its driver.
pub(crate) trait Submit: Sync {
    /// Queues a request for the driver; `false` when the driver is gone.
    fn submit(&self, out: Outgoing) -> bool;
    /// Asks the driver to cancel the request with this key (never blocks).
    fn cancel(&self, key: CallKey);
    /// Why the session is over, once it is.
    fn close_reason(&self) -> Option<CloseReason>;
}

/// Sends a typed request through `via` and awaits its outcome. Dropping the future before it
/// completes cancels the request.
pub(crate) fn call<'a, M, S>(
    via: &'a S,
    params: &M::Params,
    opts: RequestOptions,
    on_progress: Option<ProgressFn>,
) -> BoxFuture<'a, Result<M::Result, CallError>>
where
    M: Method,
    M::Result: 'static,
    S: Submit,
{
    let raw = call_raw(via, M::NAME, RawJson::from_serialize(params), opts, on_progress);
    Box::pin(async move { decode::<M::Result>(&raw.await?) })
}

/// Decodes a raw result.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(raw: &RawJson) -> Result<T, CallError> {
    raw.parse::<T>().map_err(|e| CallError::Request(RequestError::InvalidResult(e)))
}

/// Sends a request with raw params through `via` and awaits its raw outcome. Dropping the
/// future before it completes cancels the request.
pub(crate) async fn call_raw<S: Submit>(
    via: &S,
    method: &'static str,
    params: RawJson,
    opts: RequestOptions,
    on_progress: Option<ProgressFn>,
) -> Reply {
    static KEYS: CallKeys = CallKeys::new();
    let key = KEYS.next();
    let (reply, outcome) = channel::bounded(1);
    let out =
        Outgoing { key, method, params: Some(params), opts, on_progress, reply: ReplyTx(reply) };
    if !via.submit(out) {
        return Err(CallError::Usage(UsageError::Closed));
    }
    let mut guard = CancelOnDrop { via, key: Some(key) };
    let outcome = outcome.recv().await;
    guard.key = None;
    match outcome {
        Ok(reply) => reply,
        // The driver ended without answering: the session closed.
        Err(_) => {
            let reason = via.close_reason().unwrap_or(CloseReason::Local);
            Err(CallError::Request(RequestError::Closed(reason)))
        }
    }
}

/// Cancels the request with `key` when dropped while still armed.
struct CancelOnDrop<'a, S: Submit> {
    via: &'a S,
    key: Option<CallKey>,
}

impl<S: Submit> Drop for CancelOnDrop<'_, S> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            self.via.cancel(key);
        }
    }
}
