//! The client machine over HTTP: its constructor, and what the HTTP planner reports.
//!
//! Session expiry (Streamable HTTP, a 404 to a request that carried the session id): every
//! request in flight fails with [`RequestError::SessionExpired`], the server's requests we had
//! not answered are reported [`Event::Cancelled`] (answering them sends nothing), and, when
//! [`HttpClientConfig::reinitialize_on_expiry`] is on, the machine goes back to awaiting the
//! result of a fresh `initialize` sent without the session id: [`Event::SessionExpired`] now,
//! [`Event::Ready`] again later. Requests made in between fail at once with `SessionExpired`
//! rather than wait: the new session may offer other capabilities, and the caller decides
//! whether to retry after `Ready`. With re-initializing off, or after
//! [`MAX_EXPIRIES_IN_A_ROW`] expiries with no response in between, the session closes with
//! [`CloseReason::SessionExpired`].

use std::time::Instant;

use super::{Client, ClientConfig, Event, Phase, Transport};
use crate::auth::Tokens;
use crate::error::{CloseReason, ProtocolViolation, RequestError, UsageError};
use crate::framing::sse::SseViolation;
use crate::http::client::{HttpClientConfig, HttpSide, HttpTransport, PlannerEvent};
use crate::jsonrpc::RequestId;

/// Sessions that may expire in a row, with no response to any request in between, before
/// the client stops re-initializing.
pub const MAX_EXPIRIES_IN_A_ROW: u32 = 3;

impl Client {
    /// Starts a session over HTTP: queues `initialize` at once. Streamable HTTP POSTs it; in
    /// [`HttpMode::Auto`](crate::http::client::HttpMode) a 400, 404 or 405 answer switches to
    /// legacy HTTP+SSE, and [`HttpMode::LegacySse`](crate::http::client::HttpMode) GETs the
    /// SSE stream first. Drain [`poll_output`](Self::poll_output) next.
    ///
    /// `Err` only for an unusable config: a URL that is not absolute `http`/`https`, or a
    /// bearer token that is not a valid header value.
    pub fn new_http(
        config: ClientConfig,
        http: HttpClientConfig,
        now: Instant,
    ) -> Result<Self, UsageError> {
        let transport = Transport::Http(Box::new(HttpTransport::new(&http, config.max_message)?));
        Ok(Self::start(config, transport, now))
    }

    pub(super) fn handle_planned(&mut self, now: Instant, planned: Vec<PlannerEvent>) {
        for planned_event in planned {
            if matches!(self.phase, Phase::Closed) {
                return;
            }
            match planned_event {
                PlannerEvent::Close(reason) => self.close_with(reason),
                PlannerEvent::Failed { id, error } => self.request_failed(now, id, error),
                PlannerEvent::Frame { stream, incoming } => {
                    self.endpoint.receiving_on(stream);
                    self.handle_incoming(now, incoming);
                }
                PlannerEvent::SessionExpired => self.session_expired(now),
                PlannerEvent::Violation(v) => self.http_violation(v),
                PlannerEvent::AuthorizationRequired(url) => {
                    self.authorizing_since.get_or_insert(now);
                    self.events.push_back(Event::AuthorizationRequired { url });
                }
                PlannerEvent::TokensChanged(tokens) => {
                    self.events.push_back(Event::TokensChanged(tokens));
                }
                PlannerEvent::LoadTokens => self.events.push_back(Event::LoadTokens),
            }
        }
    }

    /// A violation the planner saw. An SSE event too large to read fails the request whose
    /// response it held (its id read from the event's first bytes), as an overlong stdio
    /// line does; the stream goes on.
    fn http_violation(&mut self, violation: ProtocolViolation) {
        let failed = match &violation {
            ProtocolViolation::Sse(SseViolation::EventTooLarge { limit, head }) => {
                self.endpoint.too_long(head, *limit).map(|id| (id, *limit))
            }
            _ => None,
        };
        self.violation(violation);
        if let Some((id, limit)) = failed {
            self.fail_too_large(id, limit);
        }
    }

