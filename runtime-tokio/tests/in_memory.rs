//! A server tested without a process: typed tools called through an in-memory pair, with
//! progress, a sampling request answered by the client's handler and listing; closing or
//! dropping the client ends the server's session too.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use zest_tokio::core::error::CloseReason;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::{
    CreateMessageParams, CreateMessageResult, Role, SamplingContent, SamplingMessage,
};
use zest_tokio::{
    in_memory, in_memory_with, CallError, Client, ClientApi, ClientOptions, ConnectError, Context,
    Json, PeerApi, Registry, ServerConfig, ToolError,
};

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

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Count {
    n: u32,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Ask {
    prompt: String,
}

fn registry() -> Registry {
    Registry::new()
        .tool("add", "Adds two numbers", |Add { a, b }| async move { Json(Sum { total: a + b }) })
        .tool("count", "Reports progress n times", |Count { n }, ctx: Context| async move {
            for i in 1..=n {
                ctx.progress(f64::from(i), Some(f64::from(n)), None).await?;
            }
            Ok::<_, ToolError>(format!("counted {n}"))
        })
        .tool("ask", "Asks the client's model", |Ask { prompt }, ctx: Context| async move {
            let message = SamplingMessage::new(Role::User, SamplingContent::text(prompt));
            let params = CreateMessageParams {
                messages: vec![message],
                max_tokens: 10,
                ..Default::default()
            };
            let result = ctx.create_message(params).await?;
            Ok::<_, ToolError>(
                result.content.as_slice().iter().filter_map(|c| c.as_text()).collect::<String>(),
            )
        })
}

fn config() -> ServerConfig {
    ServerConfig::new("in-memory-test", "1.0")
}

/// Sampling answered with `model says: <the prompt>`.
fn options() -> ClientOptions {
    let handlers = AsyncClientHandlers::default().on_sampling(|params| async move {
        let asked: String = params
            .messages
            .iter()
            .flat_map(|m| m.content.as_slice())
            .filter_map(|c| c.as_text())
            .collect();
        let result = json!({
            "role": "assistant",
            "content": {"type": "text", "text": format!("model says: {asked}")},
            "model": "test-model"
        });
        Ok(serde_json::from_value::<CreateMessageResult>(result).expect("a valid result"))
    });
    ClientOptions::new("in-memory-client", "1.0").handlers(handlers)
}

#[tokio::test]
async fn typed_tools_answer_through_the_pair() {
    let (client, server) = in_memory_with(config(), registry(), options()).await.unwrap();
    assert_eq!(client.negotiated().server_info.name, "in-memory-test");

    let mut names: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    names.sort();
    assert_eq!(names, ["add", "ask", "count"]);

    let sum = client.call_tool("add", json!({"a": 1.5, "b": 2})).await.unwrap();
    assert_eq!(sum.structured_content, Some(json!({"total": 3.5})));

    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let counted = client
        .call_tool_with_progress("count", json!({"n": 3}), move |p| {
            record.lock().unwrap().push((p.progress, p.total));
        })
        .await
        .unwrap();
    assert_eq!(counted.content[0].as_text(), Some("counted 3"));
    assert_eq!(*seen.lock().unwrap(), [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);

    let answer = client.call_tool("ask", json!({"prompt": "hi"})).await.unwrap();
    assert_eq!(answer.content[0].as_text(), Some("model says: hi"), "{answer:?}");

    let wrong = client.call_tool("add", json!({"a": "one"})).await.unwrap();
    assert!(wrong.is_error(), "{wrong:?}");

    client.close().await.unwrap();
    let reason = tokio::time::timeout(HANG, server.stopped()).await.unwrap();
    assert_eq!(reason, CloseReason::TransportEnded);
}

#[tokio::test]
async fn closing_the_client_ends_the_server() {
    let (client, server) = in_memory(config(), registry()).await.unwrap();
    assert_eq!(client.pid(), 0);
    assert_eq!(client.close_reason(), None);
    let status = tokio::time::timeout(HANG, client.close()).await.unwrap().unwrap();
    assert!(status.success());
    assert_eq!(client.close_reason(), Some(CloseReason::Local));
    let reason = tokio::time::timeout(HANG, server.stopped()).await.unwrap();
    assert_eq!(reason, CloseReason::TransportEnded);
    let late = client.call_tool("add", json!({"a": 1, "b": 2})).await;
    assert!(matches!(late, Err(CallError::Usage(_))), "{late:?}");
    // Closing again returns the same status.
    assert!(client.close().await.unwrap().success());
}

#[tokio::test]
async fn dropping_the_last_client_ends_the_server() {
    let (client, server) = in_memory(config(), registry()).await.unwrap();
    let clone = client.clone();
    drop(client);
    assert!(!server.is_stopped(), "a clone still holds the session");
    drop(clone);
    let reason = tokio::time::timeout(HANG, server.stopped()).await.unwrap();
    assert_eq!(reason, CloseReason::TransportEnded);
}

#[tokio::test]
async fn a_client_over_streams_that_end_at_once_fails_its_handshake_typed() {
    let options = ClientOptions::new("in-memory-client", "1.0");
    let failed = Client::over(tokio::io::empty(), tokio::io::sink(), options).await;
    let Err(ConnectError::Exited { reason, status }) = failed else {
        panic!("expected Exited, got {failed:?}")
    };
    assert_eq!(reason, CloseReason::TransportEnded);
    assert_eq!(status, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pair_works_on_the_multi_thread_runtime_too() {
    let (client, server) = in_memory_with(config(), registry(), options()).await.unwrap();
    let calls = (0..64).map(|i| {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("add", json!({"a": i, "b": 1})).await })
    });
    for (i, call) in calls.enumerate() {
        let result = call.await.unwrap().unwrap();
        assert_eq!(result.structured_content, Some(json!({"total": i as f64 + 1.0})));
    }
    client.close().await.unwrap();
    assert_eq!(
        tokio::time::timeout(HANG, server.stopped()).await.unwrap(),
        CloseReason::TransportEnded
    );
}

#[tokio::test]
async fn a_call_dropped_before_it_is_polled_never_reaches_the_server() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut registry = Registry::new();
    let tool = zest_tokio::schema::Tool::new("tally", "tally", json!({"type": "object"}));
    let tally = calls.clone();
    registry.raw_tool(tool, move |_, _| {
        // Counted when the server starts the call, in the order calls arrive.
        let n = tally.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        async move { Ok(zest_tokio::schema::CallToolResult::text(n.to_string())) }
    });
    let (client, _server) = in_memory_with(config(), registry, options()).await.unwrap();
    drop(client.call_tool("tally", json!({})));
    let answer = tokio::time::timeout(HANG, client.call_tool("tally", json!({}))).await.unwrap();
    assert_eq!(answer.unwrap().content[0].as_text(), Some("1"), "the dropped call was sent");
}
