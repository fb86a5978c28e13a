//! The client machine: handshake, requests, and the server's requests as events.
//!
//! ```text
//!  new ──initialize──▶ AwaitingInitResult ──result, version ok──▶ Ready ──close/EOF──▶ Closed
//!                         ▲    │  error, timeout, bad version       │                  ▲
//!                         │    └────────────────────────────────────┼──────────────────┘
//!                         └──── HTTP 404 for the session: initialize again (SessionExpired)
//!  new ──server/discover (2026-07-28 preferred, stdio)──▶ lists it: Ready (no handshake)
//!                                                     └─▶ otherwise: initialize, as above
//! ```
//!
//! The transport is stdio ([`Client::new`]) or HTTP ([`Client::new_http`]: Streamable HTTP,
//! legacy HTTP+SSE, or detection between them; see [`crate::http::client`]). Over HTTP a 404
//! for the session sends the machine back to `AwaitingInitResult` with a fresh `initialize`
//! (see [`Event::SessionExpired`]).
//!
//! In 2026-07-28 (see `modern.rs`) every request carries the protocol data in its `_meta`,
//! and an input-required result becomes the same [`Event::Request`]s the session era has;
//! their answers go back on a retry with a new id, which the app never sees (`rounds.rs`).
//! Over Streamable HTTP a 2026-07-28 POST carries the revision's headers and no session.
//! OAuth is to be a separate
//! machine whose HTTP requests are transmits and whose outcome feeds a bearer token into
//! this one.

mod config;
mod events;
mod listen;
mod modern;
mod outline;
mod over_http;
mod rounds;
mod tool_outputs;

use std::collections::VecDeque;
use std::time::Instant;

pub use config::{ClientConfig, Negotiated};
pub use events::{Event, RawParams, ServerNotification, ServerRequest};
pub use over_http::MAX_EXPIRIES_IN_A_ROW;

use crate::error::{CloseReason, ProtocolViolation, Rejection, RequestError, UsageError};
use crate::framing::lines::LineViolation;
use crate::http::client::HttpSide;
use crate::io::{Input, Output, TransportFailure};
use crate::jsonrpc::{ErrorObject, Message, Notification, RawJson, Request, RequestId};
use crate::lifecycle::rules::{self, ClientPhase, Sender};
use crate::rpc::{parse_params, Endpoint, InboundEntry, Incoming, Limits, RequestOptions, Routed};
use crate::schema::methods::{Method, NotificationMethod};
use crate::schema::{
    ElicitationCompleteParams, InitializeParams, InitializeResult, ProtocolVersion,
};
use crate::transport::StdioTransport;
pub(crate) use outline::Outline;
use tool_outputs::ToolOutputs;

/// Decodes a raw outcome into `M`'s typed result.
pub fn decode_result<M: Method>(
    result: Result<RawJson, RequestError>,
) -> Result<M::Result, RequestError> {
    result?.parse::<M::Result>().map_err(RequestError::InvalidResult)
}

