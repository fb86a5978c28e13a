//! The HTTP client transports: the Streamable HTTP planner, the legacy HTTP+SSE client, and
//! back-compat detection between them
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#backwards-compatibility>).
//!
//! Configure with [`HttpClientConfig`] and start a session with
//! [`Client::new_http`](crate::client::Client::new_http). The client machine hands each
//! outgoing message to the planner, which turns it into a [`Transmit::Http`]; the runtime
//! performs the exchange and reports its head, body and end on the same stream id, and the
//! planner hands the JSON-RPC messages it reads back to the machine.
//!
//! ```text
//!  Auto ──POST initialize──▶ Streamable HTTP ──2xx──▶ (stays Streamable HTTP)
//!                               │ 400 / 404 / 405          401 / 403: Closed(HttpStatus)
//!                               ▼
//!                          Legacy: GET url ──event: endpoint (same origin)──▶ POST there
//! ```
//!
//! # Streamable HTTP
//!
//! Every message is a POST with `Accept: application/json, text/event-stream`. A request's
//! answer is JSON or an SSE stream; server requests and notifications may arrive on that
//! stream before the response. `Mcp-Session-Id` from the `initialize` answer goes on every
//! later request, and so does `MCP-Protocol-Version` once the client is ready. With
//! `notifications/initialized` an optional GET stream opens to carry what the server sends
//! outside any call (405: none); messages sent before it has its answer wait for it, so a
//! server asking there during the first call finds it open. Without one (its reconnections
//! ran out) the next POST the server accepts opens one.
//!
//! An SSE stream that ends or breaks while it still owes a response is resumed: after the
//! server's `retry` (or the configured default) a GET with `Last-Event-ID` continues it. A
//! response that arrives twice (a replay overlapping what came before) reaches the machine
//! once. A stream that cannot be resumed (no event id seen, or the attempts ran out) fails the
//! requests it owes at once with [`RequestError::StreamLost`](crate::error::RequestError).
//!
//! A 404 to a request that carried the session id ends the session: every request in flight
//! fails with `SessionExpired`, and the client starts over with a fresh `initialize` (see
//! [`Client`](crate::client::Client) for what happens to requests made meanwhile).
//!
//! # Legacy HTTP+SSE
//!
//! GET the SSE URL, wait for `event: endpoint`, resolve its data against the SSE URL and
//! refuse any other origin; then every message is a POST there, and every answer arrives on
//! the GET stream as `event: message`. The session ends with that stream.

mod config;
mod legacy;
mod modern;
mod streamable;
mod uri;

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderMap, Method, Uri};

pub use config::{HttpClientConfig, HttpMode};

use self::legacy::Legacy;
pub(crate) use self::modern::{marks_are_valid, ParamMarks};
use self::streamable::Streamable;
use crate::auth::dpop::DpopSigner;
use crate::auth::flow::{AuthEvent, AuthFlow};
use crate::auth::Tokens;
use crate::error::{CloseReason, ProtocolViolation, RequestError, UsageError};
use crate::framing::sse::{SseDecoder, SseItem, SseViolation};
use crate::io::{HttpRequest, StreamEvent, StreamId, Transmit};
use crate::jsonrpc::RequestId;
use crate::rpc::{Incoming, Outgoing};
use crate::schema::ProtocolVersion;

/// What the planner tells the client machine, in the order it happened.
#[derive(Debug)]
pub(crate) enum PlannerEvent {
    /// The session is over.
    Close(CloseReason),
    /// One of our requests ended without a response.
    Failed { id: RequestId, error: RequestError },
    /// A JSON-RPC frame read on `stream`.
    Frame { stream: StreamId, incoming: Incoming },
    /// The server ended the session; the planner has dropped every stream of it.
    SessionExpired,
    /// The server did something wrong; the session goes on.
    Violation(ProtocolViolation),
    /// OAuth: a user must authorize at this URL.
    AuthorizationRequired(String),
    /// OAuth: new tokens, for the application's cache.
    TokensChanged(Tokens),
    /// OAuth: the flow asks for the shared cache's tokens before refreshing.
    LoadTokens,
}

