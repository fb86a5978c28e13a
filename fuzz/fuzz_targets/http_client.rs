//! A `Client` over HTTP (mode Auto, small limits) against an arbitrary server: response heads
//! with fuzzed statuses, content types and session ids, bodies that are raw bytes, JSON
//! frames or SSE events (ids, `retry`, `endpoint`), ends and failures on any stream the
//! client opened, timeouts at increasing virtual instants, and the app's commands.
//!
//! Never panics; each request exactly one `Response`; exactly one `Closed`, last; stream ids
//! named by the client, from 1, never reused; every POST carries one JSON-RPC message; no
//! deadline survives a timeout input.
#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use zest_core::client::{Client, ClientConfig, Event};
use zest_core::http::client::{HttpClientConfig, HttpMode};
use zest_core::io::{
    Input, Output, Receive, ResponseHead, StreamEvent, StreamId, Transmit, TransportFailure,
};
use zest_core::jsonrpc::{decode, RawJson, RequestId};
use zest_core::RequestOptions;

#[derive(Arbitrary, Debug)]
enum Step {
    Head { stream: u8, status: u8, content: u8, session: Option<u8> },
    Body { stream: u8, body: Body },
    End(u8),
    Fail(u8),
    /// Time passes (in units of 64 ms); a timeout input follows.
    Advance(u16),
    Request(u8),
    Cancel(u8),
    Respond(u8),
    Notify,
    Close,
}

#[derive(Arbitrary, Debug)]
enum Body {
    Raw(Vec<u8>),
    Json(Frame),
    Sse { id: Option<u8>, retry: Option<u16>, kind: u8, frame: Frame },
    Endpoint(String),
}

#[derive(Arbitrary, Debug)]
enum Frame {
    /// The result of `initialize` (any id: re-initializations use new ones).
    Init(u8),
    Result(u8),
    Error(u8),
    Request(u8, bool),
    Notification(u8),
    Empty,
}

const STATUSES: [u16; 10] = [200, 202, 204, 400, 401, 403, 404, 405, 500, 503];
const CONTENT: [Option<&str>; 4] =
    [Some("application/json"), Some("text/event-stream"), None, Some("text/html")];
const METHODS: [&str; 4] = ["tools/call", "tools/list", "ping", "resources/read"];

impl Frame {
    fn text(&self) -> String {
        let v = match self {
            Self::Init(id) => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "f", "version": "1"}}}),
            Self::Result(id) => json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}),
            Self::Error(id) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "no"}})
            }
            Self::Request(id, ping) => json!({"jsonrpc": "2.0", "id": format!("s{id}"),
                "method": if *ping { "ping" } else { "roots/list" }}),
            Self::Notification(n) => json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": n}}),
            Self::Empty => return String::new(),
        };
        v.to_string()
    }
}

impl Body {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Self::Raw(b) => b.clone(),
            Self::Json(f) => f.text().into_bytes(),
            Self::Sse { id, retry, kind, frame } => {
                let mut s = String::new();
                if let Some(id) = id {
                    s += &format!("id: e{id}\n");
                }
                if let Some(r) = retry {
                    s += &format!("retry: {r}\n");
                }
                match kind % 3 {
                    0 => {}
                    1 => s += "event: message\n",
                    _ => s += "event: other\n",
                }
                s += &format!("data: {}\n\n", frame.text());
                s.into_bytes()
            }
            Self::Endpoint(uri) => format!("event: endpoint\ndata: {uri}\n\n").into_bytes(),
        }
    }
}

struct Run {
    client: Client,
    now: Instant,
    events: Vec<Event>,
    issued: Vec<RequestId>,
    peer_requests: Vec<RequestId>,
    /// Every stream the client opened, in order.
    opened: Vec<StreamId>,
    /// Streams aborted (nothing more may be reported on them).
    aborted: BTreeSet<StreamId>,
}

impl Run {
    fn drain(&mut self) {
        while let Some(out) = self.client.poll_output() {
            match out {
                Output::Transmit(Transmit::Http { stream, request }) => {
                    let last = self.opened.last().map_or(0, |s| s.0);
                    assert_eq!(stream.0, last + 1, "stream ids count up from 1");
                    self.opened.push(stream);
                    assert!(request.uri.scheme().is_some(), "absolute URL: {}", request.uri);
                    if request.method == http::Method::POST {
                        assert!(decode(&request.body).is_ok(), "POST body: {:?}", request.body);
                    } else {
                        assert!(request.body.is_empty());
                    }
                }
                Output::Transmit(Transmit::Abort { stream }) => {
                    assert!(self.opened.contains(&stream), "abort of a stream never opened");
                    assert!(self.aborted.insert(stream), "aborted twice: {stream}");
                }
                Output::Transmit(t) => panic!("not an HTTP client transmit: {t:?}"),
                Output::Event(e) => {
                    if let Event::Request { id, .. } = &e {
                        self.peer_requests.push(id.clone());
                    }
                    self.events.push(e);
                }
            }
        }
    }

