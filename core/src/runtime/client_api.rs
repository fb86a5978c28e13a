//! The typed client API of the async runtimes, written once: a handle that can hand its
//! session's loop a [`ClientCommand`] ([`CommandSink`]) has all of [`ClientApi`], each call
//! a future that cancels its request when dropped.

use std::future::{poll_fn, Future};
use std::pin::Pin;

use super::oneshot::{oneshot, oneshot_then, OneshotSender};
use super::{CallKey, CallKeys, ClientCommand, Driven, Outcome, OutgoingCall};
use crate::api::{CallError, ClientApi, PageWalk, Paged, ProgressFn};
use crate::client::decode_result;
use crate::error::{CloseReason, RequestError, UsageError};
use crate::handler::BoxFuture;
use crate::jsonrpc::RawJson;
use crate::rpc::RequestOptions;
use crate::schema::methods::Method;

/// A command to an async client session's loop.
pub type AsyncCommand = ClientCommand<OneshotSender<Outcome>>;

/// A client handle's line to its session's loop (zest-tokio's and zest-smol's `Client`).
pub trait CommandSink: Sync {
    /// Queues `command` for the loop; `false` once the loop is gone.
    fn send_command(&self, command: AsyncCommand) -> bool;
    /// Where the keys of this session's calls come from.
    fn call_keys(&self) -> &CallKeys;
    /// Why the session ended, once it has.
    fn close_reason(&self) -> Option<CloseReason>;
    /// The session's loop when its callers poll it themselves while they wait (zest-smol;
    /// zest-tokio on a multi-thread runtime); `None` (the default) when a task of its own
    /// alone polls it.
    fn driven(&self) -> Option<&Driven> {
        None
    }
}

/// Sends a request with raw params through `sink` when first polled and awaits its one
/// outcome; a future dropped unpolled sends nothing, one dropped later cancels the request.
/// A call the loop no longer takes fails with `Usage(Closed)`; one it took and could not
/// answer, with the session's close reason.
pub async fn call_raw<S: CommandSink + ?Sized>(
    sink: &S,
    method: &'static str,
    params: RawJson,
    opts: RequestOptions,
    on_progress: Option<ProgressFn>,
) -> Outcome {
    let key = sink.call_keys().next();
    let driven = sink.driven();
    // Once its answer is handed over, a call no longer waits on the loop, polled or not.
    let (reply, mut outcome) = match driven {
        Some(driven) => {
            let driven = driven.clone();
            oneshot_then(move || driven.release(key))
        }
        None => oneshot(),
    };
    let call = OutgoingCall { key, method, params: Some(params), opts, on_progress, reply };
    if let Some(driven) = driven {
        driven.expect(key);
    }
    let mut guard = CancelOnDrop { sink, key: Some(key) };
    if !sink.send_command(ClientCommand::Call(call)) {
        guard.key = None;
        release(driven, key);
        return Err(CallError::Usage(UsageError::Closed));
    }
    let outcome = poll_fn(|cx| {
        if let Some(driven) = driven {
            driven.drive(key, cx);
        }
        Pin::new(&mut outcome).poll(cx)
    })
    .await;
    guard.key = None;
    release(driven, key);
    outcome.unwrap_or_else(|| {
        let reason = sink.close_reason().unwrap_or(CloseReason::Local);
        Err(CallError::Request(RequestError::Closed(reason)))
    })
}

fn release(driven: Option<&Driven>, key: CallKey) {
    if let Some(driven) = driven {
        driven.release(key);
    }
}

/// Cancels the request with `key` when dropped while still armed.
struct CancelOnDrop<'a, S: CommandSink + ?Sized> {
    sink: &'a S,
    key: Option<CallKey>,
}

impl<S: CommandSink + ?Sized> Drop for CancelOnDrop<'_, S> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            // After the session ended there is nothing left to cancel.
            self.sink.send_command(ClientCommand::Cancel(key));
            release(self.sink.driven(), key);
        }
    }
}

impl<S: CommandSink> ClientApi for S {
    type Call<'a, T: 'a>
        = BoxFuture<'a, Result<T, CallError>>
    where
        S: 'a;

    fn request_with<M: Method>(
        &self,
        params: M::Params,
        opts: RequestOptions,
        on_progress: Option<ProgressFn>,
    ) -> Self::Call<'_, M::Result>
    where
        M::Result: 'static,
    {
        let raw = call_raw(self, M::NAME, RawJson::from_serialize(&params), opts, on_progress);
        Box::pin(async move { decode_result::<M>(Ok(raw.await?)).map_err(CallError::Request) })
    }

    fn list_all<M: Paged>(&self) -> Self::Call<'_, Vec<M::Item>>
    where
        M::Item: 'static,
        M::Result: 'static,
    {
        Box::pin(async move {
            let mut walk = PageWalk::<M>::new();
            while let Some(params) = walk.next_params() {
                walk.page(call_raw(self, M::NAME, params, RequestOptions::default(), None).await?)?;
            }
            walk.items()
        })
    }

    fn fail<T: 'static>(&self, error: CallError) -> Self::Call<'_, T> {
        Box::pin(async move { Err(error) })
    }
}
