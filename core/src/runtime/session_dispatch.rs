//! The bookkeeping around one server [`Session`](crate::server::Session) on one stream
//! (stdio, or an in-memory pipe) that every runtime needs, whatever runs its handlers: which
//! handler runs for which call, with which cancellation flag, and the session's own requests
//! to the client. It is the one-session counterpart of the HTTP server's
//! [`Dispatch`](super::http_server::Dispatch).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, OnceLock};

use super::{CallKey, Calls, CancelFlag, Delivery, ReplySlot};
use crate::api::ProgressFn;
use crate::error::{CloseReason, RequestError, UsageError};
use crate::jsonrpc::RequestId;
use crate::server::{Call, CallContext, Event};

/// One thing a runtime does for its server session. `H` is the registry's handler type, `T`
/// a running handler (a task handle; `()` where a handler cannot be stopped), `R` where the
/// outcome of a request to the client goes.
#[must_use]
pub enum SessionStep<H, T, R> {
    /// Start `handler` for `call`, with a context for request `id` reading `cancelled`. A
    /// handler done at once is answered with the machine's `respond`, then
    /// [`SessionDispatch::finished`]; one that needs a task is filed with
    /// [`SessionDispatch::started`].
    Run {
        /// The client's request id.
        id: RequestId,
        /// The registered handler.
        handler: H,
        /// What to do.
        call: Box<Call>,
        /// The flag the handler's context reads; set when the call is cancelled.
        cancelled: CancelFlag,
        /// The session as the handler sees it.
        context: CallContext,
    },
    /// Stop this handler task (its flag is already set): the client cancelled its call, or
    /// the session ended.
    Stop(T),
    /// Hand a handler's request to the client its outcome.
    Deliver(Delivery<R>),
    /// The session is over: nothing follows. Handlers still running have been told.
    Closed(CloseReason),
}

impl<H, T, R> fmt::Debug for SessionStep<H, T, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Run { id, call, .. } => {
                f.debug_struct("Run").field("id", id).field("call", call).finish()
            }
            Self::Stop(_) => f.write_str("Stop"),
            Self::Deliver(_) => f.write_str("Deliver"),
            Self::Closed(reason) => f.debug_tuple("Closed").field(reason).finish(),
        }
    }
}

/// A handler started and not yet answered.
struct Running<T> {
    cancelled: CancelFlag,
    /// `None` until filed by `started` (a handler answered inline never is).
    task: Option<T>,
}

/// One server session's state beside its machine.
///
/// The bookkeeping around one server [`Session`](crate::server::Session) on one stream
/// (stdio, or an in-memory pipe) that every runtime needs, whatever runs its handlers: which
/// handler runs for which call, with which cancellation flag, and the session's own requests
/// to the client. It is the one-session counterpart of the HTTP server's
/// [`Dispatch`](super::http_server::Dispatch).
///
/// A runtime hands every event of its session to [`SessionDispatch::route`] and performs each
/// [`SessionStep`] from [`SessionDispatch::poll_step`]: start a handler (filing its task with
/// [`SessionDispatch::started`] if it needs one), stop a task, hand an outcome to a handler
/// that asked the client something. Every server event is matched here, exhaustively.
pub struct SessionDispatch<H, T, R> {
    running: HashMap<RequestId, Running<T>>,
    calls: Calls<R>,
    close_reason: Arc<OnceLock<CloseReason>>,
    steps: VecDeque<SessionStep<H, T, R>>,
}

impl<H, T, R: ReplySlot> SessionDispatch<H, T, R> {
    /// A session with nothing under way; its close reason goes to `close_reason`.
    pub fn new(close_reason: Arc<OnceLock<CloseReason>>) -> Self {
        Self { running: HashMap::new(), calls: Calls::new(), close_reason, steps: VecDeque::new() }
    }

