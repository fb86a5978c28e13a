//! Drivers for the HTTP servers' load and bad-input tests, the same on every runtime: raw
//! HTTP/1.1 over std sockets (zest-core's client machine), a ledger of the calls a server's
//! handlers saw, and a bounded wait for counts to settle. Shared by the runtime crates' tests
//! through `#[path = "../../tests/support/load.rs"] mod load;`; the including crate depends on
//! `zest-core`, `http`, `bytes`, `serde_json` and `libc`.
//!
//! Everything here blocks the calling thread and is bounded in count and time.
#![allow(dead_code, clippy::disallowed_methods)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde_json::{json, Value};
use zest_core::framing::sse::{SseDecoder, SseItem};
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
        thread::sleep(Duration::from_millis(20));
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
    /// How long [`next_event`](Self::next_event) waits before it panics.
    patience: Duration,
}

impl RawConn {
    /// Connects to `addr`.
    pub(crate) fn connect(addr: SocketAddr) -> Self {
        let socket = TcpStream::connect(addr).expect("connect to the server");
        // Reads wake at least this often, so every wait below keeps its own deadline.
        socket.set_read_timeout(Some(Duration::from_millis(200))).expect("read timeout");
        let _ = socket.set_nodelay(true);
        let conn = ClientConn::new(Config::default());
        let patience = Duration::from_secs(10);
        Self { addr, socket, conn, next: 1, buf: vec![0; 64 * 1024], patience }
    }

    /// Waits up to `patience` (10 s unless set here) for each event before panicking.
    pub(crate) fn patient(mut self, patience: Duration) -> Self {
        self.patience = patience;
        self
    }

    /// Starts a request to `/mcp`; read its answer with [`next_event`](Self::next_event).
    pub(crate) fn send(&mut self, method: Method, headers: &[(&str, &str)], body: &[u8]) {
        self.send_to(method, "/mcp", headers, body);
    }

