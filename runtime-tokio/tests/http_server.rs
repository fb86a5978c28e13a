//! zest-tokio's HTTP server answering bad input with the exact status and a JSON-RPC error,
//! over loopback with raw requests.

#[path = "common/http.rs"]
mod http_common;
#[path = "../../tests/support/load.rs"]
mod load;

use http::{Method, StatusCode};
use http_common::*;
use serde_json::json;

#[tokio::test]
async fn health_answers_ok() {
    let server = server().await;
    let r = raw(&server, Method::GET, "/health", &[], b"").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json(), json!({"status": "ok"}));
    server.shutdown().await;
}

#[tokio::test]
async fn initialize_gets_a_session_id_and_json() {
    let server = server().await;
    let r = raw(&server, Method::POST, "/mcp", POST_HEADERS, &initialize_body()).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", String::from_utf8_lossy(&r.body));
    let id = r.headers.get("mcp-session-id").expect("a session id").to_str().unwrap();
    assert_eq!(id.len(), 32, "{id}");
    assert_eq!(r.json()["result"]["serverInfo"]["name"], "zest-http-test");
    server.shutdown().await;
}

/// What is wrong, the header fields, the body, the status expected.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Vec<u8>, StatusCode);

#[tokio::test]
async fn bad_requests_get_their_status_and_a_jsonrpc_error() {
    let server = server().await;
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
        let r = raw(&server, Method::POST, "/mcp", &headers, &body).await;
        assert_eq!(r.status, status, "{what}: {}", String::from_utf8_lossy(&r.body));
        let error = &r.json()["error"];
        assert!(error["code"].is_i64() && error["message"].is_string(), "{what}: {error}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn an_oversized_body_gets_413() {
    let mut http = zest_tokio::HttpConfig::new();
    http.router.max_body = 1024;
    let server = server_with(http).await;
    let mut body = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"pad\":\"".to_vec();
    body.extend(std::iter::repeat_n(b'x', 4096));
    body.extend_from_slice(b"\"}}");
    let r = raw(&server, Method::POST, "/mcp", POST_HEADERS, &body).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    let error = &r.json()["error"];
    assert_eq!(error["code"], -32600, "{error}");
    assert!(error["message"].as_str().unwrap().contains("1024"), "{error}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_foreign_host_gets_403_and_an_unknown_path_404() {
    let server = server().await;
    let r = raw(&server, Method::GET, "/health", &[("host", "evil.example")], b"").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = raw(&server, Method::GET, "/nowhere", &[], b"").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_sent_byte_by_byte_too_slowly_gets_408_and_does_not_stop_others() {
    let mut http = zest_tokio::HttpConfig::new();
    http.http1.head_timeout = std::time::Duration::from_secs(1);
    let server = server_with(http).await;
    let addr = server.local_addr();
    // One byte every 100 ms of a head that never ends, from a thread of its own.
    let every = std::time::Duration::from_millis(100);
    let slow = tokio::task::spawn_blocking(move || load::slow_head(addr, every));
    let r = raw(&server, Method::GET, "/health", &[], b"").await;
    assert_eq!(r.status, StatusCode::OK, "served beside the trickling connection");
    // The header-read deadline answers the slow one and closes it.
    let answer = slow.await.expect("the slow client's thread");
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_done_at_its_first_poll_is_answered_with_json_and_one_that_waits_with_sse() {
    let server = server().await;
    let addr = server.local_addr();
    let calls = tokio::task::spawn_blocking(move || load::quick_and_slow_calls(addr));
    let (quick, waits) = calls.await.unwrap();
    assert_eq!(quick.headers["content-type"], "application/json");
    let answer: serde_json::Value = serde_json::from_slice(&quick.body).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "quick");
    assert_eq!(waits.headers["content-type"], "text/event-stream");
    let body = String::from_utf8_lossy(&waits.body);
    assert!(body.contains("done after 1 steps"), "{body}");
    server.shutdown().await;
}
