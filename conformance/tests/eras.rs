//! One body of handler code in both eras: the fixture's tools that elicit twice, sample,
//! list roots, seal their state and fail, called by a zest-tokio client in the session era
//! and in 2026-07-28, over stdio and over Streamable HTTP, against each runtime's fixture.
//! In the session era the handlers' asks are requests; in 2026-07-28 they are input-required
//! rounds. The client's handlers and the results are the same.

#[path = "support/fixture_process.rs"]
mod fixture_process;

use std::time::Duration;

use fixture_process::FixtureProcess;

use serde_json::{json, Value};
use zest_conformance::Runtime;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::{CallToolResult, CreateMessageResult, ElicitResult, Root};
use zest_tokio::{Client, ClientApi, ClientOptions, StdioCommand};

/// Far above what any step here takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(30);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Era {
    Session,
    Modern,
}

#[derive(Clone, Copy, Debug)]
enum Transport {
    Stdio,
    Http,
}

/// The user and the model this client stands for: each question's field answered from what
/// this user would say, the capital of France from the model, one root.
fn options(era: Era) -> ClientOptions {
    let handlers = AsyncClientHandlers::default()
        .on_elicitation(|params| async move {
            let asked = serde_json::to_value(&params).unwrap();
            let known = json!({"name": "Ada", "colour": "green", "ok": true});
            let fields = asked["requestedSchema"]["properties"].as_object().cloned();
            let content: serde_json::Map<String, Value> = fields
                .unwrap_or_default()
                .keys()
                .filter_map(|k| Some((k.clone(), known.get(k)?.clone())))
                .collect();
            let answer = json!({"action": "accept", "content": content});
            Ok(serde_json::from_value::<ElicitResult>(answer).unwrap())
        })
        .on_sampling(|_| async move {
            let answer = json!({"role": "assistant", "model": "m",
                "content": {"type": "text", "text": "Paris"}});
            Ok(serde_json::from_value::<CreateMessageResult>(answer).unwrap())
        });
    let root: Root =
        serde_json::from_value(json!({"uri": "file:///work", "name": "work"})).unwrap();
    let options = ClientOptions::new("eras-test", "0").handlers(handlers).roots(vec![root]);
    match era {
        Era::Session => options.with_config(|c| c.session_era()),
        Era::Modern => options.with_config(|c| c.prefer_modern()),
    }
}

fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().unwrap_or_default()
}

async fn exercise(runtime: Runtime, era: Era, transport: Transport) {
    let what = format!("{} {era:?} {transport:?}", runtime.name());
    let (_process, client) = match transport {
        Transport::Stdio => {
            let command = StdioCommand::new(env!("CARGO_BIN_EXE_everything_server"))
                .args(["--runtime", runtime.name(), "--stdio"])
                .shutdown_grace(Duration::from_millis(500));
            (None, Client::spawn(command, options(era)).await.expect("the fixture starts"))
        }
        Transport::Http => {
            let process = FixtureProcess::serve_http(runtime.name(), &[]);
            let client = Client::connect(&process.url, options(era)).await.expect("connects");
            (Some(process), client)
        }
    };
    let revision = client.negotiated().protocol_version;
    assert_eq!(revision.as_str() == "2026-07-28", era == Era::Modern, "{what}");
    let call = |name: &'static str| {
        let client = &client;
        async move {
            let call = client.call_tool(name, json!({}));
            tokio::time::timeout(HANG, call).await.expect("answered in time")
        }
    };
    let two = call("test_input_required_result_multi_round").await.unwrap();
    assert_eq!(text(&two), "Ada likes green", "{what}");
    let sampled = call("test_input_required_result_sampling").await.unwrap();
    assert_eq!(text(&sampled), "Paris", "{what}");
    let roots = call("test_input_required_result_list_roots").await.unwrap();
    assert_eq!(text(&roots), "Roots: file:///work", "{what}");
    let sealed = call("test_input_required_result_request_state").await.unwrap();
    let expected = match era {
        Era::Modern => "state-ok: confirmed ok=true",
        Era::Session => "confirmed ok=true (no state came back)",
    };
    assert_eq!(text(&sealed), expected, "{what}");
    let failed = call("test_error_handling").await.unwrap();
    assert!(failed.is_error(), "{what}: {failed:?}");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_handlers_answer_in_both_eras_over_stdio_and_http_on_every_runtime() {
    for runtime in [Runtime::Tokio, Runtime::Smol, Runtime::Blocking] {
        for era in [Era::Session, Era::Modern] {
            for transport in [Transport::Stdio, Transport::Http] {
                exercise(runtime, era, transport).await;
            }
        }
    }
}

#[tokio::test]
async fn the_ladder_steps_down_to_the_session_era_for_a_typescript_sdk_1_server() {
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/peers/node_modules/.bin/mcp-server-everything");
    assert!(bin.exists(), "{} is missing: run scripts/install-peers", bin.display());
    let command = StdioCommand::new(bin).arg("stdio").shutdown_grace(Duration::from_millis(500));
    let options = ClientOptions::new("eras-test", "0").with_config(|c| c.prefer_modern());
    let client = tokio::time::timeout(HANG, Client::spawn(command, options)).await.unwrap();
    let client = client.expect("server-everything starts and answers");
    let revision = client.negotiated().protocol_version;
    assert!(revision.is_session_era(), "{revision:?}");
    let echoed = client.call_tool("echo", json!({"message": "ladder"})).await.unwrap();
    assert!(text(&echoed).contains("ladder"), "{echoed:?}");
    client.close().await.unwrap();
}