/// The client side of one MCP session, sans IO.
///
/// Calling contract (every machine, same words): feed inputs with [`handle_input`], issue
/// commands, then drain [`poll_output`] to `None` and sleep until [`poll_timeout`].
///
/// [`handle_input`]: Self::handle_input
/// [`poll_output`]: Self::poll_output
/// [`poll_timeout`]: Self::poll_timeout
#[derive(Debug)]
pub struct Client {
    config: ClientConfig,
    endpoint: Endpoint,
    transport: Transport,
    /// `close` was called: close the stream once every queued message is out (stdio).
    closing: bool,
    phase: Phase,
    /// HTTP sessions that expired in a row with no response in between (see `http.rs`).
    expiries: u32,
    /// Ids of URL-mode elicitations the server started (a request, or a -32042 error) and has
    /// not said `notifications/elicitation/complete` for, oldest first, at most
    /// [`MAX_URL_ELICITATIONS`]. A completion naming any other id is ignored, as the spec
    /// requires.
    url_elicitations: VecDeque<String>,
    events: VecDeque<Event>,
    /// Tool output schemas from `tools/list`, checked on `tools/call` results.
    tool_outputs: ToolOutputs,
    /// 2026-07-28 calls that came back asking for input (see `rounds.rs`).
    rounds: rounds::Rounds,
    /// `server/discover` was refused with -32022 listing 2026-07-28 and sent again.
    asked_again: bool,
    /// 2026-07-28: the least severe log records the app wants, sent in each request's `_meta`
    /// (that revision has no `logging/setLevel`).
    log_level: Option<crate::schema::LoggingLevel>,
    /// 2026-07-28: the `_meta` member every request carries, as text; made at first use and
    /// again after the log level changes.
    meta_member: Option<String>,
    /// 2026-07-28: the `subscriptions/listen` request held open (see `listen.rs`).
    listening: listen::Listening,
    /// OAuth: since when a user is asked to authorize; request deadlines stand still
    /// meanwhile.
    authorizing_since: Option<Instant>,
}

/// How many URL-mode elicitations the client awaits a completion for at once; past it the
/// oldest is forgotten (its completion, if it ever comes, is then ignored).
pub const MAX_URL_ELICITATIONS: usize = 256;

/// What the messages travel over.
#[derive(Debug)]
enum Transport {
    /// A trait object (see [`HttpSide`]): stdio-only programs link no HTTP transport or OAuth
    /// code.
    Http(Box<dyn HttpSide>),
    Stdio(StdioTransport),
}

#[derive(Debug)]
enum Phase {
    /// `again`: a re-initialization after the HTTP session expired.
    AwaitingInitResult {
        init: RequestId,
        again: bool,
        /// `init` is `server/discover`, the first step of the era ladder.
        discover: bool,
    },
    Ready(Box<Negotiated>),
    Closed,
}

impl Client {
    /// Starts a session on a stdio stream: queues `initialize` at once. Drain
    /// [`poll_output`](Self::poll_output) next.
    pub fn new(config: ClientConfig, now: Instant) -> Self {
        let transport = Transport::Stdio(StdioTransport::new(config.max_message));
        Self::start(config, transport, now)
    }

    fn start(config: ClientConfig, transport: Transport, now: Instant) -> Self {
        let limits = Limits {
            max_in_flight: config.max_in_flight,
            request_timeout: config.request_timeout,
            max_request_timeout: config.max_request_timeout,
        };
        let mut client = Self {
            config,
            endpoint: Endpoint::new(limits),
            transport,
            closing: false,
            phase: Phase::Closed,
            expiries: 0,
            url_elicitations: VecDeque::new(),
            events: VecDeque::new(),
            tool_outputs: ToolOutputs::default(),
            rounds: rounds::Rounds::default(),
            asked_again: false,
            log_level: None,
            meta_member: None,
            listening: listen::Listening::default(),
            authorizing_since: None,
        };
        let discover = client.config.protocol_version.is_stateless();
        if let (Transport::Http(http), true) = (&mut client.transport, discover) {
            http.set_modern(true);
        }
        let init = if discover { client.send_discover(now) } else { client.send_initialize(now) };
        client.phase = Phase::AwaitingInitResult { init, again: false, discover };
        client
    }

    /// Queues `initialize`; the endpoint has no request of ours in flight.
    fn send_initialize(&mut self, now: Instant) -> RequestId {
        let config = &self.config;
        let params = InitializeParams::new(
            config.protocol_version,
            config.capabilities.clone(),
            config.client_info.clone(),
        );
        let opts =
            RequestOptions::default().timeout(config.init_timeout).max_total(config.init_timeout);
        let params = Some(RawJson::from_serialize(&params));
        self.endpoint
            .request(now, "initialize", params, &opts, false, None)
            // Invariant: the endpoint has no requests in flight and the params are an object.
            .expect("initialize always fits")
    }

