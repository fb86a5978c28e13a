//! Properties, checked with quickcheck on generated inputs:
//!
//! 1. every JSON-RPC message survives encode → decode, and a stdio frame has one newline, last;
//! 2. how a byte stream is chunked never changes what a client reports or sends (rule 14);
//! 3. whatever interleaving of answers, cancellations, timeouts, progress and closes happens,
//!    every request ends in exactly one `Response` and the session in exactly one `Closed`.
//!
//! Case counts are quickcheck's default (100, or `QUICKCHECK_TESTS`); all in virtual time.

mod common;

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use common::*;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use serde_json::{json, Map, Value};
use zest_core::client::{Client, ClientConfig, Event as ClientEvent};
use zest_core::io::{self, Input, Output, Receive, StreamEvent, StreamId, Transmit};
use zest_core::jsonrpc::{
    decode, encode_line, ErrorObject, Frame, Message, Notification, RawJson, Request, RequestId,
    Response,
};
use zest_core::schema::methods::CallTool;
use zest_core::server::Event as ServerEvent;
use zest_core::testkit::{Pair, VirtualClock};
use zest_core::RequestOptions;

// ---------------------------------------------------------------------------------------------
// 1. Codec round trip
// ---------------------------------------------------------------------------------------------

/// Pieces that trip up hand-written JSON encoders.
const TRICKY: [&str; 14] = [
    "\"",
    "\\",
    "\n",
    "\r\n",
    "\u{2028}",
    "\u{0}",
    "é",
    "🦀",
    "tools/call",
    "\u{7f}",
    "\t",
    "}",
    "{\"jsonrpc\":",
    "\u{feff}",
];

fn text(g: &mut Gen) -> String {
    if bool::arbitrary(g) {
        return String::arbitrary(g);
    }
    (0..usize::arbitrary(g) % 6).map(|_| *g.choose(&TRICKY).unwrap()).collect()
}

/// A JSON value whose numbers survive a text round trip exactly (integers, and eighths, which
/// are exact in binary and short in decimal).
fn json_value(g: &mut Gen, depth: usize) -> Value {
    match u8::arbitrary(g) % if depth == 0 { 6 } else { 8 } {
        0 => Value::Null,
        1 => Value::Bool(bool::arbitrary(g)),
        2 => json!(i64::arbitrary(g)),
        3 => json!(u64::arbitrary(g)),
        4 => json!(f64::from(i32::arbitrary(g)) / 8.0),
        5 => Value::String(text(g)),
        6 => Value::Array((0..usize::arbitrary(g) % 4).map(|_| json_value(g, depth - 1)).collect()),
        _ => Value::Object(json_object(g, depth - 1)),
    }
}

fn json_object(g: &mut Gen, depth: usize) -> Map<String, Value> {
    (0..usize::arbitrary(g) % 4).map(|_| (text(g), json_value(g, depth))).collect()
}

/// Raw JSON as a peer might send it: compact, or pretty-printed with LF or CRLF (which
/// `encode_line` must re-serialize so the frame stays one line).
fn raw(g: &mut Gen, v: &Value) -> RawJson {
    let pretty = serde_json::to_string_pretty(v).unwrap();
    match u8::arbitrary(g) % 3 {
        0 => RawJson::from(v),
        1 => RawJson::from_string(pretty).unwrap(),
        _ => RawJson::from_string(pretty.replace('\n', "\r\n")).unwrap(),
    }
}

fn request_id(g: &mut Gen) -> RequestId {
    if bool::arbitrary(g) {
        RequestId::Number(i64::arbitrary(g))
    } else {
        RequestId::String(text(g))
    }
}

fn params(g: &mut Gen) -> Option<RawJson> {
    let v = match u8::arbitrary(g) % 5 {
        0 => return None,
        // Arrays are legal JSON-RPC params, though MCP only uses objects.
        1 => Value::Array(vec![json_value(g, 1)]),
        _ => Value::Object(json_object(g, 2)),
    };
    Some(raw(g, &v))
}

fn error_object(g: &mut Gen) -> ErrorObject {
    let mut e = ErrorObject::new(i64::arbitrary(g), text(g));
    // `"data": null` reads back as no data at all (serde's `Option`), so null is not generated.
    e.data = Some(json_value(g, 2)).filter(|d| !d.is_null() && bool::arbitrary(g));
    e
}

#[derive(Clone, Debug)]
struct ArbMessage(Message);

