//! The fixture server's tools, resource, template and prompt (docs/runtime-contract.md),
//! shared by the stdio and HTTP server examples.

use std::io::Write;
use std::time::Duration;

use serde_json::{json, Value};
use zest_tokio::core::jsonrpc::{codes, ErrorObject};
use zest_tokio::schema::{
    CallToolParams, CallToolResult, CreateMessageParams, GetPromptResult, Prompt,
    ReadResourceResult, Resource, ResourceTemplate, Role, SamplingContent, SamplingMessage, Tool,
};
use zest_tokio::{PeerApi, Registry};

/// Writes one line to stderr; a closed stderr is ignored (so `--linger` outlives its parent).
pub(crate) fn log(line: &str) {
    let _ = writeln!(std::io::stderr(), "zest tokio fixture: {line}");
}

/// The fixture: tools `echo`, `add`, `long_running`, `sample`, `fail`, `crash`; resource
/// `zest://readme`; template `zest://items/{id}`; prompt `greet`.
pub(crate) fn registry() -> Registry {
    let mut r = Registry::default();
    let text_arg = |name: &str| json!({"type": "object", "properties": {name: {"type": "string"}}, "required": [name]});
    r.tool(
        Tool::new("echo", "Returns the text it is given", text_arg("text")),
        |_, p| async move { Ok(CallToolResult::text(str_arg(&p, "text"))) },
    );
    let numbers = json!({
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"]
    });
    r.tool(Tool::new("add", "Adds two numbers", numbers), |_, p| async move {
        let sum = num_arg(&p, "a").unwrap_or(0.0) + num_arg(&p, "b").unwrap_or(0.0);
        Ok(CallToolResult::text(format_number(sum)))
    });
    let steps = json!({
        "type": "object",
        "properties": {
            "steps": {"type": "integer", "minimum": 0, "default": 5},
            "step_ms": {"type": "integer", "minimum": 0, "default": 100}
        }
    });
    let long = Tool::new("long_running", "Sleeps in steps, reporting progress", steps);
    r.tool(long, |ctx, p| async move {
        let steps = num_arg(&p, "steps").unwrap_or(5.0) as u64;
        let step = Duration::from_millis(num_arg(&p, "step_ms").unwrap_or(100.0) as u64);
        // Says on stderr when the task is aborted (the client cancelled) before finishing.
        let mut watch = AbortWatch { id: ctx.request_id().to_string(), step: 0, done: false };
        for i in 1..=steps {
            tokio::time::sleep(step).await;
            watch.step = i;
            if let Err(e) = ctx.progress(i as f64, Some(steps as f64), None).await {
                return Err(ErrorObject::new(codes::INTERNAL_ERROR, e.to_string()));
            }
        }
        watch.done = true;
        Ok(CallToolResult::text(format!("done after {steps} steps")))
    });
    let sample = Tool::new("sample", "Asks the client's model", text_arg("prompt"));
    r.tool(sample, |ctx, p| async move {
        let prompt = str_arg(&p, "prompt");
        let message = SamplingMessage::new(Role::User, SamplingContent::text(prompt));
        let params =
            CreateMessageParams { messages: vec![message], max_tokens: 100, ..Default::default() };
        match ctx.create_message(params).await {
            Ok(result) => {
                let text: String =
                    result.content.as_slice().iter().filter_map(|c| c.as_text()).collect();
                Ok(CallToolResult::text(text))
            }
            Err(e) => Ok(CallToolResult::error_text(format!("sampling failed: {e}"))),
        }
    });
    r.tool(Tool::new("fail", "Returns an error result", text_arg("message")), |_, p| async move {
        Ok(CallToolResult::error_text(str_arg(&p, "message")))
    });
    let crash = Tool::new("crash", "Exits the process with status 3", json!({"type": "object"}));
    r.tool(crash, |_, _| async move {
        log("crashing on request");
        std::process::exit(3)
    });
    let readme = Resource::new("zest://readme", "readme").with_mime_type("text/plain");
    r.resource(readme, |_, p| async move {
        let text = "The zest fixture server: tools, a resource, a template and a prompt.";
        Ok(ReadResourceResult::text(p.uri, Some("text/plain"), text))
    });
    r.resource_template(
        ResourceTemplate::new("zest://items/{id}", "item"),
        |_, p, vars| async move {
            let id = vars.get("id").cloned().unwrap_or_default();
            Ok(ReadResourceResult::text(p.uri, Some("text/plain"), format!("item {id}")))
        },
    );
    let greet = Prompt::new("greet", "Greets someone").with_argument("name", true);
    r.prompt(greet, |_, p| async move {
        let name = p.arguments.as_ref().and_then(|a| a.get("name")).cloned().unwrap_or_default();
        Ok(GetPromptResult::user_text(format!("Hello, {name}!")))
    });
    r
}

/// Logs `long_running <id> cancelled after step <n>` if dropped before `done`.
struct AbortWatch {
    id: String,
    step: u64,
    done: bool,
}

impl Drop for AbortWatch {
    fn drop(&mut self) {
        if !self.done {
            log(&format!("long_running {} cancelled after step {}", self.id, self.step));
        }
    }
}

fn arg<'a>(p: &'a CallToolParams, name: &str) -> Option<&'a Value> {
    p.arguments.as_ref().and_then(|a| a.get(name))
}

fn str_arg(p: &CallToolParams, name: &str) -> String {
    arg(p, name).and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn num_arg(p: &CallToolParams, name: &str) -> Option<f64> {
    arg(p, name).and_then(Value::as_f64)
}

/// `42` for integral sums, `1.5` otherwise.
fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}
