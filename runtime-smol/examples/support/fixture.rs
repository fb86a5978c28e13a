//! The fixture server's tools, resource, template and prompt (docs/runtime-contract.md),
//! shared by the stdio and HTTP server examples: typed tools, no hand-written arguments.

use std::time::Duration;

use serde::Deserialize;
use zest_smol::schema::{
    CreateMessageParams, LoggingLevel, ReadResourceResult, Resource, ResourceTemplate, Role,
    SamplingContent, SamplingMessage,
};
use zest_smol::{Context, PeerApi, Registry, ToolError};

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

/// The fixture: tools `echo`, `add`, `long_running`, `sample`, `fail`, `crash`; resource
/// `zest://readme`; template `zest://items/{id}`; prompt `greet`.
pub(crate) fn registry() -> Registry {
    let mut r = Registry::new()
        .tool("echo", "Returns the text it is given", |Echo { text }| async move { text })
        .tool("add", "Adds two numbers", |Add { a, b }| async move { format_number(a + b) })
        .tool("long_running", "Reports progress once per step; cancellable", long_running)
        .tool("sample", "Asks the client's model to answer a prompt", sample)
        .tool("fail", "Always fails with the given message", |Fail { message }| async move {
            Err::<String, _>(ToolError::new(message))
        })
        .tool("crash", "Exits the server process with status 3", crash)
        .prompt("greet", "Greets someone by name", |Greet { name }| async move {
            format!("Hello, {name}!")
        });
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
    r
}

async fn long_running(Steps { steps, step_ms }: Steps, ctx: Context) -> String {
    for step in 1..=steps {
        smol::Timer::after(Duration::from_millis(step_ms)).await;
        // Fails only if the session closed; the task is about to be dropped then.
        let _ = ctx.progress(step as f64, Some(steps as f64), None).await;
        let _ = ctx.log(LoggingLevel::Info, format!("step {step} of {steps}").into()).await;
    }
    format!("done after {steps} steps")
}

async fn sample(Sample { prompt }: Sample, ctx: Context) -> Result<String, ToolError> {
    let params = CreateMessageParams {
        messages: vec![SamplingMessage::new(Role::User, SamplingContent::text(prompt))],
        max_tokens: 100,
        ..Default::default()
    };
    let result = ctx.create_message(params).await;
    let result = result.map_err(|e| ToolError::new(format!("sampling failed: {e}")))?;
    Ok(result.content.as_slice().iter().filter_map(|c| c.as_text()).collect())
}

async fn crash() {
    eprintln!("fixture: crashing on request");
    std::process::exit(3)
}

/// `42` for integral sums, `1.5` otherwise.
fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}