impl Arbitrary for ArbMessage {
    fn arbitrary(g: &mut Gen) -> Self {
        let m = match u8::arbitrary(g) % 4 {
            0 => {
                Message::Request(Request { id: request_id(g), method: text(g), params: params(g) })
            }
            1 => Message::Notification(Notification { method: text(g), params: params(g) }),
            2 => {
                let result = json_value(g, 2);
                Message::Response(Response {
                    id: Some(request_id(g)),
                    outcome: Ok(raw(g, &result)),
                })
            }
            // Only an error may lack an id (the request's id could not be read).
            _ => {
                let id = Some(request_id(g)).filter(|_| bool::arbitrary(g));
                Message::Response(Response { id, outcome: Err(error_object(g)) })
            }
        };
        Self(m)
    }
}

fn codec_round_trip(m: ArbMessage) -> bool {
    let m = m.0;
    let line = encode_line(&m);
    let newlines = line.iter().filter(|&&b| b == b'\n' || b == b'\r').count();
    assert_eq!((newlines, line.last()), (1, Some(&b'\n')), "one line: {line:?}");
    assert_eq!(decode(&m.to_vec()), Ok(Frame::Single(m.clone())));
    assert_eq!(decode(&line), Ok(Frame::Single(m)));
    true
}

#[test]
fn every_message_survives_encode_then_decode() {
    QuickCheck::new().quickcheck(codec_round_trip as fn(ArbMessage) -> bool);
}

// ---------------------------------------------------------------------------------------------
// 2. Chunking never changes what the client reports
// ---------------------------------------------------------------------------------------------

/// Requests the client has in flight when the stream starts (ids 1..=PENDING; 0 was
/// `initialize`).
const PENDING: i64 = 6;
/// The client's line limit in this property, so over-long lines are cheap to make.
const MAX_LINE: usize = 160;

const INIT_RESULT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"canned","version":"1"}}}
"#;

/// One frame a server (or something else writing to its stdout) might produce.
#[derive(Clone, Debug)]
enum FrameSpec {
    Result(i64),
    Error(i64),
    Progress(i64, u8),
    ListChanged,
    Log(String),
    Banner,
    Garbage,
    Blank,
    Ping(u8),
    TooLong,
    UnknownId,
    Batch(i64),
    Cancelled(u8),
    BadUtf8,
    Sampling,
}

impl Arbitrary for FrameSpec {
    fn arbitrary(g: &mut Gen) -> Self {
        let id = 1 + i64::from(u8::arbitrary(g)) % PENDING;
        match u8::arbitrary(g) % 15 {
            0 => Self::Result(id),
            1 => Self::Error(id),
            2 => Self::Progress(id, u8::arbitrary(g)),
            3 => Self::ListChanged,
            4 => Self::Log(text(g).chars().take(20).collect()),
            5 => Self::Banner,
            6 => Self::Garbage,
            7 => Self::Blank,
            8 => Self::Ping(u8::arbitrary(g)),
            9 => Self::TooLong,
            10 => Self::UnknownId,
            11 => Self::Batch(id),
            12 => Self::Cancelled(u8::arbitrary(g)),
            13 => Self::BadUtf8,
            _ => Self::Sampling,
        }
    }
}

impl FrameSpec {
    fn bytes(&self) -> Vec<u8> {
        let v = match self {
            Self::Result(id) => json!({"jsonrpc":"2.0","id":id,"result":{"tools":[]}}),
            Self::Error(id) => {
                json!({"jsonrpc":"2.0","id":id,"error":{"code":-32603,"message":"boom"}})
            }
            Self::Progress(id, p) => json!({"jsonrpc":"2.0","method":"notifications/progress",
                "params":{"progressToken":id,"progress":p}}),
            Self::ListChanged => {
                json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})
            }
            Self::Log(t) => json!({"jsonrpc":"2.0","method":"notifications/message",
                "params":{"level":"info","data":t}}),
            Self::Banner => return b"demo-server 1.2 listening on stdio".to_vec(),
            Self::Garbage => return br#"{"jsonrpc":"2.0","id":"#.to_vec(),
            Self::Blank => return b"  ".to_vec(),
            Self::Ping(n) => json!({"jsonrpc":"2.0","id":format!("s{n}"),"method":"ping"}),
            Self::TooLong => json!({"jsonrpc":"2.0","method":"notifications/message",
                "params":{"level":"info","data":"x".repeat(MAX_LINE)}}),
            Self::UnknownId => json!({"jsonrpc":"2.0","id":999,"result":{}}),
            Self::Batch(id) => json!([{"jsonrpc":"2.0","id":id,"result":{}},
                {"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}]),
            Self::Cancelled(n) => json!({"jsonrpc":"2.0","method":"notifications/cancelled",
                "params":{"requestId":format!("s{n}")}}),
            Self::BadUtf8 => return b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}".to_vec(),
            // The client offered no sampling capability: answered with an error.
            Self::Sampling => json!({"jsonrpc":"2.0","id":7,"method":"sampling/createMessage",
                "params":{"messages":[],"maxTokens":1}}),
        };
        serde_json::to_vec(&v).unwrap()
    }
}

