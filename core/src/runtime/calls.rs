//! The table of a session's own requests in flight, seen from the runtime's loop.
//!
//! A caller (an app's `call_tool`, a handler's `create_message`) hands its request and a
//! reply sender to the session's loop; the loop issues the request on the machine, which
//! returns its [`RequestId`] at once, and files the sender here under that id. The machine's
//! `Response` event for the id (exactly one per request) settles it. A caller that stops
//! waiting before the loop has seen the id names its call by a [`CallKey`] instead, which the
//! table maps to the id so the loop can cancel the request on the machine.
//!
//! This is routing only: ids, deadlines and outcomes are the machine's.

use crate::jsonrpc::own_ids::OwnIdMap;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::api::{CallError, ProgressFn};
use crate::error::{CloseReason, RequestError, UsageError};
use crate::jsonrpc::{RawJson, RequestId};
use crate::schema::ProgressParams;

/// What a call ends with: the raw result, or why there is none.
pub type Outcome = Result<RawJson, CallError>;

/// Where one call's outcome goes: a runtime's oneshot sender, channel or blocking slot.
///
/// [`deliver`](Self::deliver) consumes the slot, so a call cannot be answered twice. A caller
/// that has gone away simply never sees the outcome; `deliver` MUST NOT block or panic.
pub trait ReplySlot {
    /// Hands the call its one outcome.
    fn deliver(self, outcome: Outcome);
}

/// Names a call before the machine has given it a [`RequestId`] (the caller allocates it
/// from [`CallKeys`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallKey(pub u64);

impl fmt::Display for CallKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "call {}", self.0)
    }
}

/// Allocates [`CallKey`]s; shared by the handles of one session (or by all sessions).
#[derive(Debug, Default)]
pub struct CallKeys(AtomicU64);

impl CallKeys {
    /// A counter starting at 0.
    pub const fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    /// The next key; never the same twice from one `CallKeys`.
    pub fn next(&self) -> CallKey {
        CallKey(self.0.fetch_add(1, Ordering::Relaxed))
    }
}

/// A session's requests in flight, by the machine's request id and by the caller's key.
///
/// Each call filed here gets exactly one outcome: from [`complete`](Self::complete) or
/// [`settle`](Self::settle) (the machine's `Response`), or from [`close`](Self::close) (a
/// broken promise: the machine answers every request before `Closed`), unless its caller
/// [`abandon`](Self::abandon)s it first.
pub struct Calls<R> {
    by_id: OwnIdMap<RequestId, Waiting<R>>,
    by_key: OwnIdMap<CallKey, RequestId>,
}

struct Waiting<R> {
    key: Option<CallKey>,
    reply: R,
    on_progress: Option<ProgressFn>,
}

/// A settled call's outcome, not yet handed over (a runtime that holds a lock delivers it
/// after unlocking). Dropping it drops the reply slot and the progress callback undelivered.
#[must_use = "the outcome reaches the caller only through `deliver`"]
pub struct Delivery<R> {
    reply: R,
    outcome: Outcome,
    /// Dropped together with the reply: it may own the last handle of the session.
    _on_progress: Option<ProgressFn>,
}

impl<R: ReplySlot> Delivery<R> {
    /// Hands the outcome to the caller.
    pub fn deliver(self) {
        self.reply.deliver(self.outcome);
    }

    /// The outcome about to be delivered.
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }
}

impl<R: ReplySlot> Calls<R> {
    /// An empty table.
    pub fn new() -> Self {
        Self { by_id: OwnIdMap::default(), by_key: OwnIdMap::default() }
    }

    /// Issues a request with `send` (the machine's `request` command) and files `reply` under
    /// the id it returns; a refused request is answered at once with the usage error. Returns
    /// the id when the request went out.
    pub fn start(
        &mut self,
        key: Option<CallKey>,
        reply: R,
        on_progress: Option<ProgressFn>,
        send: impl FnOnce() -> Result<RequestId, UsageError>,
    ) -> Option<RequestId> {
        match send() {
            Ok(id) => {
                self.insert(id.clone(), key, reply, on_progress);
                Some(id)
            }
            Err(e) => {
                reply.deliver(Err(CallError::Usage(e)));
                None
            }
        }
    }

