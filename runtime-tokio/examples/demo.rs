//! A tour of zest-tokio's client against the fixture server (`tokio_stdio_server`, found
//! next to this binary and built with cargo if absent): handshake, listings, every tool but
//! `crash`, resources, the prompt, progress, a call cancelled mid-flight, and a sampling
//! request answered by a canned handler. Prints results and timings.
//!
//! `cargo run -p zest-tokio --example tokio_demo [--release]`

use std::collections::BTreeMap;
use std::error::Error;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::{CallToolResult, CreateMessageResult, ResourceContents, SamplingContent};
use zest_tokio::{Client, ClientApi, ClientOptions, StdioCommand};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

fn main() -> Result<()> {
    let server = fixture_server()?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(tour(server))
}

async fn tour(server: PathBuf) -> Result<()> {
    let start = Instant::now();
    let command = StdioCommand::new(&server).on_stderr(|line| println!("  [server stderr] {line}"));
    let options = ClientOptions::new("tokio_demo", env!("CARGO_PKG_VERSION")).handlers(sampler());
    let client = Client::spawn(command, options).await?;
    let n = client.negotiated();
    println!(
        "handshake with {} {} (protocol {}, pid {}) in {:.1?}",
        n.server_info.name,
        n.server_info.version,
        n.protocol_version.as_str(),
        client.pid(),
        start.elapsed()
    );

    let t = Instant::now();
    let tools = client.list_all_tools().await?;
    let resources = client.list_all_resources().await?;
    let templates = client.list_all_resource_templates().await?;
    let prompts = client.list_all_prompts().await?;
    println!("listed everything in {:.1?}:", t.elapsed());
    println!("  tools: {:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>());
    println!("  resources: {:?}", resources.iter().map(|r| &r.uri).collect::<Vec<_>>());
    println!("  templates: {:?}", templates.iter().map(|r| &r.uri_template).collect::<Vec<_>>());
    println!("  prompts: {:?}", prompts.iter().map(|p| &p.name).collect::<Vec<_>>());

    let calls = [
        ("echo", json!({"text": "hello from tokio_demo"})),
        ("add", json!({"a": 2, "b": 40})),
        ("fail", json!({"message": "this tool always fails"})),
        ("sample", json!({"prompt": "What is the Model Context Protocol?"})),
        ("long_running", json!({"steps": 3, "step_ms": 50})),
    ];
    for (name, args) in calls {
        let t = Instant::now();
        let result = client.call_tool(name, args).await?;
        println!("{name}: {} in {:.1?}", describe(&result), t.elapsed());
    }

    for uri in ["zest://readme", "zest://items/42"] {
        let t = Instant::now();
        let read = client.read_resource(uri).await?;
        let text = match &read.contents[0] {
            ResourceContents::Text(t) => t.text.clone(),
            other => format!("{other:?}"),
        };
        println!("read {uri}: {text:?} in {:.1?}", t.elapsed());
    }

    let t = Instant::now();
    let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    let greet = client.get_prompt("greet", args).await?;
    println!("prompt greet: {:?} in {:.1?}", greet.messages[0].content.as_text(), t.elapsed());

    let t = Instant::now();
    let args = json!({"steps": 5, "step_ms": 40});
    let result = client
        .call_tool_with_progress("long_running", args, |p| {
            println!("  progress {}/{}", p.progress, p.total.unwrap_or(f64::NAN));
        })
        .await?;
    println!("long_running with progress: {} in {:.1?}", describe(&result), t.elapsed());

    let t = Instant::now();
    let slow = client.call_tool("long_running", json!({"steps": 100, "step_ms": 100}));
    match tokio::time::timeout(Duration::from_millis(250), slow).await {
        Err(_) => println!("cancelled a 10 s long_running call after {:.1?}", t.elapsed()),
        Ok(outcome) => println!("the call was meant to be cancelled, but ended: {outcome:?}"),
    }
    // The server logs the aborted handler on stderr; give that line a moment to arrive.
    tokio::time::sleep(Duration::from_millis(50)).await;

    let t = Instant::now();
    let status = client.close().await?;
    println!("closed in {:.1?}: server exited with {status}", t.elapsed());
    println!("tour done in {:.1?}", start.elapsed());
    Ok(())
}

/// Answers sampling requests with a canned message naming what was asked.
fn sampler() -> AsyncClientHandlers {
    AsyncClientHandlers::default().on_sampling(|params| async move {
        let asked: Vec<_> = params
            .messages
            .iter()
            .flat_map(|m| m.content.as_slice())
            .filter_map(SamplingContent::as_text)
            .collect();
        println!("  [sampling handler] asked {asked:?}, max {} tokens", params.max_tokens);
        let answer = json!({
            "role": "assistant",
            "content": {"type": "text", "text": format!("(canned) you asked: {}", asked.join(" "))},
            "model": "tokio-demo-canned"
        });
        Ok(serde_json::from_value::<CreateMessageResult>(answer).expect("a valid result"))
    })
}

fn describe(result: &CallToolResult) -> String {
    let text: Vec<_> = result.content.iter().filter_map(|c| c.as_text()).collect();
    let kind = if result.is_error() { "error result" } else { "result" };
    format!("{kind} {:?}", text.join(" "))
}

/// The fixture server next to this binary, built with cargo first if it is not there.
fn fixture_server() -> Result<PathBuf> {
    let server = std::env::current_exe()?.with_file_name("tokio_stdio_server");
    if server.exists() {
        return Ok(server);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "-p", "zest-tokio", "--example", "tokio_stdio_server"]);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    println!("building the fixture server: {build:?}");
    let status = build.status()?;
    if !status.success() || !server.exists() {
        return Err(format!("building tokio_stdio_server failed ({status})").into());
    }
    Ok(server)
}
