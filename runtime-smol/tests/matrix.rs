//! The cross matrix: this runtime's client against the fixture server of every runtime
//! (smol, tokio, blocking), same body. The fixtures are the `<rt>_stdio_server` examples that
//! `cargo test --workspace` builds; another runtime's fixture that is not built yet is built
//! on the spot, never skipped.

mod common;
#[path = "../../tests/support/fixtures.rs"]
mod fixtures;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use smol::future::FutureExt as _;
use zest_smol::core::error::RequestError;
use zest_smol::core::jsonrpc::codes;
use zest_smol::schema::{CallToolResult, ResourceContents};
use zest_smol::{CallError, Client, ClientApi, ClientOptions, StdioCommand};

use common::{canned_sampling, run};

fn text(r: &CallToolResult) -> &str {
    r.content[0].as_text().unwrap_or_default()
}

/// The whole fixture contract, from the client side.
async fn tour(server: PathBuf) {
    // Every fixture exits as soon as its stdin ends: a 30 s grace is never waited out, and the
    // clean exit asserted below cannot turn into a SIGTERM on a slow machine.
    let cmd = StdioCommand::new(&server).on_stderr(|_| {}).shutdown_grace(Duration::from_secs(30));
    let options = ClientOptions::new("zest-smol-matrix", "0.1.0").handlers(canned_sampling());
    let client = Client::spawn(cmd, options).await.unwrap();

    let tools: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    for name in ["echo", "add", "long_running", "sample", "fail", "crash"] {
        assert!(tools.iter().any(|t| t == name), "{name} missing from {tools:?}");
    }
    let echo = client.call_tool("echo", json!({"text": "matrix"})).await.unwrap();
    assert_eq!(text(&echo), "matrix");
    let add = client.call_tool("add", json!({"a": 2, "b": 40})).await.unwrap();
    assert_eq!(text(&add), "42");
    let add = client.call_tool("add", json!({"a": 0.5, "b": 0.25})).await.unwrap();
    assert_eq!(text(&add), "0.75");
    let bad = client.call_tool("add", json!({"a": "x"})).await.unwrap();
    assert!(bad.is_error(), "invalid arguments are an isError result: {bad:?}");
    let fail = client.call_tool("fail", json!({"message": "boom"})).await.unwrap();
    assert!(fail.is_error() && text(&fail).contains("boom"), "{fail:?}");
    let sample = client.call_tool("sample", json!({"prompt": "hello model"})).await.unwrap();
    assert_eq!(text(&sample), "canned: hello model");

    let readme = client.read_resource("zest://readme").await.unwrap();
    let ResourceContents::Text(readme) = &readme.contents[0] else { panic!("{readme:?}") };
    assert_eq!(readme.mime_type.as_deref(), Some("text/plain"));
    let item = client.read_resource("zest://items/42").await.unwrap();
    let ResourceContents::Text(item) = &item.contents[0] else { panic!("{item:?}") };
    assert_eq!(item.text, "item 42");
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "zest://items/{id}");
    let missing = client.read_resource("zest://nothing-here").await.unwrap_err();
    let CallError::Request(RequestError::Remote(e)) = &missing else { panic!("{missing:?}") };
    // 2026-07-28 (the ladder's pick against these servers) names it invalid params.
    let modern = !client.negotiated().protocol_version.is_session_era();
    assert_eq!(e.code, if modern { codes::INVALID_PARAMS } else { codes::RESOURCE_NOT_FOUND });

    let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    let greet = client.get_prompt("greet", args).await.unwrap();
    assert_eq!(greet.messages[0].content.as_text(), Some("Hello, Ada!"));
    let no_name = client.get_prompt("greet", BTreeMap::new()).await.unwrap_err();
    let CallError::Request(RequestError::Remote(e)) = &no_name else { panic!("{no_name:?}") };
    assert_eq!(e.code, codes::INVALID_PARAMS);

    let (tx, reports) = smol::channel::unbounded();
    let done = client
        .call_tool_with_progress("long_running", json!({"steps": 3, "step_ms": 10}), move |p| {
            let _ = tx.try_send((p.progress, p.total));
        })
        .await
        .unwrap();
    assert_eq!(text(&done), "done after 3 steps");
    let reports: Vec<_> = std::iter::from_fn(|| reports.try_recv().ok()).collect();
    assert_eq!(reports, [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);

    // Cancel mid-flight: drop the call's future after its first progress report.
    let (tx, reports) = smol::channel::unbounded();
    let long = client.call_tool_with_progress(
        "long_running",
        json!({"steps": 1200, "step_ms": 50}),
        move |p| {
            let _ = tx.try_send(p.progress);
        },
    );
    let first = async { Err(reports.recv().await.unwrap()) };
    let cut = async { Ok(long.await) }.or(first).await;
    assert_eq!(cut.unwrap_err(), 1.0);
    client.ping().await.unwrap();

    let status = client.close().await.unwrap();
    assert!(status.success(), "{} exited with {status}", server.display());
}

fn cross(runtime: &str) {
    let server = fixtures::stdio_server(runtime);
    run(60, tour(server));
}

#[test]
fn smol_client_against_smol_fixture() {
    run(60, tour(common::fixture()));
}

#[test]
fn smol_client_against_tokio_fixture() {
    cross("tokio");
}

#[test]
fn smol_client_against_blocking_fixture() {
    cross("blocking");
}
