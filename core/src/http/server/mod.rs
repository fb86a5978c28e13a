//! The server side of MCP over HTTP: a [`Router`] that holds many sessions and answers HTTP
//! exchanges for them, as Streamable HTTP (one endpoint, `/mcp` by default) and as the
//! legacy HTTP+SSE transport (`/sse` and `/messages`).
//!
//! ```text
//!  runtime ──Accept(head) / Data / End / Failed on stream S──▶ Router
//!                                                              │ Host, Origin, media, version
//!                                                              │ session table (ids from the
//!                                                              │ seeded CSPRNG), limits, expiry
//!                                                              ▼
//!                                        Session (one per MCP session, registry shared)
//!                                                              │ Outgoing { route, json }
//!  runtime ◀──Respond / Write (JSON or SSE events) / Close on S─┘ route → stream
//! ```
//!
//! A POST that carries requests is answered with one JSON body when every reply is ready at
//! once, or once the handlers it started have had their first poll (the runtime says so with
//! [`Router::decide_answers`]) with nothing else to send; otherwise with an SSE stream that
//! carries the replies and everything the handlers send while serving them (progress, log
//! lines, requests to the client), then ends. Messages tied to no request go on the
//! session's GET stream (kept, bounded, until one is open). Every SSE event has an id
//! `<stream>-<seq>` and is kept in the [`EventStore`]: a client that lost a stream resumes it
//! with `Last-Event-ID` and gets what it missed, once. A stream written whole stays in the
//! store until the second idle sweep after (`idle_timeout / 8` apart, at least 1 s): the
//! connection may have broken before its last bytes arrived. A disconnect is not a
//! cancellation.
//!
//! Streams: the runtime names each exchange it accepts (see [`crate::io`]). For an accepted
//! exchange, [`StreamEvent::End`] means the request body is complete and
//! [`StreamEvent::Failed`] that the connection is gone. After the router closes an exchange
//! ([`Transmit::Close`](crate::io::Transmit::Close)) it ignores anything more on it.

mod checks;
mod decide;
mod fleet;
mod get;
mod legacy;
mod oauth;
pub(crate) mod param_headers;
mod store;
mod streams;
#[cfg(test)]
mod tests;
mod timers;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::header::{ALLOW, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

pub use fleet::{
    Fleet, FleetError, FleetEvents, FleetKey, FleetMessage, MemoryFleet, SavedSession,
    STANDALONE_STREAM,
};
pub use store::{EventStore, MemoryEventStore};

use self::checks::LOOPBACK;
use self::decide::{join, Undecided};
use self::streams::{Answer, Mode, Slot, SlotKind, SseStream, Wire};
use self::timers::Timers;
use crate::auth::{Principal, ProtectedResource};
use crate::error::Rejection;
use crate::io::{Input, Output, RequestHead, StreamEvent, StreamId};
use crate::jsonrpc::{Message, RequestId};
use crate::lifecycle::rules;
use crate::rpc::{Incoming, Route};
use crate::schema::ProtocolVersion;
use crate::server::{
    meta_text, meta_version, Event, LastMeta, ListKind, Registry, ServerConfig, Session, Shared,
};
use crate::transport::TransportKind;

/// A session id: 128 bits from the router's CSPRNG, as 32 lowercase hex digits (visible
/// ASCII, as the spec requires).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    /// The id as sent in `Mcp-Session-Id`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How a [`Router`] serves HTTP. Build with [`RouterConfig::new`] and adjust fields.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RouterConfig {
    /// The Streamable HTTP endpoint. Default `/mcp`.
    pub path: String,
    /// The legacy HTTP+SSE stream endpoint; `None` turns the legacy transport off. Default
    /// `/sse`.
    pub legacy_sse_path: Option<String>,
    /// Where legacy clients POST (`?sessionId=` is added). Default `/messages`.
    pub legacy_messages_path: String,
    /// Answers GET with `{"status":"ok"}`; `None` turns it off. Default `/health`.
    pub health_path: Option<String>,
    /// Host names (any port) accepted in `Host`, and in `Origin` with any scheme. `"*"`
    /// accepts any. Default: `localhost`, `127.0.0.1`, `[::1]`.
    pub allowed_hosts: Vec<String>,
    /// Further origins accepted exactly (`https://app.example`); `"*"` accepts any.
    pub allowed_origins: Vec<String>,
    /// A shared secret every request but the health check must carry as
    /// `Authorization: Bearer <token>`; others get 401 with `WWW-Authenticate: Bearer`.
    /// For a fixed token between known parties; OAuth is not this. Default `None`.
    pub bearer_token: Option<String>,
    /// Most sessions held at once; more are refused with 503. Default 10,000.
    pub max_sessions: usize,
    /// A session nothing holds open (no stream, no unanswered POST) for this long ends, and
    /// its id then gets 404. Default 30 min.
    pub idle_timeout: Duration,
    /// Largest POST body. Default 4 MiB.
    pub max_body: usize,
    /// Answer every POST with one JSON body, never SSE (messages related to a request then
    /// go on the GET stream). Default off.
    pub json_response: bool,
    /// How long a POST whose handlers still run waits for them before its answer starts as
    /// an SSE stream. Answered in time, with nothing but replies to send, it gets one JSON
    /// body. Runtimes that poll handlers where they start them decide sooner
    /// ([`Router::decide_answers`]). Default 5 ms.
    pub json_wait: Duration,
    /// The session era without session ids: each POST is served by a fresh session that
    /// ends with it; GET and DELETE get 405. Default off. (2026-07-28 requests need no mode:
    /// they are served alone whatever this says.)
    pub sessionless: bool,
    /// The reconnection delay sent in priming events. Default 1 s.
    pub retry: Option<Duration>,
    /// Standalone messages kept per session while it has no GET stream. Default 64.
    pub max_backlog: usize,
    /// Seeds the CSPRNG that makes session ids. Runtimes fill it from the OS; tests fix it.
    pub rng_seed: [u8; 32],
    /// OAuth: every request but the health check and the metadata document needs a bearer
    /// token this resource accepts (see [`ProtectedResource`]); sessions are bound to the
    /// principal that opened them. Default `None`.
    pub oauth: Option<ProtectedResource>,
    /// The wall clock, as a reading (`unix_secs` at an `Instant`), for token expiry; runtimes
    /// fill it in.
    pub wall_clock: Option<(Instant, u64)>,
    /// The store this router shares sessions, streams and messages through with the other
    /// processes of a fleet (see [`Fleet`]); `None` (the default): sessions live here only.
    pub fleet: Option<Arc<dyn Fleet>>,
}