    /// Starts a request to `path`.
    pub(crate) fn send_to(
        &mut self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes()).expect("a header name");
            map.append(name, HeaderValue::from_str(value).expect("a header value"));
        }
        let uri = format!("http://{}{path}", self.addr).parse().expect("a URI");
        let request = HttpRequest { method, uri, headers: map, body: Bytes::copy_from_slice(body) };
        let stream = StreamId(self.next);
        self.next += 1;
        self.conn.send(Instant::now(), stream, request).expect("the connection is idle");
        self.flush();
    }

    /// The next event of the request under way; panics if none comes within its patience.
    pub(crate) fn next_event(&mut self) -> OwnedEvent {
        let deadline = Instant::now() + self.patience;
        loop {
            self.flush();
            if let Some((_, event)) = self.conn.poll_event() {
                return event;
            }
            let patience = self.patience;
            assert!(Instant::now() < deadline, "no answer from the server within {patience:?}");
            match self.socket.read(&mut self.buf) {
                Ok(0) => self.conn.handle_end(),
                Ok(n) => self.conn.handle_data(&self.buf[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) => panic!("reading the answer failed: {e}"),
            }
        }
    }

    /// Sends a request to `/mcp` and reads its whole answer.
    pub(crate) fn exchange(
        &mut self,
        method: Method,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Raw {
        self.exchange_at(method, "/mcp", headers, body)
    }

    /// Sends a request to `path` and reads its whole answer.
    pub(crate) fn exchange_at(
        &mut self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Raw {
        self.send_to(method, path, headers, body);
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

/// Opens a session on a new connection, then calls `echo` (answered at once) and `steps`
/// with one step (20 ms, a progress report and a log line, then its answer); their two
/// whole answers.
pub(crate) fn quick_and_slow_calls(addr: SocketAddr) -> (Raw, Raw) {
    let mut conn = RawConn::connect(addr);
    let session = open_session(&mut conn);
    let headers = session_headers(&session);
    let mut call = |id: u64, name: &str, arguments: Value| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        conn.exchange(Method::POST, &headers, body.to_string().as_bytes())
    };
    (call(2, "echo", json!({"text": "quick"})), call(3, "steps", json!({"n": 1})))
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
        thread::sleep(every);
    }
    (sent, body.len())
}

/// A client opens its session's GET stream and stops reading it while `broadcast` is called
/// 3,000 times with an 8 KiB log record (24 MiB in all: more than loopback's socket buffers,
/// a few MiB, and the server's backlog limit, which the test sets to 1 MiB, above the 64
/// records a new GET stream gets at once). Asserts that the stream is detached while the
/// client still does not read (a new GET stream of the session is accepted), that the server
/// closes that connection having sent less than half of it, and that the session still
/// answers on another connection.
pub(crate) fn assert_a_client_that_does_not_read_is_cut_off(
    addr: SocketAddr,
    broadcast: impl Fn(Value),
) {
    const RECORDS: usize = 3_000;
    let (mut stalled, session) = stalled_listener(addr);
    let text = "u".repeat(8 * 1024);
    for _ in 0..RECORDS {
        broadcast(json!(text));
    }
    // While that client still does not read, its stream is detached: the session may open
    // its GET stream anew (one that is still attached is refused with 409).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = open_get_stream(addr, &session);
        if status == StatusCode::OK {
            break;
        }
        assert!(Instant::now() < deadline, "the stalled stream is still attached: {status}");
        thread::sleep(Duration::from_millis(20));
    }
    let read = stalled.read_to_close(Duration::from_secs(20));
    let sent = RECORDS * text.len();
    assert!(read < sent / 2, "the server stopped holding records for it: {read} of {sent} bytes");
    assert_eq!(ping(addr, &session), StatusCode::OK, "only that connection was cut");
}

/// Opens a session on a new connection and its GET stream, reads the stream's head, then
/// stops reading: a client that does not take what it is sent. Returns the connection and
/// the session id.
pub(crate) fn stalled_listener(addr: SocketAddr) -> (RawConn, String) {
    let mut conn = RawConn::connect(addr);
    let session = open_session(&mut conn);
    assert_eq!(conn.open_get_stream(&session), StatusCode::OK, "the GET stream");
    (conn, session)
}

impl RawConn {
    /// Sends session `session`'s GET stream request and reads the answer's head; its status.
    pub(crate) fn open_get_stream(&mut self, session: &str) -> StatusCode {
        let headers = [
            ("accept", "text/event-stream"),
            ("mcp-session-id", session),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        self.send(Method::GET, &headers, b"");
        match self.next_event() {
            OwnedEvent::Head(head) => head.status,
            other => panic!("no answer to the GET: {other:?}"),
        }
    }

    /// Reads what is left on the socket until the server closes the connection; returns how
    /// many bytes that was. Panics if it is still open after `within`.
    pub(crate) fn read_to_close(&mut self, within: Duration) -> usize {
        let deadline = Instant::now() + within;
        let mut read = 0;
        loop {
            assert!(Instant::now() < deadline, "still open after {within:?} ({read} bytes read)");
            match self.socket.read(&mut self.buf) {
                Ok(0) => return read,
                Ok(n) => read += n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // Reset: closed with what we had not read yet.
                Err(_) => return read,
            }
        }
    }
}

/// The answer of the test servers' `loud {n}` tool: `n` bytes.
pub(crate) fn loud_text(n: usize) -> String {
    "l".repeat(n)
}

/// Calls `loud` for a 1 MiB answer, which the server sends right behind the log line on the
/// call's SSE stream, and reads it whole: a server whose backlog limit (set far lower by the
/// test) is passed by one large message beside small ones must not cut a client that reads.
pub(crate) fn assert_a_large_answer_beside_small_messages_is_not_cut(addr: SocketAddr) {
    const N: usize = 1024 * 1024;
    let mut conn = RawConn::connect(addr);
    let session = open_session(&mut conn);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "loud", "arguments": {"n": N}}});
    let r = conn.exchange(Method::POST, &session_headers(&session), call.to_string().as_bytes());
    assert_eq!(r.status, StatusCode::OK);
    let body = String::from_utf8_lossy(&r.body);
    assert!(body.contains("notifications/message"), "the log line came first");
    assert!(body.contains(&loud_text(N)), "the whole answer came ({} bytes)", r.body.len());
}

