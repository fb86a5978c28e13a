//! The bookkeeping around one [`Router`](crate::http::server::Router) that every runtime's
//! HTTP server needs, whatever runs its handlers: which connection carries each exchange,
//! which handler runs for which call of which session, and each session's requests to the
//! client.
//!
//! A runtime feeds connection inputs through [`Dispatch::track`] (then to the router), and
//! hands every router output to [`Dispatch::route`], which says what to do:
//! [`Step::Send`] a transmit to the connection that carries its stream, [`Step::Run`] a
//! handler (the runtime starts it, then files it with [`Dispatch::started`]), or
//! [`Step::Stop`] handlers the client cancelled or whose session ended (their
//! [`CancelFlag`]s are already set). Outcomes of requests to the client reach their
//! [`ReplySlot`]s here; every such request gets exactly one outcome.

use std::collections::HashMap;
use std::time::Instant;

use super::{Inbound, OwnedEvent};
use crate::api::CallError;
use crate::error::UsageError;
use crate::http::server::{Router, RouterEvent, SessionId};
use crate::io::{Output, StreamId, Transmit};
use crate::jsonrpc::{ErrorObject, RawJson, RequestId};
use crate::runtime::{CallKey, Calls, CancelFlag, PeerCall, ReplySlot, Report};
use crate::server::{Call, CallContext, Event};

/// What to do with one router output.
#[derive(Debug)]
#[must_use]
pub enum Step<H, C, T> {
    /// Nothing (the output needed no runtime action, or was handled here).
    Nothing,
    /// Start `handler` for `call`, give it a context for request `id` of `session` with
    /// `cancelled`. A handler done at once is answered after [`Dispatch::finished`]; one
    /// that needs a task is filed with [`Dispatch::started`].
    Run {
        /// The session the call belongs to.
        session: SessionId,
        /// The client's request id.
        id: RequestId,
        /// The registered handler.
        handler: H,
        /// What to do.
        call: Box<Call>,
        /// The flag the handler's context reads; set when the call is cancelled.
        cancelled: CancelFlag,
        /// The session as the handler sees it (for `RequestContext::with_session`).
        context: CallContext,
    },
    /// Hand `transmit` to connection `conn`, which carries its stream.
    Send {
        /// The connection.
        conn: C,
        /// What to perform on it.
        transmit: Transmit,
    },
    /// Stop these handler tasks (cancelled by the client, or their session ended).
    Stop(Vec<T>),
}

/// What an HTTP server holds at one moment: every count returns to its baseline once the
/// sessions, exchanges and handlers behind it are gone, so a test can check for leaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerStats {
    /// Sessions held.
    pub sessions: usize,
    /// HTTP exchanges the router is in the middle of (see [`Router::exchange_count`]).
    pub exchanges: usize,
    /// SSE events kept for resumption, all sessions together; `None` when the event store
    /// cannot tell.
    pub events_held: Option<usize>,
    /// Exchanges whose connection is known (see [`Dispatch::carried`]).
    pub carried: usize,
    /// Handlers running (see [`Dispatch::running`]).
    pub handlers: usize,
    /// Requests to clients awaiting their answer, all sessions together.
    pub peer_calls: usize,
}

/// A handler task in flight.
#[derive(Debug)]
struct Running<T> {
    task: T,
    cancelled: CancelFlag,
}

/// The state one server keeps beside its router. `C` names a connection (a channel sender),
/// `T` a running handler (a task handle), `R` where a request's outcome goes.
#[derive(Debug)]
pub struct Dispatch<C, T, R> {
    conns: HashMap<StreamId, C>,
    running: HashMap<(SessionId, RequestId), Running<T>>,
    calls: HashMap<SessionId, Calls<R>>,
    /// Flags handed out with `Run` and not yet filed by `started`.
    starting: HashMap<(SessionId, RequestId), CancelFlag>,
}

impl<C: Clone, T, R: ReplySlot> Dispatch<C, T, R> {
    /// Nothing tracked yet.
    pub fn new() -> Self {
        Self {
            conns: HashMap::new(),
            running: HashMap::new(),
            calls: HashMap::new(),
            starting: HashMap::new(),
        }
    }

