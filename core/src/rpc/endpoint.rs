//! The plumbing both roles share: decoded messages in, routed messages out, the two request
//! tables, deadlines. No framing: transport adapters (`crate::transport`) turn bytes into
//! frames and [`Outgoing`] messages into bytes.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::inbound::{Finished, Inbound, InboundEntry};
use super::outstanding::{Completion, Outstanding, Pending};
use super::route::{Outgoing, OutgoingKind, Route};
use super::RequestOptions;
use crate::error::{ProtocolViolation, Rejection, UsageError};
use crate::framing::lines::LineViolation;
use crate::framing::KEPT_BUFFER_MAX;
use crate::io::StreamId;
use crate::jsonrpc::{
    self, DecodeError, ErrorObject, Frame, Message, Notification, PeekKind, RawJson, Request,
    RequestId,
};
use crate::runtime::WriteQueue;
use crate::schema::{CancelledParams, ProgressParams, ProtocolVersion};
use crate::transport::TransportKind;

/// Limits and defaults every endpoint applies.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// Most of our requests sent and unanswered; more wait in the endpoint (see `held`).
    pub(crate) max_in_flight: usize,
    pub(crate) request_timeout: Duration,
    pub(crate) max_request_timeout: Duration,
}

/// One decoded frame, or why there was none.
#[derive(Debug)]
pub(crate) enum Incoming {
    Batch(Vec<Result<Message, DecodeError>>),
    Invalid(DecodeError),
    Line(LineViolation),
    Message(Message),
}

/// What a message meant after the role-independent checks.
#[derive(Debug)]
pub(crate) enum Routed {
    /// A new request from the peer; not yet registered in the inbound table.
    Request(Request),
    /// A notification other than progress and cancellation.
    Notification(Notification),
    /// The response to one of our pending requests.
    Response { id: RequestId, outcome: Result<RawJson, ErrorObject> },
    /// Progress on one of our pending requests.
    Progress { id: RequestId, params: ProgressParams },
    /// The peer cancelled one of its requests that we had not answered.
    PeerCancelled { id: RequestId },
    /// Something the peer should not have sent; already answered if it needed an answer.
    Violation(ProtocolViolation),
    /// Nothing for the role to do (a late response, an unknown cancellation).
    Nothing,
}

#[derive(Debug)]
pub(crate) struct Endpoint {
    /// The stream the input being handled arrived on: requests read from it are recorded
    /// against it, and errors for what could not be read go back on it.
    receiving: StreamId,
    pub(crate) outstanding: Outstanding,
    pub(crate) inbound: Inbound,
    pub(crate) limits: Limits,
    outgoing: VecDeque<Outgoing>,
    /// Our requests made while `max_in_flight` were already sent and unanswered, in order:
    /// each has its id and deadline (its timeout counts from the call) and is sent when one
    /// of those ends. Every entry is still in `outstanding`; taking one out of `outstanding`
    /// takes it out of here (never sent, so never cancelled on the wire).
    held: VecDeque<Outgoing>,
    batches: Vec<BatchGroup>,
    /// The batch whose elements are being handled right now: replies without an id go there.
    filling: Option<usize>,
    /// A written frame's buffer handed back by the runtime ([`Self::recycle`]), encoded into
    /// next when it is large enough.
    spare: Vec<u8>,
}

/// Replies to one inbound batch, held until every request in it is answered (JSON-RPC 2.0:
/// a batch is answered with one array).
#[derive(Debug)]
struct BatchGroup {
    stream: StreamId,
    first: Option<RequestId>,
    waiting: Vec<RequestId>,
    replies: Vec<Message>,
    sealed: bool,
}

