//! zest-blocking's HTTP client against zest-blocking's HTTP server over loopback: handshake,
//! JSON and SSE answers, progress and logs on the call's stream, a server request mid-call,
//! an expired session, graceful shutdown, and the ways a connection fails.

#[path = "common/http.rs"]
mod http_common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use http_common::*;
use serde_json::json;
use zest_blocking::core::client::ServerNotification;
use zest_blocking::core::error::RequestError;
use zest_blocking::core::io::TransportFailure;
use zest_blocking::core::RequestOptions;
use zest_blocking::schema::methods::CallTool;
use zest_blocking::schema::CallToolParams;
use zest_blocking::{CallError, Client, ClientApi, ConnectError, HttpEndpoint};

/// Hang guard for waits on another thread.
const GUARD: Duration = Duration::from_secs(30);

#[test]
fn handshake_and_calls_answered_with_json() {
    let server = server();
    let client = Client::connect(&server.url(), options()).expect("connect");
    assert_eq!(client.negotiated().server_info.name, "zest-http-test");
    assert_eq!(client.pid(), 0);
    let tools: Vec<String> = client.list_all_tools().unwrap().into_iter().map(|t| t.name).collect();
    assert!(tools.contains(&"echo".to_owned()), "{tools:?}");
    let echoed = client.call_tool("echo", json!({"text": "hello over http"})).unwrap();
    assert_eq!(text(&echoed), "hello over http");
    let sum = client.call_tool("add", json!({"a": 2, "b": 40})).unwrap();
    assert_eq!(text(&sum), "42");
    // Calls from many threads share the keep-alive pool and each get their own answer.
    let calls: Vec<_> = (0..8)
        .map(|i| {
            let client = client.clone();
            thread::spawn(move || client.call_tool("echo", json!({"text": format!("n{i}")})))
        })
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        assert_eq!(text(&call.join().unwrap().unwrap()), format!("n{i}"));
    }
    client.close().unwrap();
    server.shutdown();
}

#[test]
fn progress_and_logs_arrive_on_the_calls_sse_stream() {
    let server = server();
    // Without the GET stream, the call's own stream is the only way in.
    let mut endpoint = HttpEndpoint::new(server.url());
    endpoint.open_get_stream = false;
    let client = Client::connect_to(endpoint, options()).unwrap();
    client.set_logging_level(zest_blocking::schema::LoggingLevel::Info).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = client
        .call_tool_with_progress("steps", json!({"n": 3}), move |p| {
            sink.lock().unwrap().push((p.progress, p.total, p.message));
        })
        .unwrap();
    assert_eq!(text(&result), "done after 3 steps");
    let progress = seen.lock().unwrap().clone();
    let want: Vec<_> = (1..=3).map(|i| (i as f64, Some(3.0), Some(format!("step {i}")))).collect();
    assert_eq!(progress, want);
    let mut logs = Vec::new();
    for _ in 0..3 {
        match client.notifications().recv_timeout(GUARD) {
            Some(ServerNotification::LoggingMessage(m)) => logs.push((m.logger, m.data)),
            other => panic!("expected a log record, got {other:?}"),
        }
    }
    let want: Vec<_> =
        (1..=3).map(|i| (Some("steps".to_owned()), json!(format!("did step {i}")))).collect();
    assert_eq!(logs, want);
    client.close().unwrap();
    server.shutdown();
}

#[test]
fn a_sampling_request_mid_call_is_answered() {
    let server = server();
    let client = Client::connect(&server.url(), options()).unwrap();
    let result = client.call_tool("sample", json!({"prompt": "hi?"})).unwrap();
    assert_eq!(text(&result), "model said: 1 message(s) read");
    client.close().unwrap();
    server.shutdown();
}

#[test]
fn close_sends_delete_and_ends_the_session_on_the_server() {
    let server = server();
    let client = Client::connect(&server.url(), options()).unwrap();
    assert_eq!(server.session_count(), 1);
    client.close().unwrap();
    assert_eq!(server.session_count(), 0, "DELETE ended the session");
    // Later calls fail as on stdio.
    assert!(client.ping().is_err());
    server.shutdown();
}

#[test]
fn start_and_cancel_a_call_from_another_thread() {
    let server = server();
    let client = Client::connect(&server.url(), options()).unwrap();
    let params = CallToolParams::new("slow", json!({"ms": 60_000}));
    let pending = client.start::<CallTool>(params, RequestOptions::default());
    let cancel = pending.cancel_handle().expect("sent");
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(50));
        cancel.cancel();
    });
    let outcome = pending.wait();
    assert!(matches!(outcome, Err(CallError::Request(RequestError::Cancelled))), "{outcome:?}");
    canceller.join().unwrap();
    let echoed = client.call_tool("echo", json!({"text": "still here"})).unwrap();
    assert_eq!(text(&echoed), "still here");
    client.close().unwrap();
    // The cancelled handler still sleeps on its thread; shutdown waits its grace, then goes.
    server.shutdown();
}