/// A stream of frames, where to cut it, and how it ends.
#[derive(Clone, Debug)]
struct Chunked {
    frames: Vec<(FrameSpec, bool)>,
    cuts: Vec<usize>,
    /// Leave the last line unterminated and end the stream (EOF) after it.
    eof: bool,
}

impl Chunked {
    fn stream(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, (frame, crlf)) in self.frames.iter().enumerate() {
            out.extend(frame.bytes());
            if !(self.eof && i + 1 == self.frames.len()) {
                out.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
            }
        }
        out
    }
}

impl Arbitrary for Chunked {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut frames: Vec<(FrameSpec, bool)> = Arbitrary::arbitrary(g);
        frames.truncate(24);
        Self { frames, cuts: Arbitrary::arbitrary(g), eof: bool::arbitrary(g) }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        let eof = self.eof;
        Box::new(
            (self.frames.clone(), self.cuts.clone()).shrink().map(move |(frames, cuts)| Self {
                frames,
                cuts,
                eof,
            }),
        )
    }
}

fn drain(c: &mut Client) -> Vec<Output<ClientEvent>> {
    std::iter::from_fn(|| c.poll_output()).collect()
}

/// A client that finished its handshake on a canned result and has `PENDING` requests out.
fn ready_client(now: Instant) -> Client {
    let mut cfg = ClientConfig::new("prop", "1").session_era();
    cfg.max_message = MAX_LINE;
    let mut c = Client::new(cfg, now);
    let _ = drain(&mut c);
    c.handle_input(io::data(now, StreamId::STDIO, INIT_RESULT));
    assert!(drain(&mut c).iter().any(|o| matches!(o, Output::Event(ClientEvent::Ready(_)))));
    for _ in 0..PENDING {
        c.request(now, "tools/list", None, RequestOptions::with_progress()).unwrap();
    }
    let _ = drain(&mut c);
    c
}

/// Feeds `stream` in the given chunks (then EOF if asked) and returns what the client emitted:
/// its events in order and its transmits in order. (Within one drain `poll_output` gives
/// transmits before events, so how the two interleave legitimately depends on the chunking.)
fn outputs(chunks: &[&[u8]], eof: bool) -> (Vec<ClientEvent>, Vec<Transmit>) {
    let now = VirtualClock::new().now();
    let mut c = ready_client(now);
    let mut out = Vec::new();
    for chunk in chunks {
        c.handle_input(io::data(now, StreamId::STDIO, chunk));
        out.extend(drain(&mut c));
    }
    if eof {
        let end = Receive { stream: StreamId::STDIO, event: StreamEvent::End };
        c.handle_input(Input::Receive(now, end));
        out.extend(drain(&mut c));
    }
    let mut events = Vec::new();
    let mut transmits = Vec::new();
    for o in out {
        match o {
            Output::Event(e) => events.push(e),
            Output::Transmit(t) => transmits.push(t),
        }
    }
    (events, transmits)
}

