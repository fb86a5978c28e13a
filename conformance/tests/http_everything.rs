//! Every zest client runtime against the reference server
//! `@modelcontextprotocol/server-everything` (pinned in tests/peers; install with
//! scripts/install-peers) on a loopback port, in Streamable HTTP mode and in legacy SSE mode
//! found by detection: tools over every page, ping, plain and structured results, sampling,
//! elicitation and roots answered by the client's handlers mid-call, progress with its total,
//! a resource, and simulated log records on the GET stream.

#[path = "support/clients.rs"]
mod clients;
#[path = "../../tests/support/everything.rs"]
mod everything;

use std::thread;
use std::time::Duration;

use clients::{text, Blocking, Peer, Smol, Tokio, ROOT};
use everything::Everything;
use serde_json::{json, Value};
use zest_core::http::client::HttpMode;
use zest_core::runtime::http_client::HttpEndpoint;
use zest_core::schema::{CallToolResult, LoggingLevel};

fn call<C: Peer>(client: &C, name: &str, args: Value) -> CallToolResult {
    let result = client.call(name, args);
    assert!(!result.is_error(), "{}, {name} failed: {result:?}", C::RUNTIME);
    result
}

/// Lists tools until the ones registered after `initialized` appear (bounded: 10 s).
fn wait_for_tools<C: Peer>(client: &C, wanted: &[&str]) {
    for _ in 0..200 {
        let names = client.tool_names();
        if wanted.iter().all(|w| names.iter().any(|n| n == w)) {
            return;
        }
        thread::sleep(Duration::from_millis(50));
    }
    panic!("{}: {wanted:?} never appeared", C::RUNTIME);
}

/// The checks both transports share.
fn tour<C: Peer>(client: &C) {
    let rt = C::RUNTIME;
    assert_eq!(client.server_name(), "mcp-servers/everything", "{rt}");
    wait_for_tools(client, &["echo", "get-sum", "trigger-sampling-request", "get-roots-list"]);
    client.ping();
    let echo = call(client, "echo", json!({"message": "hi over http"}));
    assert_eq!(text(&echo), "Echo: hi over http", "{rt}");
    let sum = call(client, "get-sum", json!({"a": 2, "b": 40}));
    assert_eq!(text(&sum), "The sum of 2 and 40 is 42.", "{rt}");
    let weather = call(client, "get-structured-content", json!({"location": "Chicago"}));
    assert_eq!(weather.structured_content.expect("structured content")["temperature"], 36);
    let sampled = call(client, "trigger-sampling-request", json!({"prompt": "say hi"}));
    let sampled = text(&sampled);
    assert!(sampled.contains("canned: ") && sampled.contains("say hi"), "{rt}: {sampled}");
    let elicited = call(client, "trigger-elicitation-request", json!({}));
    assert!(text(&elicited).contains("declined"), "{rt}: {elicited:?}");
    let roots = call(client, "get-roots-list", json!({}));
    assert!(text(&roots).contains(ROOT), "{rt}: {roots:?}");
    let (result, seen) = client.call_with_progress_as(
        "trigger-long-running-operation",
        json!({"duration": 0.5, "steps": 5}),
        |p| (p.progress, p.total),
    );
    assert!(text(&result).starts_with("Long running operation completed"), "{rt}: {result:?}");
    let expected: Vec<_> = (1..=5).map(|i| (f64::from(i), Some(5.0))).collect();
    assert_eq!(seen, expected, "{rt}: each step once, with its total");
    let read = client.read_resource("demo://resource/dynamic/text/7");
    assert!(format!("{:?}", read.contents[0]).contains("Resource 7: "), "{rt}: {read:?}");
}

/// Over Streamable HTTP: the tour, then simulated log records (they tick every few seconds
/// on the GET stream) once the level is set.
fn streamable_http_tour_and_logging<C: Peer>() {
    let server = Everything::start("streamableHttp");
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let client = C::connect_to(HttpEndpoint::new(url).mode(HttpMode::StreamableHttp));
    tour(&client);
    client.set_logging_level(LoggingLevel::Debug);
    let toggled = call(&client, "toggle-simulated-logging", json!({}));
    assert!(text(&toggled).contains("tarted"), "{}: {toggled:?}", C::RUNTIME);
    assert_eq!(client.logs(1).len(), 1, "{}: a log record on the GET stream", C::RUNTIME);
    client.close();
}

/// In auto mode against the SSE URL: the POST is refused and the client falls back to the
/// legacy transport, where the tour passes the same.
fn legacy_sse_tour_by_detection<C: Peer>() {
    let server = Everything::start("sse");
    let client = C::connect(&format!("http://127.0.0.1:{}/sse", server.port));
    tour(&client);
    client.close();
}

#[test]
fn tokio_streamable_http_tour_and_logging() {
    streamable_http_tour_and_logging::<Tokio>();
}

#[test]
fn smol_streamable_http_tour_and_logging() {
    streamable_http_tour_and_logging::<Smol>();
}

#[test]
fn blocking_streamable_http_tour_and_logging() {
    streamable_http_tour_and_logging::<Blocking>();
}

#[test]
fn tokio_legacy_sse_tour_by_detection() {
    legacy_sse_tour_by_detection::<Tokio>();
}

#[test]
fn smol_legacy_sse_tour_by_detection() {
    legacy_sse_tour_by_detection::<Smol>();
}

#[test]
fn blocking_legacy_sse_tour_by_detection() {
    legacy_sse_tour_by_detection::<Blocking>();
}
