//! The client fixture's steps for each scenario, played by each runtime's client over stdio
//! against `scenario_server` (the suite's scenario servers' tools, without HTTP).

use std::time::Duration;

use serde_json::{json, Value};
use zest_conformance::client_scenarios::{elicitation_answer, play, OnTokio, Scenario};
use zest_conformance::fixture::content::json_schema_2020_12;
use zest_core::schema::CallToolResult;

fn command() -> zest_core::stdio::StdioCommand {
    zest_core::stdio::StdioCommand::new(env!("CARGO_BIN_EXE_scenario_server"))
        .shutdown_grace(Duration::from_millis(500))
}

fn blocking_client() -> zest_blocking::Client {
    let handlers = zest_core::handler::SyncClientHandlers::default()
        .on_elicitation(|p| Ok(elicitation_answer(&p)));
    let options =
        zest_blocking::ClientOptions::new("client-fixture-test", "0.0.0").handlers(handlers);
    zest_blocking::Client::spawn(command(), options).expect("scenario_server starts")
}

fn text(result: Option<CallToolResult>) -> String {
    let result = result.expect("a tool result");
    result.content[0].as_text().expect("a text result").to_owned()
}

#[test]
fn every_scenario_plays_on_the_blocking_client() {
    let client = blocking_client();
    assert_eq!(play(Scenario::Initialize, &client), Ok(None));
    assert_eq!(text(play(Scenario::ToolsCall, &client).unwrap()), "The sum of 5 and 3 is 8");
    assert_eq!(
        text(play(Scenario::SseRetry, &client).unwrap()),
        "Reconnection test completed successfully"
    );
    let filled: Value =
        serde_json::from_str(&text(play(Scenario::ElicitationDefaults, &client).unwrap())).unwrap();
    assert_eq!(
        filled,
        json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
    );
    let echoed: Value =
        serde_json::from_str(&text(play(Scenario::JsonSchemaPreservation, &client).unwrap()))
            .unwrap();
    assert_eq!(echoed, json_schema_2020_12(), "every keyword survives, $ref unresolved");
    assert_eq!(play(Scenario::JsonSchemaRefNoDeref, &client), Ok(None));
    let tools = zest_blocking::ClientApi::list_all_tools(&client).unwrap();
    let lookup = tools.iter().find(|t| t.name == "lookup_user").unwrap();
    let schema = serde_json::to_value(&lookup.input_schema).unwrap();
    assert_eq!(schema["properties"]["profile"]["$ref"], "http://127.0.0.1:9/canary/profile.json");
    client.close().expect("scenario_server exits");
}

#[test]
fn a_missing_tool_fails_the_scenario_with_its_name() {
    // A server without the scenario's tool must fail the scenario, not pass it silently.
    struct NoTools;
    impl zest_conformance::client_scenarios::ScenarioClient for NoTools {
        fn list_tools(&self) -> Result<Vec<zest_core::schema::Tool>, zest_core::api::CallError> {
            Ok(Vec::new())
        }
        fn call_tool(
            &self,
            name: &str,
            _: Value,
        ) -> Result<CallToolResult, zest_core::api::CallError> {
            panic!("{name} called although it was not listed")
        }
        fn resource_uris(&self) -> Result<Vec<String>, zest_core::api::CallError> {
            Ok(Vec::new())
        }
        fn read(&self, uri: &str) -> Result<(), zest_core::api::CallError> {
            panic!("{uri} read although nothing was listed")
        }
        fn prompt_names(&self) -> Result<Vec<String>, zest_core::api::CallError> {
            Ok(Vec::new())
        }
        fn prompt(&self, name: &str) -> Result<(), zest_core::api::CallError> {
            panic!("{name} asked for although nothing was listed")
        }
    }
    assert_eq!(play(Scenario::ToolsCall, &NoTools), Err("the server lists no add_numbers".into()));
    // With nothing listed, the 2026-07-28 header scenarios call nothing and pass through.
    assert_eq!(play(Scenario::HttpStandardHeaders, &NoTools), Ok(None));
    assert_eq!(play(Scenario::HttpInvalidToolHeaders, &NoTools), Ok(None));
}

#[test]
fn the_async_clients_play_through_the_same_steps() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let handlers = zest_core::handler::AsyncClientHandlers::default()
        .on_elicitation(|p| async move { Ok(elicitation_answer(&p)) });
    let options = zest_tokio::ClientOptions::new("client-fixture-test", "0.0.0").handlers(handlers);
    let client = runtime.block_on(zest_tokio::Client::spawn(command(), options)).unwrap();
    let on_tokio = OnTokio { runtime: &runtime, client: &client };
    assert_eq!(text(play(Scenario::ToolsCall, &on_tokio).unwrap()), "The sum of 5 and 3 is 8");
    runtime.block_on(client.close()).unwrap();

    let handlers = zest_core::handler::AsyncClientHandlers::default()
        .on_elicitation(|p| async move { Ok(elicitation_answer(&p)) });
    let options = zest_smol::ClientOptions::new("client-fixture-test", "0.0.0").handlers(handlers);
    let client = smol::block_on(zest_smol::Client::spawn(command(), options)).unwrap();
    let filled = text(play(Scenario::ElicitationDefaults, &client).unwrap());
    assert!(filled.contains(r#""name":"John Doe""#), "{filled}");
    smol::block_on(client.close()).unwrap();
}

#[test]
fn the_client_binary_fails_plainly_when_nothing_listens() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_conformance_client"))
        .args(["--runtime", "tokio", "http://127.0.0.1:9/mcp"])
        .env("MCP_CONFORMANCE_SCENARIO", "tools_call")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot connect to http://127.0.0.1:9/mcp"), "{stderr}");
    let unknown = std::process::Command::new(env!("CARGO_BIN_EXE_conformance_client"))
        .args(["--runtime", "tokio", "http://localhost:9/mcp"])
        .env("MCP_CONFORMANCE_SCENARIO", "no-such-scenario")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("is not one this client plays"));
}
