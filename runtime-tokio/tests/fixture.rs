//! This client against the fixture servers (the cross matrix, same body for each): the tokio
//! one always, the smol and blocking ones when built (`cargo test --workspace` builds every
//! crate's examples). Plus what only the tokio fixture can show: a cancelled call's handler
//! task is aborted on the server, and both runtime flavours drive the client.

mod common;
#[path = "../../tests/support/fixtures.rs"]
mod fixtures;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::mpsc;
use zest_tokio::core::error::RequestError;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::{CallToolResult, CreateMessageResult, ResourceContents, SamplingContent};
use zest_tokio::{CallError, Client, ClientApi, ClientOptions, StdioCommand};

/// Handlers answering sampling with `canned: <first text of the request>`.
fn canned_sampling() -> AsyncClientHandlers {
    AsyncClientHandlers::default().on_sampling(|params| async move {
        let asked = params
            .messages
            .iter()
            .flat_map(|m| m.content.as_slice())
            .find_map(SamplingContent::as_text)
            .unwrap_or("")
            .to_owned();
        let result = json!({
            "role": "assistant",
            "content": {"type": "text", "text": format!("canned: {asked}")},
            "model": "zest-test-model"
        });
        Ok(serde_json::from_value::<CreateMessageResult>(result).expect("a valid result"))
    })
}

async fn spawn(command: StdioCommand) -> Client {
    let options =
        ClientOptions::new("zest-tokio-cross-matrix", "0.0.0").handlers(canned_sampling());
    Client::spawn(command, options).await.expect("the fixture starts")
}

/// A 30 s grace: every fixture exits as soon as its stdin ends, so it is never waited out, and
/// "exits 0 once its stdin closes" cannot fail because a loaded machine was slow to exit.
fn command(server: &Path) -> StdioCommand {
    StdioCommand::new(server).shutdown_grace(Duration::from_secs(30)).on_stderr(|_| {})
}

fn text(result: &CallToolResult) -> &str {
    result.content.first().and_then(|c| c.as_text()).unwrap_or("")
}

