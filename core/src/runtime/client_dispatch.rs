//! The bookkeeping around one client machine that every runtime's client session needs,
//! whatever runs its handlers: the calls in flight, the client handlers answering server
//! requests, the handshake's one outcome and the session's close reason.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, OnceLock};

use super::{CallKey, Calls, ConnectError, Delivery, ReplySlot};
use crate::api::ProgressFn;
use crate::auth::Tokens;
use crate::client::{Event, Negotiated, ServerNotification, ServerRequest};
use crate::error::{CloseReason, ProtocolViolation, RequestError, UsageError};
use crate::jsonrpc::RequestId;

/// One thing a runtime does for its client session. `R` is where a call's outcome goes, `T`
/// a running client handler (a task handle; `()` where handlers cannot be stopped).
#[must_use]
pub enum ClientStep<R, T> {
    /// The handshake's one outcome, for whoever waits for the connection: `Ok` on the first
    /// `Ready`, `Err` when the session closed before it.
    Connected(Result<Box<Negotiated>, ConnectError>),
    /// Hand a call its outcome (a runtime holding a lock does so after unlocking).
    Deliver(Delivery<R>),
    /// Start the client handler for this server request; file its task with
    /// [`ClientDispatch::serving`] and answer with the machine's `respond` once it is done.
    Serve {
        /// The server's request id.
        id: RequestId,
        /// What it asks.
        request: ServerRequest,
    },
    /// Stop this handler task: the server cancelled its request, or the session ended.
    Stop(T),
    /// OAuth: start the authorization handler for `url`; file its task with
    /// [`ClientDispatch::authorizing`] and send its answer as
    /// [`ClientCommand::Authorized`](super::ClientCommand::Authorized).
    Authorize {
        /// The authorization request to open.
        url: String,
    },
    /// OAuth: hand the new tokens to the application's cache.
    StoreTokens(Tokens),
    /// OAuth: read the shared token cache and answer with
    /// [`ClientCommand::CachedTokens`](super::ClientCommand::CachedTokens) at once.
    LoadTokens,
    /// Queue a notification for the application (dropped when its queue is full).
    Notify(ServerNotification),
    /// Tell the client handlers' violation sink; the session goes on.
    Violation(ProtocolViolation),
    /// The session is over: nothing follows, and later calls must fail at once.
    Closed(CloseReason),
}

impl<R, T> fmt::Debug for ClientStep<R, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Connected(result) => f.debug_tuple("Connected").field(&result.is_ok()).finish(),
            Self::Deliver(_) => f.write_str("Deliver"),
            Self::Serve { id, request } => {
                f.debug_struct("Serve").field("id", id).field("method", &request.method()).finish()
            }
            Self::Stop(_) => f.write_str("Stop"),
            Self::Authorize { .. } => f.write_str("Authorize"),
            Self::StoreTokens(_) => f.write_str("StoreTokens"),
            Self::LoadTokens => f.write_str("LoadTokens"),
            Self::Notify(n) => f.debug_tuple("Notify").field(n).finish(),
            Self::Violation(v) => f.debug_tuple("Violation").field(v).finish(),
            Self::Closed(reason) => f.debug_tuple("Closed").field(reason).finish(),
        }
    }
}

/// A client session's state beside its machine.
///
/// The bookkeeping around one client machine that every runtime's client session needs,
/// whatever runs its handlers: the calls in flight, the client handlers answering server
/// requests, the handshake's one outcome and the session's close reason.
///
/// A runtime hands every [`Event`] the machine reports to [`ClientDispatch::route`], then
/// performs each [`ClientStep`] from [`ClientDispatch::poll_step`]. Every event is matched
/// here, exhaustively: an event added to the machine is a compile error in this one place,
/// never a silent drop in a runtime. The runtime matches only steps, which name what it must
/// do with its executor: hand over an outcome, start or stop a handler task, queue a
/// notification.
///
/// The ordering rule of close reasons lives here too: the reason is recorded (in the
/// [`OnceLock`] shared with the session's handles) before any caller is handed a failure
/// that the close caused, so a caller that sees its call fail also sees `close_reason()`.
pub struct ClientDispatch<R, T> {
    calls: Calls<R>,
    serving: HashMap<RequestId, T>,
    /// The authorization handler running, if any.
    authorizing: Option<T>,
    /// True until the handshake's outcome went out as [`ClientStep::Connected`].
    connecting: bool,
    close_reason: Arc<OnceLock<CloseReason>>,
    steps: VecDeque<ClientStep<R, T>>,
}

impl<R: ReplySlot, T> ClientDispatch<R, T> {
    /// A session that has not connected yet; its close reason goes to `close_reason`, which
    /// the session's handles read.
    pub fn new(close_reason: Arc<OnceLock<CloseReason>>) -> Self {
        Self {
            calls: Calls::new(),
            serving: HashMap::new(),
            authorizing: None,
            connecting: true,
            close_reason,
            steps: VecDeque::new(),
        }
    }

    /// Issues a request with `send` (the machine's `request` command) and files `reply` for
    /// its outcome, as [`Calls::start`] does.
    pub fn start(
        &mut self,
        key: Option<CallKey>,
        reply: R,
        on_progress: Option<ProgressFn>,
        send: impl FnOnce() -> Result<RequestId, UsageError>,
    ) -> Option<RequestId> {
        self.calls.start(key, reply, on_progress, send)
    }