fn chunking_is_invisible(input: Chunked) -> bool {
    let stream = input.stream();
    let whole = outputs(&[&stream], input.eof);
    let mut cuts: Vec<usize> = input.cuts.iter().map(|c| c % (stream.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut from = 0;
    for cut in cuts {
        chunks.push(&stream[from..cut]); // repeated cuts make empty chunks, which is fine too
        from = cut;
    }
    chunks.push(&stream[from..]);
    assert_eq!(outputs(&chunks, input.eof), whole, "chunks {chunks:?}");
    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(outputs(&bytes, input.eof), whole, "byte by byte");
    true
}

#[test]
fn any_chunking_yields_the_same_outputs() {
    QuickCheck::new().quickcheck(chunking_is_invisible as fn(Chunked) -> bool);
}

// ---------------------------------------------------------------------------------------------
// 3. Exactly one outcome per request, exactly one Closed per session
// ---------------------------------------------------------------------------------------------

/// One thing that happens during a session. Indices pick a request modulo how many there are.
#[derive(Clone, Debug)]
enum Op {
    /// The server app answers request k (a result).
    Answer(u8),
    /// The server app answers request k with an error.
    Fail(u8),
    /// The client cancels request k.
    Cancel(u8),
    /// Virtual time passes (milliseconds); both sides see a timeout input.
    Advance(u16),
    /// The server reports progress on request k.
    Progress(u8),
    /// The oldest frame in flight to the server arrives.
    DeliverToServer,
    /// The oldest frame in flight to the client arrives.
    DeliverToClient,
    /// Everything in flight arrives, and whatever it provokes, until the wire is quiet.
    Flush,
    /// The client closes the session.
    ClientClose,
    /// The server closes its end (its EOF reaches the client after what it wrote before).
    ServerClose,
    /// The client's stdin ends at once (the server process died); frames in flight are lost.
    ServerEof,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        let k = u8::arbitrary(g);
        // Closing ops are rare so most sessions stay open long enough to race.
        match u8::arbitrary(g) % 64 {
            0..=11 => Self::Answer(k),
            12..=14 => Self::Fail(k),
            15..=20 => Self::Cancel(k),
            21..=28 => Self::Advance(u16::arbitrary(g) % 20_000),
            29..=35 => Self::Progress(k),
            36..=45 => Self::DeliverToServer,
            46..=55 => Self::DeliverToClient,
            56..=60 => Self::Flush,
            61 => Self::ClientClose,
            62 => Self::ServerClose,
            _ => Self::ServerEof,
        }
    }
}

#[derive(Clone, Debug)]
struct Scenario {
    /// Per request: idle timeout in whole seconds (generated in 1..=30; shrinking may reach 0,
    /// a request that is due at once) and whether progress restarts it.
    requests: Vec<(u8, bool)>,
    ops: Vec<Op>,
}

impl Arbitrary for Scenario {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = 1 + usize::arbitrary(g) % 20;
        let requests = (0..n).map(|_| (1 + u8::arbitrary(g) % 30, bool::arbitrary(g))).collect();
        Self { requests, ops: Arbitrary::arbitrary(g) }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(
            (self.requests.clone(), self.ops.clone())
                .shrink()
                .filter(|(requests, _)| !requests.is_empty())
                .map(|(requests, ops)| Self { requests, ops }),
        )
    }
}

/// A pair whose wire holds frames in flight until the scenario delivers them, so answers,
/// cancellations and timeouts can cross. Outputs are still drained after every mutation.
struct Net {
    pair: Pair<Handler>,
    to_server: VecDeque<Transmit>,
    to_client: VecDeque<Transmit>,
    client_events: Vec<ClientEvent>,
    server_events: Vec<ServerEvent<Handler>>,
}

impl Net {
    fn settle(&mut self) {
        while let Some(out) = self.pair.client.poll_output() {
            match out {
                Output::Transmit(t) => self.to_server.push_back(t),
                Output::Event(e) => self.client_events.push(e),
            }
        }
        while let Some(out) = self.pair.server.poll_output() {
            match out {
                Output::Transmit(t) => self.to_client.push_back(t),
                Output::Event(e) => self.server_events.push(e),
            }
        }
    }

    fn deliver_to_server(&mut self) -> bool {
        let Some(t) = self.to_server.pop_front() else { return false };
        let now = self.pair.clock.now();
        with_input(&t, now, |input| self.pair.server.handle_input(input));
        self.settle();
        true
    }

    fn deliver_to_client(&mut self) -> bool {
        let Some(t) = self.to_client.pop_front() else { return false };
        let now = self.pair.clock.now();
        with_input(&t, now, |input| self.pair.client.handle_input(input));
        self.settle();
        true
    }

    fn flush(&mut self) {
        while self.deliver_to_server() | self.deliver_to_client() {}
    }
}

