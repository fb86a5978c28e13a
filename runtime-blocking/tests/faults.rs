//! A fault only zest-blocking can meet: a progress callback, which runs while the call is
//! pending, calls the client from inside. The faults every runtime meets are written once in
//! conformance/tests/stdio_client_faults.rs.

mod common;

use std::sync::mpsc;

use serde_json::json;
use zest_blocking::{Client, ClientApi};

fn echo(client: &Client, text: &str) -> String {
    let result = client.call_tool("echo", json!({"text": text})).expect("echo");
    result.content[0].as_text().expect("a text block").to_owned()
}

/// A progress callback that calls the client from inside: each call is answered, the
/// outer call too, and every callback ran before the outer call returned.
fn a_progress_callback_calls(client: &Client, tool: &str, args: serde_json::Value) {
    let inner = client.clone();
    let (tx, rx) = mpsc::channel();
    let result = client
        .call_tool_with_progress(tool, args, move |p| {
            let echoed = inner.call_tool("echo", json!({"text": format!("at {}", p.progress)}));
            let _ = tx.send(echoed.map(|r| r.content[0].as_text().unwrap_or("").to_owned()));
        })
        .expect("the outer call completes");
    assert!(result.content[0].as_text().unwrap_or("").starts_with("done after 3 steps"));
    let echoed: Vec<String> = rx.try_iter().map(|r| r.expect("the inner call")).collect();
    assert_eq!(echoed, ["at 1", "at 2", "at 3"]);
}

#[test]
fn a_progress_callback_may_call_the_client_over_stdio() {
    let client = common::spawn_fixture(&[]);
    a_progress_callback_calls(&client, "long_running", json!({"steps": 3, "step_ms": 5}));
    assert_eq!(echo(&client, "still alive"), "still alive");
}
