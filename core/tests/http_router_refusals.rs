//! The Streamable HTTP and legacy HTTP+SSE router, driven by a scripted HTTP client in
//! memory and virtual time. What the router refuses, and with which status: transport errors, a foreign host (the DNS-rebinding guard), a missing or wrong bearer token, batches outside 2025-03-26, a deleted session, an oversized body.

mod common;
mod router_harness;

use http::{HeaderMap, HeaderValue, Method, StatusCode};
use router_harness::*;
use serde_json::json;
use zest_core::io::{Input, Receive, RequestHead, StreamEvent, StreamId};
use zest_core::server::Event;

#[test]
fn transport_refusals_have_their_statuses() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    let body = serde_json::to_vec(&ping).unwrap();
    let cases: Vec<(Vec<(&str, &str)>, StatusCode)> = vec![
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            StatusCode::BAD_REQUEST,
        ),
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-session-id", "feed"),
            ],
            StatusCode::NOT_FOUND,
        ),
        (
            vec![
                ("content-type", "text/plain"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-session-id", &session),
            ],
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "application/json"),
                ("mcp-session-id", &session),
            ],
            StatusCode::NOT_ACCEPTABLE,
        ),
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "1999-01-01"),
            ],
            StatusCode::BAD_REQUEST,
        ),
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-session-id", &session),
                ("origin", "https://evil.example"),
            ],
            StatusCode::FORBIDDEN,
        ),
        (
            vec![
                ("content-type", "application/json"),
                ("accept", "*/*"),
                ("mcp-session-id", &session),
                ("origin", "http://localhost:3000"),
            ],
            StatusCode::OK,
        ),
    ];
    for (headers, status) in cases {
        let stream = http.send(Method::POST, "/mcp", &headers, &body);
        let a = http.answer(stream);
        assert_eq!(a.status, Some(status), "{headers:?}: {a:?}");
        assert!(a.closed);
        if status != StatusCode::OK {
            assert!(a.json()["error"]["message"].is_string(), "{a:?}");
        }
    }
    let put = http.send(Method::PUT, "/mcp", &[], b"");
    assert_eq!(http.answer(put).status, Some(StatusCode::METHOD_NOT_ALLOWED));
    assert!(http.answer(put).headers.contains_key("allow"));
    let lost = http.send(Method::GET, "/elsewhere", &[], b"");
    assert_eq!(http.answer(lost).status, Some(StatusCode::NOT_FOUND));
    let health = http.send(Method::GET, "/health", &[], b"");
    assert_eq!(http.answer(health).json(), json!({"status":"ok"}));
}

#[test]
fn a_foreign_host_is_refused_before_anything_else() {
    let mut http = Http::new(config());
    let stream = StreamId(99);
    let mut headers = HeaderMap::new();
    headers.insert("host", HeaderValue::from_static("attacker.example:8080"));
    let head = RequestHead { method: Method::GET, uri: "/health".parse().unwrap(), headers };
    let now = http.now();
    http.router.handle_input(Input::Receive(
        now,
        Receive { stream, event: StreamEvent::Accept(Box::new(head)) },
    ));
    http.pump();
    assert_eq!(http.answer(stream).status, Some(StatusCode::FORBIDDEN));
}

#[test]
fn batches_only_on_2025_03_26() {
    let batch = json!([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]);
    let mut http = Http::new(config());
    http.version = "2025-03-26";
    let session = http.handshake(json!({}));
    let a = http.post(Some(&session), batch.clone());
    let answer = http.answer(a);
    assert_eq!(answer.status, Some(StatusCode::OK));
    assert_eq!(answer.json().as_array().unwrap().len(), 2);

    let mut http = Http::new(config());
    http.version = "2025-06-18";
    let session = http.handshake(json!({}));
    let a = http.post(Some(&session), batch);
    assert_eq!(http.answer(a).status, Some(StatusCode::BAD_REQUEST));
}

#[test]
fn delete_ends_the_session_and_its_id_then_gets_404() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let get = http.get(&session, None);
    let delete = http.send(Method::DELETE, "/mcp", &[("mcp-session-id", &session)], b"");
    assert_eq!(http.answer(delete).status, Some(StatusCode::OK));
    assert!(http.answer(get).closed, "the session's streams close with it");
    assert!(http.events.iter().any(|e| matches!(e.event, Event::Closed(_))));
    let ping = http.post(Some(&session), json!({"jsonrpc":"2.0","id":1,"method":"ping"}));
    assert_eq!(http.answer(ping).status, Some(StatusCode::NOT_FOUND));
    assert_eq!(http.router.session_count(), 0);
}

#[test]
fn a_body_over_the_limit_gets_413() {
    let mut cfg = config();
    cfg.max_body = 64;
    let mut http = Http::new(cfg);
    let big = json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"x".repeat(100)}});
    let stream = http.post(None, big);
    assert_eq!(http.answer(stream).status, Some(StatusCode::PAYLOAD_TOO_LARGE));
}

#[test]
fn with_a_bearer_token_only_requests_that_carry_it_are_served() {
    let mut cfg = config();
    cfg.bearer_token = Some("s3cret".into());
    let mut http = Http::new(cfg);
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    for (credential, challenge) in [
        (None, "Bearer"),
        (Some("Bearer wrong"), r#"Bearer error="invalid_token""#),
        (Some("Bearer s3cre"), r#"Bearer error="invalid_token""#),
        (Some("Basic czNjcmV0"), "Bearer"),
    ] {
        http.authorization = credential;
        let stream = http.post(None, ping.clone());
        let a = http.answer(stream);
        assert_eq!(a.status, Some(StatusCode::UNAUTHORIZED), "{credential:?}: {a:?}");
        assert_eq!(a.headers["www-authenticate"], challenge, "{credential:?}");
        assert!(a.json()["error"]["message"].as_str().unwrap().starts_with("unauthorized"));
        let get = http.send(Method::GET, "/sse", &[("accept", "text/event-stream")], b"");
        assert_eq!(http.answer(get).status, Some(StatusCode::UNAUTHORIZED), "legacy SSE too");
    }
    assert_eq!(http.router.session_count(), 0, "no session was opened");
    http.authorization = None;
    let health = http.send(Method::GET, "/health", &[], b"");
    assert_eq!(http.answer(health).status, Some(StatusCode::OK), "the health check stays open");
    http.authorization = Some("bearer s3cret");
    let session = http.handshake(json!({}));
    let stream = http.post(Some(&session), ping);
    assert_eq!(http.answer(stream).status, Some(StatusCode::OK), "the scheme is case-insensitive");
}
