//! Streamable HTTP, client side
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http>):
//! one POST per message, JSON or SSE answers,
//! the session and protocol-version headers, the standalone GET stream, resumption with
//! `Last-Event-ID`, session expiry, and DELETE on close.
//!
//! ```text
//!  POST ──head──▶ JSON body ──end──▶ frames; requests still owed fail (StreamLost)
//!    │       └──▶ SSE stream ──end/broken, owes a response──▶ event id seen, attempts left?
//!    │                 ▲                                        yes │            no │
//!    │                 └──── GET Last-Event-ID ◀── wait `retry` ◀───┘   fail owed ◀─┘
//!    └──404 with our session id──▶ session expired: abort every stream, tell the machine
//! ```
//!
//! SSE streams are keyed by the stream id of the exchange that opened them (a POST, or the
//! first standalone GET) and outlive their connections: the decoder, and with it the last
//! event id, carries over from one connection to the next.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, WWW_AUTHENTICATE};
use http::{HeaderMap, Method, StatusCode};

use self::park::wants_auth;
use super::modern::{self, ParamMarks};
use super::{
    media, read_sse, www_authenticate, Common, HttpClientConfig, Media, PlannerEvent, SseOut,
};
use crate::auth::BearerChallenge;
use crate::error::{ProtocolViolation, RequestError};
use crate::framing::sse::SseDecoder;
use crate::io::{HttpRequest, ResponseHead, StreamEvent, StreamId, Transmit, TransportFailure};
use crate::jsonrpc::{Message, RequestId, Response};
use crate::rpc::{Incoming, Outgoing, OutgoingKind};
use crate::schema::ProtocolVersion;

mod park;

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// How many delivered response ids are remembered for dropping replays.
const DELIVERED_MEMORY: usize = 4096;

#[derive(Debug)]
pub(super) struct Streamable {
    pub(super) common: Common,
    /// Open the standalone GET stream with `notifications/initialized`; turned off for good
    /// by a 405.
    want_get: bool,
    /// The session's first GET stream is opening: messages wait in `held` until it has its
    /// head (or fails), so that nothing the server sends on it in answer to them is lost.
    opening_get: bool,
    /// Messages sent while `opening_get` or `auth_hold`, in order, each with the argument
    /// marks of 2026-07-28 tools (empty in the session era).
    held: VecDeque<(Outgoing, ParamMarks)>,
    max_resume_attempts: u32,
    default_retry: Duration,
    max_retry: Duration,
    /// Auto mode, until the first `initialize` is accepted: 400, 404 or 405 to it means legacy.
    detecting: bool,
    /// The `initialize` sent while detecting, to send again over legacy HTTP+SSE.
    init: Option<Outgoing>,
    /// Set when detection chose legacy HTTP+SSE: the `initialize` to send there.
    fallback: Option<Outgoing>,
    session: Option<HeaderValue>,
    /// Counts sessions, so that a 404 is pinned on the session whose id it carried.
    generation: u64,
    version: Option<HeaderValue>,
    exchanges: HashMap<StreamId, Exchange>,
    sse: HashMap<StreamId, SseStream>,
    /// Our requests awaiting a response, each with the key of the stream that owes it (its
    /// POST's stream id).
    owed: HashMap<RequestId, StreamId>,
    delivered: Delivered,
    /// The key of the standalone GET stream, while there is one.
    get: Option<StreamId>,
    /// `notifications/initialized` went out in this session: from then on, any POST the
    /// server accepts while there is no GET stream (its POST was lost, or the stream was
    /// given up after its reconnections ran out) opens one.
    initialized_sent: bool,
    closed: bool,
    /// 2026-07-28: no session, and every POST carries `modern::headers`.
    modern: bool,
    /// Requests the server refused for want of authorization, to replay once it is done.
    parked: Vec<Parked>,
    /// An authorization flow runs: sends wait in `held`.
    auth_hold: bool,
    /// A POST was accepted since the flow last heard: its authorization count starts over.
    accepted: bool,
}