impl Endpoint {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            receiving: StreamId::STDIO,
            outstanding: Outstanding::default(),
            inbound: Inbound::default(),
            limits,
            outgoing: VecDeque::new(),
            held: VecDeque::new(),
            batches: Vec::new(),
            filling: None,
            spare: Vec::new(),
        }
    }

    /// Takes back the buffer of a frame the runtime has written, to encode a later large
    /// message into. Only buffers of at least [`RECYCLED_MIN`] bytes are kept, and only the
    /// largest: the room one message needed is reused instead of freed and faulted in again
    /// (with glibc, freeing a MiB-sized frame after each call handed the heap top back to the
    /// OS every time).
    pub(crate) fn recycle(&mut self, mut buf: Vec<u8>) {
        let capacity = buf.capacity();
        if capacity >= RECYCLED_MIN
            && capacity > self.spare.capacity()
            && capacity <= KEPT_BUFFER_MAX
        {
            buf.clear();
            self.spare = buf;
        }
    }

    /// A buffer for an encoding of about `hint` bytes: the recycled one if it has room and
    /// the frame is large enough to come back from the writer (see [`RECYCLED_MIN`]).
    fn buffer(&mut self, hint: usize) -> Vec<u8> {
        if hint >= RECYCLED_MIN && self.spare.capacity() >= hint {
            std::mem::take(&mut self.spare)
        } else {
            Vec::with_capacity(hint)
        }
    }

    /// Frees the room the queues and tables kept from a busier moment, where they are empty
    /// (a queue of a few replies holds several hundred bytes; an idle HTTP session should
    /// hold only its state). The next message allocates again.
    pub(crate) fn release_idle_capacity(&mut self) {
        for queue in [&mut self.outgoing, &mut self.held] {
            if queue.is_empty() {
                queue.shrink_to_fit();
            }
        }
        if self.batches.is_empty() {
            self.batches.shrink_to_fit();
        }
        self.inbound.release_idle_capacity();
        self.outstanding.release_idle_capacity();
        self.spare = Vec::new();
    }

    /// The room the queues and tables hold now, in entries (for tests of the release).
    #[cfg(test)]
    pub(crate) fn idle_capacity(&self) -> usize {
        let tables = self.inbound.capacity() + self.outstanding.capacity();
        self.outgoing.capacity() + self.held.capacity() + self.batches.capacity() + tables
    }

    /// Names the stream the next messages arrived on (see `receiving`).
    pub(crate) fn receiving_on(&mut self, stream: StreamId) {
        self.receiving = stream;
    }

    /// The stream the input being handled arrived on.
    pub(crate) fn receiving(&self) -> StreamId {
        self.receiving
    }

    /// The role-independent part of handling one message that arrived on the stream named by
    /// [`receiving_on`](Self::receiving_on).
    pub(crate) fn classify(&mut self, now: Instant, message: Message) -> Routed {
        match message {
            Message::Request(r) => {
                if self.inbound_is_active(&r.id) {
                    self.reject(Some(r.id.clone()), &Rejection::DuplicateRequestId);
                    return Routed::Violation(ProtocolViolation::DuplicateRequestId(r.id));
                }
                Routed::Request(r)
            }
            Message::Response(r) => {
                let Some(id) = r.id else {
                    return Routed::Violation(ProtocolViolation::UnknownResponseId(None));
                };
                match self.outstanding.complete(&id) {
                    Completion::Pending => {
                        self.release_held();
                        Routed::Response { id, outcome: r.outcome }
                    }
                    Completion::Abandoned => Routed::Nothing,
                    Completion::Unknown => {
                        Routed::Violation(ProtocolViolation::UnknownResponseId(Some(id)))
                    }
                }
            }
            Message::Notification(n) => match n.method.as_str() {
                "notifications/progress" => self.route_progress(now, n),
                "notifications/cancelled" => {
                    // Malformed or unknown cancellations are ignored
                    // (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation).
                    let Ok(params) = parse_params::<CancelledParams>(n.params.as_ref()) else {
                        return Routed::Nothing;
                    };
                    match params.request_id {
                        Some(id) if self.inbound.cancel(&id) => Routed::PeerCancelled { id },
                        _ => Routed::Nothing,
                    }
                }
                _ => Routed::Notification(n),
            },
        }
    }

    /// Handles what the first bytes of a stdio line over the limit say, on the stream named by
    /// [`receiving_on`](Self::receiving_on); the caller reports the violation.
    ///
    /// A request whose id is readable is answered with [`Rejection::MessageTooLarge`] so the
    /// peer does not wait for it. Otherwise, a readable id of one of our pending requests is
    /// taken out of the table and returned: the caller fails that request at once. Nothing
    /// happens when the id is not in `head` (it comes after a large member, or the head is
    /// cut inside it): the request the line was, or answered, then times out.
    pub(crate) fn too_long(&mut self, head: &[u8], limit: usize) -> Option<RequestId> {
        let peek = jsonrpc::peek(head);
        let id = peek.id?;
        if peek.kind == PeekKind::Request {
            if !self.inbound_is_active(&id) {
                self.reject(Some(id), &Rejection::MessageTooLarge { limit });
            }
            return None;
        }
        match self.outstanding.complete(&id) {
            Completion::Pending => {
                self.release_held();
                Some(id)
            }
            Completion::Abandoned | Completion::Unknown => None,
        }
    }

    fn route_progress(&mut self, now: Instant, n: Notification) -> Routed {
        let params = match parse_params::<ProgressParams>(n.params.as_ref()) {
            Ok(p) => p,
            Err(detail) => {
                return Routed::Violation(ProtocolViolation::InvalidNotification {
                    method: n.method,
                    detail,
                })
            }
        };
        // Our progress tokens are the request ids themselves.
        let id = params.progress_token.clone();
        if self.outstanding.on_progress(now, &id) {
            Routed::Progress { id, params }
        } else {
            Routed::Nothing
        }
    }

    fn inbound_is_active(&mut self, id: &RequestId) -> bool {
        self.inbound.get_mut(id).is_some()
    }

    /// Sends a request (related to the peer's request `related`, if given and unanswered); its
    /// outcome comes back through [`classify`](Self::classify) or
    /// [`expire`](Self::expire). Past `max_in_flight` unanswered requests it is held and sent
    /// when one of them ends (backpressure, not failure); past [`MAX_HELD_PER_SLOT`] times
    /// that many waiting it is refused with [`UsageError::TooManyInFlight`].
    pub(crate) fn request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<RawJson>,
        opts: &RequestOptions,
        cancellable: bool,
        related: Option<&RequestId>,
    ) -> Result<RequestId, UsageError> {
        let limit = self.limits.max_in_flight;
        if self.held.len() >= limit.saturating_mul(MAX_HELD_PER_SLOT) {
            return Err(UsageError::TooManyInFlight { limit });
        }
        if params.as_ref().is_some_and(|p| !p.is_object()) {
            return Err(UsageError::ParamsNotAnObject);
        }
        let timeout = opts.timeout.unwrap_or(self.limits.request_timeout);
        let max_total =
            opts.max_total.unwrap_or(self.limits.max_request_timeout).max(Duration::ZERO);
        let route = self.route_for(related);
        let id =
            self.outstanding.insert(now, timeout, max_total, opts.reset_on_progress, cancellable);
        let params = if opts.progress { Some(with_progress_token(params, &id)) } else { params };
        let kind = OutgoingKind::Request { id: id.clone(), method: method.to_owned() };
        let message =
            Message::Request(Request { id: id.clone(), method: method.to_owned(), params });
        if self.in_flight() > limit {
            let out = encode(route, kind, &message, self.buffer(message.size_hint() + 1));
            self.held.push_back(out);
        } else {
            self.push(route, kind, &message);
        }
        Ok(id)
    }

    /// Our requests sent and unanswered (not those held back).
    fn in_flight(&self) -> usize {
        self.outstanding.len() - self.held.len()
    }

    /// Sends held requests while there is room.
    fn release_held(&mut self) {
        while self.in_flight() < self.limits.max_in_flight {
            let Some(out) = self.held.pop_front() else { break };
            self.outgoing.push_back(out);
        }
    }

    /// Takes `id` out of the held queue; true if it was there (so it was never sent).
    fn unhold(&mut self, id: &RequestId) -> bool {
        let held = |o: &Outgoing| matches!(&o.kind, OutgoingKind::Request { id: h, .. } if h == id);
        match self.held.iter().position(held) {
            Some(at) => self.held.remove(at).is_some(),
            None => false,
        }
    }

    /// Gives up on our request `id` without telling the peer (its stream is gone, or it was
    /// never sent). `None` if it was not pending.
    pub(crate) fn forget(&mut self, id: &RequestId) -> Option<Pending> {
        let pending = self.outstanding.abandon(id)?;
        self.unhold(id);
        self.release_held();
        Some(pending)
    }

    /// Removes every pending request (sent or held), in id order, for the caller to fail.
    pub(crate) fn drain_outstanding(&mut self) -> Vec<(RequestId, Pending)> {
        self.held.clear();
        self.outstanding.drain()
    }

    /// Sends a notification, related to the peer's request `related` while that request is
    /// unanswered (standalone otherwise).
    pub(crate) fn notify(
        &mut self,
        method: &str,
        params: Option<RawJson>,
        related: Option<&RequestId>,
    ) {
        let route = self.route_for(related);
        let kind = OutgoingKind::Notification { method: method.to_owned() };
        let message = Message::Notification(Notification { method: method.to_owned(), params });
        self.push(route, kind, &message);
    }

    /// Takes the peer's request `id` out of the inbound table so it can be answered:
    /// `Some(entry)` to reply to, `None` when the peer cancelled it (send nothing), an error
    /// when it was never ours to answer.
    pub(crate) fn take_answerable(
        &mut self,
        id: &RequestId,
    ) -> Result<Option<InboundEntry>, UsageError> {
        match self.inbound.finish(id) {
            Finished::Active(entry) => Ok(Some(entry)),
            Finished::Cancelled => Ok(None),
            Finished::Unknown => Err(UsageError::UnknownRequest(id.clone())),
        }
    }

    /// Answers the peer's request `id`, which arrived on `stream`.
    pub(crate) fn reply(
        &mut self,
        stream: StreamId,
        id: RequestId,
        outcome: Result<RawJson, ErrorObject>,
    ) {
        self.send_reply(stream, Message::Response(jsonrpc::Response { id: Some(id), outcome }));
    }

    /// Answers what is being received with an error (a request refused before it was
    /// registered, or a message that could not be read).
    pub(crate) fn reject(&mut self, id: Option<RequestId>, rejection: &Rejection) {
        self.send_reply(self.receiving, Message::error(id, rejection.to_jsonrpc()));
    }

    /// [`reject`](Self::reject) with the code `version` gives the rejection (2026-07-28 has
    /// codes of its own).
    pub(crate) fn reject_in(
        &mut self,
        id: RequestId,
        rejection: &Rejection,
        version: ProtocolVersion,
    ) {
        let error = rejection.to_wire(version, TransportKind::Stdio).error;
        self.send_reply(self.receiving, Message::error(Some(id), error));
    }

    /// Where a message related to the peer's request `related` goes.
    fn route_for(&self, related: Option<&RequestId>) -> Route {
        match related.and_then(|id| self.inbound.stream_of(id).map(|s| (id, s))) {
            Some((id, stream)) => Route::Related { id: id.clone(), stream },
            None => Route::Standalone,
        }
    }

    /// Starts collecting the replies to a batch whose requests have these ids.
    pub(crate) fn open_batch(&mut self, ids: Vec<RequestId>) {
        self.batches.push(BatchGroup {
            stream: self.receiving,
            first: ids.first().cloned(),
            waiting: ids,
            replies: Vec::new(),
            sealed: false,
        });
        self.filling = Some(self.batches.len() - 1);
    }

    /// Every element of the open batch has been handled; replies still owed arrive later.
    pub(crate) fn seal_batch(&mut self) {
        if let Some(i) = self.filling.take() {
            self.batches[i].sealed = true;
            self.flush_batch(i);
        }
    }

    /// The peer cancelled `id`: no reply will come for it.
    pub(crate) fn forget_reply(&mut self, id: &RequestId) {
        if let Some(i) = self.batches.iter().position(|b| b.waiting.contains(id)) {
            self.batches[i].waiting.retain(|w| w != id);
            self.flush_batch(i);
        }
    }

    fn send_reply(&mut self, stream: StreamId, reply: Message) {
        let id = match &reply {
            Message::Response(r) => r.id.clone(),
            _ => None,
        };
        let group = match &id {
            Some(id) => self.batches.iter().position(|b| b.waiting.contains(id)),
            None => self.filling,
        };
        let Some(i) = group else {
            return self.push(Route::Reply { id, stream }, OutgoingKind::Reply, &reply);
        };
        if let Some(id) = &id {
            self.batches[i].waiting.retain(|w| w != id);
        }
        self.batches[i].replies.push(reply);
        self.flush_batch(i);
    }

    fn flush_batch(&mut self, i: usize) {
        let group = &self.batches[i];
        if !group.sealed || !group.waiting.is_empty() {
            return;
        }
        let group = self.batches.remove(i);
        if let Some(f) = self.filling.as_mut() {
            if *f > i {
                *f -= 1;
            }
        }
        // A batch of notifications only gets no reply at all, never an empty array.
        if group.replies.is_empty() {
            return;
        }
        let mut json = Vec::with_capacity(64 * group.replies.len());
        jsonrpc::encode_batch_into(&group.replies, &mut json);
        let route = Route::Reply { id: group.first, stream: group.stream };
        self.outgoing.push_back(Outgoing { route, json, kind: OutgoingKind::Reply });
    }

    /// Gives up on our request `id`: sends `notifications/cancelled` and remembers the id so
    /// its late response is dropped. `None` if it was not pending.
    pub(crate) fn abandon(&mut self, id: &RequestId, reason: &str) -> Option<Pending> {
        let pending = self.outstanding.abandon(id)?;
        if !self.unhold(id) && pending.cancellable {
            self.send_cancelled(id, reason);
        }
        self.release_held();
        Some(pending)
    }

    /// Abandons every request whose deadline passed.
    pub(crate) fn expire(&mut self, now: Instant) -> Vec<(RequestId, Pending)> {
        let due = self.outstanding.expire(now);
        for (id, pending) in &due {
            if !self.unhold(id) && pending.cancellable {
                self.send_cancelled(id, "request timed out");
            }
        }
        self.release_held();
        due
    }

    fn send_cancelled(&mut self, id: &RequestId, reason: &str) {
        let params = CancelledParams {
            request_id: Some(id.clone()),
            reason: Some(reason.to_owned()),
            ..CancelledParams::default()
        };
        self.notify("notifications/cancelled", Some(RawJson::from_serialize(&params)), None);
    }

    fn push(&mut self, route: Route, kind: OutgoingKind, message: &Message) {
        let out = encode(route, kind, message, self.buffer(message.size_hint() + 1));
        self.outgoing.push_back(out);
    }

    pub(crate) fn has_outgoing(&self) -> bool {
        !self.outgoing.is_empty()
    }

    /// The next message to send, in order.
    pub(crate) fn poll_outgoing(&mut self) -> Option<Outgoing> {
        self.outgoing.pop_front()
    }

    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        self.outstanding.next_deadline()
    }

    /// Moves every request's deadline `by` later.
    pub(crate) fn postpone(&mut self, by: Duration) {
        self.outstanding.postpone(by);
    }
}

