//! The HTTP client transports against a scripted server: the test reads each request the
//! client asks the runtime to perform and feeds the response head and body by hand, in
//! virtual time.

mod detect;
mod legacy;
mod props;
mod resume;
mod streamable;

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use serde_json::{json, Value};

use super::{HttpClientConfig, HttpMode};
use crate::client::{Client, ClientConfig, Event};
use crate::io::{
    HttpRequest, Input, Output, Receive, ResponseHead, StreamEvent, StreamId, Transmit,
    TransportFailure,
};
use crate::jsonrpc::RequestId;
use crate::testkit::VirtualClock;
use crate::RequestOptions;

const URL: &str = "http://127.0.0.1:8080/mcp";

/// A client whose every transmit and event the test inspects.
struct Fake {
    client: Client,
    clock: VirtualClock,
    requests: Vec<(StreamId, HttpRequest)>,
    aborts: Vec<StreamId>,
    events: Vec<Event>,
}

impl Fake {
    fn new(http: HttpClientConfig) -> Self {
        Self::with_config(ClientConfig::new("test-client", "1.0").session_era(), http)
    }

    fn with_config(config: ClientConfig, http: HttpClientConfig) -> Self {
        let clock = VirtualClock::new();
        let client = Client::new_http(config, http, clock.now()).expect("valid config");
        let mut fake =
            Self { client, clock, requests: Vec::new(), aborts: Vec::new(), events: Vec::new() };
        fake.drain();
        fake
    }

    /// Streamable HTTP only, no GET stream unless asked.
    fn streamable() -> Self {
        Self::new(config(HttpMode::StreamableHttp))
    }

    fn drain(&mut self) {
        while let Some(out) = self.client.poll_output() {
            match out {
                Output::Transmit(Transmit::Http { stream, request }) => {
                    self.requests.push((stream, *request));
                }
                Output::Transmit(Transmit::Abort { stream }) => self.aborts.push(stream),
                Output::Transmit(other) => panic!("unexpected transmit {other:?}"),
                Output::Event(e) => self.events.push(e),
            }
        }
    }

    fn feed(&mut self, stream: StreamId, event: StreamEvent<'_>) {
        let now = self.clock.now();
        self.client.handle_input(Input::Receive(now, Receive { stream, event }));
        self.drain();
    }

    fn head(&mut self, stream: StreamId, status: u16, headers: &[(&str, &str)]) {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(
                http::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        let head = ResponseHead { status: StatusCode::from_u16(status).unwrap(), headers: map };
        self.feed(stream, StreamEvent::Head(Box::new(head)));
    }

    fn data(&mut self, stream: StreamId, text: &str) {
        self.feed(stream, StreamEvent::Data(text.as_bytes()));
    }

    fn end(&mut self, stream: StreamId) {
        self.feed(stream, StreamEvent::End);
    }

    fn fail(&mut self, stream: StreamId) {
        self.feed(stream, StreamEvent::Failed(TransportFailure::Reset("test".into())));
    }

    /// A whole JSON answer.
    fn answer_json(&mut self, stream: StreamId, extra: &[(&str, &str)], body: &str) {
        let mut headers = vec![("content-type", "application/json")];
        headers.extend_from_slice(extra);
        self.head(stream, 200, &headers);
        self.data(stream, body);
        self.end(stream);
    }

    /// A head opening an SSE answer.
    fn open_sse(&mut self, stream: StreamId, extra: &[(&str, &str)]) {
        let mut headers = vec![("content-type", "text/event-stream")];
        headers.extend_from_slice(extra);
        self.head(stream, 200, &headers);
    }

    /// 202 and the end of an empty body.
    fn accept(&mut self, stream: StreamId) {
        self.head(stream, 202, &[]);
        self.end(stream);
    }

    fn advance(&mut self, d: Duration) {
        let now = self.clock.advance(d);
        self.client.handle_input(Input::Timeout(now));
        self.drain();
    }

    /// Takes the requests sent so far.
    fn take(&mut self) -> Vec<(StreamId, HttpRequest)> {
        std::mem::take(&mut self.requests)
    }

    /// Takes the one request sent so far.
    fn take_one(&mut self) -> (StreamId, HttpRequest) {
        let mut all = self.take();
        assert_eq!(all.len(), 1, "expected exactly one request, got {all:#?}");
        all.remove(0)
    }

    fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn request(&mut self, method: &str) -> RequestId {
        let now = self.clock.now();
        let id = self.client.request(now, method, None, RequestOptions::default()).unwrap();
        self.drain();
        id
    }

    /// Initialize answered as JSON with session `session`, `initialized` accepted; returns
    /// the GET stream's request when one was opened.
    fn handshake(&mut self, session: &str) -> Option<(StreamId, HttpRequest)> {
        let (init, request) = self.take_one();
        assert_eq!(rpc_method(&request), "initialize");
        let id = body(&request)["id"].clone();
        self.answer_json(init, &[("mcp-session-id", session)], &init_result(&id));
        assert!(matches!(self.take_events()[..], [Event::Ready(_)]));
        // `initialized` and the GET stream (when wanted) go out together.
        let mut sent = self.take();
        assert!(matches!(sent.len(), 1 | 2), "{sent:#?}");
        let (note, request) = sent.remove(0);
        assert_eq!(rpc_method(&request), "notifications/initialized");
        self.accept(note);
        assert!(self.take().is_empty(), "nothing more once `initialized` is accepted");
        sent.pop()
    }

    /// The handshake, with the GET stream refused.
    fn ready(&mut self, session: &str) {
        if let Some((get, _)) = self.handshake(session) {
            self.head(get, 405, &[]);
        }
        assert!(self.take().is_empty());
        assert!(self.take_events().is_empty());
    }
}

fn config(mode: HttpMode) -> HttpClientConfig {
    let mut config = HttpClientConfig::new(URL.parse().unwrap());
    config.mode = mode;
    config
}

fn body(request: &HttpRequest) -> Value {
    serde_json::from_slice(&request.body).expect("a JSON body")
}

fn rpc_method(request: &HttpRequest) -> String {
    body(request)["method"].as_str().unwrap_or_default().to_owned()
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request.headers.get(name).map(|v| v.to_str().unwrap())
}

fn init_result(id: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "fake", "version": "1"}
    }})
    .to_string()
}

fn result(id: &RequestId, value: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": value}).to_string()
}

/// One SSE event: optional id, then the data.
fn event(id: Option<&str>, data: &str) -> String {
    match id {
        Some(id) => format!("id: {id}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

fn is_post(request: &HttpRequest) -> bool {
    request.method == Method::POST && request.uri == URL.parse::<Uri>().unwrap()
}

fn empty_body(request: &HttpRequest) -> bool {
    request.body == Bytes::new()
}
