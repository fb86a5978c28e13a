//! 2026-07-28 with the other SDKs, both ways (peers pinned in tests/peers; install with
//! scripts/install-peers): the TypeScript SDK v2 and Python SDK 2.x clients against every
//! runtime's fixture over stdio, calling a tool that asks the user and one that asks the
//! model through input-required rounds; and a zest client preferring 2026-07-28 against the
//! TypeScript SDK v2 server (stdio) and the Python SDK 2.x server (Streamable HTTP), whose
//! tools ask the same two ways.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use zest_conformance::Runtime;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::{CreateMessageResult, ElicitResult};
use zest_tokio::{Client, ClientApi, ClientOptions, StdioCommand};

/// Far above what any step here takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(30);

fn peers() -> PathBuf {
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers");
    let installed = peers.join("node_modules/@modelcontextprotocol/server").exists()
        && peers.join(".venv/bin/python").exists();
    assert!(installed, "the peers are missing: run scripts/install-peers");
    peers
}

/// Runs a peer client script against the fixture on `runtime` over stdio; its JSON line.
fn peer_client(program: &Path, script: &str, runtime: Runtime) -> Value {
    let output = Command::new(program)
        .arg(peers().join(script))
        .arg(env!("CARGO_BIN_EXE_everything_server"))
        .args(["--runtime", runtime.name(), "--stdio"])
        .stderr(Stdio::inherit())
        .output()
        .expect("the peer client runs");
    let line = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{script} against {}: {line}", runtime.name());
    serde_json::from_str(line.lines().last().unwrap_or_default()).expect("one JSON line")
}

#[test]
fn the_typescript_sdk_v2_client_answers_a_zest_servers_round_on_every_runtime() {
    for runtime in Runtime::ALL {
        let seen = peer_client(Path::new("node"), "ts_v2_client.mjs", runtime);
        assert_eq!(seen["era"], "modern", "{}: {seen}", runtime.name());
        assert_eq!(seen["texts"], json!(["Hello, Ada!", "Paris"]), "{}: {seen}", runtime.name());
    }
}

#[test]
fn the_python_sdk_2_client_answers_a_zest_servers_round_on_every_runtime() {
    let python = peers().join(".venv/bin/python");
    for runtime in Runtime::ALL {
        let seen = peer_client(&python, "py_v2_client.py", runtime);
        assert_eq!(seen["revision"], "2026-07-28", "{}: {seen}", runtime.name());
        assert_eq!(seen["texts"], json!(["Hello, Ada!", "Paris"]), "{}: {seen}", runtime.name());
    }
}

/// A zest-tokio client preferring 2026-07-28, whose user is called Ada and whose model
/// says Paris.
fn modern_options() -> ClientOptions {
    let handlers = AsyncClientHandlers::default()
        .on_elicitation(|_| async move {
            let answer = json!({"action": "accept", "content": {"name": "Ada"}});
            Ok(serde_json::from_value::<ElicitResult>(answer).unwrap())
        })
        .on_sampling(|_| async move {
            let answer = json!({"role": "assistant", "model": "zest",
                "content": {"type": "text", "text": "Paris"}});
            Ok(serde_json::from_value::<CreateMessageResult>(answer).unwrap())
        });
    ClientOptions::new("interop-2026", "0").handlers(handlers).with_config(|c| c.prefer_modern())
}

async fn ask(client: &Client, tool: &str) -> String {
    let call = client.call_tool(tool, json!({}));
    let result = tokio::time::timeout(HANG, call).await.expect("answered in time").unwrap();
    result.content[0].as_text().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_zest_client_answers_the_typescript_sdk_v2_servers_round() {
    let command = StdioCommand::new("node")
        .arg(peers().join("ts_v2_server.mjs"))
        .shutdown_grace(Duration::from_millis(500));
    let client = Client::spawn(command, modern_options()).await.expect("ts_v2_server starts");
    assert_eq!(client.negotiated().protocol_version.as_str(), "2026-07-28");
    assert_eq!(client.negotiated().server_info.name, "ts-v2");
    let echoed = client.call_tool("echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(echoed.content[0].as_text(), Some("echo: hi"));
    assert_eq!(ask(&client, "ask_name").await, "hello Ada");
    assert_eq!(ask(&client, "ask_model").await, "model says Paris");
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_zest_client_answers_the_python_sdk_2_servers_round_over_http() {
    let mut server = Command::new(peers().join(".venv/bin/python"))
        .arg(peers().join("py_server.py"))
        .args(["--port", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("py_server.py starts");
    let stdout = server.stdout.take().expect("piped");
    let url = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        line.trim().to_owned()
    });
    let url = tokio::time::timeout(HANG, url).await.unwrap().unwrap();
    let client = Client::connect(&url, modern_options()).await.expect("connects");
    assert_eq!(client.negotiated().protocol_version.as_str(), "2026-07-28");
    assert_eq!(ask(&client, "ask_name").await, "hello Ada");
    assert_eq!(ask(&client, "ask_model").await, "model says Paris");
    client.close().await.unwrap();
    let _ = server.kill();
    let _ = server.wait();
}
