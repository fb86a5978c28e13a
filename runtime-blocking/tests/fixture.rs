//! This client against the fixture servers (the cross matrix): the blocking one always, the
//! tokio and smol ones when built (`cargo test --workspace` builds every crate's examples).

mod common;
#[path = "../../tests/support/fixtures.rs"]
mod fixtures;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use zest_blocking::core::api::ProgressFn;
use zest_blocking::core::error::RequestError;
use zest_blocking::core::RequestOptions;
use zest_blocking::schema::methods::CallTool;
use zest_blocking::schema::{CallToolParams, CallToolResult, ResourceContents};
use zest_blocking::{CallError, Client, ClientApi, ClientOptions, StdioCommand};

fn spawn(server: &Path) -> Client {
    let command =
        StdioCommand::new(server).shutdown_grace(Duration::from_millis(300)).on_stderr(|_| {});
    let options = ClientOptions::new("cross-matrix", "0.0.0").handlers(common::canned_sampling());
    Client::spawn(command, options).unwrap_or_else(|e| panic!("{}: {e}", server.display()))
}

fn text(result: &CallToolResult) -> &str {
    result.content.first().and_then(|c| c.as_text()).unwrap_or("")
}

fn tool(client: &Client, name: &str, args: serde_json::Value) -> CallToolResult {
    client.call_tool(name, args).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The same body for every fixture server.
fn exercise(server: &Path) {
    let client = spawn(server);
    let mut names: Vec<_> = client.list_all_tools().unwrap().into_iter().map(|t| t.name).collect();
    names.sort();
    assert_eq!(names, ["add", "crash", "echo", "fail", "long_running", "sample"]);

    assert_eq!(text(&tool(&client, "echo", json!({"text": "héllo ✓"}))), "héllo ✓");
    assert_eq!(text(&tool(&client, "add", json!({"a": 2, "b": 40}))), "42");
    assert_eq!(text(&tool(&client, "add", json!({"a": 0.5, "b": 1}))), "1.5");
    let fail = tool(&client, "fail", json!({"message": "boom"}));
    assert!(fail.is_error() && text(&fail).contains("boom"), "{fail:?}");
    assert!(tool(&client, "add", json!({"a": "x", "b": 1})).is_error(), "schema violation");
    assert_eq!(
        text(&tool(&client, "sample", json!({"prompt": "what is MCP?"}))),
        "canned: what is MCP?"
    );

    let (tx, rx) = mpsc::channel();
    let done = client
        .call_tool_with_progress("long_running", json!({"steps": 3, "step_ms": 10}), move |p| {
            let _ = tx.send((p.progress, p.total));
        })
        .unwrap();
    assert_eq!(text(&done), "done after 3 steps");
    assert_eq!(
        rx.try_iter().collect::<Vec<_>>(),
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );

    let readme = client.read_resource("zest://readme").unwrap();
    assert!(
        matches!(&readme.contents[0], ResourceContents::Text(t) if t.mime_type.as_deref() == Some("text/plain"))
    );
    let item = client.read_resource("zest://items/7").unwrap();
    assert!(
        matches!(&item.contents[0], ResourceContents::Text(t) if t.text == "item 7"),
        "{item:?}"
    );
    let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    let greet = client.get_prompt("greet", args).unwrap();
    assert_eq!(greet.messages[0].content.as_text(), Some("Hello, Ada!"));
    let missing = client.get_prompt("greet", BTreeMap::new());
    assert!(
        matches!(missing, Err(CallError::Request(RequestError::Remote(ref e))) if e.code == -32602),
        "{missing:?}"
    );

    cancel_mid_flight(&client);
    concurrent_calls(&client);
    client.close().expect("the fixture exits");
}

fn cancel_mid_flight(client: &Client) {
    let params: CallToolParams = serde_json::from_value(
        json!({"name": "long_running", "arguments": {"steps": 1200, "step_ms": 50}}),
    )
    .unwrap();
    let (tx, rx) = mpsc::channel();
    let on_progress: ProgressFn = Box::new(move |p| {
        let _ = tx.send(p.progress);
    });
    let pending = client.start_with_progress::<CallTool>(
        params,
        RequestOptions::with_progress(),
        Some(on_progress),
    );
    rx.recv_timeout(Duration::from_secs(30)).expect("progress before the cancel");
    let started = Instant::now();
    pending.cancel();
    assert_eq!(pending.wait(), Err(CallError::Request(RequestError::Cancelled)));
    // At once, not when the 60 s call would have ended.
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    assert_eq!(text(&tool(client, "echo", json!({"text": "after"}))), "after");
}

fn concurrent_calls(client: &Client) {
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let client = client.clone();
            thread::spawn(move || {
                for i in 0..50 {
                    let want = format!("thread {t} call {i}");
                    let got = client.call_tool("echo", json!({"text": want})).unwrap();
                    assert_eq!(text(&got), want);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("no thread panicked");
    }
}

#[test]
fn blocking_client_against_blocking_fixture() {
    exercise(&common::fixture());
}

#[test]
fn blocking_client_against_tokio_fixture() {
    let server = fixtures::stdio_server("tokio");
    exercise(&server);
}

#[test]
fn blocking_client_against_smol_fixture() {
    let server = fixtures::stdio_server("smol");
    exercise(&server);
}