/// How many requests may wait per slot of `max_in_flight` before new ones are refused: the
/// waiting ones hold their encoded params, so this bounds that memory too.
pub(crate) const MAX_HELD_PER_SLOT: usize = 64;

/// The smallest buffer kept for the next frame: a frame this large is written on its own
/// and comes back whole; smaller ones are joined into one write, and their buffers freed.
const RECYCLED_MIN: usize = WriteQueue::COALESCE_LIMIT;

/// Encodes `message` into `json` (empty, with room reserved by the caller).
fn encode(route: Route, kind: OutgoingKind, message: &Message, mut json: Vec<u8>) -> Outgoing {
    message.encode_into(&mut json);
    json.reserve_exact(1);
    Outgoing { route, json, kind }
}

impl Incoming {
    /// Decodes one whole frame (a stdio line, an HTTP body, an SSE event's data).
    pub(crate) fn decode(frame: &[u8]) -> Self {
        match jsonrpc::decode(frame) {
            Ok(Frame::Single(m)) => Self::Message(m),
            Ok(Frame::Batch(b)) => Self::Batch(b),
            Err(e) => Self::Invalid(e),
        }
    }
}

/// Parses params into a typed view; absent params read as `{}`.
pub(crate) fn parse_params<T: serde::de::DeserializeOwned>(
    params: Option<&RawJson>,
) -> Result<T, String> {
    match params {
        Some(p) => p.parse(),
        None => serde_json::from_str("{}").map_err(|e| e.to_string()),
    }
}

fn with_progress_token(params: Option<RawJson>, id: &RequestId) -> RawJson {
    let mut object = match params.as_ref().map(RawJson::to_value) {
        Some(Ok(Value::Object(map))) => map,
        // An object a `Value` cannot hold (a number beyond f64): sent as is, without a token.
        Some(_) => return params.unwrap_or_else(RawJson::empty_object),
        None => Map::new(),
    };
    let meta = object.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert("progressToken".into(), serde_json::to_value(id).unwrap_or(Value::Null));
    }
    RawJson::from_serialize(&Value::Object(object))
}
