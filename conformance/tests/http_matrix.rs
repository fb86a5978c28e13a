//! The 3×3 matrix over HTTP: every zest client runtime against every zest server runtime,
//! each serving the everything fixture in-process on a loopback port, with one body of checks:
//! the handshake, a tool's text, an error result, progress and log records on the call's
//! stream, a sampling request to the client mid-call, a resource, a prompt, and the DELETE on
//! close ending the server's session.

#[path = "support/clients.rs"]
mod clients;
#[path = "support/served.rs"]
mod served;

use clients::{text, Blocking, Peer, Smol, Tokio};
use serde_json::{json, Value};
use served::Served;
use zest_conformance::fixture::content::{self, LOG_LINES, PROGRESS_STEPS, SIMPLE_TEXT};
use zest_conformance::Runtime;
use zest_core::schema::ResourceContents;

/// The client of runtime `C` against the server of runtime `server`.
fn pair<C: Peer>(server: Runtime) {
    let served = Served::start(server);
    let client = C::connect(&served.url());
    let on = format!("{} client, {server} server", C::RUNTIME);
    assert_eq!(client.server_name(), "zest-conformance-everything", "{on}");
    assert_eq!(served.session_count(), 1, "{on}");

    assert_eq!(text(&client.call("test_simple_text", json!({}))), SIMPLE_TEXT, "{on}");
    let failed = client.call("test_error_handling", json!({}));
    assert!(failed.is_error() && text(&failed) == content::ERROR_TEXT, "{on}: {failed:?}");

    let (done, progress) = client.call_with_progress("test_tool_with_progress", json!({}));
    assert_eq!(text(&done), text(&content::progress_done()), "{on}");
    assert_eq!(progress, PROGRESS_STEPS, "{on}");

    let logged = client.call("test_tool_with_logging", json!({}));
    assert_eq!(text(&logged), text(&content::logging_done()), "{on}");
    let logs: Vec<Value> = client.logs(LOG_LINES.len()).into_iter().map(|m| m.data).collect();
    assert_eq!(logs, LOG_LINES.map(Value::from), "{on}");

    let sampled = client.call("test_sampling", json!({"prompt": "from the matrix"}));
    assert_eq!(text(&sampled), "LLM response: canned: from the matrix", "{on}");

    let read = client.read_resource("test://static-text");
    let Some(ResourceContents::Text(read)) = read.contents.first() else {
        panic!("{on}: {read:?}")
    };
    assert_eq!(read.text, content::STATIC_TEXT, "{on}");
    let prompt = client.get_prompt("test_simple_prompt", &[]);
    let said = prompt.messages.first().and_then(|m| m.content.as_text());
    assert_eq!(said, Some("This is a simple prompt for testing."), "{on}");

    client.close();
    assert_eq!(served.session_count(), 0, "{on}: the DELETE on close ended the session");
    served.shutdown();
}

#[test]
fn tokio_client_against_tokio_server() {
    pair::<Tokio>(Runtime::Tokio);
}

#[test]
fn tokio_client_against_smol_server() {
    pair::<Tokio>(Runtime::Smol);
}

#[test]
fn tokio_client_against_blocking_server() {
    pair::<Tokio>(Runtime::Blocking);
}

#[test]
fn smol_client_against_tokio_server() {
    pair::<Smol>(Runtime::Tokio);
}

#[test]
fn smol_client_against_smol_server() {
    pair::<Smol>(Runtime::Smol);
}

#[test]
fn smol_client_against_blocking_server() {
    pair::<Smol>(Runtime::Blocking);
}

#[test]
fn blocking_client_against_tokio_server() {
    pair::<Blocking>(Runtime::Tokio);
}

#[test]
fn blocking_client_against_smol_server() {
    pair::<Blocking>(Runtime::Smol);
}

#[test]
fn blocking_client_against_blocking_server() {
    pair::<Blocking>(Runtime::Blocking);
}
