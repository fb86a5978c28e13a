//! The Streamable HTTP and legacy HTTP+SSE router, driven in memory and in virtual time by a
//! scripted HTTP client: statuses, headers, JSON and SSE answers, routes, resumption,
//! sessions and their expiry, the DNS-rebinding guard.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::*;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use serde_json::{json, Value};
use zest_core::framing::sse::{SseDecoder, SseItem};
use zest_core::http::server::{Router, RouterConfig, RouterEvent, SessionId};
use zest_core::io::{Input, Output, Receive, RequestHead, StreamEvent, StreamId, Transmit};
use zest_core::jsonrpc::RawJson;
use zest_core::schema::LoggingLevel;
use zest_core::server::{Broadcast, Call, Event, ListKind, ServerConfig};
use zest_core::testkit::VirtualClock;
use zest_core::RequestOptions;

#[derive(Debug, Default)]
struct Answer {
    status: Option<StatusCode>,
    headers: HeaderMap,
    body: Vec<u8>,
    closed: bool,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }

    /// The SSE events as (id, data), priming events included (their data is empty).
    fn events(&self) -> Vec<(Option<String>, String)> {
        let mut out = Vec::new();
        let mut decoder = SseDecoder::default();
        decoder.feed(&self.body, &mut |item| {
            if let SseItem::Event(e) = item {
                out.push((e.id.map(str::to_owned), e.data.to_owned()));
            }
        });
        out
    }

    /// The JSON messages of an SSE answer, priming events left out.
    fn messages(&self) -> Vec<Value> {
        let events = self.events();
        events
            .iter()
            .filter(|(_, d)| !d.is_empty())
            .map(|(_, d)| serde_json::from_str(d).unwrap())
            .collect()
    }

    fn session(&self) -> String {
        self.headers["mcp-session-id"].to_str().unwrap().to_owned()
    }
}

struct Http {
    router: Router<Handler>,
    clock: VirtualClock,
    next: u64,
    answers: HashMap<StreamId, Answer>,
    events: Vec<RouterEvent<Handler>>,
    version: &'static str,
    /// Decide answers after each drain, like a runtime that polls handlers where it starts
    /// them (off: like one whose handlers run on threads, answers decided when clear or
    /// after `json_wait`).
    decide: bool,
}

impl Http {
    fn new(config: RouterConfig) -> Self {
        let mut server = ServerConfig::new("t", "1");
        server.announce_changes = true;
        let router = Router::new(server, config, registry());
        Self {
            router,
            clock: VirtualClock::new(),
            next: 1,
            answers: HashMap::new(),
            events: Vec::new(),
            version: "2025-11-25",
            decide: true,
        }
    }

    fn now(&self) -> Instant {
        self.clock.now()
    }

    fn pump(&mut self) {
        self.drain();
        if self.decide {
            self.router.decide_answers();
            self.drain();
        }
    }

    fn drain(&mut self) {
        while let Some(out) = self.router.poll_output() {
            match out {
                Output::Transmit(Transmit::Respond { stream, head }) => {
                    let a = self.answers.entry(stream).or_default();
                    assert!(a.status.is_none(), "two heads on {stream}");
                    a.status = Some(head.status);
                    a.headers = head.headers;
                }
                Output::Transmit(Transmit::Write { stream, bytes }) => {
                    let a = self.answers.entry(stream).or_default();
                    assert!(a.status.is_some() && !a.closed, "write outside a response: {stream}");
                    a.body.extend_from_slice(&bytes);
                }
                Output::Transmit(Transmit::Close { stream }) => {
                    let a = self.answers.entry(stream).or_default();
                    assert!(!a.closed, "closed twice: {stream}");
                    a.closed = true;
                }
                Output::Transmit(t) => panic!("unexpected {t:?}"),
                Output::Event(e) => self.events.push(e),
            }
        }
    }

