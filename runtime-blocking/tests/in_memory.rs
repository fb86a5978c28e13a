//! A server tested without a process: typed tools called through an in-memory pair, with
//! progress, a sampling request answered by the client's handler and listing; closing or
//! dropping the client ends the server's session too.

use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::json;
use zest_blocking::core::error::CloseReason;
use zest_blocking::core::handler::SyncClientHandlers;
use zest_blocking::schema::{
    CreateMessageParams, CreateMessageResult, Role, SamplingContent, SamplingMessage,
};
use zest_blocking::{
    in_memory, in_memory_with, CallError, Client, ClientApi, ClientOptions, ConnectError, Context,
    InMemoryServer, Json, PeerApi, Registry, ServerConfig, ToolError,
};

/// Far above what any step here takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(30);

/// `f`'s result, failing the test if it takes longer than [`HANG`].
fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || tx.send(f()));
    rx.recv_timeout(HANG).expect("done in time")
}

/// Waits for the server to stop, failing the test if it takes longer than [`HANG`].
fn stopped(server: InMemoryServer) -> CloseReason {
    within(move || server.stopped())
}

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
        .tool("add", "Adds two numbers", |Add { a, b }| Json(Sum { total: a + b }))
        .tool("count", "Reports progress n times", |Count { n }, ctx: Context| {
            for i in 1..=n {
                ctx.progress(f64::from(i), Some(f64::from(n)), None)?;
            }
            Ok::<_, ToolError>(format!("counted {n}"))
        })
        .tool("ask", "Asks the client's model", |Ask { prompt }, ctx: Context| {
            let message = SamplingMessage::new(Role::User, SamplingContent::text(prompt));
            let params = CreateMessageParams {
                messages: vec![message],
                max_tokens: 10,
                ..Default::default()
            };
            let result = ctx.create_message(params)?;
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
    let handlers = SyncClientHandlers::default().on_sampling(|params| {
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

#[test]
fn typed_tools_answer_through_the_pair() {
    let (client, server) = in_memory_with(config(), registry(), options()).unwrap();
    assert_eq!(client.negotiated().server_info.name, "in-memory-test");

    let mut names: Vec<String> =
        client.list_all_tools().unwrap().into_iter().map(|t| t.name).collect();
    names.sort();
    assert_eq!(names, ["add", "ask", "count"]);

    let sum = client.call_tool("add", json!({"a": 1.5, "b": 2})).unwrap();
    assert_eq!(sum.structured_content, Some(json!({"total": 3.5})));

    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let counted = client
        .call_tool_with_progress("count", json!({"n": 3}), move |p| {
            record.lock().unwrap().push((p.progress, p.total));
        })
        .unwrap();
    assert_eq!(counted.content[0].as_text(), Some("counted 3"));
    assert_eq!(*seen.lock().unwrap(), [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);

    let answer = client.call_tool("ask", json!({"prompt": "hi"})).unwrap();
    assert_eq!(answer.content[0].as_text(), Some("model says: hi"), "{answer:?}");

    let wrong = client.call_tool("add", json!({"a": "one"})).unwrap();
    assert!(wrong.is_error(), "{wrong:?}");

    client.close().unwrap();
    assert_eq!(stopped(server), CloseReason::TransportEnded);
}

#[test]
fn closing_the_client_ends_the_server() {
    let (client, server) = in_memory(config(), registry()).unwrap();
    assert_eq!(client.pid(), 0);
    assert_eq!(client.close_reason(), None);
    let closing = client.clone();
    assert!(within(move || closing.close()).unwrap().success());
    assert_eq!(client.close_reason(), Some(CloseReason::Local));
    assert_eq!(stopped(server), CloseReason::TransportEnded);
    let late = client.call_tool("add", json!({"a": 1, "b": 2}));
    assert!(matches!(late, Err(CallError::Usage(_))), "{late:?}");
    assert!(client.close().unwrap().success());
}

#[test]
fn dropping_the_last_client_ends_the_server() {
    let (client, server) = in_memory(config(), registry()).unwrap();
    let clone = client.clone();
    drop(client);
    assert!(!server.is_stopped(), "a clone still holds the session");
    drop(clone);
    assert_eq!(stopped(server), CloseReason::TransportEnded);
}

#[test]
fn a_client_over_streams_that_end_at_once_fails_its_handshake_typed() {
    let options = ClientOptions::new("in-memory-client", "1.0");
    let failed = Client::over(std::io::empty(), std::io::sink(), options);
    let Err(ConnectError::Exited { reason, status }) = failed else {
        panic!("expected Exited, got {failed:?}")
    };
    assert_eq!(reason, CloseReason::TransportEnded);
    assert_eq!(status, None);
}

#[test]
fn concurrent_calls_from_many_threads_share_the_pair() {
    let (client, server) = in_memory_with(config(), registry(), options()).unwrap();
    let calls: Vec<_> = (0..64)
        .map(|i| {
            let client = client.clone();
            thread::spawn(move || client.call_tool("add", json!({"a": i, "b": 1})))
        })
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        let result = call.join().unwrap().unwrap();
        assert_eq!(result.structured_content, Some(json!({"total": i as f64 + 1.0})));
    }
    client.close().unwrap();
    assert_eq!(stopped(server), CloseReason::TransportEnded);
}