impl RouterConfig {
    /// Every default, with the CSPRNG seeded by `rng_seed`.
    pub fn new(rng_seed: [u8; 32]) -> Self {
        Self {
            path: "/mcp".into(),
            legacy_sse_path: Some("/sse".into()),
            legacy_messages_path: "/messages".into(),
            health_path: Some("/health".into()),
            allowed_hosts: LOOPBACK.iter().map(|h| (*h).to_owned()).collect(),
            bearer_token: None,
            allowed_origins: Vec::new(),
            max_sessions: 10_000,
            idle_timeout: Duration::from_secs(30 * 60),
            max_body: 4 << 20,
            json_response: false,
            json_wait: Duration::from_millis(5),
            sessionless: false,
            retry: Some(Duration::from_secs(1)),
            max_backlog: 64,
            rng_seed,
            oauth: None,
            wall_clock: None,
            fleet: None,
        }
    }

    /// Shares sessions with the other processes of a fleet through `fleet` (see [`Fleet`]).
    pub fn fleet(mut self, fleet: Arc<dyn Fleet>) -> Self {
        self.fleet = Some(fleet);
        self
    }
}

crate::builder::setters!(into RouterConfig {
    path: String,
    legacy_sse_path: Option<String>,
    legacy_messages_path: String,
    health_path: Option<String>,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    bearer_token: Option<String>,
});

crate::builder::setters!(RouterConfig {
    max_sessions: usize,
    idle_timeout: Duration,
    max_body: usize,
    json_response: bool,
    json_wait: Duration,
    sessionless: bool,
    retry: Option<Duration>,
    max_backlog: usize,
});

/// Something that happened on one of a router's sessions.
#[derive(Clone, Debug, PartialEq)]
pub struct RouterEvent<H> {
    /// The session.
    pub session: SessionId,
    /// What happened (answer calls through [`Router::session_mut`]).
    pub event: Event<H>,
}