/// The client side of an HTTP connection: one of the two transports, chosen by the config's
/// [`HttpMode`] and, in `Auto`, by the answer to the first `initialize`.
#[derive(Debug)]
pub(crate) struct HttpTransport {
    inner: Inner,
    reinitialize_on_expiry: bool,
    /// The OAuth flow, when configured (Streamable HTTP only).
    auth: Option<Box<AuthFlow>>,
    /// The running flow is a refresh before expiry, not an answer to a refusal.
    proactive: bool,
}

#[derive(Debug)]
enum Inner {
    Legacy(Box<Legacy>),
    Streamable(Box<Streamable>),
}

/// The HTTP transport as the client machine sees it. The machine holds it as a trait object
/// made only by [`Client::new_http`](crate::client::Client::new_http), so a program that never
/// opens an HTTP session links none of the HTTP and OAuth code behind it.
pub(crate) trait HttpSide: fmt::Debug + Send + Sync {
    /// Whether to start a new session when the server ends this one.
    fn reinitialize_on_expiry(&self) -> bool;
    /// Sends one message (a new POST, or queued until the legacy endpoint is known);
    /// `marks` names the arguments a 2026-07-28 `tools/call` mirrors into headers.
    fn send(&mut self, out: Outgoing, marks: &ParamMarks);
    /// Speak 2026-07-28 (no session; each POST's headers say what it holds), or stop.
    fn set_modern(&mut self, on: bool);
    /// Handles what the runtime reported on `stream`; appends what it meant to `up`.
    fn receive(
        &mut self,
        now: Instant,
        stream: StreamId,
        event: StreamEvent<'_>,
        up: &mut Vec<PlannerEvent>,
    );
    /// Reconnects the SSE streams whose wait is over; refreshes a token about to expire.
    fn handle_timeout(&mut self, now: Instant, up: &mut Vec<PlannerEvent>);
    /// The application's answer to an authorization request: the whole redirect URL.
    fn authorize(&mut self, redirect: &str, up: &mut Vec<PlannerEvent>) -> Result<(), UsageError>;
    /// The shared cache's tokens, asked for by `LoadTokens`.
    fn cached_tokens(
        &mut self,
        tokens: Option<Tokens>,
        up: &mut Vec<PlannerEvent>,
    ) -> Result<(), UsageError>;
    /// Nobody will answer the authorization request: the flow fails with `NeedsUser`.
    fn refuse_authorization(&mut self, why: String, up: &mut Vec<PlannerEvent>);
    /// The machine gave up on request `id` (timeout, cancel): no stream is resumed for it.
    fn forget(&mut self, id: &RequestId);
    /// The handshake settled `version`: it goes on every later request.
    fn set_protocol_version(&mut self, version: ProtocolVersion);
    /// Ends the session: drops the streams still owed something, and (Streamable HTTP, with a
    /// session id) sends DELETE. Later messages are dropped.
    fn close(&mut self);
    /// The next HTTP request or abort for the runtime.
    fn poll_transmit(&mut self) -> Option<Transmit>;
    /// True while transmits wait to be polled.
    fn has_transmits(&self) -> bool;
    /// The earliest deadline: a stream's reconnection, or an OAuth token's refresh.
    fn poll_timeout(&self) -> Option<Instant>;
}

impl HttpTransport {
    /// Checks the config; in `LegacySse` mode, queues the GET of the SSE stream at once.
    /// `max_message` bounds each JSON body and each SSE event.
    pub(crate) fn new(config: &HttpClientConfig, max_message: usize) -> Result<Self, UsageError> {
        let mut common = Common::new(config, max_message)?;
        let auth = match &config.oauth {
            Some(oauth) if oauth.rng_seed.is_none() => {
                return Err(UsageError::InvalidConfig(
                    "OAuthConfig needs an rng seed (runtimes fill it in)".into(),
                ))
            }
            Some(oauth) => {
                let flow = AuthFlow::new(oauth.clone(), config.url.clone());
                if let Some(token) = flow.access_token() {
                    common.set_bearer(token);
                }
                Some(Box::new(flow))
            }
            None => None,
        };
        let inner = match config.mode {
            HttpMode::LegacySse => Inner::Legacy(Box::new(Legacy::new(common))),
            HttpMode::Auto | HttpMode::StreamableHttp => {
                let detect = config.mode == HttpMode::Auto;
                Inner::Streamable(Box::new(Streamable::new(common, config, detect)))
            }
        };
        Ok(Self {
            inner,
            reinitialize_on_expiry: config.reinitialize_on_expiry,
            auth,
            proactive: false,
        })
    }

