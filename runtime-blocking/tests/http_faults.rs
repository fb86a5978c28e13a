//! zest-blocking's HTTP client against scripted MCP servers on loopback: a call whose stream
//! stays open after its answer returns, one whose stream stays silent returns at its timeout
//! (its caller reads the stream, yet is not stuck in that read), a stream that ends with
//! its answer is read on the calling thread, and `start` returns before a slow JSON answer. The
//! faults every client runtime answers alike are in `conformance/tests/http_client_faults.rs`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use zest_blocking::schema::methods::CallTool;
use zest_blocking::{Client, ClientApi, ClientOptions, HttpEndpoint};

fn options() -> ClientOptions {
    let mut options = ClientOptions::new("zest-http-faults", "1");
    options.config.init_timeout = Duration::from_secs(3);
    options
}

/// How the scripted MCP server answers `tools/call`.
#[derive(Clone, Copy)]
enum CallAnswer {
    /// On an SSE stream it then leaves open (the spec says it SHOULD close it, not MUST).
    StreamLeftOpen,
    /// One JSON body, 3 s later.
    SlowJson,
    /// An SSE stream's head, then nothing for 20 s.
    SilentStream,
    /// An SSE stream ended at once: an event that is not JSON (a protocol violation, reported
    /// on the thread that read it), then the answer.
    StrayThenAnswer,
}

/// A Streamable HTTP server that answers `tools/call` as `answer` says; everything else as
/// a plain server does.
fn scripted_mcp(answer: CallAnswer) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(socket) = socket else { continue };
            thread::spawn(move || serve_scripted_mcp(socket, answer));
        }
    });
    addr
}

fn serve_scripted_mcp(mut socket: std::net::TcpStream, answer: CallAnswer) {
    let _ = socket.set_read_timeout(Some(Duration::from_secs(30)));
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") else {
            match socket.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map_or(0, |v| v.trim().parse::<usize>().unwrap());
        while seen.len() < end + 4 + length {
            match socket.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        let body: Vec<u8> = seen.drain(..end + 4 + length).skip(end + 4).collect();
        if !head.starts_with("post") {
            let _ =
                socket.write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n");
            continue;
        }
        let message: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let json = |result: serde_json::Value| {
            serde_json::json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string()
        };
        match message["method"].as_str() {
            Some("initialize") => {
                let answer = json(serde_json::json!({"protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}}, "serverInfo": {"name": "open", "version": "1"}}));
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                     mcp-session-id: s1\r\ncontent-length: {}\r\n\r\n",
                    answer.len()
                );
                let _ = socket.write_all(format!("{head}{answer}").as_bytes());
            }
            Some("tools/call") if matches!(answer, CallAnswer::SlowJson) => {
                thread::sleep(Duration::from_secs(3));
                let answer = json(serde_json::json!({"content": []}));
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                     content-length: {}\r\n\r\n",
                    answer.len()
                );
                let _ = socket.write_all(format!("{head}{answer}").as_bytes());
            }
            Some("tools/call") if matches!(answer, CallAnswer::SilentStream) => {
                let _ = socket.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                      transfer-encoding: chunked\r\n\r\n",
                );
                thread::sleep(Duration::from_secs(20));
                return;
            }
            Some("tools/call") if matches!(answer, CallAnswer::StrayThenAnswer) => {
                let answer = json(serde_json::json!({"content": []}));
                let stray = "not JSON";
                let events = format!("data: {stray}\n\ndata: {answer}\n\n");
                let _ = socket.write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                         transfer-encoding: chunked\r\n\r\n{:x}\r\n{events}\r\n0\r\n\r\n",
                        events.len()
                    )
                    .as_bytes(),
                );
            }
            Some("tools/call") => {
                let event = format!(
                    "data: {}\n\n",
                    json(serde_json::json!(
                    {"content": [{"type": "text", "text": "answered"}]}))
                );
                let _ = socket.write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                         transfer-encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
                        event.len()
                    )
                    .as_bytes(),
                );
                // The stream stays open: no last chunk.
                thread::sleep(Duration::from_secs(20));
                return;
            }
            _ => {
                let _ = socket.write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n");
            }
        }
    }
}

