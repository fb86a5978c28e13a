//! Legacy HTTP+SSE, client side (2024-11-05 servers;
//! <https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse>).
//!
//! ```text
//!  GET url ──SSE head──▶ AwaitingEndpoint ──event: endpoint, same origin──▶ Open(endpoint)
//!     │ error status             │ other origin / not a URI                 │ every message:
//!     ▼                          ▼                                          ▼ POST endpoint
//!  Closed(HttpStatus)   Closed(EndpointCrossOrigin / EndpointInvalid)   answers: event: message
//! ```
//!
//! Messages sent before the endpoint is known wait for it. The session ends with the GET
//! stream: legacy servers do not resume it.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;
use http::header::{HeaderValue, ACCEPT};
use http::{HeaderMap, Method, Uri};

use super::uri::{resolve_endpoint, Refusal};
use super::{media, read_sse, www_authenticate, Common, Media, PlannerEvent, SseOut};
use crate::error::{CloseReason, ProtocolViolation, RequestError};
use crate::framing::sse::SseDecoder;
use crate::io::{ResponseHead, StreamEvent, StreamId, Transmit, TransportFailure};
use crate::jsonrpc::RequestId;
use crate::rpc::{Outgoing, OutgoingKind};

#[derive(Debug)]
pub(super) struct Legacy {
    pub(super) common: Common,
    /// The GET stream everything arrives on.
    sse: StreamId,
    decoder: SseDecoder,
    phase: Phase,
    /// Messages waiting for the endpoint.
    queued: VecDeque<Outgoing>,
    /// POSTs awaiting their head, with the request each carries.
    posts: HashMap<StreamId, Option<RequestId>>,
    /// The session is over (the GET stream ended, an endpoint was refused, or `close`):
    /// nothing more is read or sent.
    done: bool,
    /// The GET stream has neither ended nor been aborted.
    sse_open: bool,
}

#[derive(Debug)]
enum Phase {
    AwaitingHead,
    AwaitingEndpoint,
    Open(Uri),
}

impl Legacy {
    /// Queues the GET of the SSE URL.
    pub(super) fn new(mut common: Common) -> Self {
        let mut extra = HeaderMap::new();
        extra.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let url = common.url.clone();
        let sse = common.open(Method::GET, url, extra, Bytes::new());
        Self {
            decoder: SseDecoder::new(common.max_message),
            common,
            sse,
            phase: Phase::AwaitingHead,
            queued: VecDeque::new(),
            posts: HashMap::new(),
            done: false,
            sse_open: true,
        }
    }

    /// POSTs one message to the endpoint, or keeps it until the endpoint is known.
    pub(super) fn send(&mut self, out: Outgoing) {
        if self.done {
            return;
        }
        let Phase::Open(endpoint) = &self.phase else {
            self.queued.push_back(out);
            return;
        };
        let request = match &out.kind {
            OutgoingKind::Request { id, .. } => Some(id.clone()),
            _ => None,
        };
        let stream = self.common.post(endpoint.clone(), HeaderMap::new(), out.json);
        self.posts.insert(stream, request);
    }

    pub(super) fn receive(
        &mut self,
        stream: StreamId,
        event: StreamEvent<'_>,
        up: &mut Vec<PlannerEvent>,
    ) {
        if self.done {
            return;
        }
        if stream == self.sse {
            self.on_sse(event, up);
        } else if self.posts.contains_key(&stream) {
            self.on_post(stream, event, up);
        }
    }

    /// Drops the GET stream and every POST still owed an answer.
    pub(super) fn close(&mut self) {
        self.done = true;
        if std::mem::take(&mut self.sse_open) {
            self.common.transmits.push_back(Transmit::Abort { stream: self.sse });
        }
        let mut aborts: Vec<StreamId> =
            self.posts.drain().filter(|(_, r)| r.is_some()).map(|(s, _)| s).collect();
        aborts.sort();
        (self.common.transmits).extend(aborts.into_iter().map(|stream| Transmit::Abort { stream }));
        self.queued.clear();
    }

