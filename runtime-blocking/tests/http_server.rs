//! zest-blocking's HTTP server where its threads decide: the answer's form against
//! `json_wait`, and a connection whose call was cancelled serving the next request while
//! the handler still runs. What every server runtime answers to raw requests is checked
//! once in `conformance/tests/http_server_contract.rs`.

#[path = "common/http.rs"]
mod http_common;
#[path = "../../tests/support/load.rs"]
mod load;

use http::{Method, StatusCode};
use http_common::*;
use std::time::Duration;

use serde_json::json;
use zest_blocking::core::runtime::OwnedEvent;
use zest_blocking::HttpConfig;

/// Handlers run on threads of their own, so the answer's form is decided before any runs:
/// an SSE stream, however quick the tool (never a race between the two forms).
#[test]
fn a_tool_done_within_json_wait_is_answered_with_json_and_one_that_reports_with_sse() {
    // A long wait, so that only what the handlers do decides (not how busy the machine is).
    let mut config = HttpConfig::new();
    config.router.json_wait = Duration::from_secs(10);
    let server = server_with(config);
    let (quick, reports) = load::quick_and_slow_calls(server.local_addr());
    assert_eq!(quick.headers["content-type"], "application/json");
    let answer: serde_json::Value = serde_json::from_slice(&quick.body).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "quick");
    // `steps` logs a line before it answers: the answer streams from then on.
    assert_eq!(reports.headers["content-type"], "text/event-stream");
    let body = String::from_utf8_lossy(&reports.body);
    assert!(body.contains("did step 1") && body.contains("done after 1 steps"), "{body}");
    server.shutdown();
}

#[test]
fn a_silent_tool_slower_than_json_wait_is_answered_on_an_sse_stream() {
    let mut config = HttpConfig::new();
    config.router.json_wait = Duration::from_millis(20);
    let server = server_with(config);
    let mut conn = load::RawConn::connect(server.local_addr());
    let session = load::open_session(&mut conn);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 2000}}});
    let headers = load::session_headers(&session);
    let r = conn.exchange(Method::POST, &headers, call.to_string().as_bytes());
    // `slow` sends nothing before its answer: only the wait's end made this a stream.
    assert_eq!(r.headers["content-type"], "text/event-stream");
    assert!(String::from_utf8_lossy(&r.body).contains("slow done"));
    server.shutdown();
}

#[test]
fn a_connection_whose_call_was_cancelled_serves_the_next_request_while_the_handler_runs() {
    let mut config = HttpConfig::new();
    // The cancelled handler sleeps on: shutdown waits only this long for it.
    config.shutdown_grace = Duration::from_millis(100);
    let server = server_with(config);
    let mut conn = load::RawConn::connect(server.local_addr());
    let session = load::open_session(&mut conn);
    let headers = load::session_headers(&session);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 60_000}}});
    conn.send(Method::POST, &headers, call.to_string().as_bytes());
    let OwnedEvent::Head(head) = conn.next_event() else { panic!("a head first") };
    assert_eq!(head.headers["content-type"], "text/event-stream");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "test"}});
    let mut other = load::RawConn::connect(server.local_addr());
    let r = other.exchange(Method::POST, &headers, cancel.to_string().as_bytes());
    assert_eq!(r.status, StatusCode::ACCEPTED);
    // The cancelled call's stream ends; its handler sleeps on.
    while !matches!(conn.next_event(), OwnedEvent::End) {}
    // The same connection carries the next request at once, not after the handler.
    let mut conn = conn.patient(Duration::from_secs(10));
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    let r = conn.exchange(Method::POST, &headers, ping.to_string().as_bytes());
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&r.body).unwrap()["id"], 3);
    server.shutdown();
}

/// In 2026-07-28 a client cancels a call by closing its connection. The call runs on the
/// thread that read it, the polling thread or its connection's reader (no handler thread
/// woken for a quick call); once it has run a few milliseconds another thread reads the
/// socket, so the close still reaches the handler.
#[test]
fn a_2026_call_runs_on_its_connections_thread_and_sees_its_client_close_the_connection() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc, Mutex};
    use std::time::Instant;
    use zest_blocking::core::error::RequestError;
    use zest_blocking::core::server::ServerConfig;
    use zest_blocking::core::RequestOptions;
    use zest_blocking::schema::methods::CallTool;
    use zest_blocking::schema::{CallToolParams, CallToolResult, Tool};
    use zest_blocking::{serve_http_with, CallError, Client, ClientApi, Registry};

    let (ran, threads) = mpsc::channel::<(String, bool)>();
    let ran = Mutex::new(ran);
    let cancelled = Arc::new(AtomicBool::new(false));
    let seen = cancelled.clone();
    let mut registry = Registry::default();
    let schema = json!({"type": "object", "properties": {"wait": {"type": "boolean"}}});
    registry.raw_tool(Tool::new("watched", "Waits for its cancellation", schema), move |ctx, p| {
        let wait = p.arguments.as_ref().is_some_and(|a| a["wait"] == true);
        let name = std::thread::current().name().unwrap_or_default().to_owned();
        ran.lock().unwrap().send((name, wait)).unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        while wait && !ctx.is_cancelled() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        seen.store(ctx.is_cancelled(), Ordering::SeqCst);
        Ok(CallToolResult::text("returned"))
    });
    let config = ServerConfig::new("watched", "1");
    let mut http = HttpConfig::new();
    http.shutdown_grace = Duration::from_millis(100);
    let server = serve_http_with("127.0.0.1:0", config, http, registry).unwrap();
    let options = options().with_config(|c| c.prefer_modern());
    let client = Client::connect(&server.url(), options).unwrap();
    assert_eq!(client.negotiated().protocol_version.as_str(), "2026-07-28");

    let quick = client.call_tool("watched", json!({"wait": false})).unwrap();
    assert_eq!(text(&quick), "returned");
    let (thread, _) = threads.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(reading_thread(&thread), "a quick call ran on {thread}");

    let params = CallToolParams::new("watched", json!({"wait": true}));
    let pending = client.start::<CallTool>(params, RequestOptions::default());
    let (thread, _) = threads.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(reading_thread(&thread), "a waiting call ran on {thread}");
    pending.cancel();
    let outcome = pending.wait();
    assert!(matches!(outcome, Err(CallError::Request(RequestError::Cancelled))), "{outcome:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cancelled.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(cancelled.load(Ordering::SeqCst), "the handler saw its connection close");
    let echoed = client.call_tool("watched", json!({"wait": false})).unwrap();
    assert_eq!(text(&echoed), "returned");
    client.close().unwrap();
    server.shutdown();
}