    /// Notes which connection carries the exchange `input` is about; feed `input` to the
    /// router after.
    pub fn track(&mut self, input: &Inbound, conn: &C) {
        match input.event {
            OwnedEvent::Accept(_) => {
                self.conns.insert(input.stream, conn.clone());
            }
            OwnedEvent::Failed(_) => {
                self.conns.remove(&input.stream);
            }
            // The exchange goes on on the connection already known (`Head` is a client's).
            OwnedEvent::Data(_) | OwnedEvent::End | OwnedEvent::Head(_) => {}
        }
    }

    /// What to do with one router output.
    pub fn route<H>(&mut self, output: Output<RouterEvent<H>>) -> Step<H, C, T> {
        match output {
            Output::Transmit(transmit) => {
                let (stream, last) = match &transmit {
                    Transmit::Abort { stream } | Transmit::Close { stream } => (*stream, true),
                    Transmit::Respond { stream, .. } | Transmit::Write { stream, .. } => {
                        (*stream, false)
                    }
                    // A router never opens exchanges.
                    Transmit::Http { .. } => return Step::Nothing,
                };
                let conn = if last {
                    self.conns.remove(&stream)
                } else {
                    self.conns.get(&stream).cloned()
                };
                match conn {
                    Some(conn) => Step::Send { conn, transmit },
                    // The connection went away; the router heard it (or will).
                    None => Step::Nothing,
                }
            }
            Output::Event(RouterEvent { session, event }) => self.event(session, event),
        }
    }

    /// Files the task started for a [`Step::Run`]. `Err(task)` when the call was cancelled
    /// (or its session ended) before the task was filed: stop the task.
    pub fn started(&mut self, session: SessionId, id: RequestId, task: T) -> Result<(), T> {
        let key = (session, id);
        match self.starting.remove(&key) {
            Some(cancelled) => {
                self.running.insert(key, Running { task, cancelled });
                Ok(())
            }
            None => Err(task),
        }
    }

    /// The handler of `id` finished (in its task, or at once before it needed one): true
    /// when its answer should go to the session (false: the call was cancelled or its
    /// session ended meanwhile, and the answer is dropped).
    pub fn finished(&mut self, session: &SessionId, id: &RequestId) -> bool {
        let key = (session.clone(), id.clone());
        let starting = self.starting.remove(&key).is_some();
        let running = self.running.remove(&key).is_some();
        starting || running
    }

    /// Issues a handler's request to the client with `send` (the session's `request`, or
    /// [`PeerCall::send`](crate::runtime::PeerCall::send)) and files `reply` for its outcome.
    pub fn peer_request(
        &mut self,
        session: &SessionId,
        key: CallKey,
        reply: R,
        send: impl FnOnce() -> Result<RequestId, UsageError>,
    ) {
        let calls = self.calls.entry(session.clone()).or_default();
        calls.start(Some(key), reply, None, send);
    }

    /// The handler stopped waiting for request `key`: its id, for the session's `cancel`.
    pub fn abandon(&mut self, session: &SessionId, key: CallKey) -> Option<RequestId> {
        self.calls.get_mut(session)?.abandon(key)
    }

    /// A handler finished with `result`: it goes to the session as the answer to `id`,
    /// unless the call was cancelled or its session ended meanwhile (then it is dropped).
    /// Drain the router afterwards.
    pub fn answer<H: Clone>(
        &mut self,
        router: &mut Router<H>,
        now: Instant,
        session: &SessionId,
        id: RequestId,
        result: Result<RawJson, ErrorObject>,
    ) {
        if !self.finished(session, &id) {
            return;
        }
        if let Some(machine) = router.session_mut(session) {
            // Err only if the session closed meanwhile; the answer has nowhere to go.
            let _ = machine.respond(now, id, result);
        }
    }

    /// A handler's progress report or log record, applied to its session;
    /// `Err(UsageError::Closed)` once the session is gone. Drain the router afterwards.
    pub fn report<H: Clone>(
        &mut self,
        router: &mut Router<H>,
        now: Instant,
        session: &SessionId,
        report: Report,
    ) -> Result<(), UsageError> {
        match router.session_mut(session) {
            Some(machine) => report.apply(now, machine),
            None => Err(UsageError::Closed),
        }
    }