    fn send(
        &mut self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> StreamId {
        let stream = StreamId(self.next);
        self.next += 1;
        let mut map = HeaderMap::new();
        map.insert("host", HeaderValue::from_static("127.0.0.1:8080"));
        for (k, v) in headers {
            let name = http::HeaderName::from_bytes(k.as_bytes()).unwrap();
            map.insert(name, HeaderValue::from_str(v).unwrap());
        }
        let head = RequestHead { method, uri: path.parse().unwrap(), headers: map };
        let now = self.now();
        let accept = StreamEvent::Accept(Box::new(head));
        self.router.handle_input(Input::Receive(now, Receive { stream, event: accept }));
        self.pump();
        if !body.is_empty() {
            self.router.handle_input(zest_core::io::data(now, stream, body));
            self.pump();
        }
        self.router.handle_input(Input::Receive(now, Receive { stream, event: StreamEvent::End }));
        self.pump();
        stream
    }

    /// POSTs a JSON-RPC message to /mcp with the headers a good client sends.
    fn post(&mut self, session: Option<&str>, message: Value) -> StreamId {
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", self.version),
        ];
        if let Some(s) = session {
            headers.push(("mcp-session-id", s));
        }
        self.send(Method::POST, "/mcp", &headers, &serde_json::to_vec(&message).unwrap())
    }

    fn get(&mut self, session: &str, last_event_id: Option<&str>) -> StreamId {
        let mut headers = vec![("accept", "text/event-stream"), ("mcp-session-id", session)];
        if let Some(id) = last_event_id {
            headers.push(("last-event-id", id));
        }
        self.send(Method::GET, "/mcp", &headers, b"")
    }

    fn drop_stream(&mut self, stream: StreamId) {
        let failed = StreamEvent::Failed(zest_core::io::TransportFailure::Reset("gone".into()));
        self.router.handle_input(Input::Receive(self.now(), Receive { stream, event: failed }));
        self.pump();
    }

    fn answer(&self, stream: StreamId) -> &Answer {
        &self.answers[&stream]
    }

    /// initialize + initialized; the session id.
    fn handshake(&mut self, capabilities: Value) -> String {
        let init = self.post(
            None,
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion": self.version, "capabilities": capabilities,
            "clientInfo":{"name":"c","version":"1"}}}),
        );
        let a = self.answer(init);
        assert_eq!(a.status, Some(StatusCode::OK), "{a:?}");
        assert_eq!(a.json()["result"]["protocolVersion"], self.version);
        let session = a.session();
        let note = self
            .post(Some(&session), json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        assert_eq!(self.answer(note).status, Some(StatusCode::ACCEPTED));
        assert!(self.answer(note).body.is_empty());
        self.events.clear();
        session
    }

    /// The app answers the first call it was asked for, as `echo` does; then a pump.
    fn answer_first_call(&mut self) {
        let (sid, id, call_params) = self.take_calls()[0].clone();
        let result = app(&"echo", &call_params).unwrap();
        let now = self.now();
        self.router.session_mut(&sid).unwrap().respond(now, id, Ok(result)).unwrap();
        self.pump();
    }

    fn take_calls(&mut self) -> Vec<(SessionId, zest_core::jsonrpc::RequestId, Call)> {
        let mut calls = Vec::new();
        for e in std::mem::take(&mut self.events) {
            if let Event::Call { id, call, .. } = e.event {
                calls.push((e.session, id, call));
            }
        }
        calls
    }
}

/// `tools/call` of `echo` with the text `x`, request id `id`.
fn echo_x(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"x"}}})
}

fn config() -> RouterConfig {
    RouterConfig::new([7; 32])
}

#[test]
fn handshake_per_revision_then_json_answers() {
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut http = Http::new(config());
        http.version = version;
        let session = http.handshake(json!({}));
        assert_eq!(session.len(), 32);
        assert!(session.bytes().all(|b| b.is_ascii_hexdigit()));
        let list = http.post(Some(&session), json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
        let a = http.answer(list);
        assert_eq!(a.status, Some(StatusCode::OK));
        assert_eq!(a.headers["content-type"], "application/json");
        assert!(a.closed);
        assert_eq!(a.json()["result"]["tools"].as_array().unwrap().len(), 3);
    }
}