/// Opens session `session`'s GET stream on a new connection; the answer's status (the stream
/// is dropped at once).
pub(crate) fn open_get_stream(addr: SocketAddr, session: &str) -> StatusCode {
    RawConn::connect(addr).open_get_stream(session)
}

/// Pings session `session` on a new connection; the answer's status.
pub(crate) fn ping(addr: SocketAddr, session: &str) -> StatusCode {
    let mut conn = RawConn::connect(addr);
    let ping = br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    conn.exchange(Method::POST, &session_headers(session), ping).status
}

/// Sessions open at once in the wide run (test and bench).
pub(crate) const WIDE_SESSIONS: usize = 1_000;

/// Calls each wide session makes in the tests (the bench makes more).
pub(crate) const WIDE_CALLS: usize = 3;

/// How long each step of a wide run may take (a session's answer, every session reaching a
/// phase) before it panics: a hang guard, far above what a loaded machine needs.
pub(crate) const WIDE_PATIENCE: Duration = Duration::from_secs(120);

/// The text of call `call` of wide session `session`: unique, and never a [`call_text`].
pub(crate) fn wide_text(session: usize, call: usize) -> String {
    format!("wide {session} call {call}")
}

/// What one call sent and what came back.
pub(crate) type Answer = (String, Option<String>);

/// What a [`wide_sessions`] run saw.
#[derive(Debug)]
pub(crate) struct Wide<T> {
    /// Every call of every session.
    pub(crate) answers: Vec<Answer>,
    /// From every session being open to every call being answered.
    pub(crate) calls_took: Duration,
    /// What `at_peak` returned.
    pub(crate) at_peak: T,
}

impl<T> Wide<T> {
    /// Asserts that each call got its own text back, and returns every text sent.
    pub(crate) fn assert_each_answered(&self, sessions: usize, calls: usize) -> Vec<String> {
        assert_eq!(self.answers.len(), sessions * calls, "answers");
        for (sent, echoed) in &self.answers {
            assert_eq!(echoed.as_deref(), Some(sent.as_str()), "the answer to {sent}");
        }
        self.answers.iter().map(|(sent, _)| sent.clone()).collect()
    }
}

/// A session thread's report to the driving thread.
enum Step {
    Opened,
    Answered(Vec<Answer>),
    Deleted(StatusCode),
    Failed(String),
}

/// Session threads connecting and opening their session at once: a burst of 1,000 connects
/// overflows the listen backlog of 128 (std's and mio's, so every runtime's server's), and
/// the kernel then drops or resets some of them.
const OPENING_AT_ONCE: usize = 32;

/// What session threads wait on, each wait bounded by [`WIDE_PATIENCE`].
#[derive(Default)]
struct Gates {
    state: Mutex<GateState>,
    moved: Condvar,
}

#[derive(Default)]
struct GateState {
    /// The phase the driving thread has let the session threads into.
    phase: u32,
    /// Session threads opening their session now.
    opening: usize,
}

impl Gates {
    /// Waits until `ready` holds, then applies `then`; panics after [`WIDE_PATIENCE`].
    fn wait(
        &self,
        what: &str,
        ready: impl Fn(&GateState) -> bool,
        then: impl FnOnce(&mut GateState),
    ) {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let wait = self.moved.wait_timeout_while(state, WIDE_PATIENCE, |s| !ready(s));
        let (mut state, waited) = wait.unwrap_or_else(|p| p.into_inner());
        assert!(!waited.timed_out(), "{what}: still waiting after {WIDE_PATIENCE:?}");
        then(&mut state);
        drop(state);
        self.moved.notify_all();
    }

    /// Lets the session threads into the next phase.
    fn advance(&self) {
        self.wait("", |_| true, |s| s.phase += 1);
    }

    fn wait_for(&self, phase: u32) {
        self.wait(&format!("phase {phase}"), |s| s.phase >= phase, |_| {});
    }
}