    /// Hands the flow an answer of the application's (`Err` from `answer`: the flow awaited
    /// none, which `unasked` says), then drives it on.
    fn answer_flow(
        &mut self,
        up: &mut Vec<PlannerEvent>,
        unasked: &str,
        answer: impl FnOnce(&mut AuthFlow) -> Result<(), ()>,
    ) -> Result<(), UsageError> {
        let Some(auth) = self.auth.as_mut() else {
            return Err(UsageError::InvalidConfig("OAuth is not configured".into()));
        };
        answer(auth).map_err(|()| UsageError::InvalidConfig(unasked.into()))?;
        self.pump_auth(up);
        Ok(())
    }

    /// Drives the OAuth flow: tells it of parked refusals, opens its requests, and turns its
    /// events into replays, failures and planner events.
    fn pump_auth(&mut self, up: &mut Vec<PlannerEvent>) {
        let (Some(auth), Inner::Streamable(s)) = (self.auth.as_mut(), &mut self.inner) else {
            return;
        };
        if s.take_accepted() {
            auth.accepted();
        }
        loop {
            if !auth.running() {
                if let Some(parked) = s.next_challenge() {
                    let (status, challenge) = (parked.status, parked.challenge.clone());
                    let sent = parked.sent_token().map(str::to_owned);
                    let nonce = parked.dpop_nonce.clone();
                    // The resource server wants a DPoP nonce: the same token, a new proof.
                    let wants_nonce = challenge.as_ref().and_then(|c| c.error.as_deref())
                        == Some("use_dpop_nonce");
                    if let (true, Some(signer), Some(nonce)) =
                        (wants_nonce, &mut s.common.dpop, nonce)
                    {
                        if signer.nonce.as_ref() != Some(&nonce) {
                            signer.nonce = Some(nonce);
                            let token = s.common.headers.get(AUTHORIZATION).cloned();
                            s.replay_parked(token.as_ref());
                            continue;
                        }
                    }
                    self.proactive = false;
                    auth.challenged(status, challenge, sent.as_deref());
                }
            }
            if let Some(request) = auth.take_request() {
                let stream = s.common.open_plain(request);
                auth.opened(stream);
            }
            let Some(event) = auth.poll_event() else { break };
            match event {
                AuthEvent::AuthorizationRequired(url) => {
                    up.push(PlannerEvent::AuthorizationRequired(url));
                }
                AuthEvent::TokensChanged(tokens) => {
                    s.common.set_bearer(&tokens.access_token);
                    s.common.dpop = auth.dpop_signer();
                    up.push(PlannerEvent::TokensChanged(tokens));
                }
                AuthEvent::LoadTokens => up.push(PlannerEvent::LoadTokens),
                AuthEvent::Adopted(tokens) => {
                    s.common.set_bearer(&tokens.access_token);
                    s.common.dpop = None;
                }
                AuthEvent::Done(Ok(())) => {
                    let token = s.common.headers.get(AUTHORIZATION).cloned();
                    s.replay_parked(token.as_ref());
                }
                // A refresh before expiry that failed: what waited goes with the old token.
                AuthEvent::Done(Err(_)) if std::mem::take(&mut self.proactive) => {
                    auth.no_proactive_refresh();
                    s.release_held();
                }
                AuthEvent::Done(Err(error)) => s.fail_parked(&error, up),
            }
        }
    }
}

impl HttpSide for HttpTransport {
    fn reinitialize_on_expiry(&self) -> bool {
        self.reinitialize_on_expiry
    }

    fn send(&mut self, out: Outgoing, marks: &ParamMarks) {
        match &mut self.inner {
            Inner::Legacy(l) => l.send(out),
            Inner::Streamable(s) => s.send(out, marks),
        }
    }

    fn set_modern(&mut self, on: bool) {
        if let Inner::Streamable(s) = &mut self.inner {
            s.set_modern(on);
        }
    }

