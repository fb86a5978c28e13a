//! One session's SSE streams: the answer streams of its POSTs, its standalone GET stream,
//! and the bytes that go on them (event ids, the priming event, the store for resumption).
//!
//! A *logical* stream outlives the HTTP exchange that carries it: when a client loses the
//! connection, the stream waits (its events kept in the [`EventStore`]) until the client
//! resumes it with `Last-Event-ID` on a new GET, which carries it from then on.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, StatusCode};

use super::store::EventStore;
use super::SessionId;
use crate::framing::sse;
use crate::io::{ResponseHead, StreamId, Transmit};
use crate::jsonrpc::RequestId;
use crate::server::Session;

/// Where a router's bytes go: transmits for the runtime, events kept for resumption.
#[derive(Debug)]
pub(super) struct Wire {
    pub(super) transmits: VecDeque<Transmit>,
    pub(super) store: Box<dyn EventStore>,
}

impl Wire {
    pub(super) fn respond(&mut self, stream: StreamId, status: StatusCode, headers: HeaderMap) {
        let head = Box::new(ResponseHead { status, headers });
        self.transmits.push_back(Transmit::Respond { stream, head });
    }

    pub(super) fn write(&mut self, stream: StreamId, bytes: Bytes) {
        self.transmits.push_back(Transmit::Write { stream, bytes });
    }

    pub(super) fn close(&mut self, stream: StreamId) {
        self.transmits.push_back(Transmit::Close { stream });
    }

    /// Answers `stream` with one whole JSON body.
    pub(super) fn json(
        &mut self,
        stream: StreamId,
        status: StatusCode,
        mut headers: HeaderMap,
        body: Vec<u8>,
    ) {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        self.respond(stream, status, headers);
        if !body.is_empty() {
            self.write(stream, Bytes::from(body));
        }
        self.close(stream);
    }

    /// Starts an SSE answer on `stream`.
    pub(super) fn open_sse(&mut self, stream: StreamId, mut headers: HeaderMap) {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        self.respond(stream, StatusCode::OK, headers);
    }
}

/// How a session is reached.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum SlotKind {
    /// Streamable HTTP with a session id.
    Stateful,
    /// Streamable HTTP without sessions: this session serves one POST, then goes.
    Ephemeral,
    /// Legacy HTTP+SSE: every message goes on the GET stream, carried by exchange `carried_by`.
    Legacy { carried_by: Option<StreamId> },
}

/// One session and its streams.
#[derive(Debug)]
pub(super) struct Slot<H> {
    pub(super) machine: Session<H>,
    pub(super) kind: SlotKind,
    pub(super) last_active: Instant,
    pub(super) next_stream: u64,
    /// The answers to POSTs carrying requests, by the stream the POST arrived on (the
    /// stream the session's routes name).
    pub(super) answers: HashMap<StreamId, Answer>,
    /// The standalone GET stream, once opened.
    pub(super) standalone: Option<SseStream>,
    /// Standalone messages waiting for a GET stream, oldest first.
    backlog: VecDeque<Vec<u8>>,
    /// Streams written whole since the last sweep, then those written whole before it. Their
    /// events stay in the store a while: the last bytes written may never have arrived (the
    /// connection can break after the router wrote them), and the client then resumes. They
    /// are forgotten at the second sweep after, one to two sweep intervals later.
    written: [Vec<u64>; 2],
    /// Its place in a fleet, when the router is one of several sharing a store.
    pub(super) fleet: Option<super::fleet::router::FleetSlot>,
}

/// The answer to one POST.
#[derive(Debug)]
pub(super) struct Answer {
    pub(super) logical: SseStream,
    /// Requests of the POST still unanswered.
    pub(super) waiting: Vec<RequestId>,
    pub(super) mode: Mode,
    /// Every request is answered (or cancelled); for an SSE answer no exchange carries, the
    /// stream waits for its client to resume it.
    pub(super) finished: bool,
    /// The POST carried at least one request (else it gets 202, or 400 with errors).
    pub(super) had_requests: bool,
    /// The response headers of a JSON answer still to be sent.
    pub(super) pending_head: Option<HeaderMap>,
}

/// How an answer goes out.
#[derive(Debug)]
pub(super) enum Mode {
    /// Nothing sent yet; what the session produced so far is held, each message marked
    /// `true` when it is a reply.
    Undecided { held: Vec<(Vec<u8>, bool)> },
    /// One JSON body once every request is answered (related messages go standalone).
    Json { held: Vec<Vec<u8>> },
    /// An SSE stream; the head is sent.
    Sse,
}

/// A numbered SSE stream of a session.
#[derive(Debug)]
pub(super) struct SseStream {
    pub(super) number: u64,
    seq: u64,
    /// The exchange carrying it now; `None` after the client lost it.
    pub(super) carried_by: Option<StreamId>,
}