/// Opens `sessions` sessions, each on a thread and connection of its own (`initialize` +
/// `initialized`, [`OPENING_AT_ONCE`] threads at a time); once all are open, each makes `calls` `echo` calls one
/// after another ([`wide_text`]), all sessions together; once every call is answered, calls
/// `at_peak` (every session still open) and then DELETEs every session, asserting 200.
/// Bounded: every step panics after [`WIDE_PATIENCE`].
pub(crate) fn wide_sessions<T>(
    addr: SocketAddr,
    sessions: usize,
    calls: usize,
    at_peak: impl FnOnce() -> T,
) -> Wide<T> {
    // A client and a server socket per session, perhaps both in this process.
    raise_fd_limit(2 * sessions as u64 + 256);
    let gates = Arc::new(Gates::default());
    let (tx, steps) = mpsc::channel();
    for session in 0..sessions {
        let (tx, gates) = (tx.clone(), gates.clone());
        thread::Builder::new()
            .name(format!("wide {session}"))
            .stack_size(256 * 1024)
            .spawn(move || {
                let run = || wide_session(addr, session, calls, &tx, &gates);
                if let Err(panic) = panic::catch_unwind(AssertUnwindSafe(run)) {
                    let why = panic.downcast_ref::<String>().cloned();
                    let why = why.or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                    let _ = tx.send(Step::Failed(format!("session {session}: {why:?}")));
                }
            })
            .expect("spawn a session thread");
    }
    drop(tx);
    let next = |what: &str, done: usize| match steps.recv_timeout(WIDE_PATIENCE) {
        Ok(Step::Failed(why)) => panic!("{what}: {why}"),
        Ok(step) => step,
        Err(e) => panic!("{what}: {done} of {sessions} sessions after {WIDE_PATIENCE:?} ({e})"),
    };
    for done in 0..sessions {
        assert!(matches!(next("opening", done), Step::Opened), "a step out of phase");
    }
    let started = Instant::now();
    gates.advance();
    let mut answers = Vec::with_capacity(sessions * calls);
    for done in 0..sessions {
        match next("calling", done) {
            Step::Answered(a) => answers.extend(a),
            _ => panic!("a step out of phase"),
        }
    }
    let calls_took = started.elapsed();
    let at_peak = at_peak();
    gates.advance();
    for done in 0..sessions {
        match next("deleting", done) {
            Step::Deleted(status) => assert_eq!(status, StatusCode::OK, "DELETE"),
            _ => panic!("a step out of phase"),
        }
    }
    Wide { answers, calls_took, at_peak }
}

/// One session of [`wide_sessions`], reporting on `tx` and waiting at `gates`.
fn wide_session(
    addr: SocketAddr,
    session: usize,
    calls: usize,
    tx: &mpsc::Sender<Step>,
    gates: &Gates,
) {
    gates.wait("a turn to open", |s| s.opening < OPENING_AT_ONCE, |s| s.opening += 1);
    let mut conn = RawConn::connect(addr).patient(WIDE_PATIENCE);
    let id = open_session(&mut conn);
    gates.wait("", |_| true, |s| s.opening -= 1);
    let _ = tx.send(Step::Opened);
    gates.wait_for(1);
    let headers = session_headers(&id);
    let mut answers = Vec::with_capacity(calls);
    for call in 0..calls {
        let text = wide_text(session, call);
        let request = json!({"jsonrpc": "2.0", "id": call + 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}}});
        let r = conn.exchange(Method::POST, &headers, request.to_string().as_bytes());
        assert_eq!(r.status, StatusCode::OK, "{text}: {}", String::from_utf8_lossy(&r.body));
        answers.push((text, echoed_text(&r.body)));
    }
    let _ = tx.send(Step::Answered(answers));
    gates.wait_for(2);
    let r = conn.exchange(Method::DELETE, &headers, b"");
    let _ = tx.send(Step::Deleted(r.status));
}

/// The text of the first content block of the `tools/call` result in `body`: one JSON
/// message, or an SSE stream carrying it.
pub(crate) fn echoed_text(body: &[u8]) -> Option<String> {
    let messages: Vec<String> = if body.trim_ascii_start().starts_with(b"{") {
        vec![String::from_utf8(body.to_vec()).ok()?]
    } else {
        // An SSE answer: the messages are its events' data, as core's decoder reads them.
        let mut events = Vec::new();
        let mut decoder = SseDecoder::default();
        decoder.feed(body, &mut |item| {
            if let SseItem::Event(event) = item {
                events.push(event.data.to_owned());
            }
        });
        events
    };
    messages
        .into_iter()
        .filter_map(|m| serde_json::from_str::<Value>(&m).ok())
        .find_map(|m| m["result"]["content"][0]["text"].as_str().map(str::to_owned))
}