    fn receive(
        &mut self,
        now: Instant,
        stream: StreamId,
        event: StreamEvent<'_>,
        up: &mut Vec<PlannerEvent>,
    ) {
        if let Inner::Streamable(s) = &mut self.inner {
            s.common.tick(now);
        }
        if let Some(auth) = self.auth.as_mut().filter(|a| a.owns(stream)) {
            auth.receive(now, event);
            return self.pump_auth(up);
        }
        match &mut self.inner {
            Inner::Legacy(l) => l.receive(stream, event, up),
            Inner::Streamable(s) => {
                s.receive(now, stream, event, up);
                self.pump_auth(up);
                let Inner::Streamable(s) = &mut self.inner else { return };
                if let Some((common, init)) = s.take_fallback() {
                    let mut legacy = Legacy::new(common);
                    legacy.send(init);
                    self.inner = Inner::Legacy(Box::new(legacy));
                }
            }
        }
    }

    fn handle_timeout(&mut self, now: Instant, up: &mut Vec<PlannerEvent>) {
        if let Inner::Streamable(s) = &mut self.inner {
            s.common.tick(now);
            s.handle_timeout(now);
            if let Some(auth) = self.auth.as_mut() {
                if !auth.running() && auth.refresh_at().is_some_and(|at| at <= now) {
                    if auth.before_send(now) {
                        s.hold();
                        self.proactive = true;
                    }
                    self.pump_auth(up);
                }
            }
        }
    }

    fn authorize(&mut self, redirect: &str, up: &mut Vec<PlannerEvent>) -> Result<(), UsageError> {
        self.answer_flow(up, "no authorization is awaited", |auth| auth.authorize(redirect))
    }

    fn cached_tokens(
        &mut self,
        tokens: Option<Tokens>,
        up: &mut Vec<PlannerEvent>,
    ) -> Result<(), UsageError> {
        self.answer_flow(up, "no cached tokens were asked for", |auth| auth.cached(tokens))
    }

    fn refuse_authorization(&mut self, why: String, up: &mut Vec<PlannerEvent>) {
        if let Some(auth) = self.auth.as_mut() {
            auth.refuse_authorization(why);
            self.pump_auth(up);
        }
    }

    fn forget(&mut self, id: &RequestId) {
        if let Inner::Streamable(s) = &mut self.inner {
            s.forget(id);
        }
    }

    fn set_protocol_version(&mut self, version: ProtocolVersion) {
        if let Inner::Streamable(s) = &mut self.inner {
            s.set_protocol_version(version);
        }
    }

    fn close(&mut self) {
        match &mut self.inner {
            Inner::Legacy(l) => l.close(),
            Inner::Streamable(s) => s.close(),
        }
    }

    fn poll_transmit(&mut self) -> Option<Transmit> {
        match &mut self.inner {
            Inner::Legacy(l) => l.common.transmits.pop_front(),
            Inner::Streamable(s) => s.common.transmits.pop_front(),
        }
    }