#[test]
fn a_call_streams_its_progress_log_and_sampling_then_its_reply() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({"sampling":{}}));
    let call = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","id":"c1","method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"p1"}}}),
    );
    // The call waits for the app: the answer is an SSE stream, primed (2025-11-25).
    let a = http.answer(call);
    assert_eq!(a.status, Some(StatusCode::OK));
    assert_eq!(a.headers["content-type"], "text/event-stream");
    assert_eq!(a.events(), [(Some("1-0".to_owned()), String::new())]);
    assert!(a.body.starts_with(b"id: 1-0\nretry: 1000\n"), "{}", String::from_utf8_lossy(&a.body));
    let calls = http.take_calls();
    let (sid, id, _) = calls[0].clone();
    let now = http.now();
    let s = http.router.session_mut(&sid).unwrap();
    s.progress(now, &id, 0.5, Some(1.0), None).unwrap();
    s.log(now, Some(&id), LoggingLevel::Info, None, json!("working")).unwrap();
    let sampling =
        json!({"messages":[{"role":"user","content":{"type":"text","text":"?"}}],"maxTokens":5});
    let asked = s
        .request(
            now,
            Some(&id),
            "sampling/createMessage",
            Some(RawJson::from(sampling)),
            RequestOptions::default(),
        )
        .unwrap();
    http.pump();
    let messages = http.answer(call).messages();
    let methods: Vec<&str> = messages.iter().map(|m| m["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        ["notifications/progress", "notifications/message", "sampling/createMessage"]
    );
    assert_eq!(messages[0]["params"]["progressToken"], "p1");
    // The client answers the sampling request with a POST of its own: 202.
    let reply = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","id": messages[2]["id"],
        "result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}}),
    );
    assert_eq!(http.answer(reply).status, Some(StatusCode::ACCEPTED));
    assert!(http
        .events
        .iter()
        .any(|e| matches!(&e.event, Event::Response { id, result: Ok(_) } if *id == asked)));
    // The handler finishes: the reply ends the stream.
    let now = http.now();
    http.router
        .session_mut(&sid)
        .unwrap()
        .respond(now, id, Ok(RawJson::from(json!({"content":[]}))))
        .unwrap();
    http.pump();
    let a = http.answer(call);
    assert!(a.closed);
    let messages = a.messages();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[3]["id"], "c1");
    let ids: Vec<String> = a.events().into_iter().filter_map(|(id, _)| id).collect();
    assert_eq!(ids, ["1-0", "1-1", "1-2", "1-3", "1-4"]);
}

#[test]
fn a_dropped_answer_resumes_with_last_event_id_and_nothing_twice() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let call = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":1}}}),
    );
    let (sid, id, _) = http.take_calls()[0].clone();
    let now = http.now();
    http.router.session_mut(&sid).unwrap().progress(now, &id, 1.0, None, None).unwrap();
    http.pump();
    let seen = http.answer(call).events();
    let last = seen.last().unwrap().0.clone().unwrap();
    assert_eq!(last, "1-1");
    http.drop_stream(call);
    // While nobody carries the stream, the session goes on and keeps what it sends.
    let s = http.router.session_mut(&sid).unwrap();
    s.progress(now, &id, 2.0, None, None).unwrap();
    s.respond(now, id, Ok(RawJson::from(json!({"content":[]})))).unwrap();
    http.pump();
    let before = http.answer(call).body.len();
    let resumed = http.get(&session, Some(&last));
    let a = http.answer(resumed);
    assert_eq!(a.status, Some(StatusCode::OK));
    assert!(a.closed, "the reply was among the replayed events: the stream ends");
    let replayed = a.messages();
    assert_eq!(replayed.len(), 2, "{replayed:?}");
    assert_eq!(replayed[0]["params"]["progress"], 2.0);
    assert_eq!(replayed[1]["id"], 5);
    assert_eq!(http.answer(call).body.len(), before, "nothing went to the dead exchange");
    // A client that resumes from the same id again did not get that replay (the connection
    // broke on the way): it gets the same events again, and from the last one, nothing.
    let again = http.get(&session, Some(&last));
    assert_eq!(http.answer(again).messages(), replayed);
    let done = http.get(&session, Some("1-3"));
    assert!(http.answer(done).messages().is_empty());
    // Two sweeps later the stream is forgotten.
    assert_eq!(http.router.events_held(), Some(3));
    for _ in 0..2 {
        let t = http.router.poll_timeout().unwrap();
        http.clock.advance_to(t);
        http.router.handle_input(Input::Timeout(t));
        http.pump();
    }
    assert_eq!(http.router.events_held(), Some(0));
    let late = http.get(&session, Some(&last));
    assert!(http.answer(late).messages().is_empty());
}