    /// Files `reply` for the request the machine issued as `id`, abandonable by `key` if
    /// given. Only ids the machine issued and keys from [`CallKeys`] belong here: the table
    /// hashes them with a hash a peer's chosen ids could collide (`own_ids`). Ids and keys
    /// are unique per session (the machine never reuses an id, and
    /// [`CallKeys`] never repeats a key); a call filed again under the same id settles the
    /// earlier one as closed locally, so that it still gets its one outcome.
    pub fn insert(
        &mut self,
        id: RequestId,
        key: Option<CallKey>,
        reply: R,
        on_progress: Option<ProgressFn>,
    ) {
        if let Some(key) = key {
            self.by_key.insert(key, id.clone());
        }
        if let Some(earlier) = self.by_id.insert(id, Waiting { key, reply, on_progress }) {
            if let Some(old) = earlier.key.filter(|old| Some(*old) != key) {
                self.by_key.remove(&old);
            }
            let closed = RequestError::Closed(CloseReason::Local);
            earlier.reply.deliver(Err(CallError::Request(closed)));
        }
    }

    /// Delivers the outcome of request `id` at once; false if no call waits for it (it was
    /// abandoned, or is not ours).
    pub fn complete(&mut self, id: &RequestId, result: Result<RawJson, RequestError>) -> bool {
        match self.settle(id, result) {
            Some(delivery) => {
                delivery.deliver();
                true
            }
            None => false,
        }
    }

    /// Takes the call waiting for `id` out of the table with its outcome, to deliver later.
    pub fn settle(
        &mut self,
        id: &RequestId,
        result: Result<RawJson, RequestError>,
    ) -> Option<Delivery<R>> {
        let waiting = self.by_id.remove(id)?;
        if let Some(key) = waiting.key {
            self.by_key.remove(&key);
        }
        let outcome = result.map_err(CallError::Request);
        Some(Delivery { reply: waiting.reply, outcome, _on_progress: waiting.on_progress })
    }

    /// Hands a progress report on `id` to its callback, if it has one; false if no call
    /// waits for `id`. A callback that panics is dropped (the call itself goes on), so it
    /// cannot take the session's loop down.
    pub fn progress(&mut self, id: &RequestId, progress: ProgressParams) -> bool {
        let Some(waiting) = self.by_id.get_mut(id) else { return false };
        if let Some(f) = waiting.on_progress.as_mut() {
            if catch_unwind(AssertUnwindSafe(|| f(progress))).is_err() {
                waiting.on_progress = None;
            }
        }
        true
    }

    /// Forgets the call with `key` (its caller stopped waiting; its reply slot is dropped
    /// undelivered) and returns its request id, for the loop to cancel on the machine. A
    /// late outcome for that id then finds nobody.
    pub fn abandon(&mut self, key: CallKey) -> Option<RequestId> {
        let id = self.by_key.remove(&key)?;
        self.by_id.remove(&id);
        Some(id)
    }

    /// Settles every call still waiting as closed with `reason`. The machine answers each
    /// request before it reports `Closed`, so this only keeps the promise if it did not.
    pub fn close(&mut self, reason: &CloseReason) -> Vec<Delivery<R>> {
        self.by_key.clear();
        self.by_id
            .drain()
            .map(|(_, w)| Delivery {
                reply: w.reply,
                outcome: Err(CallError::Request(RequestError::Closed(reason.clone()))),
                _on_progress: w.on_progress,
            })
            .collect()
    }

    /// Calls waiting.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True when no call waits.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// True while a call waits for `id`.
    pub fn contains(&self, id: &RequestId) -> bool {
        self.by_id.contains_key(id)
    }
}

impl<R: ReplySlot> Default for Calls<R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R> fmt::Debug for Calls<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Calls").field("waiting", &self.by_id.keys()).finish()
    }
}

#[cfg(test)]
mod tests;
