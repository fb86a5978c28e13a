//! The typed-tools example server (examples/typed_server.rs) driven by the TypeScript SDK
//! client, which validates structured results against the generated outputSchema with Ajv,
//! and by this crate's client.

mod common;
#[path = "../../tests/support/peers.rs"]
mod peers;

use std::time::Duration;

use serde_json::json;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::{ElicitParams, ElicitResult};
use zest_tokio::{Client, ClientApi, ClientOptions, StdioCommand};

#[test]
fn typescript_sdk_client_lists_and_calls_typed_tools() {
    let server = common::example_bin("tokio_typed_server");
    peers::drive(peers::Sdk::TypeScript, "ts_typed.mjs", peers::Target::Stdio(&server));
}

#[tokio::test]
async fn question_mark_on_a_real_io_error_is_an_error_result_with_its_message() {
    let command = StdioCommand::new(common::example_bin("tokio_typed_server"))
        .on_stderr(|_| {})
        .shutdown_grace(Duration::from_millis(300));
    let client = Client::spawn(command, ClientOptions::new("typed-test", "0")).await.unwrap();
    let missing = "/nonexistent/zest-typed-test";
    let expected = std::fs::read_to_string(missing).unwrap_err().to_string();
    let result = client.call_tool("read", json!({"path": missing})).await.unwrap();
    assert!(result.is_error());
    assert_eq!(result.content[0].as_text(), Some(expected.as_str()));

    let wrong = client.call_tool("hello", json!({"name": 7})).await.unwrap();
    assert!(wrong.is_error());
    assert!(wrong.content[0].as_text().unwrap().contains("/name"), "{wrong:?}");
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_typed_elicitation_asks_for_the_types_fields_and_reads_the_answer() {
    let handlers = AsyncClientHandlers::default().on_elicitation(|params| async move {
        let ElicitParams::Form(form) = params else { panic!("form mode expected") };
        assert_eq!(form.message, "Delete everything?");
        assert_eq!(form.requested_schema.required, Some(vec!["ok".to_owned()]));
        let ok = form.requested_schema.properties.contains_key("ok");
        Ok(ElicitResult::accept(json!({"ok": ok}).as_object().unwrap().clone()))
    });
    let command = StdioCommand::new(common::example_bin("tokio_typed_server"))
        .on_stderr(|_| {})
        .shutdown_grace(Duration::from_millis(300));
    let options = ClientOptions::new("typed-test", "0").handlers(handlers);
    let client = Client::spawn(command, options).await.unwrap();
    let result = client.call_tool("delete", json!({"path": "/tmp/x"})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("deleted /tmp/x"), "{result:?}");
    client.close().await.unwrap();
}