/// A stream written whole stays resumable for a while: the connection may break after the
/// router wrote the last event and before it arrived (regression: it was forgotten at once,
/// and the call failed with `StreamLost` though it had been answered).
#[test]
fn a_stream_written_whole_stays_resumable_until_the_second_sweep() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let call = http.post(Some(&session), echo_x(5));
    let (sid, id, _) = http.take_calls()[0].clone();
    let now = http.now();
    http.router
        .session_mut(&sid)
        .unwrap()
        .respond(now, id, Ok(RawJson::from(json!({"content":[]}))))
        .unwrap();
    http.pump();
    assert!(http.answer(call).closed, "the reply went out and the stream ended");
    // The client saw only the priming event: the reply was lost on the way.
    let resumed = http.get(&session, Some("1-0"));
    let replayed = http.answer(resumed).messages();
    assert_eq!(replayed.len(), 1, "{replayed:?}");
    assert_eq!(replayed[0]["id"], 5);
}

#[test]
fn a_resumed_open_stream_carries_what_comes_next() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let call = http.post(Some(&session), echo_x(5));
    let (sid, id, _) = http.take_calls()[0].clone();
    http.drop_stream(call);
    let resumed = http.get(&session, Some("1-0"));
    assert!(!http.answer(resumed).closed);
    let now = http.now();
    http.router
        .session_mut(&sid)
        .unwrap()
        .respond(now, id, Ok(RawJson::from(json!({"content":[]}))))
        .unwrap();
    http.pump();
    let a = http.answer(resumed);
    assert!(a.closed);
    assert_eq!(a.messages()[0]["id"], 5);
}

#[test]
fn list_changes_go_on_the_get_stream_and_wait_for_one() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let now = http.now();
    http.router.change_registry(now, &[ListKind::Tools], |r| {
        r.add_tool(tool("extra", json!({"type":"object"})), "echo");
    });
    http.pump();
    // No GET stream yet: the notification waits, then arrives first on the new stream.
    let get = http.get(&session, None);
    let a = http.answer(get);
    assert_eq!(a.status, Some(StatusCode::OK));
    assert!(!a.closed);
    assert_eq!(a.messages()[0]["method"], "notifications/tools/list_changed");
    // Every session sees the new registry.
    let list = http.post(Some(&session), json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert_eq!(http.answer(list).json()["result"]["tools"].as_array().unwrap().len(), 4);
    // One standalone stream per session.
    let second = http.get(&session, None);
    assert_eq!(http.answer(second).status, Some(StatusCode::CONFLICT));
    // A log line outside any request goes there too.
    let sid = SessionId::clone(http.router.sessions().next().unwrap());
    let now = http.now();
    http.router
        .session_mut(&sid)
        .unwrap()
        .log(now, None, LoggingLevel::Info, None, json!("idle"))
        .unwrap();
    http.pump();
    assert_eq!(http.answer(get).messages()[1]["method"], "notifications/message");
}

#[test]
fn a_broadcast_reaches_every_session_and_updates_only_subscribers() {
    let mut http = Http::new(config());
    let a = http.handshake(json!({}));
    let b = http.handshake(json!({}));
    let (get_a, get_b) = (http.get(&a, None), http.get(&b, None));
    let uri = "test://static-text";
    let sub = json!({"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri": uri}});
    let subscribed = http.post(Some(&a), sub);
    assert!(http.answer(subscribed).json()["result"].is_object());
    let now = http.now();
    Broadcast::ResourceUpdated { uri: uri.into() }.apply_all(now, &mut http.router);
    let log =
        Broadcast::Log { level: LoggingLevel::Info, logger: Some("db".into()), data: json!(1) };
    log.apply_all(now, &mut http.router);
    let change = Broadcast::ChangeRegistry {
        changed: vec![ListKind::Tools],
        change: Box::new(|r: &mut zest_core::server::Registry<Handler>| {
            r.remove_tool("echo");
        }),
    };
    change.apply_all(now, &mut http.router);
    http.pump();
    let methods = |get| -> Vec<String> {
        let messages = http.answer(get).messages();
        messages.iter().map(|m| m["method"].as_str().unwrap_or("").to_owned()).collect()
    };
    let logged = ["notifications/message", "notifications/tools/list_changed"];
    assert_eq!(methods(get_b), logged, "b did not subscribe");
    let mut for_a = vec!["notifications/resources/updated"];
    for_a.extend(logged);
    assert_eq!(methods(get_a), for_a);
    assert_eq!(http.answer(get_a).messages()[1]["params"]["logger"], "db");
    let list = http.post(Some(&b), json!({"jsonrpc":"2.0","id":4,"method":"tools/list"}));
    let tools = http.answer(list).json()["result"]["tools"].clone();
    assert!(tools.as_array().unwrap().iter().all(|t| t["name"] != "echo"), "{tools}");
}

