//! zest-blocking's HTTP client against the reference server
//! `@modelcontextprotocol/server-everything` in Streamable HTTP mode and in legacy SSE mode, on
//! a loopback port (pinned in tests/peers; install with scripts/install-peers). The same
//! checks as zest-tokio's `http_everything.rs`.

mod common;

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zest_blocking::core::client::ServerNotification;
use zest_blocking::core::handler::SyncClientHandlers;
use zest_blocking::schema::{
    CallToolResult, ContentBlock, CreateMessageResult, ElicitResult, ListRootsResult, LoggingLevel,
};
use zest_blocking::{Client, ClientApi, ClientOptions, HttpEndpoint, HttpMode};

const MODEL: &str = "zest-canned-model";

/// server-everything listening on a free loopback port; killed when dropped.
struct Everything {
    child: Child,
    port: u16,
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn everything(transport: &str) -> Everything {
    let bin = common::peer("node_modules/.bin/mcp-server-everything");
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let child = Command::new(bin)
        .arg(transport)
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("server-everything starts");
    let server = Everything { child, port };
    // Up to 30 s for node to start listening.
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        // A connect to a port nobody listens on can meet itself (the kernel may pick the
        // same port as its source): that is not node listening.
        if let Ok(probe) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            if probe.local_addr().ok() != probe.peer_addr().ok() {
                return server;
            }
        }
        thread::sleep(Duration::from_millis(50));
    }
    panic!("server-everything {transport} did not listen on {port} within 30 s");
}

fn options() -> ClientOptions {
    let handlers = SyncClientHandlers::default()
        .on_sampling(|params| {
            let asked = serde_json::to_value(&params.messages).unwrap_or_default();
            Ok(serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant",
                "content": {"type": "text", "text": format!("canned answer to {asked}")},
                "model": MODEL,
                "stopReason": "endTurn"
            }))
            .unwrap())
        })
        .on_elicitation(|_| {
            Ok(serde_json::from_value::<ElicitResult>(json!({"action": "decline"})).unwrap())
        })
        .on_roots(|| {
            let roots = json!({"roots": [{"uri": "file:///tmp/zest-root", "name": "zest root"}]});
            Ok(serde_json::from_value::<ListRootsResult>(roots).unwrap())
        });
    ClientOptions::new("zest-blocking-http-everything-test", "0.1.0").handlers(handlers)
}

fn texts(result: &CallToolResult) -> Vec<&str> {
    result.content.iter().filter_map(ContentBlock::as_text).collect()
}

fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let result = client.call_tool(name, args).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(!result.is_error(), "{name} failed: {result:?}");
    result
}

/// Lists tools until the ones registered after `initialized` appear (bounded: 10 s).
fn tools_with(client: &Client, wanted: &[&str]) -> Vec<String> {
    for _ in 0..200 {
        let names: Vec<String> =
            client.list_all_tools().unwrap().into_iter().map(|t| t.name).collect();
        if wanted.iter().all(|w| names.iter().any(|n| n == w)) {
            return names;
        }
        thread::sleep(Duration::from_millis(50));
    }
    panic!("{wanted:?} never appeared");
}

/// The checks both transports share.
fn tour(client: &Client) {
    let n = client.negotiated();
    assert_eq!(n.server_info.name, "mcp-servers/everything");
    tools_with(client, &["echo", "get-sum", "trigger-sampling-request", "get-roots-list"]);
    client.ping().expect("ping");
    let echo = call(client, "echo", json!({"message": "hi over http"}));
    assert_eq!(texts(&echo), ["Echo: hi over http"]);
    let sum = call(client, "get-sum", json!({"a": 2, "b": 40}));
    assert_eq!(texts(&sum), ["The sum of 2 and 40 is 42."]);
    let weather = call(client, "get-structured-content", json!({"location": "Chicago"}));
    assert_eq!(weather.structured_content.expect("structured content")["temperature"], 36);
    let sampled = call(client, "trigger-sampling-request", json!({"prompt": "say hi"}));
    assert!(texts(&sampled)[0].contains(MODEL), "our sampling handler answered: {sampled:?}");
    let elicited = call(client, "trigger-elicitation-request", json!({}));
    assert!(texts(&elicited).concat().contains("declined"), "{elicited:?}");
    let roots = call(client, "get-roots-list", json!({}));
    assert!(texts(&roots).concat().contains("file:///tmp/zest-root"), "{roots:?}");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = client
        .call_tool_with_progress(
            "trigger-long-running-operation",
            json!({"duration": 0.5, "steps": 5}),
            move |p| sink.lock().unwrap().push((p.progress, p.total)),
        )
        .unwrap();
    assert!(texts(&result)[0].starts_with("Long running operation completed"), "{result:?}");
    let expected: Vec<_> = (1..=5).map(|i| (f64::from(i), Some(5.0))).collect();
    assert_eq!(*seen.lock().unwrap(), expected);
    let read = client.read_resource("demo://resource/dynamic/text/7").unwrap();
    assert!(format!("{:?}", read.contents[0]).contains("Resource 7: "), "{read:?}");
}

#[test]
fn streamable_http_tour_and_logging() {
    let server = everything("streamableHttp");
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let endpoint = HttpEndpoint::new(url).mode(HttpMode::StreamableHttp);
    let client = Client::connect_to(endpoint, options()).expect("connect");
    tour(&client);
    client.set_logging_level(LoggingLevel::Debug).unwrap();
    let toggled = call(&client, "toggle-simulated-logging", json!({}));
    assert!(texts(&toggled)[0].contains("tarted"), "{toggled:?}");
    // Simulated log records tick every few seconds on the GET stream.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut logged = false;
    while !logged && Instant::now() < deadline {
        let left = deadline.saturating_duration_since(Instant::now());
        match client.notifications().recv_timeout(left) {
            Some(ServerNotification::LoggingMessage(_)) => logged = true,
            Some(_) => {}
            None => break,
        }
    }
    assert!(logged, "no log record on the GET stream within 30 s");
    client.close().unwrap();
}

#[test]
fn legacy_sse_tour_by_detection() {
    let server = everything("sse");
    // Auto mode: the POST to the SSE URL is refused, and the client falls back to GET.
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let client = Client::connect(&url, options()).expect("connect over legacy SSE");
    tour(&client);
    client.close().unwrap();
}
