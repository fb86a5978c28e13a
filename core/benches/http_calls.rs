//! In-memory `tools/call` round trips: through the stdio path (line framing, one stream)
//! and through the HTTP planners (the client planner, the router, JSON answers, SSE
//! answers), both in virtual time with no sockets, so the figures compare the cost of the
//! machines themselves.
//!
//! `cargo bench -p zest-core --bench http_calls` prints calls/s; nothing is asserted.
#![allow(clippy::disallowed_methods)] // A benchmark reads the clock.

use std::time::Instant;

use serde_json::json;
use zest_core::client::{ClientConfig, Event as ClientEvent};
use zest_core::http::client::HttpClientConfig;
use zest_core::http::server::RouterConfig;
use zest_core::jsonrpc::{ErrorObject, RawJson};
use zest_core::schema::methods::CallTool;
use zest_core::schema::{CallToolParams, Tool};
use zest_core::server::{Call, Event, Registry, ServerConfig};
use zest_core::testkit::{HttpPair, Pair};
use zest_core::RequestOptions;

const CALLS: usize = 20_000;

fn registry() -> Registry<u8> {
    let mut r = Registry::default();
    let schema =
        json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]});
    r.add_tool(Tool::new("echo", "echoes", schema), 0);
    r
}

fn echo(_: &u8, call: &Call) -> Result<RawJson, ErrorObject> {
    let Call::Tool(p) = call else { return Err(ErrorObject::new(-32603, "no")) };
    let text = p.arguments.as_ref().and_then(|a| a.get("text")).cloned().unwrap_or_default();
    Ok(RawJson::from(json!({"content":[{"type":"text","text": text}]})))
}

fn params() -> CallToolParams {
    serde_json::from_value(json!({"name":"echo","arguments":{"text":"hello, world"}})).unwrap()
}

fn stdio() -> f64 {
    let mut pair = Pair::new(ClientConfig::new("b", "1"), ServerConfig::new("s", "1"), registry());
    pair.handshake();
    let p = params();
    let start = Instant::now();
    for _ in 0..CALLS {
        let now = pair.clock.now();
        pair.client.send::<CallTool>(now, &p, RequestOptions::default()).unwrap();
        pair.pump();
        pair.serve(echo);
        let events = pair.take_client_events();
        assert!(matches!(events.last(), Some(ClientEvent::Response { result: Ok(_), .. })));
        pair.take_server_events();
    }
    CALLS as f64 / start.elapsed().as_secs_f64()
}

/// The handler answers after the router took the POST in, so every answer is an SSE stream
/// (priming event, the reply, the end), the common case for a tool call.
fn http() -> f64 {
    let url = "http://127.0.0.1:8080/mcp".parse().unwrap();
    let mut pair = HttpPair::new(
        ClientConfig::new("b", "1"),
        HttpClientConfig::new(url),
        ServerConfig::new("s", "1"),
        RouterConfig::new([5; 32]),
        registry(),
    );
    pair.take_client_events();
    pair.take_router_events();
    let p = params();
    let start = Instant::now();
    for _ in 0..CALLS {
        let now = pair.clock.now();
        pair.client.send::<CallTool>(now, &p, RequestOptions::default()).unwrap();
        pair.pump();
        for e in pair.take_router_events() {
            if let Event::Call { id, handler, call, .. } = e.event {
                let result = echo(&handler, &call);
                pair.router.session_mut(&e.session).unwrap().respond(now, id, result).unwrap();
            }
        }
        pair.pump();
        let events = pair.take_client_events();
        assert!(
            matches!(events.last(), Some(ClientEvent::Response { result: Ok(_), .. })),
            "{events:?}"
        );
    }
    CALLS as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let stdio = stdio();
    println!("in-memory tools/call, stdio path:       {stdio:>9.0} calls/s");
    let http = http();
    println!(
        "in-memory tools/call, HTTP planners:    {http:>9.0} calls/s ({:.2}x stdio; SSE answers)",
        http / stdio
    );
}