/// Regression (found by the fault-injection properties): what the session sent on its GET
/// stream while the client was reconnecting waited in the backlog for a *fresh* GET, so a
/// client that resumed with `Last-Event-ID` never got it.
#[test]
fn a_resumed_get_stream_gets_what_was_sent_while_it_was_down() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let sid = SessionId::clone(http.router.sessions().next().unwrap());
    let get = http.get(&session, None);
    let log = |http: &mut Http, text: &str| {
        let now = http.now();
        let s = http.router.session_mut(&sid).unwrap();
        s.log(now, None, LoggingLevel::Info, None, json!(text)).unwrap();
        http.pump();
    };
    log(&mut http, "one");
    let events = http.answer(get).events();
    let last = events.last().unwrap().0.clone().unwrap();
    http.drop_stream(get);
    log(&mut http, "two");
    let resumed = http.get(&session, Some(&last));
    let a = http.answer(resumed);
    assert_eq!(a.status, Some(StatusCode::OK));
    let messages = a.messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["params"]["data"], "two");
    // It is carried on the resumed stream from now on.
    log(&mut http, "three");
    assert_eq!(http.answer(resumed).messages()[1]["params"]["data"], "three");
}

#[test]
fn transport_refusals_have_their_statuses() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    let body = serde_json::to_vec(&ping).unwrap();
    let cases: Vec<(Vec<(&str, &str)>, StatusCode)> = vec![
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            StatusCode::BAD_REQUEST,
        ),
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-session-id", "feed"),
            ],
            StatusCode::NOT_FOUND,
        ),
        (
            vec![
                ("content-type", "text/plain"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-session-id", &session),
            ],
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "application/json"),
                ("mcp-session-id", &session),
            ],
            StatusCode::NOT_ACCEPTABLE,
        ),
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "1999-01-01"),
            ],
            StatusCode::BAD_REQUEST,
        ),
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-session-id", &session),
                ("origin", "https://evil.example"),
            ],
            StatusCode::FORBIDDEN,
        ),
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "*/*"),
                ("mcp-session-id", &session),
                ("origin", "http://localhost:3000"),
            ],
            StatusCode::OK,
        ),
    ];
    for (headers, status) in cases {
        let stream = http.send(Method::POST, "/mcp", &headers, &body);
        let a = http.answer(stream);
        assert_eq!(a.status, Some(status), "{headers:?}: {a:?}");
        assert!(a.closed);
        if status != StatusCode::OK {
            assert!(a.json()["error"]["message"].is_string(), "{a:?}");
        }
    }
    let put = http.send(Method::PUT, "/mcp", &[], b"");
    assert_eq!(http.answer(put).status, Some(StatusCode::METHOD_NOT_ALLOWED));
    assert!(http.answer(put).headers.contains_key("allow"));
    let lost = http.send(Method::GET, "/elsewhere", &[], b"");
    assert_eq!(http.answer(lost).status, Some(StatusCode::NOT_FOUND));
    let health = http.send(Method::GET, "/health", &[], b"");
    assert_eq!(http.answer(health).json(), json!({"status":"ok"}));
}

#[test]
fn a_foreign_host_is_refused_before_anything_else() {
    let mut http = Http::new(config());
    let stream = StreamId(99);
    let mut headers = HeaderMap::new();
    headers.insert("host", HeaderValue::from_static("attacker.example:8080"));
    let head = RequestHead { method: Method::GET, uri: "/health".parse().unwrap(), headers };
    let now = http.now();
    http.router.handle_input(Input::Receive(
        now,
        Receive { stream, event: StreamEvent::Accept(Box::new(head)) },
    ));
    http.pump();
    assert_eq!(http.answer(stream).status, Some(StatusCode::FORBIDDEN));
}

