//! One MCP session on the server side: lifecycle, dispatch, and what it sends.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use super::{dispatch, ClientNotification, Event, ListKind, Registry, ServerConfig, SessionInfo};
use crate::auth::Principal;
use crate::error::{CloseReason, ProtocolViolation, Rejection, RequestError, UsageError};
use crate::framing::lines::LineViolation;
use crate::io::StreamId;
use crate::jsonrpc::{ErrorObject, Message, Notification, RawJson, RequestId};
use crate::lifecycle::rules::{self, Sender, ServerPhase};
use crate::rpc::{Endpoint, Incoming, Limits, Outgoing, RequestOptions, Routed};
use crate::schema::methods::{Method, NotificationMethod};
use crate::schema::{
    LoggingLevel, LoggingMessageParams, ProgressParams, ResourceUpdatedParams, ServerCapabilities,
};

/// What every session of one server shares: the config and the registry. Sessions hold it
/// behind an `Arc`, so ten thousand sessions hold one registry; a change makes a new one
/// and hands it to every session (copy on write).
#[derive(Clone, Debug)]
pub(crate) struct Shared<H> {
    pub(crate) config: ServerConfig,
    pub(crate) registry: Registry<H>,
    /// The `_meta` naming this server that 2026-07-28 results carry (made once).
    pub(crate) server_meta: serde_json::Value,
    /// What a complete 2026-07-28 result gains, as member text: its `resultType` and
    /// `server_meta`.
    pub(crate) complete_members: String,
}

impl<H> Shared<H> {
    pub(crate) fn new(config: ServerConfig, registry: Registry<H>) -> Self {
        let server_meta = serde_json::json!({ crate::schema::SERVER_INFO_KEY: config.server_info });
        let complete = crate::schema::RESULT_COMPLETE;
        let complete_members = format!("\"resultType\":\"{complete}\",\"_meta\":{server_meta}");
        Self { config, registry, server_meta, complete_members }
    }
}

/// The server side of one MCP session, sans IO, over any transport. `H` is the app's handler
/// type.
///
/// A session takes decoded messages ([`handle_frame`](Self::handle_frame)) and the passing of
/// time, and hands back [`Outgoing`] messages with their routes and [`Event`]s. A
/// [`Server`](super::Server) is one session on a stdio stream; the Streamable HTTP router
/// holds many. Calling contract: after each input or command, drain
/// [`poll_outgoing`](Self::poll_outgoing) and [`poll_event`](Self::poll_event) to `None`.
#[derive(Debug)]
pub struct Session<H> {
    pub(crate) shared: Arc<Shared<H>>,
    pub(crate) endpoint: Endpoint,
    pub(crate) phase: ServerPhase,
    pub(crate) session: Option<Arc<SessionInfo>>,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) subscriptions: BTreeSet<String>,
    /// 2026-07-28 `subscriptions/listen` requests open on this stream, with what each gets.
    pub(super) listens: Vec<(RequestId, super::listen::Filter)>,
    pub(crate) events: VecDeque<Event<H>>,
    /// The 2026-07-28 request being served, while it is (see `stateless.rs`).
    pub(super) stateless: Option<super::stateless::Stateless>,
    /// Who the requests of this session come from (OAuth), as the router found it.
    pub(crate) principal: Option<Arc<Principal>>,
    /// The last 2026-07-28 `_meta` checked (the HTTP router hands a new session its own).
    pub(crate) last_meta: super::stateless::LastMeta,
    /// Counts the client's changes to what a fleet shares of this session (see `saved.rs`).
    pub(crate) revision: u64,
}

impl<H: Clone> Session<H> {
    /// A session waiting for `initialize`, with a registry of its own. (A router's sessions
    /// share one registry instead.)
    pub fn new(config: ServerConfig, registry: Registry<H>, now: Instant) -> Self {
        Self::with_shared(Arc::new(Shared::new(config, registry)), now)
    }

    /// A session waiting for `initialize`, sharing `shared` with other sessions.
    pub(crate) fn with_shared(shared: Arc<Shared<H>>, _now: Instant) -> Self {
        let config = &shared.config;
        let limits = Limits {
            max_in_flight: config.max_in_flight,
            request_timeout: config.request_timeout,
            max_request_timeout: config.max_request_timeout,
        };
        Self {
            shared,
            endpoint: Endpoint::new(limits),
            phase: ServerPhase::AwaitingInitialize,
            session: None,
            log_level: None,
            subscriptions: BTreeSet::new(),
            listens: Vec::new(),
            events: VecDeque::new(),
            stateless: None,
            principal: None,
            last_meta: Default::default(),
            revision: 0,
        }
    }

