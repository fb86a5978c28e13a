//! Drivers for the HTTP servers' load and bad-input tests, the same on every runtime: raw
//! HTTP/1.1 over std sockets (zest-core's client machine), a ledger of the calls a server's
//! handlers saw, and a bounded wait for counts to settle. Shared by the runtime crates' tests
//! through `#[path = "../../tests/support/load.rs"] mod load;`; the including crate depends on
//! `zest-core`, `http`, `bytes` and `serde_json`.
//!
//! Everything here blocks the calling thread and is bounded in count and time.
#![allow(dead_code, clippy::disallowed_methods)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde_json::json;
use zest_core::http1::{self, Config};
use zest_core::io::{HttpRequest, StreamId};
use zest_core::runtime::http_client::ClientConn;
use zest_core::runtime::OwnedEvent;

/// Sessions in the load test, each on a client of its own.
pub(crate) const SESSIONS: usize = 200;
/// `tools/call`s each session makes, one after another.
pub(crate) const CALLS: usize = 50;

/// The text of call `call` of session `session`: unique across the run, so a lost or
/// duplicated call shows as a missing or doubled entry in the [`Ledger`].
pub(crate) fn call_text(session: usize, call: usize) -> String {
    format!("load {session} call {call}")
}

/// The fields a well-formed Streamable HTTP POST carries.
pub(crate) const POST_HEADERS: &[(&str, &str)] =
    &[("content-type", "application/json"), ("accept", "application/json, text/event-stream")];

/// Every text a server's `echo` handler was called with, in the order it was called.
pub(crate) struct Ledger(Mutex<Vec<String>>);

impl Ledger {
    /// Nothing recorded.
    pub(crate) const fn new() -> Self {
        Self(Mutex::new(Vec::new()))
    }

    /// A handler was called with `text`.
    pub(crate) fn record(&self, text: &str) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(text.to_owned());
    }

    /// Asserts that each of `texts` was handled exactly once (other texts are ignored).
    pub(crate) fn assert_each_once(&self, texts: &[String]) {
        let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        seen.sort_unstable();
        let count = |t: &String| {
            let first = seen.partition_point(|s| s < t);
            seen[first..].iter().take_while(|s| *s == t).count()
        };
        let wrong: Vec<(&String, usize)> =
            texts.iter().map(|t| (t, count(t))).filter(|(_, n)| *n != 1).take(10).collect();
        assert!(wrong.is_empty(), "texts not handled exactly once (text, times): {wrong:?}");
    }
}

/// Polls `probe` every 20 ms until it returns `want`, for at most `within`; panics with the
/// last value otherwise.
pub(crate) fn settle<T: PartialEq + std::fmt::Debug>(
    what: &str,
    within: Duration,
    want: T,
    mut probe: impl FnMut() -> T,
) {
    let deadline = Instant::now() + within;
    loop {
        let got = probe();
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: still {got:?} after {within:?}, want {want:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A response read whole.
#[derive(Debug)]
pub(crate) struct Raw {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Vec<u8>,
}

/// One keep-alive connection speaking raw HTTP/1.1 through zest-core's client machine.
pub(crate) struct RawConn {
    addr: SocketAddr,
    socket: TcpStream,
    conn: ClientConn,
    next: u64,
    buf: Vec<u8>,
}

impl RawConn {
    /// Connects to `addr`.
    pub(crate) fn connect(addr: SocketAddr) -> Self {
        let socket = TcpStream::connect(addr).expect("connect to the server");
        // Reads wake at least this often, so every wait below keeps its own deadline.
        socket.set_read_timeout(Some(Duration::from_millis(200))).expect("read timeout");
        let _ = socket.set_nodelay(true);
        let conn = ClientConn::new(Config::default());
        Self { addr, socket, conn, next: 1, buf: vec![0; 64 * 1024] }
    }

    /// Starts a request; read its answer with [`next_event`](Self::next_event).
    pub(crate) fn send(&mut self, method: Method, headers: &[(&str, &str)], body: &[u8]) {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes()).expect("a header name");
            map.append(name, HeaderValue::from_str(value).expect("a header value"));
        }
        let uri = format!("http://{}/mcp", self.addr).parse().expect("a URI");
        let request = HttpRequest { method, uri, headers: map, body: Bytes::copy_from_slice(body) };
        let stream = StreamId(self.next);
        self.next += 1;
        self.conn.send(Instant::now(), stream, request).expect("the connection is idle");
        self.flush();
    }

    /// The next event of the request under way; panics if none comes within 10 s.
    pub(crate) fn next_event(&mut self) -> OwnedEvent {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            self.flush();
            if let Some((_, event)) = self.conn.poll_event() {
                return event;
            }
            assert!(Instant::now() < deadline, "no answer from the server within 10 s");
            match self.socket.read(&mut self.buf) {
                Ok(0) => self.conn.handle_end(),
                Ok(n) => self.conn.handle_data(&self.buf[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) => panic!("reading the answer failed: {e}"),
            }
        }
    }

    /// Sends a request and reads its whole answer.
    pub(crate) fn exchange(
        &mut self,
        method: Method,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Raw {
        self.send(method, headers, body);
        let mut raw =
            Raw { status: StatusCode::IM_A_TEAPOT, headers: HeaderMap::new(), body: Vec::new() };
        loop {
            match self.next_event() {
                OwnedEvent::Head(head) => (raw.status, raw.headers) = (head.status, head.headers),
                OwnedEvent::Data(bytes) => raw.body.extend_from_slice(&bytes),
                OwnedEvent::End => return raw,
                OwnedEvent::Failed(f) => panic!("the exchange failed: {f}"),
                _ => {}
            }
        }
    }

    fn flush(&mut self) {
        while let Some(t) = self.conn.poll_transmit() {
            match t {
                http1::Transmit::Write(bytes) => {
                    self.socket.write_all(&bytes).expect("write to the server");
                }
                http1::Transmit::Close => {}
            }
        }
    }
}

/// Opens a session with `initialize` and `notifications/initialized` on `conn`; returns its
/// id.
pub(crate) fn open_session(conn: &mut RawConn) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}});
    let r = conn.exchange(Method::POST, POST_HEADERS, init.to_string().as_bytes());
    assert_eq!(r.status, StatusCode::OK, "initialize: {}", String::from_utf8_lossy(&r.body));
    let id = r.headers.get("mcp-session-id").expect("a session id").to_str().expect("ASCII");
    let id = id.to_owned();
    let headers = session_headers(&id);
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let r = conn.exchange(Method::POST, &headers, initialized);
    assert_eq!(r.status, StatusCode::ACCEPTED, "initialized");
    id
}

