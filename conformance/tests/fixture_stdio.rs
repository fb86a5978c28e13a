//! The everything fixture on each runtime, driven over stdio by zest-tokio's client: the real
//! texts, progress values, log records, elicitation and sampling round trips, resources,
//! prompts and completions, which the suite's own checks only partly look at.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use zest_conformance::fixture::content;
use zest_conformance::Runtime;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::{
    CallToolResult, ContentBlock, CreateMessageResult, ElicitResult, LoggingLevel, Reference,
    ResourceContents, SamplingContent,
};
use zest_tokio::{Client, ClientApi, ClientOptions, StdioCommand};

fn handlers(elicited: Arc<Mutex<Vec<Value>>>) -> AsyncClientHandlers {
    AsyncClientHandlers::default()
        .on_sampling(|params| async move {
            let asked: String =
                params.messages.iter().flat_map(|m| m.content.as_slice()).filter_map(SamplingContent::as_text).collect();
            let result = json!({
                "role": "assistant", "model": "test-model",
                "content": {"type": "text", "text": format!("echo of {asked} ({} tokens)", params.max_tokens)}
            });
            Ok(serde_json::from_value::<CreateMessageResult>(result).expect("a valid result"))
        })
        .on_elicitation(move |params| {
            let elicited = elicited.clone();
            async move {
                elicited.lock().unwrap().push(serde_json::to_value(&params).unwrap());
                let answer = json!({"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}});
                Ok(serde_json::from_value::<ElicitResult>(answer).expect("a valid result"))
            }
        })
}

async fn spawn(runtime: Runtime, elicited: Arc<Mutex<Vec<Value>>>) -> Client {
    let command = StdioCommand::new(env!("CARGO_BIN_EXE_everything_server"))
        .args(["--runtime", runtime.name(), "--stdio"])
        // Its exit is checked: a loaded machine may take a while to let it exit on its own.
        .shutdown_grace(Duration::from_secs(30));
    // The session era: the checks read texts that session-era round trips produce (a form
    // answer the client refuses reaches the tool as an error instead of ending the call).
    let options = ClientOptions::new("fixture-test", "0.0.0")
        .handlers(handlers(elicited))
        .with_config(|c| c.session_era());
    Client::spawn(command, options).await.expect("the fixture starts")
}

async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    client.call_tool(name, args).await.unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn only_text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "{result:?}");
    result.content[0].as_text().unwrap_or_else(|| panic!("not text: {result:?}"))
}

