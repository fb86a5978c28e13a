//! zest-tokio's HTTP client against the reference server `@modelcontextprotocol/server-everything`
//! in Streamable HTTP mode and in legacy SSE mode, on a loopback port (pinned in tests/peers;
//! install with scripts/install-peers). Same checks as the stdio interop test where the
//! transport does not change the answer.

mod common;

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::process::{Child, Command};
use zest_tokio::core::client::ServerNotification;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::{
    CallToolResult, ContentBlock, CreateMessageResult, ElicitResult, ListRootsResult, LoggingLevel,
};
use zest_tokio::{Client, ClientApi, ClientOptions, HttpEndpoint, HttpMode};

const MODEL: &str = "zest-canned-model";

/// server-everything listening on a free loopback port; killed when dropped.
struct Everything {
    _child: Child,
    port: u16,
}

async fn everything(transport: &str) -> Everything {
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
        .kill_on_drop(true)
        .spawn()
        .expect("server-everything starts");
    // Up to 30 s for node to start listening.
    for _ in 0..600 {
        // A connect to a port nobody listens on can meet itself (the kernel may pick the
        // same port as its source): that is not node listening.
        if let Ok(probe) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            if probe.local_addr().ok() != probe.peer_addr().ok() {
                return Everything { _child: child, port };
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server-everything {transport} did not listen on {port} within 30 s");
}

fn options() -> ClientOptions {
    let handlers = AsyncClientHandlers::default()
        .on_sampling(|params| async move {
            let asked = serde_json::to_value(&params.messages).unwrap_or_default();
            Ok(serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant",
                "content": {"type": "text", "text": format!("canned answer to {asked}")},
                "model": MODEL,
                "stopReason": "endTurn"
            }))
            .unwrap())
        })
        .on_elicitation(|_| async move {
            Ok(serde_json::from_value::<ElicitResult>(json!({"action": "decline"})).unwrap())
        })
        .on_roots(|| async move {
            let roots = json!({"roots": [{"uri": "file:///tmp/zest-root", "name": "zest root"}]});
            Ok(serde_json::from_value::<ListRootsResult>(roots).unwrap())
        });
    ClientOptions::new("zest-tokio-http-everything-test", "0.1.0").handlers(handlers)
}

fn texts(result: &CallToolResult) -> Vec<&str> {
    result.content.iter().filter_map(ContentBlock::as_text).collect()
}

async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let result = client.call_tool(name, args).await.unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(!result.is_error(), "{name} failed: {result:?}");
    result
}

/// Lists tools until the ones registered after `initialized` appear (bounded: 10 s).
async fn tools_with(client: &Client, wanted: &[&str]) -> Vec<String> {
    for _ in 0..200 {
        let names: Vec<String> =
            client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        if wanted.iter().all(|w| names.iter().any(|n| n == w)) {
            return names;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{wanted:?} never appeared");
}

/// The checks both transports share.
async fn tour(client: &Client) {
    let n = client.negotiated();
    assert_eq!(n.server_info.name, "mcp-servers/everything");
    tools_with(client, &["echo", "get-sum", "trigger-sampling-request", "get-roots-list"]).await;
    client.ping().await.expect("ping");
    let echo = call(client, "echo", json!({"message": "hi over http"})).await;
    assert_eq!(texts(&echo), ["Echo: hi over http"]);
    let sum = call(client, "get-sum", json!({"a": 2, "b": 40})).await;
    assert_eq!(texts(&sum), ["The sum of 2 and 40 is 42."]);
    let weather = call(client, "get-structured-content", json!({"location": "Chicago"})).await;
    assert_eq!(weather.structured_content.expect("structured content")["temperature"], 36);
    let sampled = call(client, "trigger-sampling-request", json!({"prompt": "say hi"})).await;
    assert!(texts(&sampled)[0].contains(MODEL), "our sampling handler answered: {sampled:?}");
    let elicited = call(client, "trigger-elicitation-request", json!({})).await;
    assert!(texts(&elicited).concat().contains("declined"), "{elicited:?}");
    let roots = call(client, "get-roots-list", json!({})).await;
    assert!(texts(&roots).concat().contains("file:///tmp/zest-root"), "{roots:?}");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = client
        .call_tool_with_progress(
            "trigger-long-running-operation",
            json!({"duration": 0.5, "steps": 5}),
            move |p| sink.lock().unwrap().push((p.progress, p.total)),
        )
        .await
        .unwrap();
    assert!(texts(&result)[0].starts_with("Long running operation completed"), "{result:?}");
    let expected: Vec<_> = (1..=5).map(|i| (f64::from(i), Some(5.0))).collect();
    assert_eq!(*seen.lock().unwrap(), expected);
    let read = client.read_resource("demo://resource/dynamic/text/7").await.unwrap();
    assert!(format!("{:?}", read.contents[0]).contains("Resource 7: "), "{read:?}");
}

#[tokio::test]
async fn streamable_http_tour_and_logging() {
    let server = everything("streamableHttp").await;
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let endpoint = HttpEndpoint::new(url).mode(HttpMode::StreamableHttp);
    let client = Client::connect_to(endpoint, options()).await.expect("connect");
    let notes = client.notifications();
    tour(&client).await;
    client.set_logging_level(LoggingLevel::Debug).await.unwrap();
    let toggled = call(&client, "toggle-simulated-logging", json!({})).await;
    assert!(texts(&toggled)[0].contains("tarted"), "{toggled:?}");
    // Simulated log records tick every few seconds on the GET stream.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let mut logged = false;
    while !logged {
        match tokio::time::timeout_at(deadline, notes.recv()).await {
            Ok(Ok(ServerNotification::LoggingMessage(_))) => logged = true,
            Ok(Ok(_)) => {}
            other => panic!("no log record: {other:?}"),
        }
    }
    client.close().await.unwrap();
}

#[tokio::test]
async fn legacy_sse_tour_by_detection() {
    let server = everything("sse").await;
    // Auto mode: the POST to the SSE URL is refused, and the client falls back to GET.
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let client = Client::connect(&url, options()).await.expect("connect over legacy SSE");
    tour(&client).await;
    client.close().await.unwrap();
}
