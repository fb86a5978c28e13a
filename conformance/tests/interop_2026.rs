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

/// The Python SDK server (tests/peers/py_server.py) on a free port, and its URL (waited for
/// at most [`HANG`]).
fn py_server() -> (std::process::Child, String) {
    let mut server = Command::new(peers().join(".venv/bin/python"))
        .arg(peers().join("py_server.py"))
        .args(["--port", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("py_server.py starts");
    let stdout = server.stdout.take().expect("piped");
    let (tx, url) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line.trim().to_owned());
    });
    let url = url.recv_timeout(HANG).expect("py_server.py prints its URL");
    (server, url)
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
    let (mut server, url) = tokio::task::spawn_blocking(py_server).await.unwrap();
    let client = Client::connect(&url, modern_options()).await.expect("connects");
    assert_eq!(client.negotiated().protocol_version.as_str(), "2026-07-28");
    assert_eq!(ask(&client, "ask_name").await, "hello Ada");
    assert_eq!(ask(&client, "ask_model").await, "model says Paris");
    client.close().await.unwrap();
    let _ = server.kill();
    let _ = server.wait();
}

/// The answers every zest client here gives: Ada's name, the model's Paris.
fn elicited() -> ElicitResult {
    serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}})).unwrap()
}

fn sampled() -> CreateMessageResult {
    serde_json::from_value(json!({"role": "assistant", "model": "zest",
        "content": {"type": "text", "text": "Paris"}}))
    .unwrap()
}

fn smol_options() -> zest_smol::ClientOptions {
    let handlers = AsyncClientHandlers::default()
        .on_elicitation(|_| async move { Ok(elicited()) })
        .on_sampling(|_| async move { Ok(sampled()) });
    zest_smol::ClientOptions::new("interop-2026", "0")
        .handlers(handlers)
        .with_config(|c| c.prefer_modern())
}

fn blocking_options() -> zest_blocking::ClientOptions {
    let handlers = zest_blocking::core::handler::SyncClientHandlers::default()
        .on_elicitation(|_| Ok(elicited()))
        .on_sampling(|_| Ok(sampled()));
    zest_blocking::ClientOptions::new("interop-2026", "0")
        .handlers(handlers)
        .with_config(|c| c.prefer_modern())
}

fn text_of(result: &zest_tokio::schema::CallToolResult) -> String {
    result.content[0].as_text().unwrap_or_default().to_owned()
}

/// zest-smol's and zest-blocking's clients answer the eliciting and sampling rounds of the
/// server reached by `smol` and `blocking` (each connects its own client).
fn both_ask(
    smol_client: impl std::future::Future<Output = zest_smol::Client>,
    blocking_client: impl FnOnce() -> zest_blocking::Client,
) {
    use zest_blocking::ClientApi as _;
    let expected = ["hello Ada", "model says Paris"];
    smol::block_on(async {
        let client = smol_client.await;
        assert_eq!(client.negotiated().protocol_version.as_str(), "2026-07-28", "smol");
        for (tool, want) in ["ask_name", "ask_model"].into_iter().zip(expected) {
            let result = ClientApi::call_tool(&client, tool, json!({})).await.unwrap();
            assert_eq!(text_of(&result), want, "smol, {tool}");
        }
        let _ = client.close().await;
    });
    let client = blocking_client();
    assert_eq!(client.negotiated().protocol_version.as_str(), "2026-07-28", "blocking");
    for (tool, want) in ["ask_name", "ask_model"].into_iter().zip(expected) {
        let result = client.call_tool(tool, json!({})).unwrap();
        assert_eq!(text_of(&result), want, "blocking, {tool}");
    }
    let _ = client.close();
}

#[test]
fn smol_and_blocking_clients_answer_the_typescript_sdk_v2_servers_rounds() {
    let script = peers().join("ts_v2_server.mjs");
    let smol_command = StdioCommand::new("node").arg(&script);
    let blocking_command = StdioCommand::new("node").arg(&script);
    both_ask(
        async { zest_smol::Client::spawn(smol_command, smol_options()).await.unwrap() },
        || zest_blocking::Client::spawn(blocking_command, blocking_options()).unwrap(),
    );
}

#[test]
fn smol_and_blocking_clients_answer_the_python_sdk_2_servers_rounds_over_http() {
    let (mut server, url) = py_server();
    both_ask(async { zest_smol::Client::connect(&url, smol_options()).await.unwrap() }, || {
        zest_blocking::Client::connect(&url, blocking_options()).unwrap()
    });
    let _ = server.kill();
    let _ = server.wait();
}
