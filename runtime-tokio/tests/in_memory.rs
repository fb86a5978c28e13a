//! What only zest-tokio's in-memory pair has to show (the pair's contract, written once for
//! every runtime, is `conformance/tests/runtime_contract.rs`): calls from tasks of the
//! multi-thread runtime (which poll the session's loop themselves), and a call future dropped
//! before its first poll sends nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use zest_tokio::core::error::CloseReason;
use zest_tokio::core::runtime::CommandSink;
use zest_tokio::schema::{CallToolResult, Tool};
use zest_tokio::{in_memory, ClientApi, Json, Registry, ServerConfig};

/// Far above what any step here takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(30);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    total: f64,
}

fn config() -> ServerConfig {
    ServerConfig::new("in-memory-test", "1.0")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pair_works_on_the_multi_thread_runtime_too() {
    let registry = Registry::new()
        .tool("add", "Adds two numbers", |Add { a, b }| async move { Json(Sum { total: a + b }) });
    let (client, server) = in_memory(config(), registry).await.unwrap();
    // Here a call polls the session's loop itself while it waits (no hop to another worker).
    assert!(CommandSink::driven(&client).is_some());
    let calls = (0..64).map(|i| {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("add", json!({"a": i, "b": 1})).await })
    });
    for (i, call) in calls.enumerate() {
        let result = tokio::time::timeout(HANG, call).await.expect("answered").unwrap().unwrap();
        assert_eq!(result.structured_content, Some(json!({"total": i as f64 + 1.0})));
    }
    client.close().await.unwrap();
    assert_eq!(
        tokio::time::timeout(HANG, server.stopped()).await.unwrap(),
        CloseReason::TransportEnded
    );
}

#[tokio::test]
async fn on_a_current_thread_runtime_the_session_task_alone_polls_the_loop() {
    let (client, server) = in_memory(config(), Registry::new()).await.unwrap();
    assert!(CommandSink::driven(&client).is_none());
    assert!(client.list_all_tools().await.unwrap().is_empty());
    client.close().await.unwrap();
    assert_eq!(
        tokio::time::timeout(HANG, server.stopped()).await.unwrap(),
        CloseReason::TransportEnded
    );
}

#[tokio::test]
async fn a_call_dropped_before_it_is_polled_never_reaches_the_server() {
    let calls = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    let tool = Tool::new("tally", "tally", json!({"type": "object"}));
    let tally = calls.clone();
    registry.raw_tool(tool, move |_, _| {
        // Counted when the server starts the call, in the order calls arrive.
        let n = tally.fetch_add(1, Ordering::SeqCst) + 1;
        async move { Ok(CallToolResult::text(n.to_string())) }
    });
    let (client, _server) = in_memory(config(), registry).await.unwrap();
    drop(client.call_tool("tally", json!({})));
    let answer = tokio::time::timeout(HANG, client.call_tool("tally", json!({}))).await.unwrap();
    assert_eq!(answer.unwrap().content[0].as_text(), Some("1"), "the dropped call was sent");
}
