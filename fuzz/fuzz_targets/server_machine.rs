//! A `Server<u8>` with a few tools, resources, a template, a prompt and a completion handler,
//! after a handshake (`initialize`, then usually `initialized`), then arbitrary client bytes
//! and well-formed client frames, interleaved with timeouts, answers to `Call`s and the
//! server's own commands. Outputs are drained after every step.
//!
//! Never panics; writes only valid lines; a reported `Call` can be answered until it is
//! cancelled; every request the server sent ends in exactly one `Response`; after `close()`
//! exactly one `Closed`, last.
#![no_main]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use zest_core::io::{Input, Output};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::schema::{LoggingLevel, Prompt, Resource, ResourceTemplate, Tool};
use zest_core::server::{Event, ListKind, Registry, Server, ServerConfig};
use zest_core::RequestOptions;
use zest_fuzz::{check_transmit, data, end, failed};

const VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

#[derive(Arbitrary, Debug)]
struct Case {
    version: u8,
    strict_initialized: bool,
    skip_initialized: bool,
    steps: Vec<Step>,
}

#[derive(Arbitrary, Debug)]
enum Step {
    /// Raw bytes from the client.
    Bytes(Vec<u8>),
    /// A well-formed frame from the client, newline-terminated (or not).
    Frame(ClientFrame, bool),
    /// Several frames as one JSON-RPC batch line.
    Batch(Vec<ClientFrame>),
    /// Time passes (in units of 64 ms); a timeout input follows.
    Advance(u16),
    /// The app answers one of the pending calls.
    Respond(u8, Answer),
    /// The app reports progress on a pending call.
    Progress(u8, u8),
    /// The server sends a request to the client.
    Request {
        method: u8,
        timeout_s: u8,
    },
    /// The server cancels one of its requests.
    Cancel(u8),
    Log(u8),
    ListChanged(u8),
    ResourceUpdated(bool),
    /// The client's stdin ends, or breaks.
    End,
    Fail,
    /// The app closes the session.
    Close,
}

#[derive(Arbitrary, Debug)]
enum Answer {
    Text,
    Structured,
    BadStructured,
    Error,
}

#[derive(Arbitrary, Debug)]
enum ClientFrame {
    Request { id: Id, method: u8, params: Params },
    Notification { method: u8, params: Params },
    Cancelled { id: Id },
    Response { id: u8, ok: bool, result: Params },
    Progress { token: u8, progress: u8 },
}

#[derive(Arbitrary, Debug)]
enum Id {
    Num(i8),
    Str(u8),
}

/// Params (or a result): absent, the valid shape for the method, or anything at all.
#[derive(Arbitrary, Debug)]
enum Params {
    Absent,
    Valid,
    Raw(String),
}