    fn on_sse(&mut self, event: StreamEvent<'_>, up: &mut Vec<PlannerEvent>) {
        match event {
            StreamEvent::Head(head) => self.on_sse_head(&head, up),
            StreamEvent::Data(bytes) => {
                for item in read_sse(&mut self.decoder, bytes) {
                    match item {
                        SseOut::Endpoint(data) => self.on_endpoint(data, up),
                        SseOut::Frame(incoming) => {
                            up.push(PlannerEvent::Frame { stream: self.sse, incoming });
                        }
                        SseOut::Violation(v) => {
                            up.push(PlannerEvent::Violation(ProtocolViolation::Sse(v)));
                        }
                        SseOut::Retry(_) => {}
                    }
                    if self.done {
                        return;
                    }
                }
            }
            StreamEvent::End => {
                self.sse_open = false;
                self.end(CloseReason::TransportEnded, up);
            }
            StreamEvent::Failed(why) => {
                self.sse_open = false;
                self.end(CloseReason::TransportFailed(why), up);
            }
            StreamEvent::Accept(_) => {}
        }
    }

    fn on_sse_head(&mut self, head: &ResponseHead, up: &mut Vec<PlannerEvent>) {
        if !head.status.is_success() {
            let www_authenticate = www_authenticate(&head.headers);
            let reason = CloseReason::HttpStatus { status: head.status, www_authenticate };
            return self.end(reason, up);
        }
        if let Media::Other(kind) = media(&head.headers) {
            up.push(PlannerEvent::Violation(ProtocolViolation::UnexpectedContentType(kind)));
            let why =
                TransportFailure::Other("the sse url did not answer with an event stream".into());
            return self.end(CloseReason::TransportFailed(why), up);
        }
        self.phase = Phase::AwaitingEndpoint;
    }

    /// `event: endpoint`: the first one names where to POST; later ones are ignored.
    fn on_endpoint(&mut self, data: String, up: &mut Vec<PlannerEvent>) {
        if matches!(self.phase, Phase::Open(_)) {
            return;
        }
        match resolve_endpoint(&self.common.url, &data) {
            Ok(endpoint) => {
                self.phase = Phase::Open(endpoint);
                for out in std::mem::take(&mut self.queued) {
                    self.send(out);
                }
            }
            Err(Refusal::CrossOrigin) => self.end(CloseReason::EndpointCrossOrigin(data), up),
            Err(Refusal::Invalid) => self.end(CloseReason::EndpointInvalid(data), up),
        }
    }

    fn on_post(&mut self, stream: StreamId, event: StreamEvent<'_>, up: &mut Vec<PlannerEvent>) {
        let why = match event {
            StreamEvent::Head(head) => {
                let request = self.posts.remove(&stream).flatten();
                let status = head.status;
                match request {
                    _ if status.is_success() => {}
                    Some(id) => {
                        let www_authenticate = www_authenticate(&head.headers);
                        let error = RequestError::HttpStatus { status, www_authenticate };
                        up.push(PlannerEvent::Failed { id, error });
                    }
                    None => up.push(PlannerEvent::Violation(ProtocolViolation::HttpStatus {
                        method: Method::POST,
                        status,
                    })),
                }
                return;
            }
            StreamEvent::Failed(why) => why,
            StreamEvent::End => {
                TransportFailure::Other("the exchange ended before a response head".into())
            }
            // Body bytes before a head cannot happen; the head is still awaited.
            StreamEvent::Data(_) | StreamEvent::Accept(_) => return,
        };
        if let Some(Some(id)) = self.posts.remove(&stream) {
            up.push(PlannerEvent::Failed { id, error: RequestError::Transport(why) });
        }
    }

    /// The GET stream is over, and with it the session.
    fn end(&mut self, reason: CloseReason, up: &mut Vec<PlannerEvent>) {
        self.done = true;
        self.queued.clear();
        up.push(PlannerEvent::Close(reason));
    }
}