#[test]
fn batches_only_on_2025_03_26() {
    let batch = json!([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]);
    let mut http = Http::new(config());
    http.version = "2025-03-26";
    let session = http.handshake(json!({}));
    let a = http.post(Some(&session), batch.clone());
    let answer = http.answer(a);
    assert_eq!(answer.status, Some(StatusCode::OK));
    assert_eq!(answer.json().as_array().unwrap().len(), 2);

    let mut http = Http::new(config());
    http.version = "2025-06-18";
    let session = http.handshake(json!({}));
    let a = http.post(Some(&session), batch);
    assert_eq!(http.answer(a).status, Some(StatusCode::BAD_REQUEST));
}

#[test]
fn delete_ends_the_session_and_its_id_then_gets_404() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let get = http.get(&session, None);
    let delete = http.send(Method::DELETE, "/mcp", &[("mcp-session-id", &session)], b"");
    assert_eq!(http.answer(delete).status, Some(StatusCode::OK));
    assert!(http.answer(get).closed, "the session's streams close with it");
    assert!(http.events.iter().any(|e| matches!(e.event, Event::Closed(_))));
    let ping = http.post(Some(&session), json!({"jsonrpc":"2.0","id":1,"method":"ping"}));
    assert_eq!(http.answer(ping).status, Some(StatusCode::NOT_FOUND));
    assert_eq!(http.router.session_count(), 0);
}

#[test]
fn idle_sessions_expire_and_busy_ones_do_not() {
    let mut cfg = config();
    cfg.idle_timeout = Duration::from_secs(60);
    let mut http = Http::new(cfg);
    let idle = http.handshake(json!({}));
    let busy = http.handshake(json!({}));
    let _stream = http.get(&busy, None);
    let deadline = http.router.poll_timeout().expect("a sweep is scheduled");
    assert!(deadline > http.now());
    // Time passes in sweeps; the idle session goes once 60 s have passed with nothing open.
    for _ in 0..20 {
        let t = http.router.poll_timeout().unwrap();
        http.clock.advance_to(t);
        let now = http.now();
        http.router.handle_input(Input::Timeout(now));
        http.pump();
    }
    let ping = http.post(Some(&idle), json!({"jsonrpc":"2.0","id":1,"method":"ping"}));
    assert_eq!(http.answer(ping).status, Some(StatusCode::NOT_FOUND));
    let ping = http.post(Some(&busy), json!({"jsonrpc":"2.0","id":1,"method":"ping"}));
    assert_eq!(http.answer(ping).status, Some(StatusCode::OK));
}

#[test]
fn stateless_mode_serves_without_sessions() {
    let mut cfg = config();
    cfg.stateless = true;
    let mut http = Http::new(cfg);
    let list = http.post(None, json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    let a = http.answer(list);
    assert_eq!(a.status, Some(StatusCode::OK), "{a:?}");
    assert!(!a.headers.contains_key("mcp-session-id"));
    assert_eq!(http.router.session_count(), 0, "the session ended with its POST");
    let get = http.get("anything", None);
    assert_eq!(http.answer(get).status, Some(StatusCode::METHOD_NOT_ALLOWED));
}

#[test]
fn json_mode_answers_a_slow_call_with_one_body() {
    let mut cfg = config();
    cfg.json_response = true;
    let mut http = Http::new(cfg);
    let session = http.handshake(json!({}));
    let call = http.post(Some(&session), echo_x(3));
    assert!(!http.answers.contains_key(&call), "nothing until the reply");
    http.answer_first_call();
    let a = http.answer(call);
    assert_eq!(a.status, Some(StatusCode::OK));
    assert_eq!(a.json()["result"]["content"][0]["text"], "x");
}

#[test]
fn a_call_answered_before_the_answer_is_decided_gets_one_json_body() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    http.decide = false;
    let call = http.post(Some(&session), echo_x(3));
    assert!(!http.answers.contains_key(&call), "undecided: nothing sent yet");
    // The handler is done (on a thread, say) before the POST has waited `json_wait`: its
    // reply is all the POST needs, so it goes at once, without `decide_answers`.
    http.answer_first_call();
    let a = http.answer(call);
    assert_eq!(a.status, Some(StatusCode::OK));
    assert_eq!(a.headers["content-type"], "application/json");
    assert_eq!(a.json()["result"]["content"][0]["text"], "x");
    assert!(a.closed);
    assert_eq!(http.router.exchange_count(), 0);
    assert_eq!(
        http.router.poll_timeout().map(|t| t > http.now() + Duration::from_secs(1)),
        Some(true)
    );
}