    fn has_transmits(&self) -> bool {
        match &self.inner {
            Inner::Legacy(l) => !l.common.transmits.is_empty(),
            Inner::Streamable(s) => !s.common.transmits.is_empty(),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let Inner::Streamable(s) = &self.inner else { return None };
        let refresh = self.auth.as_ref().filter(|a| !a.running()).and_then(|a| a.refresh_at());
        match (s.poll_timeout(), refresh) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// What both transports share: the URL, the header fields of every request, limits, the
/// stream counter and the transmit queue.
#[derive(Debug)]
struct Common {
    url: Uri,
    headers: HeaderMap,
    /// The largest JSON body and the largest SSE event accepted.
    max_message: usize,
    /// The last stream id handed out; the first exchange is stream 1 (see `crate::io`).
    last_stream: u64,
    transmits: VecDeque<Transmit>,
    /// OAuth is on: each request opened is also kept here, for the transport to file for
    /// a replay.
    keep: bool,
    kept: Option<Box<HttpRequest>>,
    /// Signs each request while the token is DPoP-bound.
    dpop: Option<DpopSigner>,
}

impl Common {
    fn new(config: &HttpClientConfig, max_message: usize) -> Result<Self, UsageError> {
        Ok(Self {
            url: config.url.clone(),
            headers: config.base_headers()?,
            max_message,
            last_stream: 0,
            transmits: VecDeque::new(),
            keep: config.oauth.is_some(),
            kept: None,
            dpop: None,
        })
    }

    /// Moves everything out, for the transport taking over (detection falling back to legacy).
    fn take(&mut self) -> Self {
        Self {
            url: std::mem::take(&mut self.url),
            headers: std::mem::take(&mut self.headers),
            max_message: self.max_message,
            last_stream: self.last_stream,
            transmits: std::mem::take(&mut self.transmits),
            keep: self.keep,
            kept: None,
            dpop: self.dpop.take(),
        }
    }

    fn next_stream(&mut self) -> StreamId {
        self.last_stream += 1;
        StreamId(self.last_stream)
    }

    /// Queues a new exchange; `extra` are the transport's own fields, which win over the
    /// configured ones.
    fn open(&mut self, method: Method, uri: Uri, extra: HeaderMap, body: Bytes) -> StreamId {
        let stream = self.next_stream();
        let mut headers = self.headers.clone();
        for (name, value) in &extra {
            headers.insert(name, value.clone());
        }
        if let Some(signer) = &mut self.dpop {
            signer.sign(&method, &uri, &mut headers);
        }
        let request = Box::new(HttpRequest { method, uri, headers, body });
        if self.keep {
            self.kept = Some(request.clone());
        }
        self.transmits.push_back(Transmit::Http { stream, request });
        stream
    }

    /// Queues an exchange exactly as given: no configured field, no session, no token (the
    /// OAuth flow's metadata, registration and token requests).
    fn open_plain(&mut self, request: Box<HttpRequest>) -> StreamId {
        let stream = self.next_stream();
        self.transmits.push_back(Transmit::Http { stream, request });
        stream
    }

    /// The latest instant the transport saw, for the time in DPoP proofs.
    fn tick(&mut self, now: Instant) {
        if let Some(signer) = &mut self.dpop {
            signer.now = Some(now);
        }
    }

    /// Sends `token` as the bearer token from now on.
    fn set_bearer(&mut self, token: &str) -> Option<HeaderValue> {
        let mut value = HeaderValue::try_from(format!("Bearer {token}")).ok()?;
        value.set_sensitive(true);
        self.headers.insert(AUTHORIZATION, value.clone());
        Some(value)
    }

    /// A POST of one JSON message.
    fn post(&mut self, uri: Uri, mut extra: HeaderMap, json: Vec<u8>) -> StreamId {
        extra.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        extra.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        self.open(Method::POST, uri, extra, Bytes::from(json))
    }
}

/// What a response's `Content-Type` announces.
#[derive(Debug, PartialEq, Eq)]
enum Media {
    EventStream,
    Json,
    /// Anything else, as sent (empty when absent).
    Other(String),
}

fn media(headers: &HeaderMap) -> Media {
    let raw = headers.get(CONTENT_TYPE).map(|v| String::from_utf8_lossy(v.as_bytes()));
    let raw = raw.unwrap_or_default();
    let essence = raw.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case("text/event-stream") {
        Media::EventStream
    } else if essence.eq_ignore_ascii_case("application/json") {
        Media::Json
    } else {
        Media::Other(raw.into_owned())
    }
}

fn www_authenticate(headers: &HeaderMap) -> Option<String> {
    headers.get(WWW_AUTHENTICATE).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// One item of an SSE body, owned so the decoder can be fed again while it is handled.
#[derive(Debug)]
enum SseOut {
    /// `event: endpoint` (legacy HTTP+SSE).
    Endpoint(String),
    /// A `message` event with data: one JSON-RPC frame. Events with empty data (MCP's priming
    /// event) and other event types are skipped.
    Frame(Incoming),
    /// The server's reconnection delay.
    Retry(Duration),
    /// An event was discarded.
    Violation(SseViolation),
}

fn read_sse(decoder: &mut SseDecoder, bytes: &[u8]) -> Vec<SseOut> {
    let mut out = Vec::new();
    decoder.feed(bytes, &mut |item| match item {
        SseItem::Event(e) if e.event_type == "endpoint" => {
            out.push(SseOut::Endpoint(e.data.to_owned()));
        }
        SseItem::Event(e) if e.event_type == "message" && !e.data.is_empty() => {
            out.push(SseOut::Frame(Incoming::decode(e.data.as_bytes())));
        }
        SseItem::Retry(delay) => out.push(SseOut::Retry(delay)),
        SseItem::Violation(v) => out.push(SseOut::Violation(v)),
        _ => {}
    });
    out
}

#[cfg(test)]
mod tests;
