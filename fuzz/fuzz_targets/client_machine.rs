//! A ready `Client` (handshake done on a canned `initialize` result), then arbitrary server
//! bytes and well-formed server frames, interleaved with timeouts at increasing virtual
//! instants and the app's commands. Outputs are drained after every step.
//!
//! Never panics; writes only valid lines; every request it issued ends in exactly one
//! `Response`; after `close()` exactly one `Closed`, last; a timeout input leaves no deadline
//! at or before it.
#![no_main]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use zest_core::client::{Client, ClientConfig, Event};
use zest_core::io::{Input, Output};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::RequestOptions;
use zest_fuzz::{check_transmit, data, end, failed};

const INIT_RESULT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true},"logging":{}},"serverInfo":{"name":"canned","version":"1"}}}
"#;

#[derive(Arbitrary, Debug)]
enum Step {
    /// Raw bytes from the server.
    Bytes(Vec<u8>),
    /// A well-formed frame from the server, newline-terminated (or not).
    Frame(ServerFrame, bool),
    /// Time passes (in units of 64 ms, so about an hour at most); a timeout input follows.
    Advance(u16),
    /// The app sends a request.
    Request {
        method: u8,
        timeout_s: u8,
        progress: bool,
        reset: bool,
    },
    /// The app cancels one of its requests.
    Cancel(u8),
    /// The app answers one of the server's requests.
    Respond(u8, bool),
    /// The app sends a notification.
    Notify,
    /// The server's stdout ends, or breaks.
    End,
    Fail,
    /// The app closes the session.
    Close,
}

#[derive(Arbitrary, Debug)]
enum ServerFrame {
    Result { id: u8, params: Params },
    Error { id: u8, code: i16 },
    Progress { token: u8, progress: u8, total: Option<u8> },
    Request { id: u8, string_id: bool, method: u8, params: Params },
    Notification { method: u8, params: Params },
    Cancelled { id: u8, string_id: bool },
    Batch(Vec<(u8, bool)>),
}

/// Params (or a result) for a frame: absent, the valid shape for the method, or anything.
#[derive(Arbitrary, Debug)]
enum Params {
    Absent,
    Valid,
    Raw(String),
}

const SERVER_REQUESTS: [(&str, &str); 5] = [
    ("ping", "{}"),
    ("roots/list", "{}"),
    (
        "sampling/createMessage",
        r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}"#,
    ),
    (
        "elicitation/create",
        r#"{"message":"name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}"#,
    ),
    ("no/such", "{}"),
];