#[test]
fn a_call_that_reports_progress_before_the_decision_is_streamed() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    http.decide = false;
    let call = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":"p"}}}),
    );
    let (sid, id, call_params) = http.take_calls()[0].clone();
    let now = http.now();
    let s = http.router.session_mut(&sid).unwrap();
    s.progress(now, &id, 1.0, Some(2.0), None).unwrap();
    s.respond(now, id, Ok(app(&"echo", &call_params).unwrap())).unwrap();
    http.router.decide_answers();
    http.pump();
    let a = http.answer(call);
    assert_eq!(a.headers["content-type"], "text/event-stream");
    let methods: Vec<Value> = a.messages().iter().map(|m| m["method"].clone()).collect();
    assert_eq!(methods, [json!("notifications/progress"), Value::Null]);
    assert!(a.closed);
}

#[test]
fn an_answer_left_undecided_streams_once_it_has_waited_json_wait() {
    let mut http = Http::new(config().json_wait(Duration::from_millis(5)));
    let session = http.handshake(json!({}));
    http.decide = false;
    let call = http.post(Some(&session), echo_x(3));
    assert!(!http.answers.contains_key(&call));
    let start = http.now();
    assert_eq!(http.router.poll_timeout(), Some(start + Duration::from_millis(5)));
    // Other inputs, on this session too, leave it to its handler for now.
    let ping = http.post(Some(&session), json!({"jsonrpc":"2.0","id":4,"method":"ping"}));
    assert_eq!(http.answer(ping).json()["id"], 4);
    assert!(!http.answers.contains_key(&call), "a ping does not decide the call's answer");
    http.clock.advance(Duration::from_millis(4));
    http.router.handle_input(Input::Timeout(http.now()));
    http.pump();
    assert!(!http.answers.contains_key(&call), "not yet due");
    http.clock.advance(Duration::from_millis(1));
    http.router.handle_input(Input::Timeout(http.now()));
    http.pump();
    let a = http.answer(call);
    assert_eq!(a.headers["content-type"], "text/event-stream");
    assert!(!a.closed, "the stream waits for the handler's reply");
    http.answer_first_call();
    let a = http.answer(call);
    assert_eq!(a.messages().last().unwrap()["result"]["content"][0]["text"], "x");
    assert!(a.closed);
}

#[test]
fn a_client_gone_before_its_answer_is_decided_leaves_no_deadline() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    http.decide = false;
    let call = http.post(Some(&session), echo_x(3));
    let start = http.now();
    assert_eq!(http.router.poll_timeout(), Some(start + Duration::from_millis(5)));
    http.drop_stream(call);
    assert!(http.router.poll_timeout().is_some_and(|t| t > start + Duration::from_secs(1)));
}

#[test]
fn a_session_closed_while_an_answer_is_undecided_ends_its_stream_with_a_head() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    http.decide = false;
    let call = http.post(Some(&session), echo_x(3));
    let (sid, ..) = http.take_calls()[0].clone();
    let now = http.now();
    http.router.close_session(now, &sid);
    http.pump();
    let a = http.answer(call);
    // Not refused (a close without a head would be a 500): a stream that ends, as it would
    // had it been decided before the session closed.
    assert_eq!(a.status, Some(StatusCode::OK), "{a:?}");
    assert_eq!(a.headers["content-type"], "text/event-stream");
    assert!(a.closed);
}

