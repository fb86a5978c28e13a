//! Sequences of arbitrary HTTP exchanges → `http::server::Router`.
//!
//! Each step opens an exchange (a method, a path from a small set, header values picked from
//! good and bad ones, a body that is arbitrary bytes or a JSON-RPC message), feeds body
//! chunks, ends it or breaks it, answers calls, or lets time pass. The router must never
//! panic, must answer every exchange it closes with exactly one head first, and must never
//! write to an exchange after closing it.
#![no_main]

use std::collections::HashMap;
use std::time::Duration;

use arbitrary::Arbitrary;
use http::{HeaderMap, HeaderValue, Method};
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use zest_core::http::server::{Router, RouterConfig};
use zest_core::io::{Input, Output, Receive, RequestHead, StreamEvent, StreamId, Transmit, TransportFailure};
use zest_core::jsonrpc::RawJson;
use zest_core::schema::Tool;
use zest_core::server::{Event, Registry, ServerConfig};
use zest_core::testkit::VirtualClock;

#[derive(Arbitrary, Debug)]
enum Step {
    Open { method: u8, path: u8, session: u8, headers: u8, version: u8, last_event: Option<(u8, u8)> },
    Body { stream: u8, body: Body },
    End { stream: u8 },
    Fail { stream: u8 },
    Answer { call: u8, error: bool },
    Wait { seconds: u16 },
}

#[derive(Arbitrary, Debug)]
enum Body {
    Raw(Vec<u8>),
    Initialize,
    Initialized,
    Call { id: u8, tool: bool },
    List { id: u8 },
    Cancel { id: u8 },
    Batch,
}

const PATHS: [&str; 6] = ["/mcp", "/sse", "/messages?sessionId=", "/health", "/other", "/mcp?x=1"];
const METHODS: [Method; 4] = [Method::POST, Method::GET, Method::DELETE, Method::PUT];
const VERSIONS: [&str; 4] = ["2025-11-25", "2025-03-26", "2024-11-05", "garbage"];

#[derive(Default)]
struct Seen {
    head: bool,
    closed: bool,
}

fn body_bytes(body: &Body) -> Vec<u8> {
    let v = match body {
        Body::Raw(bytes) => return bytes.clone(),
        Body::Initialize => json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{"sampling":{}},
            "clientInfo":{"name":"f","version":"1"}}}),
        Body::Initialized => json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        Body::Call { id, tool } => json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name": if *tool { "echo" } else { "nope" },"arguments":{"text":"x"},
            "_meta":{"progressToken":id}}}),
        Body::List { id } => json!({"jsonrpc":"2.0","id":id,"method":"tools/list"}),
        Body::Cancel { id } => json!({"jsonrpc":"2.0","method":"notifications/cancelled",
            "params":{"requestId":id}}),
        Body::Batch => json!([{"jsonrpc":"2.0","id":1,"method":"ping"},
            {"jsonrpc":"2.0","method":"notifications/initialized"}]),
    };
    serde_json::to_vec(&v).unwrap()
}

