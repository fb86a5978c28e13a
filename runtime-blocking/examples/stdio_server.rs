//! The fixture server every runtime's tests and demo use (docs/runtime-contract.md).
//!
//! Tools `echo`, `add`, `long_running`, `sample`, `fail`, `crash`; resource `zest://readme`;
//! template `zest://items/{id}`; prompt `greet`. Flags: `--banner` (two non-JSON lines on
//! stdout first), `--giant-line` (one 10 MiB line on stdout first), `--linger` (stay alive
//! after stdin ends). Logs go to stderr only.

use std::io::Write;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use zest_blocking::core::jsonrpc::ErrorObject;
use zest_blocking::core::server::ServerConfig;
use zest_blocking::schema::{
    CallToolResult, CreateMessageParams, GetPromptResult, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, Role, SamplingContent, SamplingMessage, Tool,
};
use zest_blocking::{serve_stdio, PeerApi, Registry, RequestContext};

fn main() {
    let flags: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| flags.iter().any(|f| f == flag);
    let mut stdout = std::io::stdout().lock();
    if has("--banner") {
        let _ = writeln!(stdout, "fixture server starting up");
        let _ = writeln!(stdout, "this line is not JSON either");
    }
    if has("--giant-line") {
        let _ = stdout.write_all(&vec![b'x'; 10 * 1024 * 1024]);
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
    drop(stdout);

    eprintln!("fixture: serving on stdio (pid {})", std::process::id());
    let reason = serve_stdio(ServerConfig::new("zest-fixture", "1.0.0"), registry());
    eprintln!("fixture: session closed: {reason}");
    if has("--linger") {
        eprintln!("fixture: lingering");
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
}

fn registry() -> Registry {
    let mut r = Registry::default();
    r.raw_tool(
        Tool::new(
            "echo",
            "Returns its text",
            object(json!({"text": {"type": "string"}}), &["text"]),
        ),
        |_, p| Ok(CallToolResult::text(str_arg(&p.arguments, "text"))),
    );
    r.raw_tool(
        Tool::new(
            "add",
            "Adds two numbers",
            object(json!({"a": {"type": "number"}, "b": {"type": "number"}}), &["a", "b"]),
        ),
        |_, p| {
            let sum = num_arg(&p.arguments, "a") + num_arg(&p.arguments, "b");
            Ok(CallToolResult::text(format_number(sum)))
        },
    );
    r.raw_tool(
        Tool::new(
            "long_running",
            "Reports progress once per step; cancellable",
            object(
                json!({
                    "steps": {"type": "integer", "minimum": 1, "default": 5},
                    "step_ms": {"type": "integer", "minimum": 0, "default": 100}
                }),
                &[],
            ),
        ),
        long_running,
    );
    r.raw_tool(
        Tool::new(
            "sample",
            "Asks the client's model and returns its text",
            object(json!({"prompt": {"type": "string"}}), &["prompt"]),
        ),
        sample,
    );
    r.raw_tool(
        Tool::new(
            "fail",
            "Always fails with the message",
            object(json!({"message": {"type": "string"}}), &[]),
        ),
        |_, p| Ok(CallToolResult::error_text(str_arg(&p.arguments, "message"))),
    );
    r.raw_tool(
        Tool::new("crash", "Exits the process with status 3", object(json!({}), &[])),
        |_, _| {
            eprintln!("fixture: crashing on request");
            std::process::exit(3)
        },
    );
    r.resource(Resource::new("zest://readme", "readme").with_mime_type("text/plain"), |_, p| {
        Ok(ReadResourceResult::text(p.uri, Some("text/plain"), README))
    });
    r.resource_template(ResourceTemplate::new("zest://items/{id}", "item"), |_, p, vars| {
        let id = vars.get("id").cloned().unwrap_or_default();
        Ok(ReadResourceResult::text(p.uri, Some("text/plain"), format!("item {id}")))
    });
    r.raw_prompt(Prompt::new("greet", "Greets someone").with_argument("name", true), |_, p| {
        let name = p.arguments.as_ref().and_then(|a| a.get("name")).cloned().unwrap_or_default();
        Ok(GetPromptResult::user_text(format!("Hello, {name}!")))
    });
    r
}

const README: &str = "zest fixture server: tools echo, add, long_running, sample, fail, crash.\n";

fn long_running(
    ctx: &RequestContext,
    p: zest_blocking::schema::CallToolParams,
) -> Result<CallToolResult, ErrorObject> {
    let steps = num_arg_or(&p.arguments, "steps", 5.0).max(1.0) as u64;
    let step = Duration::from_millis(num_arg_or(&p.arguments, "step_ms", 100.0).max(0.0) as u64);
    for i in 1..=steps {
        let end = Instant::now() + step;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            if ctx.is_cancelled() {
                return Ok(CallToolResult::error_text(format!("cancelled at step {i}")));
            }
            thread::sleep(left.min(Duration::from_millis(5)));
        }
        let _ = ctx.progress(i as f64, Some(steps as f64), Some(format!("step {i} of {steps}")));
    }
    Ok(CallToolResult::text(format!("done after {steps} steps")))
}

fn sample(
    ctx: &RequestContext,
    p: zest_blocking::schema::CallToolParams,
) -> Result<CallToolResult, ErrorObject> {
    let prompt = str_arg(&p.arguments, "prompt");
    let params = CreateMessageParams {
        messages: vec![SamplingMessage::new(Role::User, SamplingContent::text(prompt))],
        max_tokens: 100,
        ..Default::default()
    };
    match ctx.create_message(params) {
        Ok(result) => {
            let text = result.content.as_slice().iter().find_map(|c| c.as_text()).unwrap_or("");
            Ok(CallToolResult::text(text))
        }
        Err(e) => Ok(CallToolResult::error_text(format!("sampling failed: {e}"))),
    }
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

fn str_arg(args: &Option<Map<String, Value>>, key: &str) -> String {
    args.as_ref().and_then(|a| a.get(key)).and_then(Value::as_str).unwrap_or("").to_owned()
}

fn num_arg(args: &Option<Map<String, Value>>, key: &str) -> f64 {
    num_arg_or(args, key, 0.0)
}

fn num_arg_or(args: &Option<Map<String, Value>>, key: &str, default: f64) -> f64 {
    args.as_ref().and_then(|a| a.get(key)).and_then(Value::as_f64).unwrap_or(default)
}

/// `42` for integers, `0.5` otherwise.
fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}
