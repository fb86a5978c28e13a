//! zest-tokio's HTTP client against zest-tokio's HTTP server over loopback: handshake, JSON
//! and SSE answers, progress and logs on the call's stream, a server request mid-call,
//! list changes on the GET stream, an expired session, and the ways a connection fails.

#[path = "common/http.rs"]
mod http_common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_common::*;
use serde_json::json;
use zest_tokio::core::client::ServerNotification;
use zest_tokio::core::error::RequestError;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::core::io::TransportFailure;
use zest_tokio::schema::{CallToolResult, CreateMessageResult};
use zest_tokio::{CallError, Client, ClientApi, ClientOptions, ConnectError, HttpEndpoint};

fn options() -> ClientOptions {
    let handlers = AsyncClientHandlers::default().on_sampling(|params| async move {
        let asked = params.messages.len();
        Ok(serde_json::from_value::<CreateMessageResult>(json!({
            "role": "assistant",
            "content": {"type": "text", "text": format!("{asked} message(s) read")},
            "model": "canned"
        }))
        .unwrap())
    });
    ClientOptions::new("zest-http-client-test", "1.0").handlers(handlers)
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect()
}

#[tokio::test]
async fn handshake_and_calls_answered_with_json() {
    let server = server().await;
    let client = Client::connect(&server.url(), options()).await.expect("connect");
    assert_eq!(client.negotiated().server_info.name, "zest-http-test");
    let tools: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert!(tools.contains(&"echo".to_owned()), "{tools:?}");
    let echoed = client.call_tool("echo", json!({"text": "hello over http"})).await.unwrap();
    assert_eq!(text(&echoed), "hello over http");
    let sum = client.call_tool("add", json!({"a": 2, "b": 40})).await.unwrap();
    assert_eq!(text(&sum), "42");
    // Concurrent calls share the keep-alive pool and each get their own answer.
    let calls = (0..8).map(|i| {
        let client = client.clone();
        tokio::spawn(
            async move { client.call_tool("echo", json!({"text": format!("n{i}")})).await },
        )
    });
    for (i, call) in calls.enumerate() {
        assert_eq!(text(&call.await.unwrap().unwrap()), format!("n{i}"));
    }
    client.close().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn progress_and_logs_arrive_on_the_calls_sse_stream() {
    let server = server().await;
    // Without the GET stream, the call's own stream is the only way in.
    let mut endpoint = HttpEndpoint::new(server.url());
    endpoint.open_get_stream = false;
    let client = Client::connect_to(endpoint, options()).await.unwrap();
    let notes = client.notifications();
    client.set_logging_level(zest_tokio::schema::LoggingLevel::Info).await.unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = client
        .call_tool_with_progress("steps", json!({"n": 3}), move |p| {
            sink.lock().unwrap().push((p.progress, p.total, p.message));
        })
        .await
        .unwrap();
    assert_eq!(text(&result), "done after 3 steps");
    let progress = seen.lock().unwrap().clone();
    let want: Vec<_> = (1..=3).map(|i| (i as f64, Some(3.0), Some(format!("step {i}")))).collect();
    assert_eq!(progress, want);
    let mut logs = Vec::new();
    for _ in 0..3 {
        match tokio::time::timeout(Duration::from_secs(5), notes.recv()).await {
            Ok(Ok(ServerNotification::LoggingMessage(m))) => logs.push((m.logger, m.data)),
            other => panic!("expected a log record, got {other:?}"),
        }
    }
    let want: Vec<_> =
        (1..=3).map(|i| (Some("steps".to_owned()), json!(format!("did step {i}")))).collect();
    assert_eq!(logs, want);
    client.close().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_sampling_request_mid_call_is_answered() {
    let server = server().await;
    let client = Client::connect(&server.url(), options()).await.unwrap();
    let result = client.call_tool("sample", json!({"prompt": "hi?"})).await.unwrap();
    assert_eq!(text(&result), "model said: 1 message(s) read");
    client.close().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn close_sends_delete_and_ends_the_session_on_the_server() {
    let server = server().await;
    let client = Client::connect(&server.url(), options()).await.unwrap();
    assert_eq!(server.session_count(), 1);
    client.close().await.unwrap();
    assert_eq!(server.session_count(), 0, "DELETE ended the session");
    server.shutdown().await;
}

#[tokio::test]
async fn custom_headers_and_the_bearer_token_reach_the_server() {
    // A server that records the first request head and answers 401.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let recorder = tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap();
            assert!(n > 0 && head.len() < 64 * 1024);
            head.extend_from_slice(&buf[..n]);
        }
        let answer = b"HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer realm=\"t\"\r\ncontent-length: 0\r\n\r\n";
        socket.write_all(answer).await.unwrap();
        String::from_utf8_lossy(&head).to_ascii_lowercase()
    });
    let endpoint =
        HttpEndpoint::new(format!("http://{addr}/mcp")).header("x-tenant", "blue").bearer("s3cret");
    let error = Client::connect_to(endpoint, options()).await.unwrap_err();
    assert!(
        matches!(&error, ConnectError::HttpStatus { status, www_authenticate: Some(c) } if status.as_u16() == 401 && c.contains("Bearer")),
        "{error:?}"
    );
    let head = recorder.await.unwrap();
    assert!(head.contains("x-tenant: blue"), "{head}");
    assert!(head.contains("authorization: bearer s3cret"), "{head}");
}

