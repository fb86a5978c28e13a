//! A tour of zest-smol's client against the fixture server (`smol_stdio_server`).
//!
//! Spawns the fixture next to this binary (building it with cargo if it is not there), then:
//! handshake, list everything, call each tool but `crash`, read a resource and a template
//! item, get a prompt, follow progress, cancel a call mid-flight by dropping its future, and
//! answer the server's sampling request with a canned handler. Prints results and timings.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use smol::future::FutureExt as _;
use zest_smol::schema::{CallToolResult, CreateMessageResult, Role, SamplingContent, StopReason};
use zest_smol::{AsyncClientHandlers, Client, ClientApi, ClientOptions, StdioCommand};

fn main() -> Result<(), Box<dyn Error>> {
    let server = fixture()?;
    smol::block_on(tour(server))
}

/// The fixture binary beside ours; built with cargo (same profile) when missing.
fn fixture() -> Result<PathBuf, Box<dyn Error>> {
    let path = std::env::current_exe()?.with_file_name("smol_stdio_server");
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "-p", "zest-smol", "--example", "smol_stdio_server"]);
        if !cfg!(debug_assertions) {
            build.arg("--release");
        }
        eprintln!("building the fixture server: {build:?}");
        if !build.status()?.success() || !path.exists() {
            return Err(format!("could not build {}", path.display()).into());
        }
    }
    Ok(path)
}

async fn tour(server: PathBuf) -> Result<(), Box<dyn Error>> {
    let handlers = AsyncClientHandlers::default().on_sampling(|params| async move {
        let asked: Vec<String> = params
            .messages
            .iter()
            .flat_map(|m| {
                m.content.as_slice().iter().filter_map(|c| c.as_text()).map(str::to_owned)
            })
            .collect();
        Ok(CreateMessageResult {
            role: Role::Assistant,
            content: SamplingContent::text(format!("a canned answer to {:?}", asked.join(" ")))
                .into(),
            model: "canned-model-1".into(),
            stop_reason: Some(StopReason::EndTurn),
            meta: None,
            extra: Default::default(),
        })
    });
    let options = ClientOptions::new("smol-demo", env!("CARGO_PKG_VERSION")).handlers(handlers);

    let t = Instant::now();
    let client = Client::spawn(StdioCommand::new(&server), options).await?;
    let n = client.negotiated();
    println!(
        "handshake with {} {} (protocol {}, pid {}) in {:?}",
        n.server_info.name,
        n.server_info.version,
        n.protocol_version,
        client.pid(),
        t.elapsed()
    );

    let t = Instant::now();
    let tools = client.list_all_tools().await?;
    let resources = client.list_all_resources().await?;
    let templates = client.list_all_resource_templates().await?;
    let prompts = client.list_all_prompts().await?;
    println!("listed in {:?}:", t.elapsed());
    println!("  tools:     {}", names(tools.iter().map(|t| t.name.as_str())));
    println!("  resources: {}", names(resources.iter().map(|r| r.uri.as_str())));
    println!("  templates: {}", names(templates.iter().map(|t| t.uri_template.as_str())));
    println!("  prompts:   {}", names(prompts.iter().map(|p| p.name.as_str())));

    let calls = [
        ("echo", json!({"text": "hello from smol"})),
        ("add", json!({"a": 2, "b": 40})),
        ("add", json!({"a": 0.5, "b": 0.25})),
        ("fail", json!({"message": "this tool always fails"})),
        ("sample", json!({"prompt": "What is the capital of France?"})),
    ];
    for (name, args) in calls {
        let t = Instant::now();
        let result = client.call_tool(name, args.clone()).await?;
        println!("call {name} {args} -> {} in {:?}", show(&result), t.elapsed());
    }

    let t = Instant::now();
    let readme = client.read_resource("zest://readme").await?;
    let item = client.read_resource("zest://items/42").await?;
    println!("read zest://readme -> {:?} in {:?}", text_of(&readme.contents), t.elapsed());
    println!("read zest://items/42 -> {:?}", text_of(&item.contents));

    let t = Instant::now();
    let args = BTreeMap::from([("name".to_owned(), "smol".to_owned())]);
    let greeting = client.get_prompt("greet", args).await?;
    let text: Vec<_> = greeting.messages.iter().filter_map(|m| m.content.as_text()).collect();
    println!("prompt greet(name=smol) -> {text:?} in {:?}", t.elapsed());

    let t = Instant::now();
    let result = client
        .call_tool_with_progress("long_running", json!({"steps": 4, "step_ms": 50}), |p| {
            println!("  progress {}/{}", p.progress, p.total.unwrap_or(f64::NAN));
        })
        .await?;
    println!("call long_running(4 steps) -> {} in {:?}", show(&result), t.elapsed());

    let t = Instant::now();
    let long = client.call_tool("long_running", json!({"steps": 100, "step_ms": 100}));
    let outcome = async { Some(long.await) }.or(async {
        smol::Timer::after(Duration::from_millis(250)).await;
        None
    });
    match outcome.await {
        Some(done) => println!("long_running finished before we could cancel it: {done:?}"),
        None => println!(
            "cancelled long_running (100 steps) by dropping its future after {:?}",
            t.elapsed()
        ),
    }
    let t = Instant::now();
    client.ping().await?;
    println!("ping after the cancel -> ok in {:?}", t.elapsed());

    let t = Instant::now();
    let status = client.close().await?;
    println!("closed: server exited with {status} in {:?}", t.elapsed());
    Ok(())
}

fn names<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn show(result: &CallToolResult) -> String {
    let text: Vec<_> = result.content.iter().filter_map(|c| c.as_text()).collect();
    let flag = if result.is_error() { " (isError)" } else { "" };
    format!("{:?}{flag}", text.join(""))
}

fn text_of(contents: &[zest_smol::schema::ResourceContents]) -> Vec<String> {
    contents
        .iter()
        .map(|c| match c {
            zest_smol::schema::ResourceContents::Text(t) => t.text.clone(),
            other => format!("{other:?}"),
        })
        .collect()
}
