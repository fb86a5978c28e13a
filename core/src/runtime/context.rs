//! What a server handler gets with its request, defined once for every runtime.
//!
//! [`RequestContext<L>`] has the methods (`request_id`, `is_cancelled`, `progress`, `log`,
//! `log_as`, and the client requests of [`PeerApi`]); a runtime supplies `L`, a [`Link`]
//! that carries [`Report`]s and [`PeerCall`]s to its session's loop and says what a call
//! returns there: a future in zest-tokio and zest-smol, the plain result in zest-blocking.
//! The loop applies them to the server machine with [`Report::apply`] and
//! [`PeerCall::send`], so each request's context always names its own request as the
//! related one.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::api::{CallError, PeerApi};
use crate::client::decode_result;
use crate::error::UsageError;
use crate::jsonrpc::{RawJson, RequestId};
use crate::rpc::RequestOptions;
use crate::schema::methods::Method;
use crate::schema::LoggingLevel;
use crate::schema::{ClientCapabilities, Implementation};
use crate::server::{CallContext, Session, SessionInfo};

/// How a runtime's [`RequestContext`] reaches its session's loop.
///
/// The loop answers a [`report`](Self::report) with the machine's verdict (`Ok`, or the
/// [`UsageError`] of [`Report::apply`]) and a [`peer_request`](Self::peer_request) with the
/// request's one outcome. Dropping an async reply before it resolves SHOULD cancel the peer
/// request (the loop calls the machine's `cancel`).
pub trait Link: Clone + Send + Sync {
    /// What a context method returns: a future of `T` (async runtimes) or `T` itself.
    type Reply<'a, T: 'a>
    where
        Self: 'a;

    /// The app's handle on the server this session belongs to (`ServerHandle` in every
    /// runtime), which [`RequestContext::server`] hands out.
    type Server;

    /// The server handle; see [`RequestContext::server`].
    fn server(&self) -> &Self::Server;

    /// Hands a progress report or a log record to the loop.
    fn report(&self, report: Report) -> Self::Reply<'_, Result<(), UsageError>>;

    /// Sends a request to the client through the loop and yields its raw outcome.
    fn peer_request(&self, call: PeerCall) -> Self::Reply<'_, Result<RawJson, CallError>>;

    /// A reply that is `f(value)` at once (for a future: one ready when first polled).
    fn ready<'a, T: Send + 'a, U: 'a>(value: T, f: fn(T) -> U) -> Self::Reply<'a, U>
    where
        Self: 'a;

    /// Turns a reply of `T` into a reply of `U` (for a future: applies `f` to its output).
    fn map<'a, T: 'a, U: 'a>(reply: Self::Reply<'a, T>, f: fn(T) -> U) -> Self::Reply<'a, U>
    where
        Self: 'a;
}

/// What a handler reports about the request it serves.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Report {
    /// A log record (`notifications/message`), related to the request being served.
    Log {
        /// The request being served.
        related: RequestId,
        /// The record's severity.
        level: LoggingLevel,
        /// The name of the logger, if any.
        logger: Option<String>,
        /// The record.
        data: Value,
    },
    /// A progress report on the request being served.
    Progress {
        /// The request being served.
        id: RequestId,
        /// How far along; must increase from one report to the next.
        progress: f64,
        /// The total, when known.
        total: Option<f64>,
        /// A human-readable status.
        message: Option<String>,
    },
}

impl Report {
    /// Applies the report to the session ([`Session::log`] or [`Session::progress`]): a stdio
    /// [`Server`](crate::server::Server) derefs to its session, and an HTTP router hands one
    /// out with `session_mut`. Drain the machine afterwards.
    pub fn apply<H: Clone>(self, now: Instant, server: &mut Session<H>) -> Result<(), UsageError> {
        match self {
            Self::Log { related, level, logger, data } => {
                server.log(now, Some(&related), level, logger.as_deref(), data)
            }
            Self::Progress { id, progress, total, message } => {
                server.progress(now, &id, progress, total, message)
            }
        }
    }
}