/// A POST refused with an authorization challenge.
#[derive(Debug)]
pub(super) struct Parked {
    request: Option<RequestId>,
    initialize: bool,
    replay: Box<HttpRequest>,
    pub(super) status: StatusCode,
    pub(super) challenge: Option<BearerChallenge>,
    /// The `DPoP-Nonce` the refusal named.
    pub(super) dpop_nonce: Option<String>,
    /// Whether the flow was told about it.
    pub(super) reported: bool,
}

impl Parked {
    /// The token the refused request carried.
    pub(super) fn sent_token(&self) -> Option<&str> {
        let value = self.replay.headers.get(AUTHORIZATION)?.to_str().ok()?;
        value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("DPoP "))
    }
}

/// One HTTP exchange in progress.
#[derive(Debug)]
struct Exchange {
    role: Role,
    /// The session generation whose id this request carried.
    session: Option<u64>,
    body: Body,
    /// A 2026-07-28 refusal read for its JSON-RPC error: the status, should the body hold
    /// no answer to the request.
    refused: Option<StatusCode>,
    /// The request as sent, kept while OAuth may need to replay it.
    replay: Option<Box<HttpRequest>>,
}

#[derive(Debug)]
enum Role {
    /// A GET carrying the SSE stream keyed `sse`: the standalone stream, or a POST's answer
    /// being resumed.
    Get {
        sse: StreamId,
    },
    Post {
        request: Option<RequestId>,
        initialize: bool,
    },
}

/// What to do with the body.
#[derive(Debug)]
enum Body {
    /// No head yet.
    Head,
    Ignore,
    Json(Vec<u8>),
    /// Feed the SSE stream with this key.
    Sse(StreamId),
}

/// One logical SSE stream, across its connections.
#[derive(Debug)]
struct SseStream {
    decoder: SseDecoder,
    retry: Duration,
    /// Reconnections in a row without progress.
    attempts: u32,
    standalone: bool,
    /// When to reconnect, while disconnected.
    reconnect_at: Option<Instant>,
}

/// Response ids already handed to the machine, oldest first, bounded.
#[derive(Debug, Default)]
struct Delivered {
    ids: HashSet<RequestId>,
    order: VecDeque<RequestId>,
}

impl Streamable {
    pub(super) fn new(common: Common, config: &HttpClientConfig, detecting: bool) -> Self {
        Self {
            common,
            want_get: config.open_get_stream,
            opening_get: false,
            held: VecDeque::new(),
            max_resume_attempts: config.max_resume_attempts,
            default_retry: config.default_retry,
            max_retry: config.max_retry,
            detecting,
            init: None,
            fallback: None,
            session: None,
            generation: 0,
            version: None,
            exchanges: HashMap::new(),
            sse: HashMap::new(),
            owed: HashMap::new(),
            delivered: Delivered::default(),
            get: None,
            initialized_sent: false,
            closed: false,
            modern: false,
            parked: Vec::new(),
            auth_hold: false,
            accepted: false,
        }
    }

    /// POSTs one message. `initialize` goes without session id and protocol version.
    /// `notifications/initialized` opens the standalone GET stream beside it; what is sent
    /// after it waits until that stream has its head, since a server may ask on it (an
    /// elicitation during a tool call) and drop what it cannot deliver there.
    pub(super) fn send(&mut self, out: Outgoing, marks: &ParamMarks) {
        if self.closed {
            return;
        }
        if self.opening_get || self.auth_hold {
            let marks = if self.modern { marks.clone() } else { ParamMarks::new() };
            self.held.push_back((out, marks));
            return;
        }
        if self.modern {
            return self.send_modern(out, marks);
        }
        let (request, initialize, initialized) = match &out.kind {
            OutgoingKind::Request { id, method } => {
                (Some(id.clone()), method == "initialize", false)
            }
            OutgoingKind::Notification { method } => {
                (None, false, method == "notifications/initialized")
            }
            _ => (None, false, false),
        };
        let (extra, session) =
            if initialize { (HeaderMap::new(), None) } else { self.session_headers() };
        if initialize && self.detecting {
            self.init = Some(out.clone());
        }
        let stream = self.common.post(self.common.url.clone(), extra, out.json);
        if let Some(id) = &request {
            self.owed.insert(id.clone(), stream);
        }
        self.initialized_sent |= initialized;
        let role = Role::Post { request, initialize };
        let replay = self.common.kept.take();
        let ex = Exchange { role, session, body: Body::Head, refused: None, replay };
        self.exchanges.insert(stream, ex);
        if initialized && self.want_get && self.get.is_none() && self.session.is_some() {
            self.get = Some(self.connect_new(true));
            self.opening_get = true;
        }
    }

