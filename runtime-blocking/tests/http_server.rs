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