/// A handler's request to the client (sampling, elicitation, roots, ping).
#[derive(Clone, Debug)]
pub struct PeerCall {
    /// The client request being served, which this one is made for.
    pub related: RequestId,
    /// The method, e.g. `sampling/createMessage`.
    pub method: &'static str,
    /// The params.
    pub params: RawJson,
}

impl PeerCall {
    /// Issues the request on the session ([`Session::request`], default options) and returns
    /// its id, which a [`Calls`](super::Calls) table then waits on; drain the machine
    /// afterwards.
    pub fn send<H: Clone>(
        self,
        now: Instant,
        server: &mut Session<H>,
    ) -> Result<RequestId, UsageError> {
        let opts = RequestOptions::default();
        server.request(now, Some(&self.related), self.method, Some(self.params), opts)
    }
}

/// A request's cancellation flag: set by the loop when the client cancels the request or
/// the session ends, read by its handler through [`RequestContext::is_cancelled`].
#[derive(Clone, Debug, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// A flag not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the flag (for every clone).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// True once [`cancel`](Self::cancel) was called on any clone.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// What a server handler gets with its request: which request it is, whether it was
/// cancelled, and a line to the session for progress, logging and requests to the client
/// ([`PeerApi`]: `create_message`, `elicit`, `list_roots`, `ping_client`).
///
/// Every runtime's `RequestContext` is this type with the runtime's [`Link`]; what a method
/// returns is `L::Reply`: a future to `.await` in zest-tokio and zest-smol, the result itself
/// in zest-blocking. Cheap to clone.
pub struct RequestContext<L> {
    id: RequestId,
    cancelled: CancelFlag,
    context: CallContext,
    link: L,
}

impl<L: Link> RequestContext<L> {
    /// The context of request `id`, whose loop holds `cancelled` and the other end of `link`.
    /// A runtime SHOULD add the session's [`CallContext`] (from the machine's `Event::Call`)
    /// with [`with_session`](Self::with_session).
    pub fn new(id: RequestId, cancelled: CancelFlag, link: L) -> Self {
        Self { id, cancelled, context: CallContext::default(), link }
    }

    /// The same context, knowing the session the call belongs to (the client's info and
    /// capabilities, the revision, the log level).
    #[must_use]
    pub fn with_session(mut self, context: CallContext) -> Self {
        self.context = context;
        self
    }

    /// Reports progress, if the client asked for it (otherwise nothing is sent). `progress`
    /// MUST increase from one report to the next; reports and the answer leave in the order
    /// they were made.
    pub fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> L::Reply<'_, Result<(), UsageError>> {
        let id = self.id.clone();
        self.link.report(Report::Progress { id, progress, total, message })
    }

    /// Sends a log record (`notifications/message`) if `level` is at or above the level the
    /// client set.
    pub fn log(&self, level: LoggingLevel, data: Value) -> L::Reply<'_, Result<(), UsageError>> {
        let related = self.id.clone();
        self.link.report(Report::Log { related, level, logger: None, data })
    }

    /// [`log`](Self::log), naming the logger the record comes from.
    pub fn log_as(
        &self,
        logger: &str,
        level: LoggingLevel,
        data: Value,
    ) -> L::Reply<'_, Result<(), UsageError>> {
        let related = self.id.clone();
        let logger = Some(logger.to_owned());
        self.link.report(Report::Log { related, level, logger, data })
    }

    /// The client's id for this request.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// True once the client cancelled this request, or the session ended. The handler SHOULD
    /// stop soon: its answer will not be sent. (An async runtime also drops the handler's
    /// task at its next `.await`; this is for work between awaits, or handed elsewhere.)
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.is_cancelled()
    }

    /// The session this request belongs to: the revision agreed, the client's info and
    /// capabilities (what it can be asked), and what we declared. `None` only for a request
    /// that came before `initialize` was answered (lenient mode) or a context built without
    /// [`with_session`](Self::with_session).
    pub fn session(&self) -> Option<&SessionInfo> {
        self.context.session.as_deref()
    }

    /// Who the request comes from, when the HTTP server checks OAuth tokens
    /// ([`RouterConfig::oauth`](crate::http::server::RouterConfig::oauth)): subject, client,
    /// scopes. `None` otherwise.
    pub fn principal(&self) -> Option<&crate::auth::Principal> {
        self.context.principal.as_deref()
    }

    /// The client's name and version, from its `initialize`.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.session().map(|s| &s.client_info)
    }

    /// What the client offers (sampling, elicitation, roots), from its `initialize`.
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.session().map(|s| &s.client_capabilities)
    }

    /// The handle on the server this request's session belongs to (the runtime's
    /// `ServerHandle`): change the registry, report resource updates and log to every
    /// session, from inside a handler as from outside.
    pub fn server(&self) -> &L::Server {
        self.link.server()
    }

    /// The runtime's link to the session.
    pub fn link(&self) -> &L {
        &self.link
    }
}