const NOTIFICATIONS: [(&str, &str); 7] = [
    ("notifications/message", r#"{"level":"info","data":"hello"}"#),
    ("notifications/resources/updated", r#"{"uri":"test://x"}"#),
    ("notifications/tools/list_changed", "{}"),
    ("notifications/elicitation/complete", r#"{"elicitationId":"e1"}"#),
    ("notifications/progress", r#"{"progressToken":1,"progress":0.5}"#),
    ("notifications/cancelled", r#"{"requestId":"s1"}"#),
    ("notifications/whatever", "{}"),
];

const CLIENT_REQUESTS: [&str; 5] =
    ["tools/call", "tools/list", "resources/read", "ping", "no/such"];

fn id_value(id: u8, string_id: bool) -> Value {
    if string_id {
        json!(format!("s{id}"))
    } else {
        json!(id)
    }
}

/// Closes `head` with a `key` member spliced in as text: a `Raw` that is not JSON makes an
/// invalid frame, on purpose.
fn with_member(mut head: String, key: &str, params: &Params, valid: &str) -> Vec<u8> {
    match params {
        Params::Absent => {}
        Params::Valid => head = format!("{head},\"{key}\":{valid}"),
        Params::Raw(raw) => head = format!("{head},\"{key}\":{raw}"),
    }
    head.push('}');
    head.into_bytes()
}

impl ServerFrame {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Self::Result { id, params } => {
                let head = format!(r#"{{"jsonrpc":"2.0","id":{id}"#);
                with_member(head, "result", params, r#"{"content":[]}"#)
            }
            Self::Error { id, code } => serde_json::to_vec(
                &json!({"jsonrpc":"2.0","id":id,"error":{"code":code,"message":"no"}}),
            )
            .unwrap(),
            Self::Progress { token, progress, total } => serde_json::to_vec(&json!({
                "jsonrpc":"2.0","method":"notifications/progress",
                "params":{"progressToken":token,"progress":progress,"total":total}
            }))
            .unwrap(),
            Self::Request { id, string_id, method, params } => {
                let (name, valid) = SERVER_REQUESTS[usize::from(*method) % SERVER_REQUESTS.len()];
                let head = format!(
                    r#"{{"jsonrpc":"2.0","id":{},"method":"{name}""#,
                    id_value(*id, *string_id)
                );
                with_member(head, "params", params, valid)
            }
            Self::Notification { method, params } => {
                let (name, valid) = NOTIFICATIONS[usize::from(*method) % NOTIFICATIONS.len()];
                let head = format!(r#"{{"jsonrpc":"2.0","method":"{name}""#);
                with_member(head, "params", params, valid)
            }
            Self::Cancelled { id, string_id } => serde_json::to_vec(&json!({
                "jsonrpc":"2.0","method":"notifications/cancelled",
                "params":{"requestId":id_value(*id, *string_id),"reason":"fuzz"}
            }))
            .unwrap(),
            Self::Batch(items) => {
                let items: Vec<Value> = items
                    .iter()
                    .take(8)
                    .map(|(id, ok)| match ok {
                        true => json!({"jsonrpc":"2.0","id":id,"result":{}}),
                        false => {
                            json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})
                        }
                    })
                    .collect();
                serde_json::to_vec(&items).unwrap()
            }
        }
    }
}

struct Run {
    client: Client,
    now: Instant,
    events: Vec<Event>,
    issued: Vec<RequestId>,
    peer_requests: Vec<RequestId>,
}

impl Run {
    fn drain(&mut self) {
        while let Some(out) = self.client.poll_output() {
            match out {
                Output::Transmit(t) => check_transmit(&t),
                Output::Event(e) => {
                    if let Event::Request { id, .. } = &e {
                        self.peer_requests.push(id.clone());
                    }
                    self.events.push(e);
                }
            }
        }
    }

    fn step(&mut self, step: &Step) {
        let now = self.now;
        match step {
            Step::Bytes(b) => self.client.handle_input(data(now, b)),
            Step::Frame(f, newline) => {
                let mut b = f.bytes();
                if *newline {
                    b.push(b'\n');
                }
                self.client.handle_input(data(now, &b));
            }
            Step::Advance(units) => {
                self.now += Duration::from_millis(u64::from(*units) * 64);
                self.client.handle_input(Input::Timeout(self.now));
                self.drain();
                if let Some(next) = self.client.poll_timeout() {
                    assert!(next > self.now, "a deadline at or before a timeout input survived");
                }
            }
            Step::Request { method, timeout_s, progress, reset } => {
                let method = CLIENT_REQUESTS[usize::from(*method) % CLIENT_REQUESTS.len()];
                let opts = RequestOptions {
                    timeout: Some(Duration::from_secs(u64::from(*timeout_s))),
                    progress: *progress,
                    reset_on_progress: *reset,
                    ..RequestOptions::default()
                };
                let params = RawJson::from(json!({"name":"echo","uri":"test://x"}));
                match self.client.request(now, method, Some(params), opts) {
                    Ok(id) => self.issued.push(id),
                    Err(e) => assert!(self.client.is_closed(), "request refused while open: {e}"),
                }
            }
            Step::Cancel(k) => {
                if let Some(id) = pick(&self.issued, *k) {
                    let _ = self.client.cancel(now, &id, Some("fuzz"));
                }
            }
            Step::Respond(k, ok) => {
                if let Some(id) = pick(&self.peer_requests, *k) {
                    let result = if *ok {
                        Ok(RawJson::empty_object())
                    } else {
                        Err(ErrorObject::new(-1, "no"))
                    };
                    let _ = self.client.respond(now, id, result);
                }
            }
            Step::Notify => {
                let _ = self.client.notify(now, "notifications/roots/list_changed", None);
            }
            Step::End => self.client.handle_input(end(now)),
            Step::Fail => self.client.handle_input(failed(now)),
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
    let mut cfg = ClientConfig::new("fuzz", "1").session_era();
    cfg.max_message = 4096;
    cfg.capabilities = serde_json::from_value(
        json!({"roots":{"listChanged":true},"sampling":{},"elicitation":{}}),
    )
    .unwrap();
    let mut run = Run {
        client: Client::new(cfg, t0),
        now: t0,
        events: Vec::new(),
        issued: Vec::new(),
        peer_requests: Vec::new(),
    };
    run.drain();
    run.client.handle_input(data(t0, INIT_RESULT));
    run.drain();
    assert!(matches!(run.events[..], [Event::Ready(_)]), "{:?}", run.events);
    for step in steps.iter().take(256) {
        run.step(step);
    }
    run.client.close(run.now);
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