    /// Files `reply` for the request the machine already issued as `id`, as
    /// [`Calls::insert`] does.
    pub fn insert(
        &mut self,
        id: RequestId,
        key: Option<CallKey>,
        reply: R,
        on_progress: Option<ProgressFn>,
    ) {
        self.calls.insert(id, key, reply, on_progress);
    }

    /// The caller of `key` stopped waiting: its reply is dropped, and the request id comes
    /// back for the runtime to cancel on the machine.
    pub fn abandon(&mut self, key: CallKey) -> Option<RequestId> {
        self.calls.abandon(key)
    }

    /// Files the task a [`ClientStep::Serve`] started for request `id`.
    pub fn serving(&mut self, id: RequestId, task: T) {
        self.serving.insert(id, task);
    }

    /// Files the task a [`ClientStep::Authorize`] started.
    pub fn authorizing(&mut self, task: T) {
        self.authorizing = Some(task);
    }

    /// The authorization handler answered.
    pub fn authorized(&mut self) -> Option<T> {
        self.authorizing.take()
    }

    /// The handler for request `id` is done (its answer goes to the machine now); returns
    /// its task, if it was filed.
    pub fn answered(&mut self, id: &RequestId) -> Option<T> {
        self.serving.remove(id)
    }

    /// Calls waiting for their outcome.
    pub fn calls_waiting(&self) -> usize {
        self.calls.len()
    }

    /// Handler tasks filed and not yet answered.
    pub fn handlers_running(&self) -> usize {
        self.serving.len()
    }

    /// Turns one machine event into steps; take them with [`poll_step`](Self::poll_step).
    pub fn route(&mut self, event: Event) {
        match event {
            Event::Ready(negotiated) => {
                if std::mem::take(&mut self.connecting) {
                    self.steps.push_back(ClientStep::Connected(Ok(negotiated)));
                }
            }
            Event::Response { id, result } => {
                // `Closed` follows these: the reason is recorded before the caller hears.
                if let Err(RequestError::Closed(reason)) = &result {
                    let _ = self.close_reason.set(reason.clone());
                }
                if let Some(delivery) = self.calls.settle(&id, result) {
                    self.steps.push_back(ClientStep::Deliver(delivery));
                }
            }
            // A callback that panics is dropped; the call goes on.
            Event::Progress { id, progress } => drop(self.calls.progress(&id, progress)),
            Event::Request { id, request } => {
                self.steps.push_back(ClientStep::Serve { id, request });
            }
            Event::Cancelled { id } => {
                if let Some(task) = self.serving.remove(&id) {
                    self.steps.push_back(ClientStep::Stop(task));
                }
            }
            Event::Notification(note) => self.steps.push_back(ClientStep::Notify(note)),
            // Every call in flight already failed with `SessionExpired`; the machine opens a
            // fresh session itself, and its `Ready` is not a second handshake outcome.
            Event::SessionExpired => {}
            Event::Violation(v) => self.steps.push_back(ClientStep::Violation(v)),
            Event::AuthorizationRequired { url } => {
                // A new request replaces one still open (the machine awaits the latest).
                if let Some(task) = self.authorizing.take() {
                    self.steps.push_back(ClientStep::Stop(task));
                }
                self.steps.push_back(ClientStep::Authorize { url });
            }
            Event::TokensChanged(tokens) => self.steps.push_back(ClientStep::StoreTokens(tokens)),
            Event::LoadTokens => self.steps.push_back(ClientStep::LoadTokens),
            Event::Closed(reason) => self.closed(reason),
        }
    }

    /// The next step to perform; `None` when there is none.
    pub fn poll_step(&mut self) -> Option<ClientStep<R, T>> {
        self.steps.pop_front()
    }

    /// The session closed (the machine's `Closed`, or the runtime gave up on it): the reason
    /// is recorded, a connection still waiting fails, every handler task is stopped, every
    /// call still waiting fails (the machine answers each before `Closed`; this keeps the
    /// promise if it did not), and [`ClientStep::Closed`] comes last.
    pub fn closed(&mut self, reason: CloseReason) {
        let _ = self.close_reason.set(reason.clone());
        if std::mem::take(&mut self.connecting) {
            let error = ConnectError::from_close(reason.clone(), None);
            self.steps.push_back(ClientStep::Connected(Err(error)));
        }
        let stopped = self.serving.drain().map(|(_, task)| ClientStep::Stop(task));
        self.steps.extend(stopped);
        if let Some(task) = self.authorizing.take() {
            self.steps.push_back(ClientStep::Stop(task));
        }
        let failed = self.calls.close(&reason).into_iter().map(ClientStep::Deliver);
        self.steps.extend(failed);
        self.steps.push_back(ClientStep::Closed(reason));
    }
}

impl<R, T> fmt::Debug for ClientDispatch<R, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientDispatch")
            .field("calls", &self.calls)
            .field("serving", &self.serving.keys())
            .field("connecting", &self.connecting)
            .field("steps", &self.steps.len())
            .finish()
    }
}

#[cfg(test)]
mod tests;
