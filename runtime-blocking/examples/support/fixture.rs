//! The fixture server's tools, resource, template and prompt (docs/runtime-contract.md),
//! shared by the stdio and HTTP server examples: typed tools, no hand-written arguments.

use std::thread;
use std::time::{Duration, Instant};

use serde::Deserialize;
use zest_blocking::schema::{
    CreateMessageParams, LoggingLevel, ReadResourceResult, Resource, ResourceTemplate, Role,
    SamplingContent, SamplingMessage,
};
use zest_blocking::{Context, PeerApi, Registry, ToolError};

#[derive(Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to return.
    text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Steps {
    /// How many progress steps.
    #[serde(default = "five")]
    #[schemars(range(min = 1))]
    steps: u64,
    /// Milliseconds per step.
    #[serde(default = "hundred")]
    step_ms: u64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Sample {
    /// What to ask the client's model.
    prompt: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Fail {
    /// The error message.
    #[serde(default)]
    message: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

fn five() -> u64 {
    5
}

fn hundred() -> u64 {
    100
}

/// The fixture registry.
pub(crate) fn registry() -> Registry {
    let mut r = Registry::new()
        .tool("echo", "Returns its text", |Echo { text }| text)
        .tool("add", "Adds two numbers", |Add { a, b }| format_number(a + b))
        .tool("long_running", "Reports progress once per step; cancellable", long_running)
        .tool("sample", "Asks the client's model and returns its text", sample)
        .tool("fail", "Always fails with the message", |Fail { message }| {
            Err::<String, _>(ToolError::new(message))
        })
        .tool("crash", "Exits the process with status 3", crash)
        .prompt("greet", "Greets someone", |Greet { name }| format!("Hello, {name}!"));
    r.resource(Resource::new("zest://readme", "readme").with_mime_type("text/plain"), |_, p| {
        Ok(ReadResourceResult::text(p.uri, Some("text/plain"), README))
    });
    r.resource_template(ResourceTemplate::new("zest://items/{id}", "item"), |_, p, vars| {
        let id = vars.get("id").cloned().unwrap_or_default();
        Ok(ReadResourceResult::text(p.uri, Some("text/plain"), format!("item {id}")))
    });
    r
}

const README: &str = "zest fixture server: tools echo, add, long_running, sample, fail, crash.\n";

fn long_running(Steps { steps, step_ms }: Steps, ctx: Context) -> Result<String, ToolError> {
    let step = Duration::from_millis(step_ms);
    for i in 1..=steps {
        let end = Instant::now() + step;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            if ctx.is_cancelled() {
                return Err(ToolError::new(format!("cancelled at step {i}")));
            }
            thread::sleep(left.min(Duration::from_millis(5)));
        }
        let _ = ctx.progress(i as f64, Some(steps as f64), Some(format!("step {i} of {steps}")));
        let _ = ctx.log(LoggingLevel::Info, format!("step {i} of {steps}").into());
    }
    Ok(format!("done after {steps} steps"))
}

fn sample(Sample { prompt }: Sample, ctx: Context) -> Result<String, ToolError> {
    let params = CreateMessageParams {
        messages: vec![SamplingMessage::new(Role::User, SamplingContent::text(prompt))],
        max_tokens: 100,
        ..Default::default()
    };
    let result = ctx.create_message(params);
    let result = result.map_err(|e| ToolError::new(format!("sampling failed: {e}")))?;
    Ok(result.content.as_slice().iter().find_map(|c| c.as_text()).unwrap_or("").to_owned())
}

fn crash() {
    eprintln!("fixture: crashing on request");
    std::process::exit(3)
}

/// `42` for integers, `0.5` otherwise.
fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}