/// The HTTP server planner: many MCP sessions over HTTP exchanges, sans IO.
///
/// Calling contract: feed every accepted exchange's head, body chunks, end and failure with
/// [`handle_input`](Self::handle_input), issue commands to sessions through
/// [`session_mut`](Self::session_mut), then drain [`poll_output`](Self::poll_output) to
/// `None` and sleep until [`poll_timeout`](Self::poll_timeout). Once the handlers a drain
/// asked for are started, call [`decide_answers`](Self::decide_answers) (and drain again).
#[derive(Debug)]
pub struct Router<H> {
    shared: Arc<Shared<H>>,
    config: RouterConfig,
    rng: ChaCha20Rng,
    sessions: HashMap<SessionId, Box<Slot<H>>>,
    exchanges: HashMap<StreamId, Exchange>,
    wire: Wire,
    events: VecDeque<RouterEvent<H>>,
    /// Sessions a command touched: drained at the next `poll_output`.
    touched: Vec<SessionId>,
    /// Sessions whose machine has a deadline.
    timers: Timers,
    next_sweep: Option<Instant>,
    /// POSTs that started handlers, their answer not yet decided (see [`decide`]).
    undecided: Vec<Undecided>,
    /// Handler calls the sessions asked for so far (tells a POST that started one).
    calls_asked: u64,
    /// The fleet sessions held here, by their key in the fleet's store.
    fleet_keys: HashMap<FleetKey, SessionId>,
    /// The last 2026-07-28 `_meta` checked: each such POST's session starts with it, so a
    /// client's unchanging `_meta` is read once, not twice per request.
    last_meta: LastMeta,
}

/// What an accepted exchange is doing.
#[derive(Debug)]
enum Exchange {
    /// A POST whose body is arriving; `legacy` names the session of a legacy POST;
    /// `principal` is who sent it (OAuth).
    Body {
        head: Box<RequestHead>,
        body: Vec<u8>,
        legacy: Option<SessionId>,
        principal: Option<Arc<Principal>>,
    },
    /// Carries a stream of this session (an answer, the GET stream, the legacy stream).
    Carrying(SessionId),
}

impl<H: Clone> Router<H> {
    /// A router with no sessions yet, sharing one registry among all it will hold.
    pub fn new(server: ServerConfig, config: RouterConfig, registry: Registry<H>) -> Self {
        let store: Box<dyn EventStore> = match &config.fleet {
            Some(fleet) => Box::new(FleetEvents(fleet.clone())),
            None => Box::new(MemoryEventStore::default()),
        };
        Self {
            shared: Arc::new(Shared::new(server, registry)),
            rng: ChaCha20Rng::from_seed(config.rng_seed),
            config,
            sessions: HashMap::new(),
            exchanges: HashMap::new(),
            wire: Wire { transmits: VecDeque::new(), store },
            events: VecDeque::new(),
            touched: Vec::new(),
            timers: Timers::default(),
            next_sweep: None,
            undecided: Vec::new(),
            calls_asked: 0,
            fleet_keys: HashMap::new(),
            last_meta: LastMeta::default(),
        }
    }

    /// Replaces the in-memory event store (before the first input).
    pub fn with_event_store(mut self, store: Box<dyn EventStore>) -> Self {
        self.wire.store = store;
        self
    }

    /// Feeds one input. Never fails: bad requests are answered with their HTTP status and a
    /// JSON-RPC error body. Then drain [`poll_output`](Self::poll_output).
    pub fn handle_input(&mut self, input: Input<'_>) {
        match input {
            Input::Timeout(now) => self.handle_timeout(now),
            Input::Receive(now, r) => match r.event {
                StreamEvent::Accept(head) => self.accept(now, r.stream, head),
                StreamEvent::Data(bytes) => self.body(r.stream, bytes),
                StreamEvent::End => self.end(now, r.stream),
                StreamEvent::Failed(_) => self.gone(now, r.stream),
                // A response head is for clients; a runtime that sends one here has a bug.
                StreamEvent::Head(_) => {}
            },
        }
    }

    /// One session, to answer its calls and send it messages. `None` once it ended.
    pub fn session_mut(&mut self, id: &SessionId) -> Option<&mut Session<H>> {
        let slot = self.sessions.get_mut(id)?;
        self.touched.push(id.clone());
        Some(&mut slot.machine)
    }

    /// Changes the registry every session shares (copied once), and tells each session that
    /// the lists named in `changed` changed (in a fleet: every session of the fleet; the
    /// registry changes here).
    pub fn change_registry(
        &mut self,
        now: Instant,
        changed: &[ListKind],
        change: impl FnOnce(&mut Registry<H>),
    ) {
        change(&mut Arc::make_mut(&mut self.shared).registry);
        for slot in self.sessions.values_mut() {
            slot.machine.shared = self.shared.clone();
        }
        self.each_session(now, |session| {
            for kind in changed {
                session.notify_list_changed(now, *kind);
            }
        });
    }