/// [`POST_HEADERS`] with the session's id and the protocol version.
pub(crate) fn session_headers(session: &str) -> Vec<(&str, &str)> {
    let mut headers = POST_HEADERS.to_vec();
    headers.push(("mcp-session-id", session));
    headers.push(("mcp-protocol-version", "2025-11-25"));
    headers
}

/// Starts `tools/call` of `steps {n}` with a progress token on a new connection, reads the SSE
/// answer until its first progress report, and drops the connection: a client gone
/// mid-stream. Returns the session id.
pub(crate) fn drop_mid_stream(addr: SocketAddr, n: u64) -> String {
    let mut conn = RawConn::connect(addr);
    let session = open_session(&mut conn);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "steps", "arguments": {"n": n}, "_meta": {"progressToken": "p"}}});
    conn.send(Method::POST, &session_headers(&session), call.to_string().as_bytes());
    let mut seen = Vec::new();
    loop {
        match conn.next_event() {
            OwnedEvent::Head(head) => {
                assert_eq!(head.status, StatusCode::OK);
                let kind = head.headers.get("content-type").and_then(|v| v.to_str().ok());
                assert_eq!(kind, Some("text/event-stream"), "the call is answered by a stream");
            }
            OwnedEvent::Data(bytes) => {
                seen.extend_from_slice(&bytes);
                if String::from_utf8_lossy(&seen).contains("notifications/progress") {
                    return session;
                }
            }
            other => panic!("the stream ended before its first progress report: {other:?}"),
        }
    }
}

/// Sends a request head that never completes, one byte every `every`, until the server
/// answers (or 200 bytes were sent); returns what the server sent before it closed the
/// connection, which it must do within 30 s.
pub(crate) fn slow_head(addr: SocketAddr, every: Duration) -> String {
    let mut socket = TcpStream::connect(addr).expect("connect to the server");
    socket.set_read_timeout(Some(every)).expect("read timeout");
    let mut head = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
        x-pad: "
        .to_vec();
    head.resize(200, b'a');
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    for byte in head {
        if socket.write_all(&[byte]).is_err() {
            break;
        }
        // The pause between bytes is this read's timeout.
        match socket.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                break;
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    socket.set_read_timeout(Some(Duration::from_secs(30))).expect("read timeout");
    let mut rest = Vec::new();
    let closed = socket.read_to_end(&mut rest);
    answer.extend(rest);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(closed.is_ok(), "the server did not close within 30 s ({closed:?}); sent: {answer}");
    answer
}

/// A `tools/call` of `echo` whose body arrives one byte every `every` on a session of its
/// own, until `stop` is set or the body is whole. Returns how many body bytes it sent and how
/// many the body has.
pub(crate) fn trickle_call(addr: SocketAddr, every: Duration, stop: &AtomicBool) -> (usize, usize) {
    let mut conn = RawConn::connect(addr);
    let session = open_session(&mut conn);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "t".repeat(400)}}});
    let body = call.to_string().into_bytes();
    let mut head = String::from("POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n");
    for (name, value) in session_headers(&session) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    let mut socket = conn.socket;
    socket.write_all(head.as_bytes()).expect("write the head");
    let mut sent = 0;
    while sent < body.len() && !stop.load(Ordering::SeqCst) {
        socket.write_all(&body[sent..=sent]).expect("write one byte");
        sent += 1;
        std::thread::sleep(every);
    }
    (sent, body.len())
}
