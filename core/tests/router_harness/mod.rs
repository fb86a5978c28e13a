//! The scripted HTTP client the router tests drive the router with, in memory and in
//! virtual time: it sends requests, collects each exchange's answer (status, headers, body),
//! and decodes JSON and SSE answers.
#![allow(dead_code)]

use std::collections::HashMap;
use std::time::Instant;

use http::{HeaderMap, HeaderValue, Method, StatusCode};
use serde_json::{json, Value};
use zest_core::framing::sse::{SseDecoder, SseItem};
use zest_core::http::server::{Router, RouterConfig, RouterEvent, SessionId};
use zest_core::io::{Input, Output, Receive, RequestHead, StreamEvent, StreamId, Transmit};
use zest_core::server::{Call, Event, ServerConfig};
use zest_core::testkit::VirtualClock;

use super::common::*;

#[derive(Debug, Default)]
pub(crate) struct Answer {
    pub(crate) status: Option<StatusCode>,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Vec<u8>,
    pub(crate) closed: bool,
}

impl Answer {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }

    /// The SSE events as (id, data), priming events included (their data is empty).
    pub(crate) fn events(&self) -> Vec<(Option<String>, String)> {
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
    pub(crate) fn messages(&self) -> Vec<Value> {
        let events = self.events();
        events
            .iter()
            .filter(|(_, d)| !d.is_empty())
            .map(|(_, d)| serde_json::from_str(d).unwrap())
            .collect()
    }

    pub(crate) fn session(&self) -> String {
        self.headers["mcp-session-id"].to_str().unwrap().to_owned()
    }
}

pub(crate) struct Http {
    pub(crate) router: Router<Handler>,
    pub(crate) clock: VirtualClock,
    pub(crate) next: u64,
    pub(crate) answers: HashMap<StreamId, Answer>,
    pub(crate) events: Vec<RouterEvent<Handler>>,
    pub(crate) version: &'static str,
    /// Sent as `Authorization` on every request, when set.
    pub(crate) authorization: Option<&'static str>,
    /// Decide answers after each drain, like a runtime that polls handlers where it starts
    /// them (off: like one whose handlers run on threads, answers decided when clear or
    /// after `json_wait`).
    pub(crate) decide: bool,
}

impl Http {
    pub(crate) fn new(config: RouterConfig) -> Self {
        let mut server = ServerConfig::new("t", "1");
        server.announce_changes = true;
        Self::with_server(server, config)
    }

    /// A router serving with `server` as its sessions' config.
    pub(crate) fn with_server(server: ServerConfig, config: RouterConfig) -> Self {
        let router = Router::new(server, config, registry());
        Self {
            router,
            clock: VirtualClock::new(),
            next: 1,
            answers: HashMap::new(),
            events: Vec::new(),
            version: "2025-11-25",
            authorization: None,
            decide: true,
        }
    }

    pub(crate) fn now(&self) -> Instant {
        self.clock.now()
    }

    pub(crate) fn pump(&mut self) {
        self.drain();
        if self.decide {
            self.router.decide_answers();
            self.drain();
        }
    }

    pub(crate) fn drain(&mut self) {
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

    pub(crate) fn send(
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
        if let Some(credential) = self.authorization {
            map.insert("authorization", HeaderValue::from_static(credential));
        }
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
    pub(crate) fn post(&mut self, session: Option<&str>, message: Value) -> StreamId {
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

    pub(crate) fn get(&mut self, session: &str, last_event_id: Option<&str>) -> StreamId {
        let mut headers = vec![("accept", "text/event-stream"), ("mcp-session-id", session)];
        if let Some(id) = last_event_id {
            headers.push(("last-event-id", id));
        }
        self.send(Method::GET, "/mcp", &headers, b"")
    }

    pub(crate) fn drop_stream(&mut self, stream: StreamId) {
        let failed = StreamEvent::Failed(zest_core::io::TransportFailure::Reset("gone".into()));
        self.router.handle_input(Input::Receive(self.now(), Receive { stream, event: failed }));
        self.pump();
    }

    pub(crate) fn answer(&self, stream: StreamId) -> &Answer {
        &self.answers[&stream]
    }

    /// initialize + initialized; the session id.
    pub(crate) fn handshake(&mut self, capabilities: Value) -> String {
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
    pub(crate) fn answer_first_call(&mut self) {
        let (sid, id, call_params) = self.take_calls()[0].clone();
        let result = app(&"echo", &call_params).unwrap();
        let now = self.now();
        self.router.session_mut(&sid).unwrap().respond(now, id, Ok(result)).unwrap();
        self.pump();
    }

    pub(crate) fn take_calls(&mut self) -> Vec<(SessionId, zest_core::jsonrpc::RequestId, Call)> {
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
pub(crate) fn echo_x(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"x"}}})
}

pub(crate) fn config() -> RouterConfig {
    RouterConfig::new([7; 32])
}