const REQUESTS: [(&str, &str); 19] = [
    ("tools/list", "{}"),
    ("tools/list", r#"{"cursor":"zest:1"}"#),
    ("tools/call", r#"{"name":"echo","arguments":{"text":"hi"}}"#),
    ("tools/call", r#"{"name":"add","arguments":{"a":1,"b":2},"_meta":{"progressToken":"p"}}"#),
    ("tools/call", r#"{"name":"missing"}"#),
    ("resources/list", "{}"),
    ("resources/templates/list", "{}"),
    ("resources/read", r#"{"uri":"test://static"}"#),
    ("resources/read", r#"{"uri":"test://t/42/data"}"#),
    ("prompts/list", "{}"),
    ("prompts/get", r#"{"name":"greet","arguments":{"who":"you"}}"#),
    (
        "completion/complete",
        r#"{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"a"}}"#,
    ),
    ("resources/subscribe", r#"{"uri":"test://static"}"#),
    ("resources/unsubscribe", r#"{"uri":"test://static"}"#),
    ("logging/setLevel", r#"{"level":"warning"}"#),
    ("ping", "{}"),
    (
        "initialize",
        r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"again","version":"1"}}"#,
    ),
    ("no/such", "{}"),
    ("sampling/createMessage", "{}"),
];

const NOTIFICATIONS: [(&str, &str); 4] = [
    ("notifications/initialized", "{}"),
    ("notifications/roots/list_changed", "{}"),
    ("notifications/progress", r#"{"progressToken":0,"progress":1}"#),
    ("notifications/whatever", "{}"),
];

const SERVER_REQUESTS: [&str; 4] =
    ["ping", "roots/list", "sampling/createMessage", "elicitation/create"];

impl Id {
    fn json(&self) -> String {
        match self {
            Self::Num(n) => n.to_string(),
            Self::Str(s) => format!("\"c{s}\""),
        }
    }
}

/// Closes `head` with a `key` member spliced in as text: a `Raw` that is not JSON makes an
/// invalid frame, on purpose.
fn with_member(mut head: String, key: &str, params: &Params, valid: &str) -> String {
    match params {
        Params::Absent => {}
        Params::Valid => head = format!("{head},\"{key}\":{valid}"),
        Params::Raw(raw) => head = format!("{head},\"{key}\":{raw}"),
    }
    head.push('}');
    head
}

impl ClientFrame {
    fn text(&self) -> String {
        match self {
            Self::Request { id, method, params } => {
                let (name, valid) = REQUESTS[usize::from(*method) % REQUESTS.len()];
                let head = format!(r#"{{"jsonrpc":"2.0","id":{},"method":"{name}""#, id.json());
                with_member(head, "params", params, valid)
            }
            Self::Notification { method, params } => {
                let (name, valid) = NOTIFICATIONS[usize::from(*method) % NOTIFICATIONS.len()];
                let head = format!(r#"{{"jsonrpc":"2.0","method":"{name}""#);
                with_member(head, "params", params, valid)
            }
            Self::Cancelled { id } => format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{},"reason":"fuzz"}}}}"#,
                id.json()
            ),
            Self::Response { id, ok: true, result } => {
                let head = format!(r#"{{"jsonrpc":"2.0","id":{id}"#);
                with_member(head, "result", result, r#"{"roots":[]}"#)
            }
            Self::Response { id, ok: false, .. } => {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-1,"message":"no"}}}}"#)
            }
            Self::Progress { token, progress } => format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":{progress}}}}}"#
            ),
        }
    }
}

fn registry() -> Registry<u8> {
    let mut r = Registry::default();
    let echo: Tool = serde_json::from_value(json!({"name":"echo","inputSchema":{
        "type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}))
    .unwrap();
    r.add_tool(echo, 1);
    let add: Tool = serde_json::from_value(json!({"name":"add",
        "inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}},
        "outputSchema":{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}}))
    .unwrap();
    r.add_tool(add, 2);
    let resource: Resource =
        serde_json::from_value(json!({"uri":"test://static","name":"static"})).unwrap();
    r.add_resource(resource, 3);
    let template: ResourceTemplate =
        serde_json::from_value(json!({"uriTemplate":"test://t/{id}/data","name":"t"})).unwrap();
    r.add_resource_template(template, 4);
    let prompt: Prompt = serde_json::from_value(
        json!({"name":"greet","arguments":[{"name":"who","required":true}]}),
    )
    .unwrap();
    r.add_prompt(prompt, 5);
    r.set_completion_handler(6);
    r
}

struct Run {
    server: Server<u8>,
    now: Instant,
    events: Vec<Event<u8>>,
    /// Calls reported and neither answered nor cancelled yet.
    calls: Vec<RequestId>,
    issued: Vec<RequestId>,
}

impl Run {
    fn drain(&mut self) {
        while let Some(out) = self.server.poll_output() {
            match out {
                Output::Transmit(t) => check_transmit(&t),
                Output::Event(e) => {
                    match &e {
                        Event::Call { id, .. } => self.calls.push(id.clone()),
                        Event::Cancelled { id } => {
                            if let Some(i) = self.calls.iter().position(|c| c == id) {
                                self.calls.remove(i);
                            }
                        }
                        _ => {}
                    }
                    self.events.push(e);
                }
            }
        }
    }

    fn feed(&mut self, mut text: String, newline: bool) {
        if newline {
            text.push('\n');
        }
        self.server.handle_input(data(self.now, text.as_bytes()));
    }

    fn step(&mut self, step: &Step) {
        let now = self.now;
        match step {
            Step::Bytes(b) => self.server.handle_input(data(now, b)),
            Step::Frame(f, newline) => self.feed(f.text(), *newline),
            Step::Batch(frames) => {
                let items: Vec<String> = frames.iter().take(8).map(ClientFrame::text).collect();
                self.feed(format!("[{}]", items.join(",")), true);
            }
            Step::Advance(units) => {
                self.now += Duration::from_millis(u64::from(*units) * 64);
                self.server.handle_input(Input::Timeout(self.now));
                self.drain();
                if let Some(next) = self.server.poll_timeout() {
                    assert!(next > self.now, "a deadline at or before a timeout input survived");
                }
            }
            Step::Respond(k, answer) => {
                if self.calls.is_empty() {
                    return;
                }
                let id = self.calls.remove(usize::from(*k) % self.calls.len());
                let result = match answer {
                    Answer::Text => Ok(json!({"content":[{"type":"text","text":"t"}]})),
                    Answer::Structured => Ok(json!({"content":[],"structuredContent":{"sum":3}})),
                    Answer::BadStructured => {
                        Ok(json!({"content":[],"structuredContent":{"sum":"x"}}))
                    }
                    Answer::Error => Err(ErrorObject::new(-32603, "handler failed")),
                };
                let outcome = self.server.respond(now, id, result.map(RawJson::from));
                if !self.server.is_closed() {
                    assert_eq!(outcome, Ok(()), "a reported call could not be answered");
                }
            }
            Step::Progress(k, value) => {
                if let Some(id) = self.calls.get(usize::from(*k) % self.calls.len().max(1)) {
                    let id = id.clone();
                    let _ = self.server.progress(now, &id, f64::from(*value), None, None);
                }
            }
            Step::Request { method, timeout_s } => {
                let method = SERVER_REQUESTS[usize::from(*method) % SERVER_REQUESTS.len()];
                let opts =
                    RequestOptions::default().timeout(Duration::from_secs(u64::from(*timeout_s)));
                if let Ok(id) = self.server.request(now, None, method, None, opts) {
                    self.issued.push(id);
                }
            }
            Step::Cancel(k) => {
                if !self.issued.is_empty() {
                    let id = self.issued[usize::from(*k) % self.issued.len()].clone();
                    let _ = self.server.cancel(now, &id, None);
                }
            }
            Step::Log(level) => {
                let level = match level % 4 {
                    0 => LoggingLevel::Debug,
                    1 => LoggingLevel::Info,
                    2 => LoggingLevel::Warning,
                    _ => LoggingLevel::Error,
                };
                let _ = self.server.log(now, None, level, Some("fuzz"), json!("hello"));
            }
            Step::ListChanged(kind) => {
                let kind = match kind % 3 {
                    0 => ListKind::Tools,
                    1 => ListKind::Prompts,
                    _ => ListKind::Resources,
                };
                self.server.notify_list_changed(now, kind);
            }
            Step::ResourceUpdated(subscribed) => {
                let uri = if *subscribed { "test://static" } else { "test://other" };
                self.server.resource_updated(now, uri);
            }
            Step::End => self.server.handle_input(end(now)),
            Step::Fail => self.server.handle_input(failed(now)),
            Step::Close => self.server.close(now),
        }
        self.drain();
    }
}

fuzz_target!(|case: Case| {
    let t0 = Instant::now();
    let mut cfg = ServerConfig::new("fuzz-server", "1");
    cfg.page_size = 1;
    cfg.max_line = 4096;
    cfg.strict_initialized = case.strict_initialized;
    let mut run = Run {
        server: Server::new(cfg, registry(), t0),
        now: t0,
        events: Vec::new(),
        calls: Vec::new(),
        issued: Vec::new(),
    };
    let version = VERSIONS[usize::from(case.version) % VERSIONS.len()];
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":version,
        "capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},
        "clientInfo":{"name":"fuzz-client","version":"1"}}});
    run.feed(init.to_string(), true);
    run.drain();
    if !case.skip_initialized {
        run.feed(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(), true);
    }
    run.drain();
    assert!(matches!(run.events.first(), Some(Event::Initialized(_))), "{:?}", run.events);
    for step in case.steps.iter().take(256) {
        run.step(step);
    }
    run.server.close(run.now);
    run.drain();
    check(&run);
});

fn check(run: &Run) {
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
}
