//! A tour of zest-blocking against the fixture server over stdio:
//! `cargo run --release -p zest-blocking --example blocking_demo [server-binary]`.
//!
//! Finds `blocking_stdio_server` next to this binary (building it with cargo if absent),
//! then: handshake, lists, every tool but `crash`, resources, prompt, progress, a
//! cancellation mid-flight, and a sampling request answered by a canned handler.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;
use zest_blocking::core::api::ProgressFn;
use zest_blocking::core::error::RequestError;
use zest_blocking::core::handler::SyncClientHandlers;
use zest_blocking::core::RequestOptions;
use zest_blocking::schema::methods::CallTool;
use zest_blocking::schema::{
    CallToolParams, CallToolResult, CreateMessageResult, ResourceContents, Role, SamplingContent,
};
use zest_blocking::{CallError, Client, ClientApi, ClientOptions, StdioCommand};

fn main() -> Result<(), Box<dyn Error>> {
    let server = match std::env::args_os().nth(1) {
        Some(path) => PathBuf::from(path),
        None => fixture_server()?,
    };
    println!("server: {}", server.display());

    let handlers = SyncClientHandlers::default().on_sampling(|params| {
        let asked = params.messages.first().and_then(|m| m.content.as_slice().first().cloned());
        let asked = asked.as_ref().and_then(SamplingContent::as_text).unwrap_or("").to_owned();
        Ok(CreateMessageResult {
            role: Role::Assistant,
            content: SamplingContent::text(format!("canned answer to {asked:?}")).into(),
            model: "demo-canned-model".into(),
            stop_reason: None,
            meta: None,
            extra: Default::default(),
        })
    });
    let t = Instant::now();
    let client = Client::spawn(
        StdioCommand::new(&server),
        ClientOptions::new("blocking-demo", "1.0").handlers(handlers),
    )?;
    let n = client.negotiated();
    println!(
        "handshake: {} {} speaking {} ({})",
        n.server_info.name,
        n.server_info.version,
        n.protocol_version,
        ms(t)
    );

    let t = Instant::now();
    let tools = client.list_all_tools()?;
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    println!("tools: {} ({})", names.join(", "), ms(t));
    let resources = client.list_all_resources()?;
    let uris: Vec<_> = resources.iter().map(|r| r.uri.as_str()).collect();
    println!("resources: {}", uris.join(", "));
    let templates = client.list_all_resource_templates()?;
    let uris: Vec<_> = templates.iter().map(|r| r.uri_template.as_str()).collect();
    println!("templates: {}", uris.join(", "));
    let prompts = client.list_all_prompts()?;
    let names: Vec<_> = prompts.iter().map(|p| p.name.as_str()).collect();
    println!("prompts: {}", names.join(", "));

    show(&client, "echo", json!({"text": "hello from zest-blocking"}))?;
    show(&client, "add", json!({"a": 2, "b": 40}))?;
    show(&client, "fail", json!({"message": "this tool always fails"}))?;
    show(&client, "sample", json!({"prompt": "what is MCP?"}))?;

    let t = Instant::now();
    let result = client.call_tool_with_progress(
        "long_running",
        json!({"steps": 4, "step_ms": 50}),
        |p| println!("  progress {}/{}", p.progress, p.total.unwrap_or(0.0)),
    )?;
    println!("long_running -> {} ({})", text(&result), ms(t));

    let t = Instant::now();
    let readme = client.read_resource("zest://readme")?;
    println!("read zest://readme -> {:?} ({})", contents(&readme.contents), ms(t));
    let item = client.read_resource("zest://items/42")?;
    println!("read zest://items/42 -> {:?}", contents(&item.contents));
    let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    let prompt = client.get_prompt("greet", args)?;
    let first = prompt.messages.first().and_then(|m| m.content.as_text()).unwrap_or("");
    println!("prompt greet(name=Ada) -> {first:?}");

    let t = Instant::now();
    let params: CallToolParams = serde_json::from_value(
        json!({"name": "long_running", "arguments": {"steps": 100, "step_ms": 100}}),
    )?;
    let (first_step, stepped) = mpsc::channel();
    let on_progress: ProgressFn = Box::new(move |p| {
        let _ = first_step.send(p.progress);
    });
    let call = client.start_with_progress::<CallTool>(
        params,
        RequestOptions::with_progress(),
        Some(on_progress),
    );
    let step = stepped.recv_timeout(Duration::from_secs(10))?;
    println!("long_running (100 steps of 100 ms) reached step {step}; cancelling");
    call.cancel();
    match call.wait() {
        Err(CallError::Request(RequestError::Cancelled)) => {
            println!("long_running cancelled after {}", ms(t))
        }
        other => println!("long_running cancel: unexpected outcome {other:?}"),
    }

    let t = Instant::now();
    let mut calls = 0;
    while t.elapsed() < Duration::from_millis(500) {
        client.call_tool("echo", json!({"text": "x"}))?;
        calls += 1;
    }
    let rate = calls as f64 / t.elapsed().as_secs_f64();
    println!("sequential echo: {calls} calls in {} ({rate:.0} calls/s)", ms(t));

    let t = Instant::now();
    let status = client.close()?;
    println!("closed: server exited with {status} ({})", ms(t));
    Ok(())
}

fn show(client: &Client, tool: &str, args: serde_json::Value) -> Result<(), CallError> {
    let t = Instant::now();
    let result = client.call_tool(tool, args.clone())?;
    let flag = if result.is_error() { " [isError]" } else { "" };
    println!("{tool}({args}) -> {:?}{flag} ({})", text(&result), ms(t));
    Ok(())
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join(" ")
}

fn contents(items: &[ResourceContents]) -> Vec<String> {
    items
        .iter()
        .map(|c| match c {
            ResourceContents::Text(t) => t.text.clone(),
            other => format!("{other:?}"),
        })
        .collect()
}

fn ms(since: Instant) -> String {
    format!("{:.2} ms", since.elapsed().as_secs_f64() * 1000.0)
}

/// The fixture next to this binary; built with cargo (same profile) if it is not there yet.
fn fixture_server() -> Result<PathBuf, Box<dyn Error>> {
    let path = std::env::current_exe()?.with_file_name("blocking_stdio_server");
    if path.exists() {
        return Ok(path);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "-p", "zest-blocking", "--example", "blocking_stdio_server"]);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    println!("building the fixture server: {build:?}");
    let status = build.current_dir(env!("CARGO_MANIFEST_DIR")).status()?;
    if !status.success() || !path.exists() {
        return Err(format!("building the fixture server failed ({status})").into());
    }
    Ok(path)
}
