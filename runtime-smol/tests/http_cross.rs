//! The cross pairs over HTTP: zest-smol's client against zest-tokio's server, and
//! zest-tokio's client against zest-smol's server, over loopback. Same checks both ways:
//! handshake, a JSON answer, progress on the call's SSE stream, a sampling request mid-call,
//! the DELETE on close.

mod common;
#[path = "common/http.rs"]
mod http_common;

use std::sync::{Arc, Mutex};

use common::run;
use serde_json::json;
use zest_smol::schema::{CallToolResult, CreateMessageResult};

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect()
}

fn canned(asked: usize) -> CreateMessageResult {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": {"type": "text", "text": format!("{asked} message(s) read")},
        "model": "canned"
    }))
    .unwrap()
}

/// zest-tokio's server with the tools the smol test server has (`echo`, `steps`, `sample`).
fn tokio_registry() -> zest_tokio::Registry {
    use zest_tokio::schema::{
        CreateMessageParams, LoggingLevel, Role, SamplingContent, SamplingMessage,
    };
    use zest_tokio::{Context, PeerApi, Registry, ToolError};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Echo {
        text: String,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Steps {
        n: u64,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Sample {
        prompt: String,
    }
    Registry::new()
        .tool("echo", "Echoes", |Echo { text }| async move { text })
        .tool("steps", "Reports progress", |Steps { n }, ctx: Context| async move {
            for i in 1..=n {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                ctx.progress(i as f64, Some(n as f64), Some(format!("step {i}"))).await?;
                ctx.log(LoggingLevel::Info, json!(format!("did step {i}"))).await?;
            }
            Ok::<_, ToolError>(format!("done after {n} steps"))
        })
        .tool("sample", "Asks the client's model", |Sample { prompt }, ctx: Context| async move {
            let message = SamplingMessage::new(Role::User, SamplingContent::text(prompt));
            let params = CreateMessageParams {
                messages: vec![message],
                max_tokens: 10,
                ..Default::default()
            };
            let result = ctx.create_message(params).await;
            let result = result.map_err(|e| ToolError::new(format!("sampling failed: {e}")))?;
            let said: String =
                result.content.as_slice().iter().filter_map(|c| c.as_text()).collect();
            Ok::<_, ToolError>(format!("model said: {said}"))
        })
}

#[test]
fn smol_client_against_tokio_server() {
    use zest_smol::core::handler::AsyncClientHandlers;
    use zest_smol::{Client, ClientApi, ClientOptions};

    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let config = zest_tokio::ServerConfig::new("zest-tokio-cross", "1.0");
    let server = rt
        .block_on(zest_tokio::serve_http("127.0.0.1:0", config, tokio_registry()))
        .expect("bind 127.0.0.1:0");
    let url = server.url();
    run(60, async {
        let handlers = AsyncClientHandlers::default()
            .on_sampling(|params| async move { Ok(canned(params.messages.len())) });
        let options = ClientOptions::new("smol-cross", "1").handlers(handlers);
        let client = Client::connect(&url, options).await.expect("connect");
        assert_eq!(client.negotiated().server_info.name, "zest-tokio-cross");
        let echoed = client.call_tool("echo", json!({"text": "smol → tokio"})).await.unwrap();
        assert_eq!(text(&echoed), "smol → tokio");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let steps = client
            .call_tool_with_progress("steps", json!({"n": 3}), move |p| {
                sink.lock().unwrap().push(p.progress)
            })
            .await
            .unwrap();
        assert_eq!(text(&steps), "done after 3 steps");
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
        let sampled = client.call_tool("sample", json!({"prompt": "?"})).await.unwrap();
        assert_eq!(text(&sampled), "model said: 1 message(s) read");
        assert_eq!(server.session_count(), 1);
        client.close().await.unwrap();
        assert_eq!(server.session_count(), 0, "DELETE ended the session");
    });
    rt.block_on(server.shutdown());
}

#[test]
fn tokio_client_against_smol_server() {
    use zest_tokio::core::handler::AsyncClientHandlers;
    use zest_tokio::{Client, ClientApi, ClientOptions};

    let server = smol::block_on(http_common::server());
    let url = server.url();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let check = async {
        let handlers = AsyncClientHandlers::default()
            .on_sampling(|params| async move { Ok(canned(params.messages.len())) });
        let options = ClientOptions::new("tokio-cross", "1").handlers(handlers);
        let client = Client::connect(&url, options).await.expect("connect");
        assert_eq!(client.negotiated().server_info.name, "zest-http-test");
        let echoed = client.call_tool("echo", json!({"text": "tokio → smol"})).await.unwrap();
        assert_eq!(text(&echoed), "tokio → smol");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let steps = client
            .call_tool_with_progress("steps", json!({"n": 3}), move |p| {
                sink.lock().unwrap().push(p.progress)
            })
            .await
            .unwrap();
        assert_eq!(text(&steps), "done after 3 steps");
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
        let sampled = client.call_tool("sample", json!({"prompt": "?"})).await.unwrap();
        assert_eq!(text(&sampled), "model said: 1 message(s) read");
        assert_eq!(server.session_count(), 1);
        client.close().await.unwrap();
        assert_eq!(server.session_count(), 0, "DELETE ended the session");
    };
    rt.block_on(async {
        tokio::time::timeout(std::time::Duration::from_secs(60), check)
            .await
            .expect("the cross pair finishes within 60 s")
    });
    run(60, server.shutdown());
}