    /// A 2026-07-28 POST: no session, the headers that say what it holds.
    fn send_modern(&mut self, out: Outgoing, marks: &ParamMarks) {
        let request = match &out.kind {
            OutgoingKind::Request { id, .. } => Some(id.clone()),
            // 2026-07-28 over HTTP cancels by closing the request's stream (`forget`); the
            // server expects no notification.
            OutgoingKind::Notification { method } if method == "notifications/cancelled" => {
                return;
            }
            _ => None,
        };
        let extra = modern::headers(&out, marks);
        let stream = self.common.post(self.common.url.clone(), extra, out.json);
        if let Some(id) = &request {
            self.owed.insert(id.clone(), stream);
        }
        let role = Role::Post { request, initialize: false };
        let replay = self.common.kept.take();
        let ex = Exchange { role, session: None, body: Body::Head, refused: None, replay };
        self.exchanges.insert(stream, ex);
    }

    pub(super) fn set_modern(&mut self, on: bool) {
        self.modern = on;
    }

    /// The first GET stream of the session has its answer (or failed): send what waited.
    fn get_settled(&mut self) {
        if std::mem::replace(&mut self.opening_get, false) && !self.auth_hold {
            while let Some((out, marks)) = self.held.pop_front() {
                self.send(out, &marks);
            }
        }
    }

    pub(super) fn receive(
        &mut self,
        now: Instant,
        stream: StreamId,
        event: StreamEvent<'_>,
        up: &mut Vec<PlannerEvent>,
    ) {
        if self.closed {
            return;
        }
        match event {
            StreamEvent::Head(head) => self.on_head(now, stream, *head, up),
            StreamEvent::Data(bytes) => self.on_data(stream, bytes, up),
            StreamEvent::End => self.on_end(now, stream, None, up),
            StreamEvent::Failed(why) => self.on_end(now, stream, Some(why), up),
            StreamEvent::Accept(_) => {}
        }
    }

    /// Reconnects every SSE stream whose wait is over.
    pub(super) fn handle_timeout(&mut self, now: Instant) {
        let mut due: Vec<StreamId> = (self.sse.iter())
            .filter(|(_, s)| s.reconnect_at.is_some_and(|at| at <= now))
            .map(|(key, _)| *key)
            .collect();
        due.sort();
        for key in due {
            self.connect(key);
        }
    }

    /// Stops owing `id`'s response: a stream waiting to reconnect only for it is dropped. A
    /// connection still open stays (what else arrives on it is still delivered); the response,
    /// if it comes, reaches the machine, which drops it as abandoned. In 2026-07-28 the
    /// request's exchange is aborted instead: that is how the server learns of a
    /// cancellation.
    pub(super) fn forget(&mut self, id: &RequestId) {
        let Some(key) = self.owed.remove(id) else { return };
        if self.modern {
            // 2026-07-28: closing the request's stream is what cancels it at the server.
            if self.exchanges.remove(&key).is_some() {
                self.common.transmits.push_back(Transmit::Abort { stream: key });
            }
            self.sse.remove(&key);
            return;
        }
        let waiting = self.sse.get(&key).is_some_and(|s| s.reconnect_at.is_some());
        if waiting && !self.owed.values().any(|k| *k == key) {
            self.sse.remove(&key);
        }
    }

    pub(super) fn set_protocol_version(&mut self, version: ProtocolVersion) {
        self.version = Some(HeaderValue::from_static(version.as_str()));
    }