#[test]
fn legacy_sse_client_and_server() {
    let mut http = Http::new(config());
    let sse = http.send(Method::GET, "/sse", &[("accept", "text/event-stream")], b"");
    let events = http.answer(sse).events();
    let endpoint = &events[0].1;
    assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");
    let path = endpoint.clone();
    let headers = [("content-type", "application/json")];
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}});
    let post = http.send(Method::POST, &path, &headers, &serde_json::to_vec(&init).unwrap());
    assert_eq!(http.answer(post).status, Some(StatusCode::ACCEPTED));
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    http.send(Method::POST, &path, &headers, &serde_json::to_vec(&list).unwrap());
    let messages: Vec<Value> = http.answer(sse).events()[1..]
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(messages[0]["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(messages[1]["result"]["tools"].as_array().unwrap().len(), 3);
    assert!(http.answer(sse).body.windows(14).any(|w| w == b"event: message"));
    // The session lives as long as its stream.
    http.drop_stream(sse);
    assert_eq!(http.router.session_count(), 0);
    let late = http.send(Method::POST, &path, &headers, &serde_json::to_vec(&list).unwrap());
    assert_eq!(http.answer(late).status, Some(StatusCode::NOT_FOUND));
}

#[test]
fn a_thousand_sessions_share_one_registry_and_respect_the_limit() {
    let mut cfg = config();
    cfg.max_sessions = 1000;
    let mut http = Http::new(cfg);
    for _ in 0..1000 {
        http.handshake(json!({}));
    }
    assert_eq!(http.router.session_count(), 1000);
    let init = http.post(
        None,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}),
    );
    assert_eq!(http.answer(init).status, Some(StatusCode::SERVICE_UNAVAILABLE));
    let now = http.now();
    http.router.change_registry(now, &[ListKind::Tools], |r| {
        r.add_tool(tool("late", json!({"type":"object"})), "echo");
    });
    http.pump();
    let first = SessionId::clone(http.router.sessions().next().unwrap());
    let list =
        http.post(Some(first.as_str()), json!({"jsonrpc":"2.0","id":9,"method":"tools/list"}));
    assert_eq!(http.answer(list).json()["result"]["tools"].as_array().unwrap().len(), 4);
}

#[test]
fn a_body_over_the_limit_gets_413() {
    let mut cfg = config();
    cfg.max_body = 64;
    let mut http = Http::new(cfg);
    let big = json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"x".repeat(100)}});
    let stream = http.post(None, big);
    assert_eq!(http.answer(stream).status, Some(StatusCode::PAYLOAD_TOO_LARGE));
}

#[test]
fn a_cancelled_call_ends_its_stream() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let call = http.post(Some(&session), echo_x(8));
    assert!(!http.answer(call).closed);
    let cancel = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":8,"reason":"enough"}}),
    );
    assert_eq!(http.answer(cancel).status, Some(StatusCode::ACCEPTED));
    assert!(http.answer(call).closed, "no reply will come: the stream ends");
}

#[test]
fn json_mode_answers_a_post_whose_calls_were_all_cancelled_with_an_empty_stream() {
    let mut cfg = config();
    cfg.json_response = true;
    let mut http = Http::new(cfg);
    let session = http.handshake(json!({}));
    let call = http.post(Some(&session), echo_x(8));
    assert!(!http.answers.contains_key(&call));
    let cancel = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":8,"reason":"enough"}}),
    );
    assert_eq!(http.answer(cancel).status, Some(StatusCode::ACCEPTED));
    let a = http.answer(call);
    // No reply is due, an empty `application/json` body would not parse, and a POST of
    // requests gets JSON or SSE (not 202): an event stream that ends with no event.
    assert_eq!(a.status, Some(StatusCode::OK), "{a:?}");
    assert_eq!(a.headers["content-type"], "text/event-stream");
    assert!(a.body.is_empty() && a.closed);
    assert_eq!(http.router.exchange_count(), 0);
}

#[test]
fn stateless_sessions_end_with_their_post_even_when_it_is_lost() {
    let mut cfg = config();
    cfg.stateless = true;
    let mut http = Http::new(cfg);
    let call = http.post(None, echo_x(1));
    assert_eq!(http.router.session_count(), 1, "the call waits for the app");
    http.drop_stream(call);
    let (sid, id, _) = http.take_calls()[0].clone();
    let now = http.now();
    http.router
        .session_mut(&sid)
        .unwrap()
        .respond(now, id, Ok(RawJson::from(json!({"content":[]}))))
        .unwrap();
    http.pump();
    assert_eq!(http.router.session_count(), 0, "nothing can resume it: the session is gone");
    // A batch refused outright leaves nothing behind either.
    http.version = "2025-06-18";
    let batch =
        json!([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]);
    let refused = http.post(None, batch);
    assert_eq!(http.answer(refused).status, Some(StatusCode::BAD_REQUEST));
    assert_eq!(http.router.session_count(), 0);
}
