//! Requests awaiting an outcome, seen from both ends: the caller's future ([`call`]) and the
//! driver's table ([`Calls`]). Shared by the client (its requests to the server) and the
//! server (a handler's requests to the client).
//!
//! The machine allocates request ids inside the driver, so a caller names its request by a
//! local key; dropping the caller's future sends a cancel for that key.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use smol::channel::{self, Sender};
use zest_core::api::{CallError, ProgressFn};
use zest_core::error::{CloseReason, RequestError, UsageError};
use zest_core::handler::BoxFuture;
use zest_core::jsonrpc::{RawJson, RequestId};
use zest_core::schema::methods::Method;
use zest_core::schema::ProgressParams;
use zest_core::RequestOptions;

/// The outcome delivered to a caller.
pub(crate) type Reply = Result<RawJson, CallError>;

/// A request a handle asks its driver to send.
pub(crate) struct Outgoing {
    pub(crate) key: u64,
    pub(crate) method: &'static str,
    pub(crate) params: Option<RawJson>,
    pub(crate) opts: RequestOptions,
    pub(crate) on_progress: Option<ProgressFn>,
    pub(crate) reply: Sender<Reply>,
}

/// The handle side: how a call reaches its driver.
pub(crate) trait Submit: Sync {
    /// Queues a request for the driver; `false` when the driver is gone.
    fn submit(&self, out: Outgoing) -> bool;
    /// Asks the driver to cancel the request with this key (never blocks).
    fn cancel(&self, key: u64);
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
    static NEXT_KEY: AtomicU64 = AtomicU64::new(0);
    let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
    let (reply, outcome) = channel::bounded(1);
    let out = Outgoing { key, method, params: Some(params), opts, on_progress, reply };
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
    key: Option<u64>,
}

impl<S: Submit> Drop for CancelOnDrop<'_, S> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            self.via.cancel(key);
        }
    }
}

/// The driver side: requests sent on the machine, by id and by the caller's key.
#[derive(Default)]
pub(crate) struct Calls {
    by_id: HashMap<RequestId, Entry>,
    by_key: HashMap<u64, RequestId>,
}

struct Entry {
    key: u64,
    reply: Sender<Reply>,
    on_progress: Option<ProgressFn>,
}

impl Calls {
    /// Sends `out` with `send` (the machine's request command) and records it; a refused
    /// request is answered at once with the usage error.
    pub(crate) fn start(
        &mut self,
        out: Outgoing,
        send: impl FnOnce(
            &'static str,
            Option<RawJson>,
            RequestOptions,
        ) -> Result<RequestId, UsageError>,
    ) {
        match send(out.method, out.params, out.opts) {
            Ok(id) => {
                self.by_key.insert(out.key, id.clone());
                let entry = Entry { key: out.key, reply: out.reply, on_progress: out.on_progress };
                self.by_id.insert(id, entry);
            }
            Err(e) => {
                let _ = out.reply.try_send(Err(CallError::Usage(e)));
            }
        }
    }

    /// Delivers the one outcome of request `id` (ignored if the caller is gone).
    pub(crate) fn complete(&mut self, id: &RequestId, result: Result<RawJson, RequestError>) {
        if let Some(entry) = self.by_id.remove(id) {
            self.by_key.remove(&entry.key);
            let _ = entry.reply.try_send(result.map_err(CallError::Request));
        }
    }

    /// Passes a progress report to the request's callback, if it has one.
    pub(crate) fn progress(&mut self, id: &RequestId, progress: ProgressParams) {
        if let Some(f) = self.by_id.get_mut(id).and_then(|e| e.on_progress.as_mut()) {
            f(progress);
        }
    }

    /// Forgets the request with `key` and returns its id, to cancel on the machine.
    pub(crate) fn take_key(&mut self, key: u64) -> Option<RequestId> {
        let id = self.by_key.remove(&key)?;
        self.by_id.remove(&id);
        Some(id)
    }
}