    /// Aborts every exchange still owed something (POSTs of notifications and replies are left
    /// to finish), then DELETEs the session if there is one.
    pub(super) fn close(&mut self) {
        if std::mem::replace(&mut self.closed, true) {
            return;
        }
        let mut aborts: Vec<StreamId> = (self.exchanges.drain())
            .filter(|(_, ex)| !matches!(ex.role, Role::Post { request: None, .. }))
            .map(|(stream, _)| stream)
            .collect();
        aborts.sort();
        (self.common.transmits).extend(aborts.into_iter().map(|stream| Transmit::Abort { stream }));
        self.sse.clear();
        self.owed.clear();
        self.held.clear();
        self.parked.clear();
        self.auth_hold = false;
        self.opening_get = false;
        if self.session.is_some() {
            let (extra, _) = self.session_headers();
            let url = self.common.url.clone();
            self.common.open(Method::DELETE, url, extra, Bytes::new());
        }
    }

    pub(super) fn poll_timeout(&self) -> Option<Instant> {
        self.sse.values().filter_map(|s| s.reconnect_at).min()
    }

    /// Once detection chose legacy HTTP+SSE: what the legacy client needs to take over.
    pub(super) fn take_fallback(&mut self) -> Option<(Common, Outgoing)> {
        let init = self.fallback.take()?;
        Some((self.common.take(), init))
    }

    /// The session id and protocol version fields, and the generation they belong to.
    fn session_headers(&self) -> (HeaderMap, Option<u64>) {
        let mut extra = HeaderMap::new();
        if let Some(version) = &self.version {
            extra.insert(PROTOCOL_VERSION, version.clone());
        }
        let session = self.session.as_ref().map(|id| {
            extra.insert(SESSION_ID, id.clone());
            self.generation
        });
        (extra, session)
    }