    /// Feeds one input. Never fails: the server's mistakes become [`Event::Violation`], a dead
    /// transport becomes [`Event::Closed`]. Then drain [`poll_output`](Self::poll_output).
    pub fn handle_input(&mut self, input: Input<'_>) {
        debug_assert!(
            self.events.is_empty()
                && !self.endpoint.has_outgoing()
                && !self.closing
                && !matches!(&self.transport, Transport::Http(h) if h.has_transmits()),
            "drain poll_output to None before feeding the next input"
        );
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        let (Input::Timeout(now) | Input::Receive(now, _)) = &input;
        self.reopen_listen(*now);
        match input {
            Input::Timeout(now) => self.handle_timeout(now),
            Input::Receive(now, r) => {
                let stdio = match &mut self.transport {
                    Transport::Http(http) => {
                        let mut planned = Vec::new();
                        http.receive(now, r.stream, r.event, &mut planned);
                        return self.handle_planned(now, planned);
                    }
                    Transport::Stdio(stdio) => stdio,
                };
                self.endpoint.receiving_on(r.stream);
                let (frames, ended) = stdio.receive(r.event);
                for incoming in frames {
                    self.handle_incoming(now, incoming);
                }
                if let Some(reason) = ended {
                    self.close_with(reason);
                }
            }
        }
    }