#[test]
fn a_call_whose_stream_stays_open_after_its_answer_returns_with_the_answer() {
    let addr = scripted_mcp(CallAnswer::StreamLeftOpen);
    let endpoint = HttpEndpoint::new(format!("http://{addr}/mcp"));
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let client = Client::connect_to(endpoint, options()).expect("connect");
        // The first call may leave while the session settles in; the next ones leave from the
        // calling thread.
        for _ in 0..3 {
            let result = client.call_tool("anything", serde_json::json!({}));
            let _ = tx.send(result.map(|r| r.content.len()));
        }
    });
    for call in 0..3 {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(result) => assert_eq!(result.expect("the call's answer"), 1),
            Err(_) => panic!("call {call} waited for its stream to end, not for its answer"),
        }
    }
}

#[test]
fn start_returns_before_a_slow_json_answer_and_the_call_still_gets_it() {
    let addr = scripted_mcp(CallAnswer::SlowJson);
    let endpoint = HttpEndpoint::new(format!("http://{addr}/mcp"));
    let client = Client::connect_to(endpoint, options()).expect("connect");
    let (tx, rx) = mpsc::channel();
    let (ready_tx, ready) = mpsc::channel();
    let caller = client.clone();
    thread::spawn(move || {
        // One call first, so that the starts find the session settled in.
        let first = caller.call_tool("slow", serde_json::json!({}));
        let _ = ready_tx.send(first.map(|r| r.content.len()));
        for _ in 0..2 {
            let params = zest_blocking::schema::CallToolParams::new("slow", serde_json::json!({}));
            let call = caller.start::<CallTool>(params, Default::default());
            // Sent, not answered: start must not wait for the answer (3 s away).
            let _ = tx.send(call);
        }
    });
    let first = ready.recv_timeout(Duration::from_secs(10)).expect("the first call's answer");
    assert_eq!(first.expect("the first call's answer"), 0);
    let calls: Vec<_> = (0..2)
        .map(|n| {
            rx.recv_timeout(Duration::from_secs(2))
                .unwrap_or_else(|_| panic!("start {n} waited for its answer"))
        })
        .collect();
    for call in calls {
        assert!(call.wait().expect("the answer").content.is_empty());
    }
}

#[test]
fn a_call_whose_stream_stays_silent_returns_at_its_timeout() {
    use zest_blocking::core::error::RequestError;
    use zest_blocking::core::RequestOptions;
    use zest_blocking::CallError;
    let addr = scripted_mcp(CallAnswer::SilentStream);
    let endpoint = HttpEndpoint::new(format!("http://{addr}/mcp"));
    let client = Client::connect_to(endpoint, options()).expect("connect");
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let params = zest_blocking::schema::CallToolParams::new("silent", serde_json::json!({}));
        let opts = RequestOptions::default().timeout(Duration::from_millis(300));
        let _ = tx.send(client.request_with::<CallTool>(params, opts, None));
    });
    match rx.recv_timeout(Duration::from_secs(5)) {
        Ok(outcome) => assert!(
            matches!(outcome, Err(CallError::Request(RequestError::TimedOut))),
            "{outcome:?}"
        ),
        Err(_) => panic!("the call waited for its silent stream, not for its timeout"),
    }
}

/// A caller reads its call's event stream itself (no thread woken to read it, none to wake
/// the caller): what the stream carries is handled on the calling thread, here a violation.
#[test]
fn a_stream_that_ends_with_its_answer_is_read_on_the_calling_thread() {
    use std::sync::{Arc, Mutex};
    use zest_blocking::core::error::ProtocolViolation;
    use zest_blocking::core::handler::SyncClientHandlers;
    let addr = scripted_mcp(CallAnswer::StrayThenAnswer);
    let endpoint = HttpEndpoint::new(format!("http://{addr}/mcp"));
    let readers = Arc::new(Mutex::new(Vec::new()));
    let seen = readers.clone();
    let handlers = SyncClientHandlers::default()
        // Only the stray events count: the refused GET stream is a violation of its own,
        // reported whenever its thread gets to it.
        .on_violation(move |v| {
            if matches!(v, ProtocolViolation::Decode(_)) {
                seen.lock().unwrap().push(thread::current().id());
            }
        });
    let client = Client::connect_to(endpoint, options().handlers(handlers)).expect("connect");
    // The first call may leave while the session settles in; the next ones from here.
    assert!(client.call_tool("anything", serde_json::json!({})).unwrap().content.is_empty());
    // Read elsewhere, its violation may be reported just after its answer was delivered.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while readers.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    readers.lock().unwrap().clear();
    for _ in 0..3 {
        assert!(client.call_tool("anything", serde_json::json!({})).unwrap().content.is_empty());
    }
    let readers = readers.lock().unwrap().clone();
    assert_eq!(readers, vec![thread::current().id(); 3], "read on the calling thread");
}