impl<H: Clone> Slot<H> {
    pub(super) fn new(machine: Session<H>, kind: SlotKind, now: Instant) -> Self {
        Self {
            machine,
            kind,
            last_active: now,
            next_stream: 1,
            answers: HashMap::new(),
            standalone: None,
            backlog: VecDeque::new(),
            written: [Vec::new(), Vec::new()],
            fleet: None,
        }
    }

    /// Stream `number` was written whole: its events stay until the second sweep from now.
    pub(super) fn written_whole(&mut self, number: u64) {
        self.written[0].push(number);
    }

    /// A sweep: forgets the streams written whole before the previous sweep.
    pub(super) fn age_written(&mut self, id: &SessionId, store: &mut dyn EventStore) {
        let recent = std::mem::take(&mut self.written[0]);
        for number in std::mem::replace(&mut self.written[1], recent) {
            store.forget_stream(id, number);
        }
    }

    pub(super) fn new_sse_stream(&mut self, carried_by: Option<StreamId>) -> SseStream {
        let number = self.next_stream;
        self.next_stream += 1;
        SseStream { number, seq: 0, carried_by }
    }

    /// True when priming events and polling apply (2025-11-25 on).
    pub(super) fn primes(&self) -> bool {
        self.machine.session().is_some_and(|s| s.protocol_version.has_sse_priming())
    }

    /// Sends or keeps one standalone message.
    pub(super) fn standalone(
        &mut self,
        id: &SessionId,
        json: Vec<u8>,
        wire: &mut Wire,
        max_backlog: usize,
    ) {
        if let SlotKind::Legacy { carried_by } = self.kind {
            return match carried_by {
                Some(carried_by) => wire.write(carried_by, legacy_event(&json)),
                None => push_bounded(&mut self.backlog, json, max_backlog),
            };
        }
        match &mut self.standalone {
            Some(logical) if logical.carried_by.is_some() => logical.send(id, &json, wire),
            _ => push_bounded(&mut self.backlog, json, max_backlog),
        }
    }

    /// Opens the standalone stream on exchange `carried_by` and sends what waited for it.
    pub(super) fn open_standalone(
        &mut self,
        id: &SessionId,
        carried_by: StreamId,
        wire: &mut Wire,
        retry: Option<Duration>,
    ) {
        let primes = self.primes();
        let mut logical = match self.standalone.take() {
            Some(mut l) => {
                l.carried_by = Some(carried_by);
                l
            }
            None => self.new_sse_stream(Some(carried_by)),
        };
        wire.open_sse(carried_by, HeaderMap::new());
        if primes {
            logical.prime(wire, retry);
        }
        for json in self.backlog.drain(..) {
            logical.send(id, &json, wire);
        }
        self.standalone = Some(logical);
    }

    /// The standalone stream was resumed on a new exchange: what was sent while it had none
    /// (kept in the backlog) goes out now, after the replay.
    pub(super) fn flush_standalone_backlog(&mut self, id: &SessionId, wire: &mut Wire) {
        let Some(logical) = self.standalone.as_mut().filter(|l| l.carried_by.is_some()) else {
            return;
        };
        for json in self.backlog.drain(..) {
            logical.send(id, &json, wire);
        }
    }

    /// The legacy GET stream opened: it carries everything from now on.
    pub(super) fn flush_legacy_backlog(&mut self, wire: &mut Wire) {
        if let SlotKind::Legacy { carried_by: Some(carried_by) } = self.kind {
            for json in self.backlog.drain(..) {
                wire.write(carried_by, legacy_event(&json));
            }
        }
    }

    /// Forgets `carried_by` wherever it carried a stream (the client went away). Streams wait
    /// for a resume; a legacy session has none and says so with `true`.
    pub(super) fn detach(&mut self, carried_by: StreamId) -> bool {
        if self.kind == (SlotKind::Legacy { carried_by: Some(carried_by) }) {
            return true;
        }
        for logical in self.answers.values_mut().map(|a| &mut a.logical).chain(&mut self.standalone)
        {
            if logical.carried_by == Some(carried_by) {
                logical.carried_by = None;
            }
        }
        false
    }

    /// Every exchange this session is carried on.
    pub(super) fn carried_by(&self) -> Vec<StreamId> {
        let mut all: Vec<StreamId> = self
            .answers
            .iter()
            .filter_map(|(origin, a)| match a.mode {
                Mode::Sse => a.logical.carried_by,
                // An undecided or JSON answer is carried by its POST.
                _ => Some(*origin),
            })
            .chain(self.standalone.as_ref().and_then(|l| l.carried_by))
            .collect();
        if let SlotKind::Legacy { carried_by: Some(c) } = self.kind {
            all.push(c);
        }
        all
    }

    /// True when nothing holds this session open: no exchange carries it and no POST waits.
    pub(super) fn is_idle(&self) -> bool {
        self.carried_by().is_empty() && self.answers.values().all(|a| a.finished)
    }
}

