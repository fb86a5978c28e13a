//! zest-blocking's HTTP client against scripted servers that misbehave on loopback: each
//! fault ends the connect attempt with a typed error, and never hangs.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use zest_blocking::schema::methods::CallTool;
use zest_blocking::{Client, ClientApi, ClientOptions, ConnectError, HttpEndpoint, HttpMode};

/// A server that answers every request, on every connection, with `answer` (raw bytes), then
/// closes the connection. Stops with the test.
fn scripted(answer: Vec<u8>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { continue };
            let answer = answer.clone();
            thread::spawn(move || {
                let _ = socket.set_read_timeout(Some(Duration::from_secs(30)));
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                // The head, bounded; the body (if any) is not needed to answer.
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") && seen.len() < 64 * 1024 {
                    match socket.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = socket.write_all(&answer);
                let _ = socket.shutdown(Shutdown::Write);
            });
        }
    });
    addr
}

fn options() -> ClientOptions {
    let mut options = ClientOptions::new("zest-http-faults", "1");
    options.config.init_timeout = Duration::from_secs(3);
    options
}

/// Connects to the scripted server in `mode`; the error, within 30 s (a hang guard).
fn fails(answer: &[u8], mode: HttpMode, path: &str) -> ConnectError {
    let addr = scripted(answer.to_vec());
    let endpoint = HttpEndpoint::new(format!("http://{addr}{path}")).mode(mode);
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(Client::connect_to(endpoint, options()).map(drop));
    });
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(Ok(())) => panic!("connected to a broken server"),
        Ok(Err(e)) => e,
        Err(_) => panic!("the connect attempt hung"),
    }
}

#[test]
fn a_500_is_an_http_status_error() {
    let e = fails(
        b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n",
        HttpMode::Auto,
        "/mcp",
    );
    assert!(
        matches!(&e, ConnectError::HttpStatus { status, .. } if status.as_u16() == 500),
        "{e:?}"
    );
}

#[test]
fn a_non_json_body_labelled_json_fails_the_handshake() {
    let body = b"<html>not json</html>";
    let answer = [
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes(),
        body.to_vec(),
    ]
    .concat();
    let e = fails(&answer, HttpMode::StreamableHttp, "/mcp");
    assert!(
        matches!(&e, ConnectError::Invalid(why) if why.contains("no JSON-RPC response")),
        "{e:?}"
    );
}

#[test]
fn an_unexpected_content_type_fails_the_handshake() {
    let e = fails(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 2\r\n\r\nhi",
        HttpMode::StreamableHttp,
        "/mcp",
    );
    assert!(
        matches!(&e, ConnectError::Invalid(why) if why.contains("no JSON-RPC response")),
        "{e:?}"
    );
}

#[test]
fn a_truncated_chunked_body_is_a_transport_failure() {
    let e = fails(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{\"js",
        HttpMode::StreamableHttp,
        "/mcp",
    );
    assert!(
        matches!(&e, ConnectError::Exited { reason, .. } if reason.to_string().contains("inside a body")),
        "{e:?}"
    );
}

#[test]
fn an_endpoint_event_on_another_origin_is_refused() {
    let e = fails(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nevent: endpoint\ndata: http://evil.example/messages\n\n",
        HttpMode::LegacySse,
        "/sse",
    );
    let reason = zest_blocking::core::error::CloseReason::EndpointCrossOrigin(
        "http://evil.example/messages".into(),
    );
    assert_eq!(e, ConnectError::Handshake(reason));
}

#[test]
fn an_endless_sse_event_beyond_the_limit_is_dropped_and_fails_the_handshake() {
    let mut answer = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: ".to_vec();
    answer.extend(std::iter::repeat_n(b'x', 5 * 1024 * 1024));
    let e = fails(&answer, HttpMode::StreamableHttp, "/mcp");
    // The event is dropped at the 4 MiB limit (a violation), and the stream ends owing the
    // response.
    assert!(
        matches!(&e, ConnectError::Invalid(why) if why.contains("no JSON-RPC response")),
        "{e:?}"
    );
}

#[test]
fn a_garbage_answer_is_a_transport_failure() {
    let e = fails(b"SSH-2.0-OpenSSH_9.6\r\n\r\n", HttpMode::StreamableHttp, "/mcp");
    assert!(
        matches!(&e, ConnectError::Exited { reason, .. } if reason.to_string().contains("malformed")),
        "{e:?}"
    );
}

/// How the scripted MCP server answers `tools/call`.
#[derive(Clone, Copy)]
enum CallAnswer {
    /// On an SSE stream it then leaves open (the spec says it SHOULD close it, not MUST).
    StreamLeftOpen,
    /// One JSON body, 3 s later.
    SlowJson,
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
