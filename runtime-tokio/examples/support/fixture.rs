//! The fixture server's tools, resource, template and prompt (docs/runtime-contract.md),
//! shared by the stdio and HTTP server examples: typed tools, no hand-written arguments.

use std::io::Write;
use std::time::Duration;

use serde::Deserialize;
use zest_tokio::schema::{
    CreateMessageParams, LoggingLevel, ReadResourceResult, Resource, ResourceTemplate, Role,
    SamplingContent, SamplingMessage,
};
use zest_tokio::{Context, PeerApi, Registry, ToolError};

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
    let mut r =
        Registry::new()
            .tool("echo", "Returns the text it is given", |Echo { text }| async move { text })
            .tool("add", "Adds two numbers", |Add { a, b }| async move { format_number(a + b) })
            .tool("long_running", "Sleeps in steps, reporting progress and logging", long_running)
            .tool("sample", "Asks the client's model", sample)
            .tool("fail", "Returns an error result", |Fail { message }| async move {
                Err::<String, _>(ToolError::new(message))
            })
            .tool("crash", "Exits the process with status 3", crash)
            .prompt("greet", "Greets someone", |Greet { name }| async move {
                format!("Hello, {name}!")
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
    r
}

async fn long_running(Steps { steps, step_ms }: Steps, ctx: Context) -> Result<String, ToolError> {
    // Says on stderr when the task is aborted (the client cancelled) before finishing.
    let mut watch = AbortWatch { id: ctx.request_id().to_string(), step: 0, done: false };
    for i in 1..=steps {
        tokio::time::sleep(Duration::from_millis(step_ms)).await;
        watch.step = i;
        ctx.progress(i as f64, Some(steps as f64), None).await?;
        ctx.log(LoggingLevel::Info, format!("step {i} of {steps}").into()).await?;
    }
    watch.done = true;
    Ok(format!("done after {steps} steps"))
}

async fn crash() {
    log("crashing on request");
    std::process::exit(3)
}

async fn sample(Sample { prompt }: Sample, ctx: Context) -> Result<String, ToolError> {
    let message = SamplingMessage::new(Role::User, SamplingContent::text(prompt));
    let params =
        CreateMessageParams { messages: vec![message], max_tokens: 100, ..Default::default() };
    let result = ctx.create_message(params).await;
    let result = result.map_err(|e| ToolError::new(format!("sampling failed: {e}")))?;
    Ok(result.content.as_slice().iter().filter_map(|c| c.as_text()).collect())
}

/// Writes one line to stderr; a closed stderr is ignored (so `--linger` outlives its parent).
pub(crate) fn log(line: &str) {
    let _ = writeln!(std::io::stderr(), "zest tokio fixture: {line}");
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

/// `42` for integral sums, `1.5` otherwise.
fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}