async fn exercise(runtime: Runtime) {
    let elicited = Arc::new(Mutex::new(Vec::new()));
    let client = spawn(runtime, elicited.clone()).await;
    let names: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names.len(), 28, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("test_") || n == "json_schema_2020_12_tool"));
    let tools = client.list_all_tools().await.unwrap();
    let schema_tool = tools.iter().find(|t| t.name == "json_schema_2020_12_tool").unwrap();
    assert_eq!(
        serde_json::to_value(&schema_tool.input_schema).unwrap(),
        content::json_schema_2020_12()
    );

    assert_eq!(
        only_text(&call(&client, "test_simple_text", json!({})).await),
        "This is a simple text response for testing."
    );
    // The 2026-07-28 input-required tool, in the session era: its ask is a request.
    assert_eq!(
        only_text(&call(&client, "test_input_required_result_sampling", json!({})).await),
        "echo of What is the capital of France? (100 tokens)"
    );
    let error = call(&client, "test_error_handling", json!({})).await;
    assert!(error.is_error());
    assert_eq!(only_text(&error), "This tool intentionally returns an error for testing");
    let image = serde_json::to_value(call(&client, "test_image_content", json!({})).await).unwrap();
    assert_eq!(
        image["content"][0],
        json!({"type": "image", "data": content::PNG_BASE64, "mimeType": "image/png"})
    );
    let audio = serde_json::to_value(call(&client, "test_audio_content", json!({})).await).unwrap();
    assert_eq!(audio["content"][0]["mimeType"], "audio/wav");
    let mixed = call(&client, "test_multiple_content_types", json!({})).await;
    let kinds: Vec<&str> = mixed
        .content
        .iter()
        .map(|c| match c {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Resource(_) => "resource",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
    let embedded =
        serde_json::to_value(call(&client, "test_embedded_resource", json!({})).await).unwrap();
    assert_eq!(embedded["content"][0]["resource"]["text"], "This is an embedded resource content.");

    // Logging: three info records, in order, while the call runs.
    client.set_logging_level(LoggingLevel::Debug).await.unwrap();
    let notes = client.notifications();
    call(&client, "test_tool_with_logging", json!({})).await;
    let mut logs = Vec::new();
    while logs.len() < 3 {
        let note =
            tokio::time::timeout(Duration::from_secs(5), notes.recv()).await.unwrap().unwrap();
        if let zest_tokio::core::client::ServerNotification::LoggingMessage(m) = note {
            assert_eq!(m.level, LoggingLevel::Info);
            logs.push(m.data);
        }
    }
    assert_eq!(
        logs,
        ["Tool execution started", "Tool processing data", "Tool execution completed"]
    );

    // Progress: 0, 50, 100 of 100.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    client
        .call_tool_with_progress("test_tool_with_progress", json!({}), move |p| {
            sink.lock().unwrap().push((p.progress, p.total, p.message));
        })
        .await
        .unwrap();
    let expected: Vec<_> = [0.0, 50.0, 100.0]
        .into_iter()
        .map(|s| (s, Some(100.0), Some(format!("Completed step {s} of 100"))))
        .collect();
    assert_eq!(*seen.lock().unwrap(), expected);

    let sampled = call(&client, "test_sampling", json!({"prompt": "hi"})).await;
    assert_eq!(only_text(&sampled), "LLM response: echo of hi (100 tokens)");
    let basic = call(&client, "test_elicitation", json!({"message": "who?"})).await;
    assert_eq!(
        only_text(&basic),
        r#"User response: action=accept, content={"email":"ada@example.com","username":"ada"}"#
    );
    call(&client, "test_elicitation_sep1034_defaults", json!({})).await;
    call(&client, "test_elicitation_sep1330_enums", json!({})).await;
    let asked = elicited.lock().unwrap().clone();
    assert_eq!(asked[0]["message"], "who?");
    assert_eq!(asked[0]["requestedSchema"]["required"], json!(["username", "email"]));
    let defaults = &asked[1]["requestedSchema"]["properties"];
    assert_eq!(
        [
            &defaults["name"]["default"],
            &defaults["age"]["default"],
            &defaults["score"]["default"],
            &defaults["status"]["default"],
            &defaults["verified"]["default"]
        ],
        [&json!("John Doe"), &json!(30), &json!(95.5), &json!("active"), &json!(true)]
    );
    let enums = &asked[2]["requestedSchema"]["properties"];
    assert_eq!(
        enums["legacyEnum"]["enumNames"],
        json!(["Option One", "Option Two", "Option Three"])
    );
    assert_eq!(enums["titledMulti"]["items"]["anyOf"][2]["title"], "Third Choice");

    // Resources, the template and subscriptions.
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources.len(), 3);
    assert!(resources.iter().all(|r| r.description.is_some()));
    let text = client.read_resource("test://static-text").await.unwrap();
    assert!(
        matches!(&text.contents[0], ResourceContents::Text(t) if t.text == "This is the content of the static text resource.")
    );
    let blob = client.read_resource("test://static-binary").await.unwrap();
    assert!(
        matches!(&blob.contents[0], ResourceContents::Blob(b) if b.blob == content::PNG_BASE64)
    );
    let templated = client.read_resource("test://template/123/data").await.unwrap();
    let ResourceContents::Text(t) = &templated.contents[0] else { panic!("{templated:?}") };
    let data: Value = serde_json::from_str(&t.text).unwrap();
    assert_eq!(data, json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"}));
    client.subscribe("test://watched-resource").await.unwrap();
    client.unsubscribe("test://watched-resource").await.unwrap();

    // Prompts and completions.
    let args = BTreeMap::from([
        ("arg1".to_owned(), "hello".to_owned()),
        ("arg2".to_owned(), "world".to_owned()),
    ]);
    let prompt = client.get_prompt("test_prompt_with_arguments", args).await.unwrap();
    assert_eq!(
        prompt.messages[0].content.as_text(),
        Some("Prompt with arguments: arg1='hello', arg2='world'")
    );
    let image = client.get_prompt("test_prompt_with_image", BTreeMap::new()).await.unwrap();
    assert_eq!(image.messages.len(), 2);
    let reference: Reference =
        serde_json::from_value(json!({"type": "ref/prompt", "name": "test_prompt_with_arguments"}))
            .unwrap();
    let completed = client.complete(reference, "arg1", "par").await.unwrap();
    assert_eq!(completed.completion.values, ["paris", "park", "party"]);

    let status = client.close().await.expect("the fixture exits");
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn tokio_fixture() {
    exercise(Runtime::Tokio).await;
}

#[tokio::test]
async fn smol_fixture() {
    exercise(Runtime::Smol).await;
}

#[tokio::test]
async fn blocking_fixture() {
    exercise(Runtime::Blocking).await;
}

#[test]
fn a_port_that_is_taken_is_refused_plainly_on_every_runtime() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    for runtime in ["tokio", "smol", "blocking"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_everything_server"))
            .args(["--runtime", runtime, "--port", &port])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{runtime}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let says = format!("cannot listen on 127.0.0.1:{port}");
        assert!(stderr.contains(&says), "{runtime}: {stderr}");
    }
}

#[test]
fn smol_serves_http_on_the_port_given() {
    use std::io::{Read, Write};
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_everything_server"))
        .args(["--runtime", "smol", "--port", &port.to_string()])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Up to 30 s for the fixture to listen; then `GET /health` answers 200.
    let mut answer = String::new();
    for _ in 0..600 {
        // A connect to a port nobody listens on can meet itself (the kernel may pick the
        // same port as its source): that is not the fixture listening.
        let socket = std::net::TcpStream::connect(("127.0.0.1", port));
        if let Some(mut socket) = socket.ok().filter(|s| s.local_addr().ok() != s.peer_addr().ok())
        {
            let request = format!(
                "GET /health HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\n\r\n"
            );
            socket.write_all(request.as_bytes()).unwrap();
            socket.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            let _ = socket.read_to_string(&mut answer);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    assert!(answer.contains(r#"{"status":"ok"}"#), "{answer:?}");
}