    /// A handler's request to the client (sampling, elicitation, roots), filed under `key`
    /// with `reply` for its one outcome; a session already gone answers
    /// `Usage(Closed)` at once. Drain the router afterwards.
    pub fn ask<H: Clone>(
        &mut self,
        router: &mut Router<H>,
        now: Instant,
        session: &SessionId,
        key: CallKey,
        reply: R,
        call: PeerCall,
    ) {
        match router.session_mut(session) {
            Some(machine) => self.peer_request(session, key, reply, || call.send(now, machine)),
            None => reply.deliver(Err(CallError::Usage(UsageError::Closed))),
        }
    }

    /// The handler stopped waiting for its request `key` to the client: the request is
    /// cancelled on the session (a no-op once its outcome is decided). Drain the router
    /// afterwards.
    pub fn stop_waiting<H: Clone>(
        &mut self,
        router: &mut Router<H>,
        now: Instant,
        session: &SessionId,
        key: CallKey,
    ) {
        let Some(id) = self.abandon(session, key) else { return };
        if let Some(machine) = router.session_mut(session) {
            // Err only if the outcome was already decided; nothing to cancel then.
            let _ = machine.cancel(now, &id, Some("the handler stopped waiting"));
        }
    }

    /// Handlers running (started, not finished, not stopped).
    pub fn running(&self) -> usize {
        self.running.len() + self.starting.len()
    }

    /// Exchanges whose connection is known.
    pub fn carried(&self) -> usize {
        self.conns.len()
    }

    /// What `router` and this dispatch hold now, for metrics and leak checks.
    pub fn stats<H: Clone>(&self, router: &Router<H>) -> ServerStats {
        ServerStats {
            sessions: router.session_count(),
            exchanges: router.exchange_count(),
            events_held: router.events_held(),
            carried: self.carried(),
            handlers: self.running(),
            peer_calls: self.calls.values().map(Calls::len).sum(),
        }
    }

    fn event<H>(&mut self, session: SessionId, event: Event<H>) -> Step<H, C, T> {
        match event {
            Event::Call { id, handler, call, context, .. } => {
                let cancelled = CancelFlag::new();
                self.starting.insert((session.clone(), id.clone()), cancelled.clone());
                Step::Run { session, id, handler, call: Box::new(call), cancelled, context }
            }
            Event::Cancelled { id } => {
                let key = (session, id);
                if let Some(flag) = self.starting.remove(&key) {
                    flag.cancel();
                }
                match self.running.remove(&key) {
                    Some(running) => {
                        running.cancelled.cancel();
                        Step::Stop(vec![running.task])
                    }
                    None => Step::Nothing,
                }
            }
            Event::Response { id, result } => {
                if let Some(calls) = self.calls.get_mut(&session) {
                    calls.complete(&id, result);
                }
                Step::Nothing
            }
            Event::Closed(reason) => {
                if let Some(mut calls) = self.calls.remove(&session) {
                    calls.close(&reason).into_iter().for_each(|d| d.deliver());
                }
                self.starting.retain(|(s, _), flag| {
                    if *s == session {
                        flag.cancel();
                    }
                    *s != session
                });
                let ended: Vec<_> =
                    self.running.keys().filter(|(s, _)| *s == session).cloned().collect();
                let tasks = ended
                    .into_iter()
                    .filter_map(|key| self.running.remove(&key))
                    .map(|running| {
                        running.cancelled.cancel();
                        running.task
                    })
                    .collect();
                Step::Stop(tasks)
            }
            // `peer_request` files no progress callback: a report has nobody to go to.
            Event::Progress { .. } => Step::Nothing,
            // Lifecycle events, notifications and violations (already answered) need nothing.
            Event::Initialized(_) | Event::Ready | Event::Notification(_) | Event::Violation(_) => {
                Step::Nothing
            }
        }
    }
}

impl<C: Clone, T, R: ReplySlot> Default for Dispatch<C, T, R> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests;
