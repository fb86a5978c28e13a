//! What the router keeps for an idle session (the memory target is per idle session).

use http::{HeaderMap, HeaderValue, Method};
use serde_json::json;

use super::*;
use crate::io::{Receive, Transmit};
use crate::schema::Tool;
use crate::server::{Registry, ServerConfig};
use crate::testkit::VirtualClock;

/// One POST on a fresh stream, ended; returns the session id the answer announces.
fn post(
    router: &mut Router<u8>,
    now: Instant,
    stream: u64,
    session: Option<&str>,
    body: &[u8],
) -> Option<String> {
    let stream = StreamId(stream);
    let mut headers = HeaderMap::new();
    headers.insert("host", HeaderValue::from_static("127.0.0.1"));
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    headers.insert("accept", HeaderValue::from_static("application/json, text/event-stream"));
    if let Some(id) = session {
        headers.insert("mcp-session-id", HeaderValue::from_str(id).expect("a header value"));
    }
    let uri = "/mcp".parse().expect("a path");
    let head = RequestHead { method: Method::POST, uri, headers };
    let accept = StreamEvent::Accept(Box::new(head));
    router.handle_input(Input::Receive(now, Receive { stream, event: accept }));
    router.handle_input(crate::io::data(now, stream, body));
    router.handle_input(Input::Receive(now, Receive { stream, event: StreamEvent::End }));
    let mut id = None;
    while let Some(out) = router.poll_output() {
        if let Output::Transmit(Transmit::Respond { head, .. }) = out {
            let announced = head.headers.get("mcp-session-id");
            id = announced.and_then(|v| v.to_str().ok()).map(str::to_owned).or(id);
        }
    }
    id
}

#[test]
fn an_idle_session_keeps_no_room_from_its_last_exchange() {
    let now = VirtualClock::new().now();
    let mut registry = Registry::default();
    registry.add_tool(Tool::new("t", "a tool", json!({"type": "object"})), 0u8);
    let mut router = Router::new(ServerConfig::new("t", "1"), RouterConfig::new([7; 32]), registry);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}});
    let init = serde_json::to_vec(&init).expect("json");
    let id = post(&mut router, now, 1, None, &init).expect("a session id");
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    post(&mut router, now, 2, Some(&id), initialized);
    let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    post(&mut router, now, 3, Some(&id), list);

    let slot = router.sessions.values().next().expect("the session");
    assert!(slot.answers.is_empty(), "every POST was answered");
    assert_eq!(slot.answers.capacity(), 0, "the answers table");
    assert_eq!(slot.machine.events.capacity(), 0, "the event queue");
    assert_eq!(slot.machine.endpoint.idle_capacity(), 0, "the endpoint's queues and tables");
}