    fn pick_stream(&self, k: u8) -> Option<StreamId> {
        let live: Vec<StreamId> =
            self.opened.iter().filter(|s| !self.aborted.contains(s)).copied().collect();
        (!live.is_empty()).then(|| live[usize::from(k) % live.len()])
    }

    fn feed(&mut self, stream: u8, event: StreamEvent<'_>) {
        if let Some(stream) = self.pick_stream(stream) {
            self.client.handle_input(Input::Receive(self.now, Receive { stream, event }));
        }
    }

    fn step(&mut self, step: &Step) {
        let now = self.now;
        match step {
            Step::Head { stream, status, content, session } => {
                let mut headers = http::HeaderMap::new();
                if let Some(ct) = CONTENT[usize::from(*content) % CONTENT.len()] {
                    headers.insert("content-type", ct.parse().unwrap());
                }
                if let Some(s) = session {
                    headers.insert("mcp-session-id", format!("sess-{s}").parse().unwrap());
                }
                if status % 7 == 0 {
                    headers.insert("www-authenticate", "Bearer x".parse().unwrap());
                }
                let status = STATUSES[usize::from(*status) % STATUSES.len()];
                let head = ResponseHead { status: status.try_into().unwrap(), headers };
                self.feed(*stream, StreamEvent::Head(Box::new(head)));
            }
            Step::Body { stream, body } => {
                let bytes = body.bytes();
                self.feed(*stream, StreamEvent::Data(&bytes));
            }
            Step::End(stream) => self.feed(*stream, StreamEvent::End),
            Step::Fail(stream) => {
                self.feed(*stream, StreamEvent::Failed(TransportFailure::Reset("fuzz".into())))
            }
            Step::Advance(units) => {
                self.now += Duration::from_millis(u64::from(*units) * 64);
                self.client.handle_input(Input::Timeout(self.now));
                self.drain();
                if let Some(next) = self.client.poll_timeout() {
                    assert!(next > self.now, "a deadline at or before a timeout input survived");
                }
            }
            Step::Request(m) => {
                let method = METHODS[usize::from(*m) % METHODS.len()];
                match self.client.request(now, method, None, RequestOptions::default()) {
                    Ok(id) => self.issued.push(id),
                    Err(_) => {} // before Ready, or closed
                }
            }
            Step::Cancel(k) => {
                if let Some(id) = pick(&self.issued, *k) {
                    let _ = self.client.cancel(now, &id, None);
                }
            }
            Step::Respond(k) => {
                if let Some(id) = pick(&self.peer_requests, *k) {
                    let _ = self.client.respond(now, id, Ok(RawJson::empty_object()));
                }
            }
            Step::Notify => {
                let _ = self.client.notify(now, "notifications/roots/list_changed", None);
            }
            Step::Close => self.client.close(now),
        }
        self.drain();
    }
}

fn pick(ids: &[RequestId], k: u8) -> Option<RequestId> {
    (!ids.is_empty()).then(|| ids[usize::from(k) % ids.len()].clone())
}

fuzz_target!(|steps: Vec<Step>| {
    let t0 = Instant::now();
    let mut cfg = ClientConfig::new("fuzz", "1");
    cfg.max_message = 512;
    cfg.capabilities = serde_json::from_value(json!({"roots": {}})).unwrap();
    let mut http = HttpClientConfig::new("http://127.0.0.1:9/mcp".parse().unwrap());
    http.mode = HttpMode::Auto;
    http.max_resume_attempts = 2;
    let mut run = Run {
        client: Client::new_http(cfg, http, t0).unwrap(),
        now: t0,
        events: Vec::new(),
        issued: Vec::new(),
        peer_requests: Vec::new(),
        opened: Vec::new(),
        aborted: BTreeSet::new(),
    };
    run.drain();
    for step in steps.iter().take(256) {
        run.step(step);
    }
    run.client.close(run.now);
    run.drain();

    let events = &run.events;
    let closed = events.iter().filter(|e| matches!(e, Event::Closed(_))).count();
    assert_eq!(closed, 1, "exactly one Closed");
    assert!(matches!(events.last(), Some(Event::Closed(_))), "Closed is last");
    let mut responses: BTreeMap<&RequestId, usize> = BTreeMap::new();
    for e in events {
        if let Event::Response { id, .. } = e {
            *responses.entry(id).or_default() += 1;
        }
    }
    for id in &run.issued {
        assert_eq!(responses.remove(id), Some(1), "exactly one Response for {id}");
    }
    assert!(responses.is_empty(), "Responses for ids never issued: {responses:?}");
});