    fn on_head(
        &mut self,
        now: Instant,
        stream: StreamId,
        head: ResponseHead,
        up: &mut Vec<PlannerEvent>,
    ) {
        let Some(mut ex) = self.exchanges.remove(&stream) else { return };
        let status = head.status;
        if status == StatusCode::NOT_FOUND
            && self.session.is_some()
            && ex.session == Some(self.generation)
        {
            return self.expire(up);
        }
        match &ex.role {
            Role::Get { sse } => {
                let sse = *sse;
                if self.get == Some(sse) {
                    self.get_settled();
                }
                if !status.is_success() || media(&head.headers) != Media::EventStream {
                    return self.get_refused(now, sse, &head, up);
                }
                ex.body = Body::Sse(sse);
            }
            Role::Post { request, initialize } => {
                if status.is_success() {
                    ex.replay = None;
                    self.accepted = true;
                }
                if let Some(replay) = ex.replay.take().filter(|_| wants_auth(&head)) {
                    let challenge = BearerChallenge::find(
                        head.headers
                            .get_all(WWW_AUTHENTICATE)
                            .iter()
                            .filter_map(|v| v.to_str().ok()),
                    );
                    self.auth_hold = true;
                    self.parked.push(Parked {
                        request: request.clone(),
                        initialize: *initialize,
                        replay,
                        status,
                        challenge,
                        dpop_nonce: (head.headers.get("dpop-nonce"))
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned),
                        reported: false,
                    });
                    return;
                }
                // 2026-07-28 refuses a request with 400 or 404 and a JSON-RPC error that says
                // why (an unsupported revision and the supported list, a header mismatch):
                // the error is the request's answer.
                let answered_refusal = self.modern
                    && request.is_some()
                    && matches!(status, StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND)
                    && media(&head.headers) == Media::Json;
                if !status.is_success() && !answered_refusal {
                    let request = request.clone();
                    return self.post_refused(request, *initialize, &head, up);
                }
                if answered_refusal {
                    ex.refused = Some(status);
                }
                if *initialize {
                    self.detecting = false;
                    self.init = None;
                    self.take_session(&head.headers, up);
                }
                if self.initialized_sent && self.want_get && self.get.is_none() {
                    let sse = self.connect_new(true);
                    self.get = Some(sse);
                }
                ex.body = match (request, media(&head.headers)) {
                    (None, _) => Body::Ignore,
                    (Some(_), Media::Json) => Body::Json(Vec::new()),
                    (Some(_), Media::EventStream) => {
                        let sse = SseStream::new(self, false);
                        self.sse.insert(stream, sse);
                        Body::Sse(stream)
                    }
                    (Some(_), Media::Other(kind)) => {
                        up.push(PlannerEvent::Violation(ProtocolViolation::UnexpectedContentType(
                            kind,
                        )));
                        Body::Ignore
                    }
                };
            }
        }
        self.exchanges.insert(stream, ex);
    }

    /// A POST answered with an error status. The first `initialize` in Auto mode falls back
    /// to legacy on 400, 404 or 405; otherwise the request fails with the status.
    fn post_refused(
        &mut self,
        request: Option<RequestId>,
        initialize: bool,
        head: &ResponseHead,
        up: &mut Vec<PlannerEvent>,
    ) {
        let status = head.status.as_u16();
        if initialize && self.detecting && matches!(status, 400 | 404 | 405) {
            if let Some(id) = &request {
                self.owed.remove(id);
            }
            // Anything else in flight (only `ping` may be, before the handshake) is not carried
            // over to the legacy transport.
            let mut rest: Vec<RequestId> = self.owed.drain().map(|(id, _)| id).collect();
            rest.sort();
            for id in rest {
                up.push(PlannerEvent::Failed { id, error: RequestError::StreamLost });
            }
            self.fallback = self.init.take();
            return;
        }
        match request {
            Some(id) => {
                self.owed.remove(&id);
                let www_authenticate = www_authenticate(&head.headers);
                let error = RequestError::HttpStatus { status: head.status, www_authenticate };
                up.push(PlannerEvent::Failed { id, error });
            }
            None => up.push(PlannerEvent::Violation(ProtocolViolation::HttpStatus {
                method: Method::POST,
                status: head.status,
            })),
        }
    }

    /// A GET for an SSE stream answered with an error or no event stream. 405: the server has
    /// no GET, so the stream cannot go on; anything else counts as a failed attempt.
    fn get_refused(
        &mut self,
        now: Instant,
        sse: StreamId,
        head: &ResponseHead,
        up: &mut Vec<PlannerEvent>,
    ) {
        let standalone = self.sse.get(&sse).is_some_and(|s| s.standalone);
        if head.status == StatusCode::METHOD_NOT_ALLOWED {
            self.sse.remove(&sse);
            if standalone {
                self.want_get = false;
                self.get = None;
            } else {
                self.fail_owed(sse, &RequestError::StreamLost, up);
            }
            return;
        }
        if !head.status.is_success() {
            let method = Method::GET;
            up.push(PlannerEvent::Violation(ProtocolViolation::HttpStatus {
                method,
                status: head.status,
            }));
        } else if let Media::Other(kind) = media(&head.headers) {
            up.push(PlannerEvent::Violation(ProtocolViolation::UnexpectedContentType(kind)));
        }
        self.disconnected(now, sse, None, up);
    }

    fn take_session(&mut self, headers: &HeaderMap, up: &mut Vec<PlannerEvent>) {
        self.session = None;
        let Some(id) = headers.get(SESSION_ID) else { return };
        if !id.is_empty() && id.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b)) {
            self.session = Some(id.clone());
        } else {
            up.push(PlannerEvent::Violation(ProtocolViolation::InvalidSessionId));
        }
    }

    fn on_data(&mut self, stream: StreamId, bytes: &[u8], up: &mut Vec<PlannerEvent>) {
        let Some(ex) = self.exchanges.get_mut(&stream) else { return };
        match &mut ex.body {
            Body::Json(buf) if buf.len() + bytes.len() > self.common.max_message => {
                self.exchanges.remove(&stream);
                self.common.transmits.push_back(Transmit::Abort { stream });
                let error = RequestError::TooLarge { limit: self.common.max_message };
                self.fail_owed(stream, &error, up);
            }
            Body::Json(buf) => buf.extend_from_slice(bytes),
            Body::Sse(key) => {
                let key = *key;
                self.on_sse_data(stream, key, bytes, up);
            }
            Body::Head | Body::Ignore => {}
        }
    }

    fn on_sse_data(
        &mut self,
        stream: StreamId,
        key: StreamId,
        bytes: &[u8],
        up: &mut Vec<PlannerEvent>,
    ) {
        let Some(s) = self.sse.get_mut(&key) else { return };
        // Progress on a resumed connection (a new event id, or a message) restarts the count.
        let before = (s.attempts > 0).then(|| s.decoder.last_event_id().map(str::to_owned));
        let items = read_sse(&mut s.decoder, bytes);
        let mut frames = Vec::new();
        for item in items {
            match item {
                SseOut::Frame(incoming) => frames.push(incoming),
                SseOut::Retry(delay) => s.retry = delay.min(self.max_retry),
                SseOut::Violation(v) => up.push(PlannerEvent::Violation(ProtocolViolation::Sse(v))),
                SseOut::Endpoint(_) => {}
            }
        }
        if before.is_some_and(|b| !frames.is_empty() || b.as_deref() != s.decoder.last_event_id()) {
            s.attempts = 0;
        }
        for incoming in frames {
            self.deliver(stream, incoming, up);
        }
    }

    fn on_end(
        &mut self,
        now: Instant,
        stream: StreamId,
        failure: Option<TransportFailure>,
        up: &mut Vec<PlannerEvent>,
    ) {
        let Some(ex) = self.exchanges.remove(&stream) else { return };
        match (ex.body, ex.role) {
            (Body::Sse(key), _) => {
                if let Some(s) = self.sse.get_mut(&key) {
                    s.decoder.finish();
                }
                self.disconnected(now, key, failure, up);
            }
            (Body::Head, Role::Get { sse }) => {
                if self.get == Some(sse) {
                    self.get_settled();
                }
                self.disconnected(now, sse, failure, up);
            }
            (Body::Head, Role::Post { .. }) => {
                let why = failure.unwrap_or_else(|| {
                    TransportFailure::Other("the exchange ended before a response head".into())
                });
                self.fail_owed(stream, &RequestError::Transport(why), up);
            }
            (Body::Json(buf), _) => {
                let error = match failure {
                    Some(why) => RequestError::Transport(why),
                    None => {
                        // An empty body carries no message: a router answers so when the
                        // POST's only request was cancelled.
                        if !buf.iter().all(u8::is_ascii_whitespace) {
                            self.deliver(stream, Incoming::decode(&buf), up);
                        }
                        match ex.refused {
                            // A refusal whose body answers nothing (a proxy's page): its
                            // status is what is known.
                            Some(status) => {
                                RequestError::HttpStatus { status, www_authenticate: None }
                            }
                            None => RequestError::StreamLost,
                        }
                    }
                };
                self.fail_owed(stream, &error, up);
            }
            (Body::Ignore, _) => self.fail_owed(stream, &RequestError::StreamLost, up),
        }
    }

    /// The connection of SSE stream `key` is gone: reconnect after `retry` if the stream is
    /// wanted and resumable, else fail what it owes.
    fn disconnected(
        &mut self,
        now: Instant,
        key: StreamId,
        failure: Option<TransportFailure>,
        up: &mut Vec<PlannerEvent>,
    ) {
        let owes = self.owed.values().any(|k| *k == key);
        let Some(s) = self.sse.get_mut(&key) else { return };
        let resumable = s.standalone || s.decoder.last_event_id().is_some();
        if (s.standalone || owes) && resumable && s.attempts < self.max_resume_attempts {
            s.reconnect_at = Some(now + s.retry);
            return;
        }
        let seen_id = s.decoder.last_event_id().is_some();
        self.sse.remove(&key);
        if self.get == Some(key) {
            self.get = None;
        }
        let error = match failure {
            Some(why) if !seen_id => RequestError::Transport(why),
            _ => RequestError::StreamLost,
        };
        self.fail_owed(key, &error, up);
    }

    /// Opens a new SSE stream with a GET; returns its key.
    fn connect_new(&mut self, standalone: bool) -> StreamId {
        let (stream, session) = self.get_exchange(None);
        let sse = SseStream::new(self, standalone);
        self.sse.insert(stream, sse);
        self.exchanges.insert(
            stream,
            Exchange {
                role: Role::Get { sse: stream },
                session,
                body: Body::Head,
                refused: None,
                replay: None,
            },
        );
        stream
    }

    /// Reconnects SSE stream `key`, from its last event id.
    fn connect(&mut self, key: StreamId) {
        let Some(s) = self.sse.get_mut(&key) else { return };
        s.attempts += 1;
        s.reconnect_at = None;
        let last = s.decoder.last_event_id().map(str::to_owned);
        let (stream, session) = self.get_exchange(last.as_deref());
        self.exchanges.insert(
            stream,
            Exchange {
                role: Role::Get { sse: key },
                session,
                body: Body::Head,
                refused: None,
                replay: None,
            },
        );
    }

    fn get_exchange(&mut self, last_event_id: Option<&str>) -> (StreamId, Option<u64>) {
        let (mut extra, session) = self.session_headers();
        extra.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        // An id a header cannot carry (a control character) cannot be resumed from.
        if let Some(value) =
            last_event_id.and_then(|id| HeaderValue::from_bytes(id.as_bytes()).ok())
        {
            extra.insert(LAST_EVENT_ID, value);
        }
        let url = self.common.url.clone();
        (self.common.open(Method::GET, url, extra, Bytes::new()), session)
    }

    /// Hands a frame to the machine, minus responses already delivered (a replay).
    fn deliver(&mut self, stream: StreamId, incoming: Incoming, up: &mut Vec<PlannerEvent>) {
        let incoming = match incoming {
            Incoming::Message(Message::Response(Response { id: Some(id), outcome })) => {
                if !self.settle(&id) {
                    return;
                }
                Incoming::Message(Message::Response(Response { id: Some(id), outcome }))
            }
            Incoming::Batch(items) => {
                let items: Vec<_> = (items.into_iter())
                    .filter(|item| match item {
                        Ok(Message::Response(Response { id: Some(id), .. })) => self.settle(id),
                        _ => true,
                    })
                    .collect();
                if items.is_empty() {
                    return;
                }
                Incoming::Batch(items)
            }
            other => other,
        };
        up.push(PlannerEvent::Frame { stream, incoming });
    }

    /// A response for `id` arrived: false if it is a replay of one already delivered. One we
    /// no longer owe (abandoned by the machine, or never ours) goes through once too, for the
    /// machine to drop or report.
    fn settle(&mut self, id: &RequestId) -> bool {
        let first = self.owed.remove(id).is_some() || !self.delivered.ids.contains(id);
        if first {
            self.delivered.remember(id);
        }
        first
    }

    /// Fails every request the stream keyed `key` still owes, in id order.
    fn fail_owed(&mut self, key: StreamId, error: &RequestError, up: &mut Vec<PlannerEvent>) {
        let mut ids: Vec<RequestId> =
            self.owed.iter().filter(|(_, k)| **k == key).map(|(id, _)| id.clone()).collect();
        ids.sort();
        for id in ids {
            self.owed.remove(&id);
            up.push(PlannerEvent::Failed { id, error: error.clone() });
        }
    }

    /// The server ended the session: drop every stream of it and tell the machine, which fails
    /// what was in flight and (if configured) starts over.
    fn expire(&mut self, up: &mut Vec<PlannerEvent>) {
        self.generation += 1;
        self.session = None;
        self.version = None;
        let mut aborts: Vec<StreamId> = self.exchanges.drain().map(|(s, _)| s).collect();
        aborts.sort();
        (self.common.transmits).extend(aborts.into_iter().map(|stream| Transmit::Abort { stream }));
        self.sse.clear();
        self.owed.clear();
        self.get = None;
        self.initialized_sent = false;
        self.held.clear();
        self.parked.clear();
        self.auth_hold = false;
        self.opening_get = false;
        up.push(PlannerEvent::SessionExpired);
    }
}

impl SseStream {
    fn new(owner: &Streamable, standalone: bool) -> Self {
        Self {
            decoder: SseDecoder::new(owner.common.max_message),
            retry: owner.default_retry,
            attempts: 0,
            standalone,
            reconnect_at: None,
        }
    }
}

impl Delivered {
    fn remember(&mut self, id: &RequestId) {
        if self.order.len() == DELIVERED_MEMORY {
            if let Some(old) = self.order.pop_front() {
                self.ids.remove(&old);
            }
        }
        if self.ids.insert(id.clone()) {
            self.order.push_back(id.clone());
        }
    }
}