fuzz_target!(|steps: Vec<Step>| {
    let mut registry: Registry<u8> = Registry::default();
    registry.add_tool(Tool::new("echo", "echo", json!({"type":"object"})), 1);
    let mut config = RouterConfig::new([1; 32]);
    config.max_sessions = 8;
    config.max_body = 4096;
    config.idle_timeout = Duration::from_secs(30);
    let mut router = Router::new(ServerConfig::new("f", "1"), config, registry);
    let mut clock = VirtualClock::new();
    let mut seen: HashMap<StreamId, Seen> = HashMap::new();
    let mut sessions: Vec<String> = Vec::new();
    let mut calls = Vec::new();
    let mut next = 1u64;
    for step in steps.into_iter().take(64) {
        let now = clock.now();
        match step {
            Step::Open { method, path, session, headers, version, last_event } => {
                let stream = StreamId(next);
                next += 1;
                let mut map = HeaderMap::new();
                map.insert("host", HeaderValue::from_static("localhost:1"));
                if headers & 1 != 0 {
                    map.insert("content-type", HeaderValue::from_static("application/json"));
                }
                if headers & 2 != 0 {
                    map.insert("accept", HeaderValue::from_static("application/json, text/event-stream"));
                }
                if headers & 4 != 0 {
                    map.insert("origin", HeaderValue::from_static("https://evil.example"));
                }
                let id = sessions.get(usize::from(session)).cloned();
                if let Some(id) = &id {
                    map.insert("mcp-session-id", HeaderValue::from_str(id).unwrap());
                }
                let v = VERSIONS[usize::from(version) % VERSIONS.len()];
                map.insert("mcp-protocol-version", HeaderValue::from_static(v));
                if let Some((n, s)) = last_event {
                    map.insert("last-event-id", HeaderValue::from_str(&format!("{n}-{s}")).unwrap());
                }
                let mut uri = PATHS[usize::from(path) % PATHS.len()].to_owned();
                if uri.ends_with('=') {
                    uri.push_str(id.as_deref().unwrap_or("none"));
                }
                let head = RequestHead {
                    method: METHODS[usize::from(method) % METHODS.len()].clone(),
                    uri: uri.parse().unwrap(),
                    headers: map,
                };
                seen.insert(stream, Seen::default());
                let event = StreamEvent::Accept(Box::new(head));
                router.handle_input(Input::Receive(now, Receive { stream, event }));
            }
            Step::Body { stream, body } => {
                let bytes = body_bytes(&body);
                router.handle_input(zest_core::io::data(now, StreamId(u64::from(stream)), &bytes));
            }
            Step::End { stream } => {
                let stream = StreamId(u64::from(stream));
                router.handle_input(Input::Receive(now, Receive { stream, event: StreamEvent::End }));
            }
            Step::Fail { stream } => {
                let stream = StreamId(u64::from(stream));
                let event = StreamEvent::Failed(TransportFailure::Reset("cut".into()));
                router.handle_input(Input::Receive(now, Receive { stream, event }));
            }
            Step::Answer { call, error } => {
                if !calls.is_empty() {
                    let (session, id) = calls.swap_remove(usize::from(call) % calls.len());
                    if let Some(s) = router.session_mut(&session) {
                        let result = if error {
                            Err(zest_core::jsonrpc::ErrorObject::new(-32603, "no"))
                        } else {
                            Ok(RawJson::from(json!({"content":[]})))
                        };
                        let _ = s.respond(now, id, result);
                    }
                }
            }
            Step::Wait { seconds } => {
                clock.advance(Duration::from_secs(u64::from(seconds)));
                router.handle_input(Input::Timeout(clock.now()));
            }
        }
        while let Some(out) = router.poll_output() {
            match out {
                Output::Transmit(Transmit::Respond { stream, head }) => {
                    let s = seen.entry(stream).or_default();
                    assert!(!s.head && !s.closed, "a second head on {stream}");
                    s.head = true;
                    if let Some(id) = head.headers.get("mcp-session-id") {
                        sessions.push(id.to_str().unwrap().to_owned());
                    }
                }
                Output::Transmit(Transmit::Write { stream, .. }) => {
                    let s = seen.entry(stream).or_default();
                    assert!(s.head && !s.closed, "a write outside a response on {stream}");
                }
                Output::Transmit(Transmit::Close { stream }) => {
                    let s = seen.entry(stream).or_default();
                    assert!(s.head && !s.closed, "a close without a head, or twice, on {stream}");
                    s.closed = true;
                }
                Output::Transmit(t) => panic!("a router never emits {t:?}"),
                Output::Event(e) => {
                    if let Event::Call { id, .. } = e.event {
                        calls.push((e.session, id));
                    }
                }
            }
        }
    }
});
