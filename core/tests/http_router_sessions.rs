//! The Streamable HTTP and legacy HTTP+SSE router, driven by a scripted HTTP client in
//! memory and virtual time. Sessions: idle ones expire and busy ones do not, the stateless mode, the legacy HTTP+SSE transport, a thousand sessions on one registry.

mod common;
mod router_harness;

use std::time::Duration;

use common::*;
use http::{Method, StatusCode};
use router_harness::*;
use serde_json::{json, Value};
use zest_core::http::server::SessionId;
use zest_core::io::Input;
use zest_core::server::Event;
use zest_core::server::ListKind;

#[test]
fn idle_sessions_expire_and_busy_ones_do_not() {
    let mut cfg = config();
    cfg.idle_timeout = Duration::from_secs(60);
    let mut http = Http::new(cfg);
    let idle = http.handshake(json!({}));
    let busy = http.handshake(json!({}));
    let _stream = http.get(&busy, None);
    let deadline = http.router.poll_timeout().expect("a sweep is scheduled");
    assert!(deadline > http.now());
    // Time passes in sweeps; the idle session goes once 60 s have passed with nothing open.
    for _ in 0..20 {
        let t = http.router.poll_timeout().unwrap();
        http.clock.advance_to(t);
        let now = http.now();
        http.router.handle_input(Input::Timeout(now));
        http.pump();
    }
    let ping = http.post(Some(&idle), json!({"jsonrpc":"2.0","id":1,"method":"ping"}));
    assert_eq!(http.answer(ping).status, Some(StatusCode::NOT_FOUND));
    let ping = http.post(Some(&busy), json!({"jsonrpc":"2.0","id":1,"method":"ping"}));
    assert_eq!(http.answer(ping).status, Some(StatusCode::OK));
}

#[test]
fn stateless_mode_serves_without_sessions() {
    let mut cfg = config();
    cfg.sessionless = true;
    let mut http = Http::new(cfg);
    let list = http.post(None, json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    let a = http.answer(list);
    assert_eq!(a.status, Some(StatusCode::OK), "{a:?}");
    assert!(!a.headers.contains_key("mcp-session-id"));
    assert_eq!(http.router.session_count(), 0, "the session ended with its POST");
    let get = http.get("anything", None);
    assert_eq!(http.answer(get).status, Some(StatusCode::METHOD_NOT_ALLOWED));
}

#[test]
fn legacy_sse_client_and_server() {
    let mut http = Http::new(config());
    let sse = http.send(Method::GET, "/sse", &[("accept", "text/event-stream")], b"");
    let events = http.answer(sse).events();
    let endpoint = &events[0].1;
    assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");
    let path = endpoint.clone();
    let headers = [("content-type", "application/json")];
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}});
    let post = http.send(Method::POST, &path, &headers, &serde_json::to_vec(&init).unwrap());
    assert_eq!(http.answer(post).status, Some(StatusCode::ACCEPTED));
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    http.send(Method::POST, &path, &headers, &serde_json::to_vec(&list).unwrap());
    let messages: Vec<Value> = http.answer(sse).events()[1..]
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(messages[0]["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(messages[1]["result"]["tools"].as_array().unwrap().len(), 3);
    assert!(http.answer(sse).body.windows(14).any(|w| w == b"event: message"));
    // The session lives as long as its stream.
    http.drop_stream(sse);
    assert_eq!(http.router.session_count(), 0);
    let late = http.send(Method::POST, &path, &headers, &serde_json::to_vec(&list).unwrap());
    assert_eq!(http.answer(late).status, Some(StatusCode::NOT_FOUND));
}

#[test]
fn a_thousand_sessions_share_one_registry_and_respect_the_limit() {
    let mut cfg = config();
    cfg.max_sessions = 1000;
    let mut http = Http::new(cfg);
    for _ in 0..1000 {
        http.handshake(json!({}));
    }
    assert_eq!(http.router.session_count(), 1000);
    let init = http.post(
        None,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}),
    );
    assert_eq!(http.answer(init).status, Some(StatusCode::SERVICE_UNAVAILABLE));
    let now = http.now();
    http.router.change_registry(now, &[ListKind::Tools], |r| {
        r.add_tool(tool("late", json!({"type":"object"})), "echo");
    });
    http.pump();
    let first = SessionId::clone(http.router.sessions().next().unwrap());
    let list =
        http.post(Some(first.as_str()), json!({"jsonrpc":"2.0","id":9,"method":"tools/list"}));
    assert_eq!(http.answer(list).json()["result"]["tools"].as_array().unwrap().len(), 4);
}

#[test]
fn stateless_sessions_end_with_their_post_even_when_it_is_lost() {
    let mut cfg = config();
    cfg.sessionless = true;
    let mut http = Http::new(cfg);
    let call = http.post(None, echo_x(1));
    assert_eq!(http.router.session_count(), 1, "the call waits for the app");
    let (sid, _, _) = http.take_calls()[0].clone();
    http.drop_stream(call);
    // Nothing can resume it: the call is cancelled with its stream, and the session is gone.
    assert!(http.events.iter().any(|e| e.session == sid && matches!(e.event, Event::Closed(_))));
    assert!(http.router.session_mut(&sid).is_none());
    assert_eq!(http.router.session_count(), 0);
    // A batch refused outright leaves nothing behind either.
    http.version = "2025-06-18";
    let batch =
        json!([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]);
    let refused = http.post(None, batch);
    assert_eq!(http.answer(refused).status, Some(StatusCode::BAD_REQUEST));
    assert_eq!(http.router.session_count(), 0);
}