    /// Issues a handler's request to the client with `send` and files `reply` for its
    /// outcome (and `on_progress` for the client's progress on it), abandonable by `key`, as
    /// [`Calls::start`] does.
    pub fn start(
        &mut self,
        key: Option<CallKey>,
        reply: R,
        on_progress: Option<ProgressFn>,
        send: impl FnOnce() -> Result<RequestId, UsageError>,
    ) -> Option<RequestId> {
        self.calls.start(key, reply, on_progress, send)
    }

    /// The handler that asked with `key` stopped waiting; the id comes back for the runtime
    /// to cancel on the machine.
    pub fn abandon(&mut self, key: CallKey) -> Option<RequestId> {
        self.calls.abandon(key)
    }

    /// Files the task a [`SessionStep::Run`] started for call `id`. A call cancelled before
    /// its task was filed has its task handed straight back, to be stopped.
    pub fn started(&mut self, id: RequestId, task: T) -> Option<T> {
        match self.running.get_mut(&id) {
            Some(running) => {
                running.task = Some(task);
                None
            }
            None => Some(task),
        }
    }

    /// The handler of call `id` answered (its answer goes to the machine now).
    pub fn finished(&mut self, id: &RequestId) {
        self.running.remove(id);
    }

    /// The session is abandoned without a `Closed` event: every running handler is told
    /// and its task handed back to be stopped; requests to the client are dropped (their
    /// waiters see the channel close).
    pub fn stop_all(&mut self) -> Vec<T> {
        self.calls = Calls::new();
        let mut tasks = Vec::new();
        for (_, running) in self.running.drain() {
            running.cancelled.cancel();
            tasks.extend(running.task);
        }
        tasks
    }

    /// Handlers started and not yet answered.
    pub fn handlers_running(&self) -> usize {
        self.running.len()
    }

    /// Requests to the client awaiting their outcome.
    pub fn calls_waiting(&self) -> usize {
        self.calls.len()
    }

    /// Turns one machine event into steps; take them with [`poll_step`](Self::poll_step).
    pub fn route(&mut self, event: Event<H>) {
        let steps = &mut self.steps;
        match event {
            Event::Call { id, handler, call, context, progress_token: _ } => {
                let cancelled = CancelFlag::new();
                let running = Running { cancelled: cancelled.clone(), task: None };
                self.running.insert(id.clone(), running);
                let call = Box::new(call);
                steps.push_back(SessionStep::Run { id, handler, call, cancelled, context });
            }
            Event::Cancelled { id } => {
                if let Some(running) = self.running.remove(&id) {
                    running.cancelled.cancel();
                    steps.extend(running.task.map(SessionStep::Stop));
                }
            }
            Event::Response { id, result } => {
                // `Closed` follows these: the reason is recorded before the handler hears.
                if let Err(RequestError::Closed(reason)) = &result {
                    let _ = self.close_reason.set(reason.clone());
                }
                steps.extend(self.calls.settle(&id, result).map(SessionStep::Deliver));
            }
            // A callback that panics is dropped; the request goes on.
            Event::Progress { id, progress } => drop(self.calls.progress(&id, progress)),
            Event::Closed(reason) => {
                let _ = self.close_reason.set(reason.clone());
                for (_, running) in self.running.drain() {
                    running.cancelled.cancel();
                    steps.extend(running.task.map(SessionStep::Stop));
                }
                let failed = self.calls.close(&reason).into_iter().map(SessionStep::Deliver);
                steps.extend(failed);
                steps.push_back(SessionStep::Closed(reason));
            }
            // The session answered `initialize` and reads the client's info into every
            // call's context itself; `initialized`, other notifications and violations
            // (already answered where they needed an answer) ask nothing of a runtime.
            Event::Initialized(_) | Event::Ready | Event::Notification(_) | Event::Violation(_) => {
            }
        }
    }

    /// The next step to perform; `None` when there is none.
    pub fn poll_step(&mut self) -> Option<SessionStep<H, T, R>> {
        self.steps.pop_front()
    }
}

impl<H, T, R> fmt::Debug for SessionDispatch<H, T, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionDispatch")
            .field("running", &self.running.keys())
            .field("calls", &self.calls)
            .finish()
    }
}

#[cfg(test)]
mod tests;
