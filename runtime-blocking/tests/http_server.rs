//! zest-blocking's HTTP server answering bad input with the exact status and a JSON-RPC error,
//! over loopback with raw requests.

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

#[test]
fn health_answers_ok() {
    let server = server();
    let r = raw(server.local_addr(), Method::GET, "/health", &[], b"");
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json(), json!({"status": "ok"}));
    server.shutdown();
}

#[test]
fn initialize_gets_a_session_id_and_json() {
    let server = server();
    let r = raw(server.local_addr(), Method::POST, "/mcp", POST_HEADERS, &initialize_body());
    assert_eq!(r.status, StatusCode::OK, "{:?}", String::from_utf8_lossy(&r.body));
    let id = r.headers.get("mcp-session-id").expect("a session id").to_str().unwrap();
    assert_eq!(id.len(), 32, "{id}");
    assert_eq!(r.json()["result"]["serverInfo"]["name"], "zest-http-test");
    server.shutdown();
}

/// What is wrong, the header fields, the body, the status expected.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Vec<u8>, StatusCode);

#[test]
fn bad_requests_get_their_status_and_a_jsonrpc_error() {
    let server = server();
    let init = initialize_body();
    let json_only = [("content-type", "application/json"), ("accept", "application/json")];
    let text_body =
        [("content-type", "text/plain"), ("accept", "application/json, text/event-stream")];
    let cases: Vec<Case<'_>> = vec![
        ("wrong accept", json_only.to_vec(), init.clone(), StatusCode::NOT_ACCEPTABLE),
        (
            "wrong content-type",
            text_body.to_vec(),
            init.clone(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        ("bad json", POST_HEADERS.to_vec(), b"{not json".to_vec(), StatusCode::BAD_REQUEST),
        (
            "missing session",
            POST_HEADERS.to_vec(),
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_vec(),
            StatusCode::BAD_REQUEST,
        ),
        (
            "unknown session",
            [POST_HEADERS, &[("mcp-session-id", "0123456789abcdef0123456789abcdef")]].concat(),
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_vec(),
            StatusCode::NOT_FOUND,
        ),
        (
            "foreign origin",
            [POST_HEADERS, &[("origin", "https://evil.example")]].concat(),
            init.clone(),
            StatusCode::FORBIDDEN,
        ),
        (
            "unsupported version",
            [POST_HEADERS, &[("mcp-protocol-version", "1999-01-01")]].concat(),
            init.clone(),
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (what, headers, body, status) in cases {
        let r = raw(server.local_addr(), Method::POST, "/mcp", &headers, &body);
        assert_eq!(r.status, status, "{what}: {}", String::from_utf8_lossy(&r.body));
        let error = &r.json()["error"];
        assert!(error["code"].is_i64() && error["message"].is_string(), "{what}: {error}");
    }
    server.shutdown();
}

#[test]
fn an_oversized_body_gets_413() {
    let mut http = HttpConfig::new();
    http.router.max_body = 1024;
    let server = server_with(http);
    let mut body = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"pad\":\"".to_vec();
    body.extend(std::iter::repeat_n(b'x', 4096));
    body.extend_from_slice(b"\"}}");
    let r = raw(server.local_addr(), Method::POST, "/mcp", POST_HEADERS, &body);
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    let error = &r.json()["error"];
    assert_eq!(error["code"], -32600, "{error}");
    assert!(error["message"].as_str().unwrap().contains("1024"), "{error}");
    server.shutdown();
}

#[test]
fn a_foreign_host_gets_403_and_an_unknown_path_404() {
    let server = server();
    let r = raw(server.local_addr(), Method::GET, "/health", &[("host", "evil.example")], b"");
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = raw(server.local_addr(), Method::GET, "/nowhere", &[], b"");
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    server.shutdown();
}

#[test]
fn a_head_sent_too_slowly_gets_408_and_does_not_stop_others() {
    use std::io::{Read, Write};
    let mut http = HttpConfig::new();
    http.http1.head_timeout = Duration::from_millis(300);
    let server = server_with(http);
    // Half a head, then nothing: the connection's own thread waits, nobody else does.
    let mut slow = std::net::TcpStream::connect(server.local_addr()).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n").unwrap();
    let r = raw(server.local_addr(), Method::GET, "/health", &[], b"");
    assert_eq!(r.status, StatusCode::OK, "served beside the trickling connection");
    // The header-read deadline answers the slow one and closes it.
    slow.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut answer = Vec::new();
    let _ = slow.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    server.shutdown();
}

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
        "params": {"name": "slow", "arguments": {"ms": 500}}});
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