#[test]
fn custom_headers_and_the_bearer_token_reach_the_server() {
    // A server that records the first request head and answers 401.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let recorder = thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        socket.set_read_timeout(Some(GUARD)).unwrap();
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).unwrap();
            assert!(n > 0 && head.len() < 64 * 1024);
            head.extend_from_slice(&buf[..n]);
        }
        let answer = b"HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer realm=\"t\"\r\ncontent-length: 0\r\n\r\n";
        socket.write_all(answer).unwrap();
        String::from_utf8_lossy(&head).to_ascii_lowercase()
    });
    let endpoint =
        HttpEndpoint::new(format!("http://{addr}/mcp")).header("x-tenant", "blue").bearer("s3cret");
    let error = Client::connect_to(endpoint, options()).unwrap_err();
    assert!(
        matches!(&error, ConnectError::HttpStatus { status, www_authenticate: Some(c) } if status.as_u16() == 401 && c.contains("Bearer")),
        "{error:?}"
    );
    let head = recorder.join().unwrap();
    assert!(head.contains("x-tenant: blue"), "{head}");
    assert!(head.contains("authorization: bearer s3cret"), "{head}");
}

#[test]
fn shutdown_finishes_calls_in_flight_then_stops_accepting() {
    let server = server();
    let url = server.url();
    let client = Client::connect(&url, options()).unwrap();
    // The first progress report proves the handler runs; then shut down.
    let (started_tx, started) = std::sync::mpsc::channel();
    let started_tx = Mutex::new(started_tx);
    let running = {
        let client = client.clone();
        thread::spawn(move || {
            client.call_tool_with_progress("steps", json!({"n": 5}), move |_| {
                let _ = started_tx.lock().unwrap().send(());
            })
        })
    };
    started.recv_timeout(GUARD).expect("the call's handler started");
    server.shutdown();
    let result = running.join().unwrap().expect("the call in flight finished");
    assert_eq!(text(&result), "done after 5 steps");
    let error = Client::connect(&url, options()).unwrap_err();
    assert!(matches!(error, ConnectError::Transport(TransportFailure::Refused(_))), "{error:?}");
}

#[test]
fn the_legacy_sse_transport_end_to_end() {
    let server = server();
    let url = server.url().replace("/mcp", "/sse");
    let endpoint = HttpEndpoint::new(url).legacy_sse();
    let client = Client::connect_to(endpoint, options()).unwrap();
    let echoed = client.call_tool("echo", json!({"text": "legacy"})).unwrap();
    assert_eq!(text(&echoed), "legacy");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let steps = client
        .call_tool_with_progress("steps", json!({"n": 2}), move |p| {
            sink.lock().unwrap().push(p.progress)
        })
        .unwrap();
    assert_eq!(text(&steps), "done after 2 steps");
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0]);
    let sampled = client.call_tool("sample", json!({"prompt": "?"})).unwrap();
    assert_eq!(text(&sampled), "model said: 1 message(s) read");
    client.close().unwrap();
    server.shutdown();
}

#[test]
fn many_sessions_in_parallel_lose_and_duplicate_nothing() {
    const SESSIONS: usize = 10;
    const CALLS: usize = 20;
    let server = server();
    let url = server.url();
    let sessions: Vec<_> = (0..SESSIONS)
        .map(|s| {
            let url = url.clone();
            thread::spawn(move || {
                let client = Client::connect(&url, options()).expect("connect");
                let mut answers = Vec::new();
                for c in 0..CALLS {
                    let tag = format!("{s}-{c}");
                    let result = client.call_tool("echo", json!({"text": tag})).unwrap();
                    answers.push((tag, text(&result)));
                }
                client.close().unwrap();
                answers
            })
        })
        .collect();
    for session in sessions {
        let answers = session.join().unwrap();
        assert_eq!(answers.len(), CALLS);
        for (asked, answered) in answers {
            assert_eq!(asked, answered);
        }
    }
    assert_eq!(server.session_count(), 0, "every session was closed with DELETE");
    server.shutdown();
}

#[test]
fn a_progress_callback_may_call_the_client_over_http() {
    let server = server();
    let client = Client::connect(&server.url(), options()).unwrap();
    let inner = client.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let result = client
        .call_tool_with_progress("steps", json!({"n": 3}), move |p| {
            let echoed = inner.call_tool("echo", json!({"text": format!("at {}", p.progress)}));
            let _ = tx.send(echoed.map(|r| text(&r).to_owned()));
        })
        .expect("the outer call completes");
    assert_eq!(text(&result), "done after 3 steps");
    let echoed: Vec<String> = rx.try_iter().map(|r| r.expect("the inner call")).collect();
    assert_eq!(echoed, ["at 1", "at 2", "at 3"]);
    client.close().unwrap();
    server.shutdown();
}