#[tokio::test]
async fn shutdown_finishes_calls_in_flight_then_stops_accepting() {
    let server = server().await;
    let url = server.url();
    let client = Client::connect(&url, options()).await.unwrap();
    let running = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("steps", json!({"n": 5})).await })
    };
    // Let the call reach its handler before shutting down.
    tokio::time::sleep(Duration::from_millis(30)).await;
    let started = std::time::Instant::now();
    server.shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    let result = running.await.unwrap().expect("the call in flight finished");
    assert_eq!(text(&result), "done after 5 steps");
    let error = Client::connect(&url, options()).await.unwrap_err();
    assert!(matches!(error, ConnectError::Transport(TransportFailure::Refused(_))), "{error:?}");
}

#[tokio::test]
async fn dropping_a_call_cancels_its_handler_on_the_server() {
    use std::sync::atomic::Ordering;
    let server = server().await;
    let client = Client::connect(&server.url(), options()).await.unwrap();
    let call = client.call_tool("never", json!({}));
    assert!(tokio::time::timeout(Duration::from_millis(200), call).await.is_err());
    assert_eq!(NEVER_STARTED.load(Ordering::SeqCst), 1, "the handler ran");
    // notifications/cancelled reaches the server, which aborts the handler's task.
    for _ in 0..250 {
        if NEVER_DROPPED.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(NEVER_DROPPED.load(Ordering::SeqCst), 1, "the handler was stopped");
    let echoed = client.call_tool("echo", json!({"text": "still here"})).await.unwrap();
    assert_eq!(text(&echoed), "still here");
    client.close().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn the_legacy_sse_transport_end_to_end() {
    let server = server().await;
    let url = server.url().replace("/mcp", "/sse");
    let endpoint = HttpEndpoint::new(url).legacy_sse();
    let client = Client::connect_to(endpoint, options()).await.unwrap();
    let echoed = client.call_tool("echo", json!({"text": "legacy"})).await.unwrap();
    assert_eq!(text(&echoed), "legacy");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let steps = client
        .call_tool_with_progress("steps", json!({"n": 2}), move |p| {
            sink.lock().unwrap().push(p.progress)
        })
        .await
        .unwrap();
    assert_eq!(text(&steps), "done after 2 steps");
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0]);
    let sampled = client.call_tool("sample", json!({"prompt": "?"})).await.unwrap();
    assert_eq!(text(&sampled), "model said: 1 message(s) read");
    client.close().await.unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_sessions_in_parallel_lose_and_duplicate_nothing() {
    const SESSIONS: usize = 20;
    const CALLS: usize = 25;
    let server = server().await;
    let url = server.url();
    let sessions = (0..SESSIONS).map(|s| {
        let url = url.clone();
        tokio::spawn(async move {
            let client = Client::connect(&url, options()).await.expect("connect");
            let mut answers = Vec::new();
            for c in 0..CALLS {
                let tag = format!("{s}-{c}");
                let result = client.call_tool("echo", json!({"text": tag})).await.unwrap();
                answers.push((tag, text(&result)));
            }
            client.close().await.unwrap();
            answers
        })
    });
    let deadline = Duration::from_secs(60);
    for session in sessions {
        let answers = tokio::time::timeout(deadline, session).await.expect("bounded").unwrap();
        assert_eq!(answers.len(), CALLS);
        for (asked, answered) in answers {
            assert_eq!(asked, answered);
        }
    }
    assert_eq!(server.session_count(), 0, "every session was closed with DELETE");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_that_act_or_panic_before_their_first_await_still_answer_once() {
    let server = server().await;
    let client = Client::connect(&server.url(), options()).await.unwrap();
    let eager = tokio::time::timeout(Duration::from_secs(5), client.call_tool("eager", json!({})));
    assert_eq!(text(&eager.await.expect("no deadlock").unwrap()), "eager done");
    let boom = client.call_tool("boom", json!({})).await;
    let Err(CallError::Request(RequestError::Remote(error))) = &boom else {
        panic!("expected an internal error, got {boom:?}")
    };
    assert!(error.message.contains("panicked"), "{error:?}");
    let echoed = client.call_tool("echo", json!({"text": "after the panic"})).await.unwrap();
    assert_eq!(text(&echoed), "after the panic");
    client.close().await.unwrap();
    server.shutdown().await;
}