impl Answer {
    pub(super) fn new(logical: SseStream, waiting: Vec<RequestId>) -> Self {
        Self {
            logical,
            had_requests: !waiting.is_empty(),
            waiting,
            mode: Mode::Undecided { held: Vec::new() },
            finished: false,
            pending_head: None,
        }
    }

    /// One message for this answer: the reply to `replied` (all of the POST's requests when
    /// it is a batch reply or an error for the whole body), or a related message.
    /// Returns the message when it has to go standalone instead (related, JSON mode).
    pub(super) fn deliver(
        &mut self,
        session: &SessionId,
        json: Vec<u8>,
        replied: Option<Option<&RequestId>>,
        wire: &mut Wire,
    ) -> Option<Vec<u8>> {
        match replied {
            Some(Some(id)) if json.first() != Some(&b'[') => self.waiting.retain(|w| w != id),
            Some(_) => self.waiting.clear(),
            None => {}
        }
        match &mut self.mode {
            Mode::Undecided { held } => held.push((json, replied.is_some())),
            Mode::Json { held } if replied.is_some() => held.push(json),
            Mode::Json { .. } => return Some(json),
            Mode::Sse => self.logical.send(session, &json, wire),
        }
        None
    }

    /// Undecided, with every request answered or a message other than a reply to send: its
    /// form is clear.
    pub(super) fn is_clear(&self) -> bool {
        match &self.mode {
            Mode::Undecided { held } => {
                self.waiting.is_empty() || held.iter().any(|(_, reply)| !reply)
            }
            _ => false,
        }
    }

    /// A request of the POST was cancelled by the client: no reply will come for it.
    pub(super) fn cancelled(&mut self, id: &RequestId) -> bool {
        let before = self.waiting.len();
        self.waiting.retain(|w| w != id);
        before != self.waiting.len()
    }
}

impl SseStream {
    /// A stream not yet numbered: an answer that may still go out as JSON.
    pub(super) fn unnumbered(carried_by: StreamId) -> Self {
        Self { number: 0, seq: 0, carried_by: Some(carried_by) }
    }

    /// Sends (and keeps) one message as the next event of this stream.
    pub(super) fn send(&mut self, session: &SessionId, json: &[u8], wire: &mut Wire) {
        self.seq += 1;
        let id = format!("{}-{}", self.number, self.seq);
        // Our own compact JSON: UTF-8 without line breaks, so it fits one data line.
        let data = String::from_utf8_lossy(json);
        let Ok(event) = sse::encode_event(Some(&id), None, &data) else { return };
        wire.store.store(session, self.number, self.seq, event.clone());
        if let Some(carried_by) = self.carried_by {
            wire.write(carried_by, event);
        }
    }

    /// A stream carried on by `carried_by` after event `seq` (a fleet's standalone stream).
    pub(super) fn resumed(number: u64, seq: u64, carried_by: StreamId) -> Self {
        Self { number, seq, carried_by: Some(carried_by) }
    }

    /// The number of the last event sent.
    pub(super) fn seq(&self) -> u64 {
        self.seq
    }

    /// Sends event `seq`, numbered (and kept) elsewhere: a fleet's standalone stream.
    pub(super) fn send_numbered(&mut self, seq: u64, json: &[u8], wire: &mut Wire) {
        self.seq = seq;
        let id = format!("{}-{}", self.number, seq);
        let data = String::from_utf8_lossy(json);
        let Ok(event) = sse::encode_event(Some(&id), None, &data) else { return };
        if let Some(carried_by) = self.carried_by {
            wire.write(carried_by, event);
        }
    }

    /// The priming event: an id (the last event sent, 0 on a new stream) and empty data, so
    /// the client can resume from there, with the reconnection delay.
    pub(super) fn prime(&mut self, wire: &mut Wire, retry: Option<Duration>) {
        let Some(carried_by) = self.carried_by else { return };
        if let Ok(event) = sse::encode_priming(&format!("{}-{}", self.number, self.seq), retry) {
            wire.write(carried_by, event);
        }
    }

    /// Parses a `Last-Event-ID` of ours into (stream number, sequence).
    pub(super) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
        let (number, seq) = id.trim().split_once('-')?;
        Some((number.parse().ok()?, seq.parse().ok()?))
    }
}

/// A legacy HTTP+SSE message event.
pub(super) fn legacy_event(json: &[u8]) -> Bytes {
    let data = String::from_utf8_lossy(json);
    sse::encode_event(None, Some("message"), &data).unwrap_or_default()
}

fn push_bounded(queue: &mut VecDeque<Vec<u8>>, json: Vec<u8>, max: usize) {
    if max == 0 {
        return;
    }
    if queue.len() == max {
        queue.pop_front();
    }
    queue.push_back(json);
}