    /// Runs `f` on every session held (to send each a message outside any request), then
    /// routes what they queued at the next [`poll_output`](Self::poll_output). In a fleet,
    /// on every session of the fleet, held here or not (see [`Fleet`]).
    pub fn each_session(&mut self, now: Instant, mut f: impl FnMut(&mut Session<H>)) {
        for (id, slot) in &mut self.sessions {
            if slot.fleet.is_none() {
                f(&mut slot.machine);
                self.touched.push(id.clone());
            }
        }
        if let Some(fleet) = self.config.fleet.clone() {
            self.each_fleet_session(now, &*fleet, &mut f);
        }
    }

    /// Ends a session: its streams close and its id gets 404 from now on.
    pub fn close_session(&mut self, now: Instant, id: &SessionId) {
        if let Some(slot) = self.sessions.get_mut(id) {
            slot.machine.close(now);
            self.flush(id);
        }
    }

    /// The next effect or event; `None` when drained.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<Output<RouterEvent<H>>> {
        loop {
            if let Some(t) = self.wire.transmits.pop_front() {
                return Some(Output::Transmit(t));
            }
            if let Some(e) = self.events.pop_front() {
                return Some(Output::Event(e));
            }
            let id = self.touched.pop()?;
            self.flush(&id);
        }
    }

    /// When to feed `Input::Timeout` next: a session's request deadline or the next sweep
    /// for idle sessions.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next().into_iter().chain(self.next_sweep).chain(self.next_decision()).min()
    }

    /// The sessions held now.
    pub fn sessions(&self) -> impl Iterator<Item = &SessionId> {
        self.sessions.keys()
    }

    /// How many sessions are held now.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// How many SSE events the event store keeps for resumption, all sessions together
    /// (`None` when the store cannot tell; see [`EventStore::events_held`]).
    pub fn events_held(&self) -> Option<usize> {
        self.wire.store.events_held()
    }

    /// How many HTTP exchanges the router is in the middle of: POSTs whose body is arriving,
    /// and exchanges carrying a session's stream or awaiting its answer.
    pub fn exchange_count(&self) -> usize {
        self.exchanges.len()
    }

    /// The registry every session shares.
    pub fn registry(&self) -> &Registry<H> {
        &self.shared.registry
    }

    fn accept(&mut self, now: Instant, stream: StreamId, head: Box<RequestHead>) {
        let checked =
            checks::check_host(&head.headers, &self.config.allowed_hosts).and_then(|()| {
                let c = &self.config;
                checks::check_origin(&head.headers, &c.allowed_hosts, &c.allowed_origins)
            });
        if let Err(rejection) = checked {
            return self.refuse(stream, None, &rejection);
        }
        let path = head.uri.path();
        if head.method == Method::GET && self.config.health_path.as_deref() == Some(path) {
            let body = br#"{"status":"ok"}"#.to_vec();
            return self.wire.json(stream, StatusCode::OK, HeaderMap::new(), body);
        }
        if let Some(token) = &self.config.bearer_token {
            if let Err(rejection) = checks::check_bearer(&head.headers, token) {
                return self.refuse(stream, None, &rejection);
            }
        }
        // Answered there: the metadata document, or a refusal.
        let Ok(principal) = self.authorize(now, stream, &head) else { return };
        let c = &self.config;
        let is_mcp = path == c.path;
        if head.method == Method::GET && c.legacy_sse_path.as_deref() == Some(path) {
            return self.open_legacy(now, stream);
        }
        if head.method == Method::POST
            && c.legacy_sse_path.is_some()
            && path == c.legacy_messages_path
        {
            return match self.legacy_session(&head) {
                Ok(id) => {
                    let body = Vec::new();
                    let legacy = Some(id);
                    self.exchanges.insert(stream, Exchange::Body { head, body, legacy, principal });
                }
                Err(rejection) => self.refuse(stream, None, &rejection),
            };
        }
        match (head.method.clone(), is_mcp) {
            (Method::POST, true) => match checks::check_post_media(&head.headers) {
                Ok(()) => {
                    let body = Vec::new();
                    let legacy = None;
                    self.exchanges.insert(stream, Exchange::Body { head, body, legacy, principal });
                }
                Err(rejection) => self.refuse(stream, None, &rejection),
            },
            (Method::GET, true) => self.get(now, stream, &head),
            (Method::DELETE, true) => self.delete(now, stream, &head),
            (_, true) => self.refuse(stream, None, &Rejection::HttpMethodNotAllowed),
            (_, false) => {
                self.wire.json(stream, StatusCode::NOT_FOUND, HeaderMap::new(), Vec::new())
            }
        }
    }

    fn body(&mut self, stream: StreamId, bytes: &[u8]) {
        let Some(Exchange::Body { body, .. }) = self.exchanges.get_mut(&stream) else { return };
        if body.len() + bytes.len() > self.config.max_body {
            self.exchanges.remove(&stream);
            let limit = self.config.max_body;
            return self.refuse(stream, None, &Rejection::PayloadTooLarge { limit });
        }
        body.extend_from_slice(bytes);
    }

    fn end(&mut self, now: Instant, stream: StreamId) {
        if !matches!(self.exchanges.get(&stream), Some(Exchange::Body { .. })) {
            return;
        }
        let Some(Exchange::Body { head, body, legacy, principal }) = self.exchanges.remove(&stream)
        else {
            return;
        };
        match legacy {
            Some(id) => self.legacy_post(now, stream, &id, &body),
            None => self.post(now, stream, &head, &body, principal),
        }
    }

    /// The client went away from `stream`.
    fn gone(&mut self, now: Instant, stream: StreamId) {
        let Some(Exchange::Carrying(id)) = self.exchanges.remove(&stream) else { return };
        self.forget_answer(stream);
        let Some(slot) = self.sessions.get_mut(&id) else { return };
        if slot.kind == SlotKind::Ephemeral {
            // Without a session nothing can resume the stream: closing it cancels what it
            // carried (2026-07-28 says so; the session-era stateless mode has no resumption
            // either). The handlers still running hear it as the session closing.
            slot.answers.remove(&stream);
            if slot.answers.is_empty() {
                slot.machine.close(now);
            }
            return self.flush(&id);
        }
        // An answer not yet streamed dies with its POST; its replies have nowhere to go.
        slot.answers.retain(|origin, a| *origin != stream || matches!(a.mode, Mode::Sse));
        if slot.detach(stream) {
            // A legacy session lives as long as its GET stream.
            slot.kind = SlotKind::Legacy { carried_by: None };
            slot.machine.close(now);
        }
        self.flush(&id);
    }

    fn post(
        &mut self,
        now: Instant,
        stream: StreamId,
        head: &RequestHead,
        body: &[u8],
        principal: Option<Arc<Principal>>,
    ) {
        let incoming = Incoming::decode(body);
        if let Incoming::Invalid(e) = &incoming {
            return self.refuse(stream, e.id().cloned(), &Rejection::Decode(e.clone()));
        }
        if let Some(refusal) = self.tool_refusal(&incoming, principal.as_deref()) {
            return self.refuse_oauth(stream, &refusal);
        }
        let (ids, initialize, batch) = scan(&incoming);
        let supported = &self.shared.config.supported_versions;
        let header_version = match checks::version_header(&head.headers, supported) {
            Ok(v) => v,
            Err(rejection) => {
                // A request that names its revision in `_meta` speaks 2026-07-28's errors.
                let modern = supported.iter().any(|v| v.is_stateless())
                    && meta_version(meta_text(incoming_params(&incoming))).is_some();
                let version = if modern {
                    ProtocolVersion::V2026_07_28
                } else {
                    ProtocolVersion::LATEST_SESSION
                };
                return self.refuse_in(stream, ids.first().cloned(), &rejection, version);
            }
        };
        let id = if header_version.is_some_and(ProtocolVersion::is_stateless) {
            // 2026-07-28: no session; the request stands alone in a slot that ends with it.
            let checked = self.check_stateless(head, &incoming);
            match checked.and_then(|()| self.open_session(now, SlotKind::Ephemeral)) {
                Ok(id) => {
                    if let Some(slot) = self.sessions.get_mut(&id) {
                        slot.machine.last_meta = self.last_meta.clone();
                    }
                    id
                }
                Err(rejection) => {
                    let version = ProtocolVersion::V2026_07_28;
                    return self.refuse_in(stream, ids.first().cloned(), &rejection, version);
                }
            }
        } else {
            match self.session_for_post(now, head, initialize, header_version) {
                Ok(id) => id,
                Err(rejection) => return self.refuse(stream, None, &rejection),
            }
        };
        let Some(slot) = self.sessions.get_mut(&id) else { return };
        let batching = slot.machine.session().map(|s| s.protocol_version.has_batching());
        if batch && batching == Some(false) {
            if slot.kind == SlotKind::Ephemeral {
                self.end_session(&id);
            }
            return self.refuse(stream, None, &Rejection::BatchNotAllowed);
        }
        slot.last_active = now;
        if let Some(principal) = principal {
            slot.machine.set_principal(principal);
        }
        slot.answers.insert(stream, Answer::new(SseStream::unnumbered(stream), ids));
        self.exchanges.insert(stream, Exchange::Carrying(id.clone()));
        let saved = self.carry_to_members(&id, incoming).and_then(|rest| {
            if let (Some(rest), Some(slot)) = (rest, self.sessions.get_mut(&id)) {
                slot.machine.handle_decoded(now, stream, rest);
                // The session it made for this meta serves the next request with it too.
                if slot.kind == SlotKind::Ephemeral {
                    self.last_meta.adopt_session(&slot.machine.last_meta);
                }
            }
            self.save_changed(&id)
        });
        if let Err(rejection) = saved {
            // The fleet could not be told: the POST is refused, not half done. Its replies
            // go nowhere; a session it opened is forgotten here too; an older one is taken
            // up again from the store by its next request (which undoes what this changed).
            if let Some(slot) = self.sessions.get_mut(&id) {
                slot.answers.remove(&stream);
            }
            self.exchanges.remove(&stream);
            if initialize {
                self.end_session(&id);
            } else {
                self.flush(&id);
            }
            return self.refuse(stream, None, &rejection);
        }
        let asked = self.calls_asked;
        self.flush(&id);
        let announce = initialize && !self.config.sessionless;
        if self.calls_asked == asked {
            self.settle(&id, stream, announce);
        } else {
            // Handlers run for it: most answer at once, and then so can the POST.
            self.hold_answer(now, id, stream, announce);
        }
    }

    /// 2026-07-28: a POST carries one request or notification whose headers agree with its
    /// body, of a method the revision has, with the protocol data its `_meta` needs.
    fn check_stateless(
        &mut self,
        head: &RequestHead,
        incoming: &Incoming,
    ) -> Result<(), Rejection> {
        let Incoming::Message(message) = incoming else {
            return Err(Rejection::BatchNotAllowed);
        };
        let (method, params) = match message {
            Message::Request(r) => (r.method.as_str(), r.params.as_ref()),
            Message::Notification(n) => (n.method.as_str(), n.params.as_ref()),
            _ => {
                let why = "a client sends no responses in this revision";
                return Err(Rejection::InvalidParams(why.into()));
            }
        };
        let named = checks::stateless_headers(&head.headers, method, params)?;
        if method == "tools/call" {
            self.check_param_headers(&head.headers, named.as_deref(), params)?;
        }
        let header = head.headers.get("mcp-protocol-version").and_then(|v| v.to_str().ok());
        let (meta, version) = self.last_meta.meta_and_version(params);
        if matches!(message, Message::Request(_))
            && version.is_some_and(|v| Some(&*v) != header.map(str::trim))
        {
            return Err(Rejection::HeaderMismatch { header: "MCP-Protocol-Version".into() });
        }
        // A notification nobody knows is ignored (202), as in every other revision.
        if let Message::Request(_) = message {
            if !rules::exists(ProtocolVersion::V2026_07_28, method, rules::Sender::Client) {
                return Err(Rejection::MethodNotFound(method.to_owned()));
            }
            self.last_meta.check(&self.shared.config, meta)?;
        }
        Ok(())
    }

    /// The `Mcp-Param-*` headers of a `tools/call` agree with the arguments its tool marks
    /// with `x-mcp-header` (an unknown tool is the session's to refuse).
    fn check_param_headers(
        &self,
        headers: &HeaderMap,
        tool: Option<&str>,
        params: Option<&crate::jsonrpc::RawJson>,
    ) -> Result<(), Rejection> {
        let tool = tool.and_then(|name| self.shared.registry.find_tool(name));
        let Some(properties) = tool.and_then(|t| t.tool.input_schema.properties.as_ref()) else {
            return Ok(());
        };
        let marked = param_headers::marked(properties);
        if marked.is_empty() {
            return Ok(());
        }
        param_headers::check(headers, &marked, params)
    }

    /// The session a POST goes to: the one its header names, a new one for `initialize`, or
    /// (stateless) a fresh one that ends with the POST.
    fn session_for_post(
        &mut self,
        now: Instant,
        head: &RequestHead,
        initialize: bool,
        header_version: Option<ProtocolVersion>,
    ) -> Result<SessionId, Rejection> {
        if self.config.sessionless {
            let id = self.open_session(now, SlotKind::Ephemeral)?;
            if !initialize {
                let version = header_version.unwrap_or(ProtocolVersion::V2025_03_26);
                if let Some(slot) = self.sessions.get_mut(&id) {
                    slot.machine.assume_initialized(version);
                }
            }
            return Ok(id);
        }
        match session_header(&head.headers) {
            None if initialize => self.open_session(now, SlotKind::Stateful),
            None => Err(Rejection::MissingSession),
            Some(h) => self.find(now, h),
        }
    }

    /// Sends what the session produced to the streams its routes name.
    fn flush(&mut self, id: &SessionId) {
        let Some(slot) = self.sessions.get_mut(id) else { return };
        let mut standalone = Vec::new();
        while let Some(out) = slot.machine.poll_outgoing() {
            if matches!(slot.kind, SlotKind::Legacy { .. }) {
                standalone.push(out.json);
                continue;
            }
            let (stream, replied) = match &out.route {
                Route::Reply { id, stream } => (*stream, Some(id.as_ref())),
                Route::Related { stream, .. } => (*stream, None),
                Route::Standalone => {
                    standalone.push(out.json);
                    continue;
                }
            };
            match slot.answers.get_mut(&stream) {
                Some(answer) if !answer.finished => {
                    if let Some(json) = answer.deliver(id, out.json, replied, &mut self.wire) {
                        standalone.push(json);
                    }
                }
                // A reply whose POST is gone has nowhere to go; a related message still does.
                _ if replied.is_some() => {}
                _ => standalone.push(out.json),
            }
        }
        if slot.fleet.is_some() {
            if !standalone.is_empty() {
                self.append_standalone(id, standalone);
            }
        } else {
            for json in standalone {
                slot.standalone(id, json, &mut self.wire, self.config.max_backlog);
            }
        }
        let Some(slot) = self.sessions.get_mut(id) else { return };
        while let Some(event) = slot.machine.poll_event() {
            if matches!(event, Event::Call { .. }) {
                self.calls_asked += 1;
            }
            if let Event::Cancelled { id: cancelled } = &event {
                for answer in slot.answers.values_mut() {
                    answer.cancelled(cancelled);
                }
            }
            self.events.push_back(RouterEvent { session: id.clone(), event });
        }
        self.timers.set(id, slot.machine.poll_timeout());
        if slot.machine.is_closed() {
            return self.end_session(id);
        }
        self.decide_clear(id);
        self.complete(id);
    }

    /// Ends the answers whose requests are all answered.
    fn complete(&mut self, id: &SessionId) {
        let Some(slot) = self.sessions.get_mut(id) else { return };
        // Without sessions nothing can resume a lost stream: its answer just ends.
        let resumable = slot.kind != SlotKind::Ephemeral;
        let done: Vec<StreamId> = slot
            .answers
            .iter()
            .filter(|(_, a)| a.waiting.is_empty() && !a.finished)
            .filter(|(_, a)| !matches!(a.mode, Mode::Undecided { .. }))
            .map(|(origin, _)| *origin)
            .collect();
        for origin in done {
            let Some(answer) = slot.answers.get_mut(&origin) else { continue };
            match &mut answer.mode {
                Mode::Json { held } => {
                    let body = join(std::mem::take(held));
                    let headers = answer.pending_head.take().unwrap_or_default();
                    slot.answers.remove(&origin);
                    self.exchanges.remove(&origin);
                    if body.is_empty() {
                        // Every request was cancelled: no reply is due, an empty body is not
                        // JSON, and a POST of requests must be answered with JSON or SSE. An
                        // event stream with no events is the one honest answer left.
                        self.wire.open_sse(origin, headers);
                        self.wire.close(origin);
                    } else {
                        let status = match slot.kind {
                            SlotKind::Ephemeral => decide::reply_status(&body),
                            _ => StatusCode::OK,
                        };
                        self.wire.json(origin, status, headers, body);
                    }
                }
                Mode::Sse => match answer.logical.carried_by {
                    Some(carried_by) => {
                        let number = answer.logical.number;
                        slot.answers.remove(&origin);
                        self.exchanges.remove(&carried_by);
                        self.wire.close(carried_by);
                        slot.written_whole(number);
                    }
                    // The client lost the stream: it waits, finished, for a resume.
                    None if resumable => answer.finished = true,
                    None => {
                        let number = answer.logical.number;
                        slot.answers.remove(&origin);
                        self.wire.store.forget_stream(id, number);
                    }
                },
                Mode::Undecided { .. } => {}
            }
        }
        if slot.answers.is_empty() {
            if slot.kind == SlotKind::Ephemeral {
                return self.end_session(id);
            }
            // Idle until its next POST: keep only what the session is, not the room its
            // last exchange needed (thousands of idle sessions are the common case).
            slot.answers.shrink_to_fit();
            slot.machine.release_idle_capacity();
        }
    }

    fn open_session(&mut self, now: Instant, kind: SlotKind) -> Result<SessionId, Rejection> {
        if self.sessions.len() >= self.config.max_sessions {
            return Err(Rejection::TooManySessions);
        }
        let mut raw = [0u8; 16];
        self.rng.fill_bytes(&mut raw);
        let id = SessionId(crate::hex::lower_hex(&raw));
        let machine = Session::with_shared(self.shared.clone(), now);
        self.sessions.insert(id.clone(), Box::new(Slot::new(machine, kind, now)));
        self.join_fleet(&id);
        if self.next_sweep.is_none() {
            self.next_sweep = Some(now + self.sweep_every());
        }
        Ok(id)
    }

    fn known(&self, header: &str) -> Result<SessionId, Rejection> {
        let id = SessionId(header.to_owned());
        if self.sessions.contains_key(&id) {
            Ok(id)
        } else {
            Err(Rejection::UnknownSession)
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        for id in self.timers.take_due(now) {
            if let Some(slot) = self.sessions.get_mut(&id) {
                slot.machine.handle_timeout(now);
                self.flush(&id);
            }
        }
        self.decide_due(now);
        if self.next_sweep.is_some_and(|t| t <= now) {
            self.sweep(now);
        }
    }

    /// Ends the sessions nothing has held open for the idle timeout.
    fn sweep(&mut self, now: Instant) {
        let idle = self.config.idle_timeout;
        let expired: Vec<SessionId> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.is_idle() && now.saturating_duration_since(s.last_active) >= idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            // In a fleet this forgets the copy held here; the session lives on in the store
            // until it expires there too.
            self.close_session(now, &id);
        }
        self.refresh_carried();
        for (id, slot) in &mut self.sessions {
            slot.age_written(id, self.wire.store.as_mut());
        }
        self.next_sweep = (!self.sessions.is_empty()).then(|| now + self.sweep_every());
    }

    fn sweep_every(&self) -> Duration {
        (self.config.idle_timeout / 8).max(Duration::from_secs(1))
    }

    fn end_session(&mut self, id: &SessionId) {
        // An answer still undecided gets its head first: its stream ends, it is not refused.
        self.decide_all_of(id);
        let Some(slot) = self.sessions.remove(id) else { return };
        if let Some(f) = &slot.fleet {
            self.fleet_keys.remove(&f.key);
        }
        for carried_by in slot.carried_by() {
            if self.exchanges.remove(&carried_by).is_some() {
                self.wire.close(carried_by);
            }
        }
        self.wire.store.forget_session(id);
        self.timers.set(id, None);
    }

    /// Answers `stream` with the status and JSON-RPC error body of `rejection`.
    fn refuse(&mut self, stream: StreamId, id: Option<RequestId>, rejection: &Rejection) {
        self.refuse_in(stream, id, rejection, ProtocolVersion::LATEST_SESSION);
    }

    /// [`refuse`](Self::refuse) with the codes and statuses of `version`.
    fn refuse_in(
        &mut self,
        stream: StreamId,
        id: Option<RequestId>,
        rejection: &Rejection,
        version: ProtocolVersion,
    ) {
        self.exchanges.remove(&stream);
        let wire = rejection.to_wire(version, TransportKind::StreamableHttp);
        let status = wire.http_status.and_then(|s| StatusCode::from_u16(s).ok());
        let mut headers = HeaderMap::new();
        match rejection {
            Rejection::HttpMethodNotAllowed => {
                headers.insert(ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            }
            Rejection::Unauthorized { invalid_token } => {
                let challenge =
                    if *invalid_token { r#"Bearer error="invalid_token""# } else { "Bearer" };
                headers.insert(WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
            }
            _ => {}
        }
        let body = Message::error(id, wire.error).to_vec();
        self.wire.json(stream, status.unwrap_or(StatusCode::BAD_REQUEST), headers, body);
    }
}

/// The request ids a POST body carries, whether it is `initialize`, and whether it is a
/// batch.
fn scan(incoming: &Incoming) -> (Vec<RequestId>, bool, bool) {
    match incoming {
        Incoming::Message(Message::Request(r)) => {
            (vec![r.id.clone()], r.method == "initialize", false)
        }
        Incoming::Batch(items) => {
            let ids = items
                .iter()
                .filter_map(|m| match m {
                    Ok(Message::Request(r)) => Some(r.id.clone()),
                    _ => None,
                })
                .collect();
            (ids, false, true)
        }
        _ => (Vec::new(), false, false),
    }
}

fn session_header(headers: &HeaderMap) -> Option<&str> {
    headers.get("mcp-session-id").and_then(|v| v.to_str().ok())
}

/// The params of a single request or notification.
fn incoming_params(incoming: &Incoming) -> Option<&crate::jsonrpc::RawJson> {
    match incoming {
        Incoming::Message(Message::Request(r)) => r.params.as_ref(),
        Incoming::Message(Message::Notification(n)) => n.params.as_ref(),
        _ => None,
    }
}