    /// Feeds one whole frame (a JSON-RPC message or batch) that arrived on `stream`. Never
    /// fails: the client's mistakes are answered with JSON-RPC errors and reported as
    /// [`Event::Violation`]. Then drain the outputs.
    pub fn handle_frame(&mut self, now: Instant, stream: StreamId, frame: &[u8]) {
        self.handle_decoded(now, stream, Incoming::decode(frame));
    }

    /// Feeds time. Harmless when early.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.phase == ServerPhase::Closed {
            return;
        }
        for (id, _) in self.endpoint.expire(now) {
            self.events.push_back(Event::Response { id, result: Err(RequestError::TimedOut) });
        }
    }

    pub(crate) fn handle_decoded(&mut self, now: Instant, stream: StreamId, incoming: Incoming) {
        if self.phase == ServerPhase::Closed {
            return;
        }
        self.endpoint.receiving_on(stream);
        self.handle_incoming(now, incoming);
    }

    /// Answers a client request reported by [`Event::Call`]. A `tools/call` result is checked
    /// against the tool's `outputSchema`; a result that does not match becomes an `isError`
    /// result saying why. Answering a request the client cancelled sends nothing.
    pub fn respond(
        &mut self,
        now: Instant,
        id: RequestId,
        result: Result<RawJson, ErrorObject>,
    ) -> Result<(), UsageError> {
        if self.phase == ServerPhase::Closed {
            return Err(UsageError::Closed);
        }
        let Some(entry) = self.endpoint.take_answerable(&id)? else { return Ok(()) };
        let stateless = entry.stateless;
        // A 2026-07-28 run that asked the client ends in what it asked, not what it returned.
        let (tool, result) = match &entry.round {
            Some(round) => {
                let ended = self.end_round(now, round, result);
                let asked =
                    ended.as_ref().is_ok_and(|raw| !super::stateless::result_is_complete(raw));
                (entry.tool.filter(|_| !asked), ended)
            }
            None => (entry.tool, result),
        };
        let result = match (tool, result) {
            (Some(tool), Ok(raw)) => {
                Ok(self.check_structured_output(&tool, raw, stateless.is_some()))
            }
            (_, result) => result,
        };
        let result = match (stateless, result) {
            (Some(s), Ok(raw)) => Ok(self.mark_complete(raw, s.cacheable)),
            (_, result) => result,
        };
        self.endpoint.reply(entry.stream, id, result);
        Ok(())
    }

    /// Reports progress on a client request that asked for it (no-op when it did not).
    /// `progress` must increase from one call to the next.
    pub fn progress(
        &mut self,
        _now: Instant,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        let Some(entry) = self.endpoint.inbound.get_mut(id) else {
            return Err(UsageError::UnknownRequest(id.clone()));
        };
        let Some(token) = entry.progress_token.clone() else { return Ok(()) };
        if entry.last_progress.is_some_and(|last| progress <= last) || !progress.is_finite() {
            return Err(UsageError::ProgressNotIncreasing);
        }
        entry.last_progress = Some(progress);
        let mut params = ProgressParams::new(token, progress);
        params.total = total;
        params.message = message;
        let params = Some(RawJson::from_serialize(&params));
        self.endpoint.notify("notifications/progress", params, Some(id));
        Ok(())
    }

    /// Sends a log record (`notifications/message`) if `level` is at or above the level the
    /// client set (all levels when it set none). `related` names the client request being
    /// served, if any: over Streamable HTTP the record then travels on that request's stream.
    pub fn log(
        &mut self,
        _now: Instant,
        related: Option<&RequestId>,
        level: LoggingLevel,
        logger: Option<&str>,
        data: serde_json::Value,
    ) -> Result<(), UsageError> {
        let stateless = related.and_then(|id| self.endpoint.inbound.get_mut(id)?.stateless);
        if let Some(stateless) = stateless {
            // A 2026-07-28 request gets logs only at the level it asked for, if any.
            if stateless.log_level.is_none_or(|min| level < min) {
                return Ok(());
            }
        } else {
            self.check_open()?;
        }
        // A 2026-07-28 request is served with the capabilities discovery announces.
        let logging_offered = match (&stateless, &self.session) {
            (Some(_), _) => self.capabilities().logging.is_some(),
            (None, session) => {
                session.as_ref().is_none_or(|s| s.server_capabilities.logging.is_some())
            }
        };
        if !logging_offered {
            return Err(UsageError::CapabilityNotNegotiated {
                method: "notifications/message".into(),
                capability: "logging",
            });
        }
        if stateless.is_none() && self.log_level.is_some_and(|min| level < min) {
            return Ok(());
        }
        let mut params = LoggingMessageParams::new(level, data);
        params.logger = logger.map(str::to_owned);
        let params = Some(RawJson::from_serialize(&params));
        self.endpoint.notify("notifications/message", params, related);
        Ok(())
    }

    /// Sends a request to the client (`sampling/createMessage`, `elicitation/create`,
    /// `roots/list`, `ping`); its outcome arrives as [`Event::Response`]. The client must have
    /// declared the matching capability, and the revision must have the method. `related`
    /// names the client request being served, if any (see [`log`](Self::log)).
    pub fn request(
        &mut self,
        now: Instant,
        related: Option<&RequestId>,
        method: &str,
        params: Option<RawJson>,
        opts: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        self.check_open()?;
        let Some(session) = &self.session else { return Err(UsageError::NotReady) };
        let version = session.protocol_version;
        if !rules::exists(version, method, Sender::Server) && rules::request_rule(method).is_some()
        {
            return Err(UsageError::MethodNotInVersion {
                method: method.to_owned(),
                version: version.as_str(),
            });
        }
        if let Some(cap) = rules::needed_capability(version, method) {
            if !cap.offered_by_client(&session.client_capabilities) {
                return Err(UsageError::CapabilityNotNegotiated {
                    method: method.to_owned(),
                    capability: cap.name(),
                });
            }
        }
        self.endpoint.request(now, method, params, &opts, true, related)
    }

    /// Sends a typed request to the client.
    pub fn send<M: Method>(
        &mut self,
        now: Instant,
        related: Option<&RequestId>,
        params: &M::Params,
        opts: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        self.request(now, related, M::NAME, Some(RawJson::from_serialize(params)), opts)
    }

    /// Sends any notification to the client, related to the client request `related` if given
    /// (see [`log`](Self::log)).
    pub fn notify(
        &mut self,
        _now: Instant,
        related: Option<&RequestId>,
        method: &str,
        params: Option<RawJson>,
    ) -> Result<(), UsageError> {
        self.check_open()?;
        if params.as_ref().is_some_and(|p| !p.is_object()) {
            return Err(UsageError::ParamsNotAnObject);
        }
        self.endpoint.notify(method, params, related);
        Ok(())
    }

    /// Sends a typed notification to the client.
    pub fn send_notification<N: NotificationMethod>(
        &mut self,
        now: Instant,
        related: Option<&RequestId>,
        params: &N::Params,
    ) -> Result<(), UsageError> {
        self.notify(now, related, N::NAME, Some(RawJson::from_serialize(params)))
    }

    /// Cancels one of our requests to the client.
    pub fn cancel(
        &mut self,
        _now: Instant,
        id: &RequestId,
        reason: Option<&str>,
    ) -> Result<(), UsageError> {
        if self.endpoint.abandon(id, reason.unwrap_or("cancelled by the server")).is_none() {
            return Err(UsageError::UnknownRequest(id.clone()));
        }
        self.events
            .push_back(Event::Response { id: id.clone(), result: Err(RequestError::Cancelled) });
        Ok(())
    }

    /// Tells the client a list changed, if the session is open and we declared `listChanged`
    /// for it (otherwise nothing is sent).
    pub fn notify_list_changed(&mut self, _now: Instant, kind: ListKind) {
        if !self.listens.is_empty() {
            self.notify_listens(kind);
        }
        let Some(session) = &self.session else { return };
        let caps = &session.server_capabilities;
        let (declared, method) = match kind {
            ListKind::Tools => (
                caps.tools.as_ref().and_then(|t| t.list_changed),
                "notifications/tools/list_changed",
            ),
            ListKind::Prompts => (
                caps.prompts.as_ref().and_then(|p| p.list_changed),
                "notifications/prompts/list_changed",
            ),
            ListKind::Resources => (
                caps.resources.as_ref().and_then(|r| r.list_changed),
                "notifications/resources/list_changed",
            ),
        };
        if declared == Some(true) && self.phase != ServerPhase::Closed {
            self.endpoint.notify(method, None, None);
        }
    }

    /// Tells the client a resource changed, if it subscribed to it (or to a resource whose
    /// URI is a prefix of it).
    pub fn resource_updated(&mut self, _now: Instant, uri: &str) {
        if self.phase == ServerPhase::Closed {
            return;
        }
        if !self.listens.is_empty() {
            self.listens_updated(uri);
        }
        let subscribed = self.subscriptions.iter().any(|s| uri == s || uri.starts_with(s.as_str()));
        if subscribed {
            let params = ResourceUpdatedParams { uri: uri.to_owned(), ..Default::default() };
            let params = Some(RawJson::from_serialize(&params));
            self.endpoint.notify("notifications/resources/updated", params, None);
        }
    }

    /// The registry, to add or remove items (copied first if other sessions share it). Call
    /// [`notify_list_changed`](Self::notify_list_changed) after changing it mid-session.
    pub fn registry_mut(&mut self) -> &mut Registry<H> {
        &mut Arc::make_mut(&mut self.shared).registry
    }

    /// Ends the session: our pending requests fail with `Closed(Local)`, then
    /// `Event::Closed(Local)`. Idempotent.
    pub fn close(&mut self, _now: Instant) {
        self.close_with(CloseReason::Local);
    }

    /// The next message to send; `None` when drained.
    #[must_use]
    pub fn poll_outgoing(&mut self) -> Option<Outgoing> {
        self.endpoint.poll_outgoing()
    }

    /// The next event; `None` when drained.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event<H>> {
        self.events.pop_front()
    }

    /// Frees the room the session's queues and tables kept from a busier moment, where they
    /// are empty (events are over 300 bytes each: a drained queue of four holds 1.3 KiB).
    /// For holders of many idle sessions; nothing observable changes.
    pub(crate) fn release_idle_capacity(&mut self) {
        if self.events.is_empty() {
            self.events.shrink_to_fit();
        }
        self.endpoint.release_idle_capacity();
    }

    /// When to call `handle_input(Input::Timeout(..))` next (only our own requests to the
    /// client have deadlines).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.phase {
            ServerPhase::Closed => None,
            _ => self.endpoint.poll_timeout(),
        }
    }

    /// The registry.
    pub fn registry(&self) -> &Registry<H> {
        &self.shared.registry
    }

    /// Who the requests come from, when the router checks OAuth tokens.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_deref()
    }

    /// The principal the requests that follow come from (an HTTP router with OAuth sets it
    /// for each POST); handlers see it in their [`CallContext`](super::CallContext).
    pub fn set_principal(&mut self, principal: Arc<Principal>) {
        self.principal = Some(principal);
    }

    /// What the client said in `initialize`, once it has.
    pub fn session(&self) -> Option<&SessionInfo> {
        self.session.as_deref()
    }

    /// The minimum log level the client asked for, if any.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }

    /// Whether the client subscribed to updates of `uri` (`resources/subscribe`).
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions.contains(uri)
    }

    /// Opens the session without a handshake, as the stateless mode of Streamable HTTP needs:
    /// the revision comes from the request's `MCP-Protocol-Version` header, the client is
    /// taken to offer nothing. No event is reported.
    pub(crate) fn assume_initialized(&mut self, version: crate::schema::ProtocolVersion) {
        let info = SessionInfo {
            protocol_version: version,
            client_info: crate::schema::Implementation::new("stateless-client", "0"),
            client_capabilities: Default::default(),
            server_capabilities: self.capabilities(),
        };
        self.session = Some(Arc::new(info));
        self.phase = ServerPhase::Ready;
    }

    /// True while messages or events wait to be drained.
    pub(crate) fn has_output(&self) -> bool {
        self.endpoint.has_outgoing() || !self.events.is_empty()
    }

    /// True once [`Event::Closed`] has been queued.
    pub fn is_closed(&self) -> bool {
        self.phase == ServerPhase::Closed
    }

    /// How many of our requests to the client await an outcome.
    pub fn in_flight(&self) -> usize {
        self.endpoint.outstanding.len()
    }

    /// How many of the client's requests are in progress: reported and not yet answered,
    /// cancelled or ended with the session.
    pub fn calls_in_progress(&self) -> usize {
        self.endpoint.inbound.len()
    }

    fn check_open(&self) -> Result<(), UsageError> {
        match self.phase {
            ServerPhase::Closed => Err(UsageError::Closed),
            ServerPhase::AwaitingInitialize => Err(UsageError::NotReady),
            _ => Ok(()),
        }
    }

    fn handle_incoming(&mut self, now: Instant, incoming: Incoming) {
        match incoming {
            Incoming::Message(m) => self.handle_message(now, m, false),
            Incoming::Batch(items) => self.handle_batch(now, items),
            Incoming::Invalid(e) => {
                self.endpoint.reject(e.id().cloned(), &Rejection::Decode(e.clone()));
                self.violation(ProtocolViolation::Decode(e));
            }
            Incoming::Line(v) => {
                if let LineViolation::TooLong { limit, head, .. } = &v {
                    if let Some(id) = self.endpoint.too_long(head, *limit) {
                        let result = Err(RequestError::TooLarge { limit: *limit });
                        self.violation(ProtocolViolation::Line(v));
                        return self.events.push_back(Event::Response { id, result });
                    }
                }
                self.violation(ProtocolViolation::Line(v));
            }
        }
    }

    fn handle_batch(
        &mut self,
        now: Instant,
        items: Vec<Result<Message, crate::jsonrpc::DecodeError>>,
    ) {
        let allowed = self.session.as_ref().is_some_and(|s| s.protocol_version.has_batching());
        if !allowed {
            self.endpoint.reject(None, &Rejection::BatchNotAllowed);
            return self.violation(ProtocolViolation::BatchNotAllowed);
        }
        let ids = items
            .iter()
            .filter_map(|m| match m {
                Ok(Message::Request(r)) => Some(r.id.clone()),
                _ => None,
            })
            .collect();
        self.endpoint.open_batch(ids);
        for item in items {
            match item {
                Ok(m) => self.handle_message(now, m, true),
                Err(e) => {
                    self.endpoint.reject(e.id().cloned(), &Rejection::Decode(e.clone()));
                    self.violation(ProtocolViolation::Decode(e));
                }
            }
        }
        self.endpoint.seal_batch();
    }

    fn handle_message(&mut self, now: Instant, message: Message, in_batch: bool) {
        match self.endpoint.classify(now, message) {
            Routed::Request(r) => {
                if in_batch && r.method == "initialize" {
                    return self.endpoint.reject(Some(r.id), &Rejection::InitializeInBatch);
                }
                self.handle_request(now, r)
            }
            Routed::Notification(n) => self.handle_notification(n),
            Routed::Response { id, outcome, .. } => {
                let result = outcome.map_err(RequestError::Remote);
                self.events.push_back(Event::Response { id, result });
            }
            Routed::Progress { id, params } => {
                self.events.push_back(Event::Progress { id, progress: params })
            }
            Routed::PeerCancelled { id } => {
                self.endpoint.forget_reply(&id);
                self.events.push_back(Event::Cancelled { id });
            }
            Routed::Violation(v) => self.violation(v),
            Routed::Nothing => {}
        }
    }

    fn handle_notification(&mut self, n: Notification) {
        match (n.method.as_str(), self.phase) {
            ("notifications/initialized", ServerPhase::AwaitingInitialized) => {
                self.phase = ServerPhase::Ready;
                self.revision += 1;
                self.events.push_back(Event::Ready);
            }
            ("notifications/initialized", ServerPhase::Ready) => {}
            (_, ServerPhase::AwaitingInitialize) => self.violation(ProtocolViolation::OutOfOrder {
                method: n.method,
                phase: self.phase.name(),
            }),
            ("notifications/roots/list_changed", _) => {
                self.events.push_back(Event::Notification(ClientNotification::RootsListChanged))
            }
            _ => self.events.push_back(Event::Notification(ClientNotification::Other(n))),
        }
    }

    pub(super) fn violation(&mut self, v: ProtocolViolation) {
        self.events.push_back(Event::Violation(v));
    }

    pub(crate) fn close_with(&mut self, reason: CloseReason) {
        if self.phase == ServerPhase::Closed {
            return;
        }
        self.phase = ServerPhase::Closed;
        for (id, _) in self.endpoint.drain_outstanding() {
            let result = Err(RequestError::Closed(reason.clone()));
            self.events.push_back(Event::Response { id, result });
        }
        for id in self.endpoint.inbound.drain() {
            self.events.push_back(Event::Cancelled { id });
        }
        self.events.push_back(Event::Closed(reason));
    }

    pub(super) fn capabilities(&self) -> ServerCapabilities {
        self.shared.config.capabilities.clone().unwrap_or_else(|| {
            let announce = self.shared.config.announce_changes;
            dispatch::derive_capabilities(&self.shared.registry, announce)
        })
    }
}