fn with_input(t: &Transmit, now: Instant, feed: impl FnOnce(Input<'_>)) {
    let (stream, event) = match t {
        Transmit::Write { stream, bytes } => (*stream, StreamEvent::Data(bytes)),
        Transmit::Close { stream } => (*stream, StreamEvent::End),
        other => panic!("unexpected transmit {other:?}"),
    };
    feed(Input::Receive(now, Receive { stream, event }));
}

fn exactly_one_outcome(scenario: Scenario) -> bool {
    let mut net = Net {
        pair: ready_pair(),
        to_server: VecDeque::new(),
        to_client: VecDeque::new(),
        client_events: Vec::new(),
        server_events: Vec::new(),
    };
    let now = net.pair.clock.now();
    let mut ids = Vec::new();
    for &(timeout, reset) in &scenario.requests {
        let mut opts = RequestOptions::with_progress().timeout(Duration::from_secs(timeout.into()));
        opts.reset_on_progress = reset;
        let params = serde_json::from_value(json!({"name":"echo","arguments":{"text":"hi"}}));
        ids.push(net.pair.client.send::<CallTool>(now, &params.unwrap(), opts).unwrap());
        net.settle();
    }
    net.flush();
    // The server's ids for the calls, in the order the client sent them.
    let calls: Vec<RequestId> = net
        .server_events
        .iter()
        .filter_map(|e| match e {
            ServerEvent::Call { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), ids.len(), "every call reached the server");
    let mut progress = 0.0;
    for op in &scenario.ops {
        let pick = |k: &u8| &calls[usize::from(*k) % calls.len()];
        let now = net.pair.clock.now();
        // Command errors (answering twice, cancelling what already ended, using a closed
        // machine) are the caller's business and change nothing; they are ignored here.
        match op {
            Op::Answer(k) => {
                let result = Ok(RawJson::from(json!({"content":[{"type":"text","text":"hi"}]})));
                let _ = net.pair.server.respond(now, pick(k).clone(), result);
            }
            Op::Fail(k) => {
                let _ =
                    net.pair.server.respond(now, pick(k).clone(), Err(ErrorObject::new(-1, "no")));
            }
            Op::Cancel(k) => {
                let _ = net.pair.client.cancel(now, &ids[usize::from(*k) % ids.len()], None);
            }
            Op::Advance(ms) => {
                let now = net.pair.clock.advance(Duration::from_millis((*ms).into()));
                net.pair.client.handle_input(Input::Timeout(now));
                net.settle();
                net.pair.server.handle_input(Input::Timeout(now));
            }
            Op::Progress(k) => {
                progress += 1.0;
                let _ = net.pair.server.progress(now, pick(k), progress, None, None);
            }
            Op::DeliverToServer => {
                net.deliver_to_server();
            }
            Op::DeliverToClient => {
                net.deliver_to_client();
            }
            Op::Flush => net.flush(),
            Op::ClientClose => net.pair.client.close(now),
            Op::ServerClose => net.pair.server.close(now),
            Op::ServerEof => {
                net.to_client.clear();
                let end = Receive { stream: StreamId::STDIO, event: StreamEvent::End };
                net.pair.client.handle_input(Input::Receive(now, end));
            }
        }
        net.settle();
    }
    let now = net.pair.clock.now();
    net.pair.client.close(now);
    net.settle();
    net.flush();
    net.pair.server.close(now);
    net.settle();
    net.flush();
    check_client_outcomes(&ids, &net.client_events);
    check_server_closed_once(&net.server_events);
    true
}

fn check_client_outcomes(ids: &[RequestId], events: &[ClientEvent]) {
    let mut responses: BTreeMap<&RequestId, usize> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        match e {
            ClientEvent::Response { id, .. } => *responses.entry(id).or_default() += 1,
            ClientEvent::Progress { id, .. } => {
                assert!(
                    !responses.contains_key(id),
                    "progress after the outcome at {i}: {events:?}"
                )
            }
            ClientEvent::Violation(v) => panic!("violation {v:?} at {i}: {events:?}"),
            ClientEvent::Closed(_) => assert_eq!(i + 1, events.len(), "Closed is last: {events:?}"),
            _ => {}
        }
    }
    for id in ids {
        assert_eq!(responses.remove(id), Some(1), "one Response for {id}: {events:?}");
    }
    assert!(responses.is_empty(), "responses for ids never sent: {responses:?}");
    let closed = events.iter().filter(|e| matches!(e, ClientEvent::Closed(_))).count();
    assert_eq!(closed, 1, "one Closed: {events:?}");
}

fn check_server_closed_once(events: &[ServerEvent<Handler>]) {
    for (i, e) in events.iter().enumerate() {
        match e {
            ServerEvent::Violation(v) => panic!("server violation {v:?} at {i}: {events:?}"),
            ServerEvent::Closed(_) => assert_eq!(i + 1, events.len(), "Closed is last: {events:?}"),
            _ => {}
        }
    }
    let closed = events.iter().filter(|e| matches!(e, ServerEvent::Closed(_))).count();
    assert_eq!(closed, 1, "one server Closed: {events:?}");
}

#[test]
fn every_request_ends_exactly_once_and_the_session_closes_once() {
    QuickCheck::new().quickcheck(exactly_one_outcome as fn(Scenario) -> bool);
}