/// A quick request is served on the thread that polls every connection; one whose handler
/// keeps that thread busy hands polling on to another thread within a few milliseconds, so a
/// request on another connection is served meanwhile. Here the slow call waits for the
/// quick one: without the hand-over it would wait its full ten seconds.
#[test]
fn a_slow_call_on_the_polling_thread_holds_back_no_other_connection() {
    use std::sync::{mpsc, Arc, Mutex};
    use zest_blocking::core::server::ServerConfig;
    use zest_blocking::schema::{CallToolResult, Tool};
    use zest_blocking::{serve_http, Client, ClientApi, Registry};

    let (release, released) = mpsc::channel::<()>();
    let (release, released) = (Mutex::new(release), Arc::new(Mutex::new(released)));
    let (ran_on, threads) = mpsc::channel::<String>();
    let ran_on = Mutex::new(ran_on);
    let mut registry = Registry::default();
    let schema = json!({"type": "object"});
    registry.raw_tool(Tool::new("slow", "Waits for quick", schema.clone()), move |_, _| {
        let name = std::thread::current().name().unwrap_or_default().to_owned();
        ran_on.lock().unwrap().send(name).unwrap();
        let waited = released.lock().unwrap().recv_timeout(Duration::from_secs(10));
        Ok(CallToolResult::text(if waited.is_ok() { "released" } else { "timed out" }))
    });
    registry.raw_tool(Tool::new("quick", "Releases slow", schema), move |_, _| {
        release.lock().unwrap().send(()).unwrap();
        Ok(CallToolResult::text("quick"))
    });
    let server = serve_http("127.0.0.1:0", ServerConfig::new("slow", "1"), registry).unwrap();
    let (slow_client, quick_client) = (
        Client::connect(&server.url(), options()).unwrap(),
        Client::connect(&server.url(), options()).unwrap(),
    );
    let slow = std::thread::spawn(move || slow_client.call_tool("slow", json!({})));
    // Once the slow handler runs, the other client calls.
    let thread = threads.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(reading_thread(&thread), "the slow call ran on {thread}");
    let quick = quick_client.call_tool("quick", json!({})).unwrap();
    assert_eq!(text(&quick), "quick");
    let slow = slow.join().unwrap().unwrap();
    assert_eq!(text(&slow), "released", "the quick call was served while the slow one ran");
    server.shutdown();
}

/// The shutdown waits for its connections to end and hears of each end at once: one that
/// was mid-request when it began holds it only until that request is answered, not for its
/// grace period.
#[test]
fn a_shutdown_returns_once_the_connection_it_waits_for_has_closed() {
    use std::io::{Read, Write};
    let mut config = HttpConfig::new();
    config.shutdown_grace = Duration::from_secs(10);
    let server = server_with(config);
    let mut socket = std::net::TcpStream::connect(server.local_addr()).unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nExpect: 100-continue\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).unwrap();
    // The go-ahead says the server has read the head: the connection is mid-request.
    let go_ahead = b"HTTP/1.1 100 Continue\r\n\r\n";
    let mut read = vec![0; go_ahead.len()];
    socket.read_exact(&mut read).unwrap();
    assert_eq!(read, go_ahead);
    let shutdown = std::thread::spawn(move || {
        let started = std::time::Instant::now();
        server.shutdown();
        started.elapsed()
    });
    // The shutdown begins meanwhile and waits for this connection.
    std::thread::sleep(Duration::from_millis(300));
    socket.write_all(body.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = socket.read_to_end(&mut answer);
    assert!(answer.starts_with(b"HTTP/1.1 "), "{}", String::from_utf8_lossy(&answer));
    let took = shutdown.join().unwrap();
    assert!(took < Duration::from_secs(5), "the shutdown waited {took:?} past the last close");
}

/// The threads that read requests: the polling thread and connections' readers.
fn reading_thread(name: &str) -> bool {
    name == "zest-http-accept" || name == "zest-http-conn"
}
