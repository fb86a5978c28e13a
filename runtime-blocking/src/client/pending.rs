//! A request in flight that can be waited for or cancelled from another thread.

use std::fmt;
use std::sync::Arc;

use zest_core::api::CallError;
use zest_core::error::RequestError;
use zest_core::jsonrpc::{RawJson, RequestId};

use super::driver::{Outcome, Session};
use super::progress::CallProgress;

/// A request sent by [`Client::start`](super::Client::start). Dropping it does not cancel the
/// request; its outcome is then discarded.
pub struct PendingCall<T> {
    state: State<T>,
}

enum State<T> {
    Sent {
        handle: CancelHandle,
        outcome: Outcome,
        /// The call's progress reports not yet run, settled before `wait` returns.
        progress: Option<Arc<CallProgress>>,
        decode: fn(RawJson) -> Result<T, String>,
    },
    Failed(CallError),
}

/// Cancels one request from any thread. Cheap to clone.
#[derive(Clone)]
pub struct CancelHandle {
    id: RequestId,
    session: Arc<Session>,
}

impl<T> PendingCall<T> {
    pub(super) fn new(
        id: RequestId,
        outcome: Outcome,
        progress: Option<Arc<CallProgress>>,
        session: Arc<Session>,
        decode: fn(RawJson) -> Result<T, String>,
    ) -> Self {
        let handle = CancelHandle { id, session };
        Self { state: State::Sent { handle, outcome, progress, decode } }
    }

    pub(super) fn failed(error: CallError) -> Self {
        Self { state: State::Failed(error) }
    }

    /// The request's id, if it was sent.
    pub fn id(&self) -> Option<&RequestId> {
        match &self.state {
            State::Sent { handle, .. } => Some(&handle.id),
            State::Failed(_) => None,
        }
    }

    /// Cancels the request: `notifications/cancelled` goes to the server and
    /// [`wait`](Self::wait) returns `Err(Request(Cancelled))` unless the outcome came first.
    pub fn cancel(&self) {
        if let State::Sent { handle, .. } = &self.state {
            handle.cancel();
        }
    }

    /// A handle that cancels this request from another thread, or `None` if it was never
    /// sent.
    pub fn cancel_handle(&self) -> Option<CancelHandle> {
        match &self.state {
            State::Sent { handle, .. } => Some(handle.clone()),
            State::Failed(_) => None,
        }
    }

    /// Blocks until the outcome: the result, a remote error, timed out, cancelled or closed.
    pub fn wait(self) -> Result<T, CallError> {
        let (outcome, progress, decode) = match self.state {
            State::Sent { outcome, progress, decode, .. } => (outcome, progress, decode),
            State::Failed(e) => return Err(e),
        };
        let outcome = outcome.wait();
        if let Some(progress) = progress {
            progress.run_queued();
        }
        let raw = outcome?;
        decode(raw).map_err(|e| CallError::Request(RequestError::InvalidResult(e)))
    }
}

impl CancelHandle {
    /// Cancels the request (a no-op once it has finished).
    pub fn cancel(&self) {
        self.session.cancel(&self.id);
    }

    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }
}

impl<T> fmt::Debug for PendingCall<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.state {
            State::Sent { handle, .. } => write!(f, "PendingCall({})", handle.id),
            State::Failed(e) => write!(f, "PendingCall(failed: {e})"),
        }
    }
}

impl fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CancelHandle({})", self.id)
    }
}