    /// Sends a request; its one outcome arrives later as [`Event::Response`] with the returned
    /// id. Before [`Event::Ready`] only `ping` may be sent. In 2026-07-28, which has no
    /// `ping`, a `ping` is sent as `server/discover` (its result, read as an empty one, says
    /// the server is alive).
    ///
    /// While the client re-initializes after an HTTP session expired (between
    /// [`Event::SessionExpired`] and the next [`Event::Ready`]) any other request is accepted
    /// and fails at once with [`RequestError::SessionExpired`]; it is not queued for the new
    /// session, whose capabilities may differ.
    pub fn request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<RawJson>,
        opts: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        if matches!(self.phase, Phase::AwaitingInitResult { again: true, .. }) && method != "ping" {
            return Ok(self.refuse_during_reinit());
        }
        self.check_may_send(method)?;
        // 2026-07-28 has no `ping`: a `server/discover` round trip shows the server alive.
        let method = if method == "ping" && self.is_modern() { "server/discover" } else { method };
        let params = match self.is_modern() {
            true if method == "logging/setLevel" => return self.keep_log_level(params.as_ref()),
            true if method == "resources/subscribe" => {
                return self.change_subscriptions(now, true, params.as_ref())
            }
            true if method == "resources/unsubscribe" => {
                return self.change_subscriptions(now, false, params.as_ref())
            }
            true => {
                self.check_modern_method(method)?;
                Some(self.with_protocol_meta(params))
            }
            false => params,
        };
        let watch = self.tool_outputs.watch(method, params.as_ref());
        let retried = self.is_modern().then(|| params.clone());
        let id = self.endpoint.request(now, method, params, &opts, true, None)?;
        if let Some(params) = retried {
            let cap = opts.max_total.unwrap_or(self.config.max_request_timeout);
            self.rounds.sent(&id, method, params, &opts, now + cap);
        }
        if let Some(watch) = watch {
            self.tool_outputs.sent(&id, watch);
        }
        Ok(id)
    }

    /// Sends a typed request: `client.send::<CallTool>(now, &params, opts)`.
    pub fn send<M: Method>(
        &mut self,
        now: Instant,
        params: &M::Params,
        opts: RequestOptions,
    ) -> Result<RequestId, UsageError> {
        self.request(now, M::NAME, Some(RawJson::from_serialize(params)), opts)
    }

    /// Sends a notification (e.g. `notifications/roots/list_changed`).
    pub fn notify(
        &mut self,
        _now: Instant,
        method: &str,
        params: Option<RawJson>,
    ) -> Result<(), UsageError> {
        match self.phase {
            Phase::Closed => return Err(UsageError::Closed),
            Phase::AwaitingInitResult { .. } => return Err(UsageError::NotReady),
            Phase::Ready(_) => {}
        }
        if params.as_ref().is_some_and(|p| !p.is_object()) {
            return Err(UsageError::ParamsNotAnObject);
        }
        self.endpoint.notify(method, params, None);
        Ok(())
    }

    /// The app's roots changed: sends `notifications/roots/list_changed` when we declared
    /// `roots.listChanged` and the session's revision has the notification (up to
    /// 2025-11-25). `Ok(false)` when nothing was sent: not declared, not in this revision, or
    /// not ready yet (the server asks for the list after the handshake anyway). Then drain
    /// [`poll_output`](Self::poll_output).
    pub fn roots_changed(&mut self, _now: Instant) -> Result<bool, UsageError> {
        let roots = self.config.capabilities.roots.as_ref();
        let declared = roots.and_then(|r| r.list_changed) == Some(true);
        match &self.phase {
            Phase::Closed => Err(UsageError::Closed),
            Phase::Ready(n) if declared && n.protocol_version.has_roots_list_changed() => {
                self.endpoint.notify("notifications/roots/list_changed", None, None);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Sends a typed notification.
    pub fn send_notification<N: NotificationMethod>(
        &mut self,
        now: Instant,
        params: &N::Params,
    ) -> Result<(), UsageError> {
        self.notify(now, N::NAME, Some(RawJson::from_serialize(params)))
    }

    /// Answers a server request ([`Event::Request`]). Answering a request the server has
    /// cancelled is allowed and sends nothing.
    pub fn respond(
        &mut self,
        now: Instant,
        id: RequestId,
        result: Result<RawJson, ErrorObject>,
    ) -> Result<(), UsageError> {
        if matches!(self.phase, Phase::Closed) {
            return Err(UsageError::Closed);
        }
        if self.rounds.is_ask(&id) {
            self.answer_ask(now, &id, result);
            return Ok(());
        }
        if let Some(entry) = self.endpoint.take_answerable(&id)? {
            self.endpoint.reply(entry.stream, id, result);
        }
        Ok(())
    }

    /// Cancels one of our requests: sends `notifications/cancelled`, reports
    /// `Response { result: Err(Cancelled) }` at once and drops any late response.
    pub fn cancel(
        &mut self,
        _now: Instant,
        id: &RequestId,
        reason: Option<&str>,
    ) -> Result<(), UsageError> {
        if let Phase::AwaitingInitResult { init, .. } = &self.phase {
            if init == id {
                // The spec forbids cancelling initialize; it is not the caller's id anyway.
                return Err(UsageError::UnknownRequest(id.clone()));
            }
        }
        if let Some(asks) = self.rounds.drop_waiting(id) {
            // Waiting for the app's answers: nothing is in flight to cancel.
            for ask in asks {
                self.events.push_back(Event::Cancelled { id: ask });
            }
            let result = Err(RequestError::Cancelled);
            self.events.push_back(Event::Response { id: id.clone(), result });
            return Ok(());
        }
        // A call in its retry is in flight under another id; its events are renamed back.
        let wire = self.rounds.wire_of(id).unwrap_or_else(|| id.clone());
        if self.endpoint.abandon(&wire, reason.unwrap_or("cancelled by the client")).is_none() {
            return Err(UsageError::UnknownRequest(id.clone()));
        }
        self.forget_stream_of(&wire);
        self.events.push_back(Event::Response { id: wire, result: Err(RequestError::Cancelled) });
        Ok(())
    }

    /// Ends the session: every pending request fails with `Closed(Local)`, then
    /// `Event::Closed(Local)`, and the stream is closed (over Streamable HTTP: open streams are
    /// aborted and the session is DELETEd). Idempotent.
    pub fn close(&mut self, _now: Instant) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        // stdio closes its stream in `poll_output`; HTTP drops its streams in `close_with`.
        self.closing = matches!(self.transport, Transport::Stdio(_));
        self.close_with(CloseReason::Local);
    }

    /// The runtime cannot carry on: an effect it cannot perform (see
    /// [`Transmit::into_http_client`](crate::io::Transmit::into_http_client), whose `Err` is
    /// a [`TransportFailure::Unsupported`]). The session ends as `close` ends it, with
    /// [`CloseReason::TransportFailed`]`(failure)`. Drain the outputs first.
    pub fn fail(&mut self, _now: Instant, failure: TransportFailure) {
        self.close_with(CloseReason::TransportFailed(failure));
    }

    /// The next effect or event; `None` when drained.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<Output<Event>> {
        match &mut self.transport {
            Transport::Stdio(_) => {
                if let Some(out) = self.endpoint.poll_outgoing() {
                    return Some(Output::Transmit(StdioTransport::transmit(out)));
                }
                if std::mem::take(&mut self.closing) {
                    return Some(Output::Transmit(StdioTransport::close()));
                }
            }
            Transport::Http(http) => {
                while let Some(out) = self.endpoint.poll_outgoing() {
                    http.send(out, &self.tool_outputs.marks);
                }
                if let Some(transmit) = http.poll_transmit() {
                    return Some(Output::Transmit(transmit));
                }
            }
        }
        let mut event = self.rounds.rename(self.events.pop_front()?);
        while self.is_listen_end(&event) {
            event = self.rounds.rename(self.events.pop_front()?);
        }
        // 2026-07-28 over HTTP: a tool whose annotations cannot be honoured is dropped.
        let strict = self.is_modern() && matches!(self.transport, Transport::Http(_));
        Some(Output::Event(self.tool_outputs.check(event, strict)))
    }

    /// Hands back the buffer of a frame the runtime has written (from
    /// [`WriteQueue::take_spare`](crate::runtime::WriteQueue::take_spare)), so that the next
    /// large message is encoded into it instead of into fresh memory. Optional: without it
    /// every frame allocates its own buffer. A buffer larger than
    /// [`KEPT_BUFFER_MAX`](crate::framing::KEPT_BUFFER_MAX) is dropped, not kept.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        self.endpoint.recycle(buf);
    }

    /// When to call `handle_input(Input::Timeout(..))` next: the earliest request deadline or
    /// (over HTTP) SSE reconnection. Changes after any input or command.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if matches!(self.phase, Phase::Closed) {
            return None;
        }
        if self.authorizing_since.is_some() {
            return None;
        }
        let reconnect = match &self.transport {
            Transport::Http(http) => http.poll_timeout(),
            Transport::Stdio(_) => None,
        };
        [self.endpoint.poll_timeout(), reconnect, self.rounds.poll_timeout(), self.ready_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// What the handshake settled, once ready.
    pub fn negotiated(&self) -> Option<&Negotiated> {
        match &self.phase {
            Phase::Ready(n) => Some(n),
            _ => None,
        }
    }

    /// True once [`Event::Closed`] has been queued.
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed)
    }

    /// How many of our requests await an outcome.
    pub fn in_flight(&self) -> usize {
        self.endpoint.outstanding.len()
    }

    fn check_may_send(&self, method: &str) -> Result<(), UsageError> {
        let phase = match &self.phase {
            Phase::Closed => return Err(UsageError::Closed),
            Phase::AwaitingInitResult { .. } => ClientPhase::AwaitingInitResult,
            Phase::Ready(_) => ClientPhase::Ready,
        };
        if !rules::client_may_send(phase, method) {
            return Err(UsageError::NotReady);
        }
        let (Phase::Ready(n), true) = (&self.phase, self.config.strict_capabilities) else {
            return Ok(());
        };
        match rules::needed_capability(n.protocol_version, method) {
            Some(cap) if !cap.offered_by_server(&n.capabilities) => {
                Err(UsageError::CapabilityNotNegotiated {
                    method: method.to_owned(),
                    capability: cap.name(),
                })
            }
            _ => Ok(()),
        }
    }

    fn version(&self) -> Option<ProtocolVersion> {
        match &self.phase {
            Phase::Ready(n) => Some(n.protocol_version),
            _ => None,
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.authorizing_since.is_some() {
            return;
        }
        let mut init_expired = false;
        let discovering = matches!(self.phase, Phase::AwaitingInitResult { discover: true, .. });
        for (id, _) in self.endpoint.expire(now) {
            if matches!(&self.phase, Phase::AwaitingInitResult { init, .. } if *init == id) {
                // Close only after the loop: the other requests due now are already out of the
                // pending table and need their outcome here.
                init_expired = true;
                continue;
            }
            self.forget_stream_of(&id);
            self.events.push_back(Event::Response { id, result: Err(RequestError::TimedOut) });
        }
        self.expire_rounds(now);
        self.release_ready_at(now);
        if init_expired && discovering {
            // A server that says nothing to `server/discover` is not modern: step down.
            if let Phase::AwaitingInitResult { init, .. } = &self.phase {
                let init = init.clone();
                self.forget_stream_of(&init);
            }
            return self.on_discover(now, None);
        }
        if init_expired {
            return self.close_with(CloseReason::InitializeTimedOut);
        }
        if let Transport::Http(http) = &mut self.transport {
            let mut planned = Vec::new();
            http.handle_timeout(now, &mut planned);
            self.handle_planned(now, planned);
        }
    }

    fn handle_incoming(&mut self, now: Instant, incoming: Incoming) {
        match incoming {
            Incoming::Message(m) => self.handle_message(now, m),
            Incoming::Batch(items) => {
                if !self.version().is_some_and(ProtocolVersion::has_batching) {
                    self.violation(ProtocolViolation::BatchNotAllowed);
                }
                for item in items {
                    match item {
                        Ok(m) => self.handle_message(now, m),
                        Err(e) => self.violation(ProtocolViolation::Decode(e)),
                    }
                }
            }
            Incoming::Invalid(e) => self.violation(ProtocolViolation::Decode(e)),
            Incoming::Line(v) => {
                let failed = match &v {
                    LineViolation::TooLong { limit, head, .. }
                        if !matches!(self.phase, Phase::Closed) =>
                    {
                        self.endpoint.too_long(head, *limit).map(|id| (id, *limit))
                    }
                    _ => None,
                };
                self.violation(ProtocolViolation::Line(v));
                if let Some((id, limit)) = failed {
                    self.fail_too_large(id, limit);
                }
            }
        }
    }

    fn handle_message(&mut self, now: Instant, message: Message) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        match self.endpoint.classify(now, message) {
            Routed::Request(r) => self.handle_request(r),
            Routed::Notification(n) => self.handle_notification(n),
            Routed::Response { id, outcome, .. } => self.handle_response(now, id, outcome),
            Routed::Progress { id, params } => {
                self.events.push_back(Event::Progress { id, progress: params })
            }
            Routed::PeerCancelled { id } => self.events.push_back(Event::Cancelled { id }),
            Routed::Violation(v) => self.violation(v),
            Routed::Nothing => {}
        }
    }

    /// Our request `id`, already out of the pending table, was answered by a message too
    /// large to read: it fails at once (`initialize` closes the session).
    fn fail_too_large(&mut self, id: RequestId, limit: usize) {
        if matches!(&self.phase, Phase::AwaitingInitResult { init, .. } if *init == id) {
            let why = format!("the initialize result exceeds the {limit}-byte message limit");
            return self.close_with(CloseReason::InitializeInvalid(why));
        }
        self.forget_stream_of(&id);
        self.events
            .push_back(Event::Response { id, result: Err(RequestError::TooLarge { limit }) });
    }

    fn handle_response(
        &mut self,
        now: Instant,
        id: RequestId,
        outcome: Result<RawJson, ErrorObject>,
    ) {
        let (init_id, discover) = match &self.phase {
            Phase::AwaitingInitResult { init, discover, .. } => (Some(init.clone()), *discover),
            _ => (None, false),
        };
        if discover && init_id.as_ref() == Some(&id) {
            return self.on_discover(now, Some(outcome));
        }
        if init_id.as_ref() != Some(&id) {
            self.expiries = 0;
            if let Ok(raw) = &outcome {
                if self.input_required(now, &id, raw) {
                    return;
                }
            }
            let result = outcome.map_err(RequestError::Remote);
            if let Some(required) = result.as_ref().err().and_then(RequestError::url_elicitations) {
                for elicitation in required {
                    self.await_completion(elicitation.elicitation_id);
                }
            }
            self.events.push_back(Event::Response { id, result });
            return;
        }
        let raw = match outcome {
            Ok(raw) => raw,
            Err(e) => return self.close_with(CloseReason::InitializeRejected(e)),
        };
        let result = match raw.parse::<InitializeResult>() {
            Ok(r) => r,
            Err(detail) => {
                self.violation(ProtocolViolation::InvalidInitializeResult(detail.clone()));
                return self.close_with(CloseReason::InitializeInvalid(detail));
            }
        };
        let Some(version) = ProtocolVersion::parse(&result.protocol_version)
            .filter(|v| v.is_session_era() && self.config.supported_versions.contains(v))
        else {
            self.violation(ProtocolViolation::UnsupportedVersion(result.protocol_version.clone()));
            return self.close_with(CloseReason::InitializeInvalid(format!(
                "server chose unsupported protocol version {:?}",
                result.protocol_version
            )));
        };
        let negotiated = Box::new(Negotiated {
            protocol_version: version,
            server_info: result.server_info,
            capabilities: result.capabilities,
            instructions: result.instructions,
        });
        if let Transport::Http(http) = &mut self.transport {
            http.set_protocol_version(version);
        }
        self.endpoint.notify("notifications/initialized", None, None);
        self.phase = Phase::Ready(negotiated.clone());
        self.events.push_back(Event::Ready(negotiated));
    }

    fn handle_request(&mut self, r: Request) {
        let version = self.version().unwrap_or(self.config.protocol_version);
        if r.method == "ping" {
            self.endpoint.reply(self.endpoint.receiving(), r.id, Ok(RawJson::empty_object()));
            return;
        }
        if !rules::exists(version, &r.method, Sender::Server) {
            self.endpoint.reject(Some(r.id), &Rejection::MethodNotFound(r.method));
            return;
        }
        if let Some(cap) = rules::needed_capability(version, &r.method) {
            if !cap.offered_by_client(&self.config.capabilities) {
                self.endpoint.reject(Some(r.id), &Rejection::MethodNotFound(r.method));
                return;
            }
        }
        let Some(parsed) = ServerRequest::parse(&r.method, r.params.as_ref()) else {
            self.endpoint.reject(Some(r.id), &Rejection::MethodNotFound(r.method));
            return;
        };
        match parsed {
            Ok(request) => {
                if let Some(why) = self.not_offered(&request) {
                    self.endpoint.reject(Some(r.id), &Rejection::InvalidParams(why));
                    return;
                }
                if let ServerRequest::Elicit(p) = &request {
                    if let Some(id) = Outline::of(p.raw()).url_elicitation_id() {
                        self.await_completion(id);
                    }
                }
                let entry = InboundEntry::new(self.endpoint.receiving(), None);
                self.endpoint.inbound.begin(&r.id, entry);
                self.events.push_back(Event::Request { id: r.id, request });
            }
            Err(detail) => self.endpoint.reject(Some(r.id), &Rejection::InvalidParams(detail)),
        }
    }

    fn handle_notification(&mut self, n: Notification) {
        let typed = match n.method.as_str() {
            "notifications/message" => parse_note(&n).map(ServerNotification::LoggingMessage),
            "notifications/resources/updated" => {
                parse_note(&n).map(ServerNotification::ResourceUpdated)
            }
            "notifications/resources/list_changed" => Ok(ServerNotification::ResourceListChanged),
            "notifications/tools/list_changed" => Ok(ServerNotification::ToolListChanged),
            "notifications/prompts/list_changed" => Ok(ServerNotification::PromptListChanged),
            "notifications/elicitation/complete" => {
                match parse_note::<ElicitationCompleteParams>(&n) {
                    Ok(p) => {
                        match self.url_elicitations.iter().position(|id| *id == p.elicitation_id) {
                            Some(at) => {
                                self.url_elicitations.remove(at);
                                Ok(ServerNotification::ElicitationComplete(p))
                            }
                            // An unknown or already completed id: ignored, as the spec requires.
                            None => return,
                        }
                    }
                    Err(detail) => Err(detail),
                }
            }
            _ => Ok(ServerNotification::Other(n.clone())),
        };
        match typed {
            Ok(t) => self.events.push_back(Event::Notification(t)),
            Err(detail) => {
                self.violation(ProtocolViolation::InvalidNotification { method: n.method, detail })
            }
        }
    }

    /// Why we refuse a request our capabilities rule out (-32602): tools in a sampling
    /// request without `sampling.tools`, an elicitation mode we did not declare. Read from
    /// the params' [`Outline`]: the rest of them is the answering handler's to decode.
    fn not_offered(&self, request: &ServerRequest) -> Option<String> {
        let caps = &self.config.capabilities;
        match request {
            ServerRequest::CreateMessage(p) if Outline::of(p.raw()).offers_tools() => {
                let offered = caps.sampling.as_ref().is_some_and(|s| s.tools.is_some());
                (!offered).then(|| {
                    "tools in a sampling request, but this client did not declare sampling.tools"
                        .to_owned()
                })
            }
            ServerRequest::Elicit(p) => {
                let declared = caps.elicitation.as_ref()?;
                let (mode, supported) = match Outline::of(p.raw()).mode.as_deref() {
                    None | Some("form") => ("form", declared.supports_form()),
                    Some("url") => ("url", declared.supports_url()),
                    // Not a mode: the decoding answers it (-32602).
                    Some(_) => return None,
                };
                (!supported).then(|| format!("this client did not declare {mode}-mode elicitation"))
            }
            _ => None,
        }
    }

    /// Remembers a URL-mode elicitation whose completion the server may announce.
    fn await_completion(&mut self, id: String) {
        if self.url_elicitations.contains(&id) {
            return;
        }
        if self.url_elicitations.len() == MAX_URL_ELICITATIONS {
            self.url_elicitations.pop_front();
        }
        self.url_elicitations.push_back(id);
    }

    fn violation(&mut self, v: ProtocolViolation) {
        self.events.push_back(Event::Violation(v));
    }

    /// Fails everything pending, then queues the one `Closed` event.
    fn close_with(&mut self, reason: CloseReason) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        let init_id = match &self.phase {
            Phase::AwaitingInitResult { init, .. } => Some(init.clone()),
            _ => None,
        };
        self.phase = Phase::Closed;
        self.drop_held_ready();
        if let Transport::Http(http) = &mut self.transport {
            // What was queued before the close still goes out, then the streams are dropped.
            while let Some(out) = self.endpoint.poll_outgoing() {
                http.send(out, &self.tool_outputs.marks);
            }
            http.close();
        }
        for (id, _) in self.endpoint.drain_outstanding() {
            if Some(&id) != init_id.as_ref() {
                let result = Err(RequestError::Closed(reason.clone()));
                self.events.push_back(Event::Response { id, result });
            }
        }
        self.endpoint.inbound.drain();
        self.close_rounds(&reason);
        self.events.push_back(Event::Closed(reason));
    }
}

fn parse_note<T: serde::de::DeserializeOwned>(n: &Notification) -> Result<T, String> {
    parse_params(n.params.as_ref())
}