/// Raises this process's soft limit on open files to its hard limit when it is below
/// `needed` (children inherit it); returns the soft limit in force.
pub(crate) fn raise_fd_limit(needed: u64) -> u64 {
    // SAFETY: `rlimit` is two integers, for which all-zero bytes are a valid value.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: getrlimit only writes into the struct it is handed, which outlives the call.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    assert_eq!(rc, 0, "getrlimit: {}", std::io::Error::last_os_error());
    if limit.rlim_cur >= needed || limit.rlim_cur >= limit.rlim_max {
        return limit.rlim_cur;
    }
    limit.rlim_cur = limit.rlim_max;
    // SAFETY: setrlimit only reads the struct it is handed, which outlives the call.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    assert_eq!(rc, 0, "setrlimit: {}", std::io::Error::last_os_error());
    limit.rlim_cur
}

/// The backlog of the socket that listens on `addr` in this process (the server under test
/// runs in it), from the `TCP_INFO` Linux reports for a listening socket; `None` if no
/// socket of this process listens there.
pub(crate) fn listen_backlog(addr: SocketAddr) -> Option<u32> {
    const TCP_LISTEN: u8 = 10;
    let fds = std::fs::read_dir("/proc/self/fd").expect("this process's descriptors");
    for fd in fds.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()) {
        if local_addr(fd) != Some(addr) {
            continue;
        }
        // SAFETY: `tcp_info` is plain integers, for which all-zero bytes are valid.
        let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
        let mut len = size_of::<libc::tcp_info>() as libc::socklen_t;
        let info_ptr = std::ptr::addr_of_mut!(info).cast();
        // SAFETY: getsockopt writes at most `len` bytes into `info`, which outlives the call;
        // a descriptor closed meanwhile (by another test thread) only makes it fail.
        let rc =
            unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, info_ptr, &mut len) };
        if rc == 0 && info.tcpi_state == TCP_LISTEN {
            // For a listening socket, Linux reports its backlog as `tcpi_sacked`.
            return Some(info.tcpi_sacked);
        }
    }
    None
}

/// The address descriptor `fd` is bound to, if it is an IP socket.
fn local_addr(fd: i32) -> Option<SocketAddr> {
    // SAFETY: `sockaddr_storage` is plain integers, for which all-zero bytes are valid.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let ptr = std::ptr::addr_of_mut!(storage).cast();
    // SAFETY: getsockname writes at most `len` bytes into `storage`, which outlives the call;
    // on a descriptor that is no socket (or closed meanwhile) it fails.
    if unsafe { libc::getsockname(fd, ptr, &mut len) } != 0 {
        return None;
    }
    match i32::from(storage.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a `sockaddr_in`, which it can hold.
            let v4: libc::sockaddr_in =
                unsafe { std::ptr::addr_of!(storage).cast::<libc::sockaddr_in>().read() };
            let ip = std::net::Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr));
            Some(SocketAddr::from((ip, u16::from_be(v4.sin_port))))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a `sockaddr_in6`, which it can hold.
            let v6: libc::sockaddr_in6 =
                unsafe { std::ptr::addr_of!(storage).cast::<libc::sockaddr_in6>().read() };
            let ip = std::net::Ipv6Addr::from(v6.sin6_addr.s6_addr);
            Some(SocketAddr::from((ip, u16::from_be(v6.sin6_port))))
        }
        _ => None,
    }
}

/// Asserts that the socket listening on `addr` in this process has the backlog `wanted`, as
/// far as `net.core.somaxconn` allows.
pub(crate) fn assert_listen_backlog(addr: SocketAddr, wanted: i32) {
    let cap = std::fs::read_to_string("/proc/sys/net/core/somaxconn").expect("somaxconn");
    let cap: u32 = cap.trim().parse().expect("a number");
    let wanted = u32::try_from(wanted).expect("positive").min(cap);
    assert_eq!(listen_backlog(addr), Some(wanted), "the backlog of the socket on {addr}");
}