    /// A request ended without a response; ignored if it already had its outcome.
    fn request_failed(&mut self, now: Instant, id: RequestId, error: RequestError) {
        let auth = matches!(&error, RequestError::HttpStatus { status, .. } if status.as_u16() == 401 || status.as_u16() == 403)
            || matches!(error, RequestError::Auth(_));
        // A 401 or 403 is an authorization challenge, not a server of another era.
        if !auth
            && matches!(&self.phase, Phase::AwaitingInitResult { init, discover: true, .. } if *init == id)
        {
            // A server that refuses `server/discover` (400, 404, 405, no answer) is not
            // modern: step down to `initialize` (and, in auto mode, on to legacy HTTP+SSE).
            let _ = self.endpoint.forget(&id);
            return self.on_discover(now, None);
        }
        // 2026-07-28 cannot resume: a request whose exchange broke is sent again.
        let broken = matches!(error, RequestError::StreamLost | RequestError::Transport(_));
        if broken && self.is_modern() && self.reissue(now, &id) {
            return;
        }
        if matches!(&self.phase, Phase::AwaitingInitResult { init, .. } if *init == id) {
            let reason = match error {
                RequestError::HttpStatus { status, www_authenticate } => {
                    CloseReason::HttpStatus { status, www_authenticate }
                }
                RequestError::Transport(why) => CloseReason::TransportFailed(why),
                RequestError::Auth(e) => CloseReason::Auth(e),
                RequestError::SessionExpired => CloseReason::SessionExpired,
                // The exchange ended without a response in it: a body that is not JSON-RPC, a
                // content type that is neither JSON nor SSE (each reported as a violation).
                RequestError::StreamLost => CloseReason::InitializeInvalid(
                    "the answer to initialize held no JSON-RPC response".into(),
                ),
                _ => CloseReason::TransportEnded,
            };
            return self.close_with(reason);
        }
        // The server may still be working on a request whose answer was lost: tell it to stop.
        let pending = match error {
            RequestError::StreamLost | RequestError::Transport(_) => {
                self.endpoint.abandon(&id, "the response stream was lost")
            }
            _ => self.endpoint.forget(&id),
        };
        if pending.is_some() {
            self.events.push_back(Event::Response { id, result: Err(error) });
        }
    }

    fn session_expired(&mut self, now: Instant) {
        if !matches!(self.phase, Phase::Ready(_)) {
            // Mid-handshake: starting over could loop; `close_with` fails what is pending.
            return self.close_with(CloseReason::SessionExpired);
        }
        self.expiries += 1;
        for (id, _) in self.endpoint.drain_outstanding() {
            let result = Err(RequestError::SessionExpired);
            self.events.push_back(Event::Response { id, result });
        }
        for id in self.endpoint.inbound.cancel_all() {
            self.endpoint.forget_reply(&id);
            self.events.push_back(Event::Cancelled { id });
        }
        let again = match &self.transport {
            Transport::Http(http) => http.reinitialize_on_expiry(),
            Transport::Stdio(_) => false,
        };
        if !again || self.expiries > MAX_EXPIRIES_IN_A_ROW {
            return self.close_with(CloseReason::SessionExpired);
        }
        let init = self.send_initialize(now);
        self.phase = Phase::AwaitingInitResult { init, again: true, discover: false };
        self.events.push_back(Event::SessionExpired);
    }

    /// OAuth: the answer to [`Event::AuthorizationRequired`], the whole URL the browser was
    /// sent back to (its `code`, `state`, `iss` or `error` are checked here). Then drain
    /// [`poll_output`](Self::poll_output). `Err` when no authorization is awaited.
    pub fn authorize(&mut self, now: Instant, redirect_url: &str) -> Result<(), UsageError> {
        self.feed_flow(now, true, |http, up| http.authorize(redirect_url, up))
    }

    /// Gives the HTTP transport's OAuth flow an answer of the application's with `answer`
    /// (after a user's, the time they took does not count against any request), then
    /// handles what the flow planned. `Err` without OAuth, or from `answer`.
    fn feed_flow(
        &mut self,
        now: Instant,
        from_user: bool,
        answer: impl FnOnce(&mut dyn HttpSide, &mut Vec<PlannerEvent>) -> Result<(), UsageError>,
    ) -> Result<(), UsageError> {
        let Transport::Http(http) = &mut self.transport else {
            return Err(UsageError::InvalidConfig("OAuth is not configured".into()));
        };
        let mut planned = Vec::new();
        answer(http.as_mut(), &mut planned)?;
        if let Some(since) = self.authorizing_since.take_if(|_| from_user) {
            self.endpoint.postpone(now.saturating_duration_since(since));
        }
        self.handle_planned(now, planned);
        Ok(())
    }

    /// OAuth: the answer to [`Event::LoadTokens`], what the shared token cache holds now.
    /// Then drain [`poll_output`](Self::poll_output). `Err` when none was asked for.
    pub fn cached_tokens(
        &mut self,
        now: Instant,
        tokens: Option<Tokens>,
    ) -> Result<(), UsageError> {
        self.feed_flow(now, false, |http, up| http.cached_tokens(tokens, up))
    }

    /// OAuth: nobody will answer [`Event::AuthorizationRequired`]; the requests that wait
    /// for it fail with [`AuthError::NeedsUser`](crate::auth::AuthError::NeedsUser).
    pub fn refuse_authorization(&mut self, now: Instant, why: impl Into<String>) {
        // Err only without OAuth: nothing awaits an answer then.
        let _ = self.feed_flow(now, true, |http, up| {
            http.refuse_authorization(why.into(), up);
            Ok(())
        });
    }

    /// Our request `id` ended here (timed out, cancelled): the HTTP planner stops resuming a
    /// stream only for its sake.
    pub(super) fn forget_stream_of(&mut self, id: &RequestId) {
        if let Transport::Http(http) = &mut self.transport {
            http.forget(id);
        }
    }

    /// A request made while re-initializing: it gets an id and fails at once.
    pub(super) fn refuse_during_reinit(&mut self) -> RequestId {
        let id = self.endpoint.outstanding.unsent_id();
        self.events.push_back(Event::Response {
            id: id.clone(),
            result: Err(RequestError::SessionExpired),
        });
        id
    }
}
