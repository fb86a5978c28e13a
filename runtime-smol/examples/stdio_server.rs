//! The fixture MCP server of docs/runtime-contract.md, served over stdio with zest-smol.
//!
//! Tools `echo`, `add`, `long_running`, `sample`, `fail`, `crash`; resource `zest://readme`;
//! template `zest://items/{id}`; prompt `greet`. Flags: `--banner` (two non-JSON lines on
//! stdout first), `--giant-line` (one 10 MiB line of `x` first), `--linger` (stay alive after
//! stdin ends). Logs go to stderr only.

use std::io::Write as _;
use std::time::Duration;

use serde_json::{json, Map, Value};
use zest_smol::core::jsonrpc::{codes, ErrorObject};
use zest_smol::core::server::ServerConfig;
use zest_smol::schema::{
    CallToolParams, CallToolResult, CreateMessageParams, GetPromptResult, Prompt,
    ReadResourceResult, Resource, ResourceTemplate, Role, SamplingContent, SamplingMessage, Tool,
};
use zest_smol::{serve_stdio, PeerApi, Registry, RequestContext};

fn main() {
    let flags: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| flags.iter().any(|f| f == flag);
    let mut stdout = std::io::stdout().lock();
    if has("--banner") {
        writeln!(stdout, "zest-smol fixture server starting").expect("stdout is writable");
        writeln!(stdout, "(this banner is not JSON-RPC)").expect("stdout is writable");
    }
    if has("--giant-line") {
        stdout.write_all(&vec![b'x'; 10 * 1024 * 1024]).expect("stdout is writable");
        stdout.write_all(b"\n").expect("stdout is writable");
    }
    stdout.flush().expect("stdout is writable");
    drop(stdout);

    let config = ServerConfig::new("zest-smol-fixture", env!("CARGO_PKG_VERSION"));
    let reason = smol::block_on(serve_stdio(config, registry()));
    eprintln!("fixture: session ended: {reason}");
    if has("--linger") {
        eprintln!("fixture: lingering");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

fn registry() -> Registry {
    let mut r = Registry::default();
    r.raw_tool(
        Tool::new(
            "echo",
            "Returns the text it is given",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        ),
        |_ctx, p| async move { Ok(CallToolResult::text(str_arg(&p, "text"))) },
    );
    r.raw_tool(
        Tool::new(
            "add",
            "Adds two numbers",
            json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            }),
        ),
        |_ctx, p| async move {
            let sum = num_arg(&p, "a").unwrap_or(0.0) + num_arg(&p, "b").unwrap_or(0.0);
            let text = if sum.fract() == 0.0 && sum.abs() < 9.0e15 {
                format!("{}", sum as i64)
            } else {
                sum.to_string()
            };
            Ok(CallToolResult::text(text))
        },
    );
    r.raw_tool(
        Tool::new(
            "long_running",
            "Reports progress once per step; cancellable",
            json!({
                "type": "object",
                "properties": {
                    "steps": {"type": "integer", "minimum": 0, "default": 5},
                    "step_ms": {"type": "integer", "minimum": 0, "default": 100}
                }
            }),
        ),
        long_running,
    );
    r.raw_tool(
        Tool::new(
            "sample",
            "Asks the client's model to answer a prompt",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
        ),
        sample,
    );
    r.raw_tool(
        Tool::new(
            "fail",
            "Always fails with the given message",
            json!({"type": "object", "properties": {"message": {"type": "string"}}}),
        ),
        |_ctx, p| async move { Ok(CallToolResult::error_text(str_arg(&p, "message"))) },
    );
    r.raw_tool(
        Tool::new("crash", "Exits the server process with status 3", json!({"type": "object"})),
        |_ctx, _p| async move {
            eprintln!("fixture: crashing on request");
            std::process::exit(3)
        },
    );
    r.resource(
        Resource::new("zest://readme", "readme").with_mime_type("text/plain"),
        |_ctx, p| async move {
            let text = "zest fixture server: tools echo, add, long_running, sample, fail, crash";
            Ok(ReadResourceResult::text(p.uri, Some("text/plain"), text))
        },
    );
    r.resource_template(
        ResourceTemplate::new("zest://items/{id}", "item"),
        |_ctx, p, vars| async move {
            let id = vars.get("id").cloned().unwrap_or_default();
            Ok(ReadResourceResult::text(p.uri, Some("text/plain"), format!("item {id}")))
        },
    );
    r.raw_prompt(
        Prompt::new("greet", "Greets someone by name").with_argument("name", true),
        |_ctx, p| async move {
            let name =
                p.arguments.as_ref().and_then(|a| a.get("name")).cloned().unwrap_or_default();
            Ok(GetPromptResult::user_text(format!("Hello, {name}!")))
        },
    );
    r
}

async fn long_running(
    ctx: RequestContext,
    p: CallToolParams,
) -> Result<CallToolResult, ErrorObject> {
    let steps = num_arg(&p, "steps").unwrap_or(5.0) as u64;
    let step_ms = num_arg(&p, "step_ms").unwrap_or(100.0) as u64;
    for step in 1..=steps {
        smol::Timer::after(Duration::from_millis(step_ms)).await;
        // Fails only if the session closed; the task is about to be dropped then.
        let _ = ctx.progress(step as f64, Some(steps as f64), None).await;
    }
    Ok(CallToolResult::text(format!("done after {steps} steps")))
}

async fn sample(ctx: RequestContext, p: CallToolParams) -> Result<CallToolResult, ErrorObject> {
    let prompt = str_arg(&p, "prompt");
    let params = CreateMessageParams {
        messages: vec![SamplingMessage::new(Role::User, SamplingContent::text(prompt))],
        max_tokens: 100,
        ..Default::default()
    };
    let result = ctx
        .create_message(params)
        .await
        .map_err(|e| ErrorObject::new(codes::INTERNAL_ERROR, format!("sampling failed: {e}")))?;
    let text: Vec<&str> = result.content.as_slice().iter().filter_map(|c| c.as_text()).collect();
    Ok(CallToolResult::text(text.join("")))
}

fn args(p: &CallToolParams) -> Option<&Map<String, Value>> {
    p.arguments.as_ref()
}

fn str_arg(p: &CallToolParams, name: &str) -> String {
    args(p).and_then(|a| a.get(name)).and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn num_arg(p: &CallToolParams, name: &str) -> Option<f64> {
    args(p).and_then(|a| a.get(name)).and_then(Value::as_f64)
}