impl<L: Clone> Clone for RequestContext<L> {
    fn clone(&self) -> Self {
        Self {
            id: self.id.clone(),
            cancelled: self.cancelled.clone(),
            context: self.context.clone(),
            link: self.link.clone(),
        }
    }
}

impl<L> fmt::Debug for RequestContext<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("cancelled", &self.cancelled.is_cancelled())
            .finish()
    }
}

impl<L: Link> PeerApi for RequestContext<L> {
    type Call<'a, T: 'a>
        = L::Reply<'a, Result<T, CallError>>
    where
        Self: 'a;

    /// Asks the client, in the call's era (see [`Round`](crate::server::Round)): in the
    /// session era a request related to this one, whose typed result is awaited (in an
    /// async runtime dropping the future early cancels it); in 2026-07-28 the answer the
    /// call carries, or [`UsageError::InputRequired`] to return with `?`.
    fn peer_request<M: Method>(&self, params: M::Params) -> Self::Call<'_, M::Result>
    where
        M::Result: 'static,
    {
        self.ask::<M>(None, params)
    }
}

impl<L: Link> RequestContext<L> {
    /// The same context, whose next asks of the client go by `key` in a 2026-07-28
    /// input-required result (`ctx.keyed("user_name").elicit(..)`); the session era ignores
    /// keys. Without one an ask is keyed by its place in the run (`ask-1`, `ask-2`, …).
    pub fn keyed(&self, key: &str) -> Keyed<'_, L> {
        Keyed { context: self, key: key.to_owned() }
    }

    /// True when this run continues a 2026-07-28 call from earlier rounds: the call carried
    /// a `requestState` this server sealed, and it was checked.
    pub fn resumed(&self) -> bool {
        self.context.round.as_ref().is_some_and(|round| round.resumed())
    }

    fn ask<M: Method>(
        &self,
        key: Option<&str>,
        params: M::Params,
    ) -> L::Reply<'_, Result<M::Result, CallError>>
    where
        M::Result: 'static,
    {
        let params = RawJson::from_serialize(&params);
        if let Some(round) = &self.context.round {
            let valid =
                |answer: &Value| serde_json::from_value::<M::Result>(answer.clone()).is_ok();
            return L::ready(round.ask(key, M::NAME, &params, valid), decode::<M>);
        }
        let call = PeerCall { related: self.id.clone(), method: M::NAME, params };
        L::map(self.link.peer_request(call), decode::<M>)
    }
}

/// A handler's context whose asks of the client carry a key of its choosing (see
/// [`RequestContext::keyed`]).
pub struct Keyed<'c, L> {
    context: &'c RequestContext<L>,
    key: String,
}

impl<L: Link> PeerApi for Keyed<'_, L> {
    type Call<'a, T: 'a>
        = L::Reply<'a, Result<T, CallError>>
    where
        Self: 'a;

    fn peer_request<M: Method>(&self, params: M::Params) -> Self::Call<'_, M::Result>
    where
        M::Result: 'static,
    {
        self.context.ask::<M>(Some(&self.key), params)
    }
}

/// A raw outcome as `M`'s typed result.
fn decode<M: Method>(outcome: Result<RawJson, CallError>) -> Result<M::Result, CallError> {
    decode_result::<M>(Ok(outcome?)).map_err(CallError::Request)
}

#[cfg(test)]
mod tests;