async fn tool(client: &Client, name: &str, args: serde_json::Value) -> CallToolResult {
    client.call_tool(name, args).await.unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The same body for every fixture server.
async fn exercise(server: &Path) {
    let client = spawn(command(server)).await;
    let mut names: Vec<_> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    names.sort();
    assert_eq!(names, ["add", "crash", "echo", "fail", "long_running", "sample"]);

    assert_eq!(text(&tool(&client, "echo", json!({"text": "héllo ✓"})).await), "héllo ✓");
    assert_eq!(text(&tool(&client, "add", json!({"a": 2, "b": 40})).await), "42");
    assert_eq!(text(&tool(&client, "add", json!({"a": 0.5, "b": 1})).await), "1.5");
    let fail = tool(&client, "fail", json!({"message": "boom"})).await;
    assert!(fail.is_error() && text(&fail).contains("boom"), "{fail:?}");
    assert!(tool(&client, "add", json!({"a": "x", "b": 1})).await.is_error(), "schema violation");
    let sampled = tool(&client, "sample", json!({"prompt": "what is MCP?"})).await;
    assert_eq!(text(&sampled), "canned: what is MCP?");

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let done = client
        .call_tool_with_progress("long_running", json!({"steps": 3, "step_ms": 10}), move |p| {
            sink.lock().unwrap().push((p.progress, p.total));
        })
        .await
        .unwrap();
    assert_eq!(text(&done), "done after 3 steps");
    assert_eq!(*seen.lock().unwrap(), [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);

    let readme = client.read_resource("zest://readme").await.unwrap();
    assert!(
        matches!(&readme.contents[0], ResourceContents::Text(t) if t.mime_type.as_deref() == Some("text/plain"))
    );
    let item = client.read_resource("zest://items/7").await.unwrap();
    assert!(
        matches!(&item.contents[0], ResourceContents::Text(t) if t.text == "item 7"),
        "{item:?}"
    );
    let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    let greet = client.get_prompt("greet", args).await.unwrap();
    assert_eq!(greet.messages[0].content.as_text(), Some("Hello, Ada!"));
    let missing = client.get_prompt("greet", BTreeMap::new()).await;
    assert!(
        matches!(missing, Err(CallError::Request(RequestError::Remote(ref e))) if e.code == -32602),
        "{missing:?}"
    );

    cancel_mid_flight(&client).await;
    concurrent_calls(&client).await;
    let status = client.close().await.expect("the fixture exits");
    assert!(status.success(), "the fixture exits 0 once its stdin closes: {status:?}");
}

/// Drops a long call's future after its first progress report; the session goes on.
async fn cancel_mid_flight(client: &Client) {
    let (tx, mut progress) = mpsc::unbounded_channel();
    let mut slow = client.call_tool_with_progress(
        "long_running",
        json!({"steps": 1200, "step_ms": 50}),
        move |p| {
            let _ = tx.send(p.progress);
        },
    );
    tokio::select! {
        outcome = &mut slow => panic!("a 60 s call finished early: {outcome:?}"),
        first = progress.recv() => assert_eq!(first, Some(1.0)),
    }
    let started = Instant::now();
    drop(slow);
    assert_eq!(text(&tool(client, "echo", json!({"text": "after"})).await), "after");
    // Not queued behind the dropped call: that one had 60 s to go.
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
}

/// Eight tasks of fifty calls each, every answer going to its own caller.
async fn concurrent_calls(client: &Client) {
    let tasks: Vec<_> = (0..8)
        .map(|t| {
            let client = client.clone();
            tokio::spawn(async move {
                for i in 0..50 {
                    let want = format!("task {t} call {i}");
                    let got = client.call_tool("echo", json!({"text": want})).await.unwrap();
                    assert_eq!(text(&got), want);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("no task panicked");
    }
}

#[tokio::test]
async fn tokio_client_against_tokio_fixture() {
    exercise(&common::fixture()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_client_on_the_multi_thread_runtime() {
    exercise(&common::fixture()).await;
}

/// On a multi-thread runtime a call polls its session's loop itself, here from a thread that
/// is no part of the runtime: the loop still runs inside its own runtime (the task it
/// spawns to answer the server's sampling request, its timers), and the call completes.
#[test]
fn a_call_from_outside_the_runtime_is_served_by_the_session_s_runtime() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let client = runtime.block_on(spawn(command(&common::fixture())));
    let outside = std::thread::spawn(move || {
        let call = client.call_tool("sample", json!({"prompt": "from outside"}));
        let result = futures::executor::block_on(call).expect("the call completes");
        assert_eq!(text(&result), "canned: from outside");
        client
    });
    let client = outside.join().expect("the outside thread");
    let status = runtime.block_on(client.close()).expect("closed");
    assert!(status.success());
}

#[tokio::test]
async fn tokio_client_against_smol_fixture() {
    let server = fixtures::stdio_server("smol");
    exercise(&server).await;
}

#[tokio::test]
async fn tokio_client_against_blocking_fixture() {
    let server = fixtures::stdio_server("blocking");
    exercise(&server).await;
}

#[tokio::test]
async fn dropping_a_call_aborts_its_handler_on_the_server() {
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    let command = command(&common::fixture()).on_stderr(move |l| sink.lock().unwrap().push(l));
    let client = spawn(command).await;
    let (tx, mut progress) = mpsc::unbounded_channel();
    let mut slow = client.call_tool_with_progress(
        "long_running",
        json!({"steps": 3000, "step_ms": 20}),
        move |p| {
            let _ = tx.send(p.progress);
        },
    );
    // Dropped once the handler is surely running on the server: after its first report.
    tokio::select! {
        outcome = &mut slow => panic!("a 60 s call finished early: {outcome:?}"),
        first = progress.recv() => assert_eq!(first, Some(1.0)),
    }
    drop(slow);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let cancelled = lines.lock().unwrap().iter().any(|l| l.contains("cancelled after step"));
        if cancelled {
            break;
        }
        assert!(Instant::now() < deadline, "no cancellation seen: {:?}", lines.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let status = client.close().await.unwrap();
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn a_closed_client_fails_new_calls_at_once() {
    let client = spawn(command(&common::fixture())).await;
    let other = client.clone();
    assert!(client.close().await.unwrap().success());
    let late = other.call_tool("echo", json!({"text": "too late"})).await;
    assert!(
        matches!(late, Err(CallError::Usage(zest_tokio::core::error::UsageError::Closed))),
        "{late:?}"
    );
    assert!(other.close().await.unwrap().success(), "close reports the same status again");
}
