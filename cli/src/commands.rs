//! The client commands: `inspect`, `tools`, `call`, `resources`, `read`, `prompts`,
//! `prompt`, `ping`. Each prints a readable form, or with `--json` one JSON document (its
//! shape is in the command's `--help`).

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use base64::Engine as _;
use serde_json::{json, Map, Value};
use zest_blocking::core::handler::SyncClientHandlers;
use zest_blocking::schema::{CallToolResult, ContentBlock, ProgressParams, ResourceContents, Tool};
use zest_blocking::{Client, ClientApi};

use crate::fail::Failure;
use crate::login::TokenCache;
use crate::target::TargetArgs;

/// Prints `value` as pretty JSON on stdout.
pub(crate) fn print_json(value: &impl serde::Serialize) {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("\"{e}\""));
    println!("{text}");
}

/// Connects to `target`, runs `work` on the session, then closes it whatever `work`
/// returned.
pub(crate) fn with_session<T>(
    target: &TargetArgs,
    work: impl FnOnce(&Client) -> Result<T, Failure>,
) -> Result<T, Failure> {
    let client = target.connect(SyncClientHandlers::default())?;
    let outcome = work(&client);
    // The command's work is done; a failure to close cleanly changes nothing for it.
    let _ = client.close();
    outcome
}

/// `zest inspect`: who the server is, what it speaks and offers, and how much.
pub(crate) fn inspect(target: &TargetArgs, as_json: bool) -> Result<(), Failure> {
    let (n, tools, resources, templates, prompts) = with_session(target, |client| {
        let n = client.negotiated().clone();
        let caps = &n.capabilities;
        let count = |what: &str, listed: Result<usize, zest_blocking::CallError>| {
            listed.map_err(|e| Failure::call(what, &e))
        };
        let tools = match caps.tools {
            Some(_) => Some(count("tools/list", client.list_all_tools().map(|t| t.len()))?),
            None => None,
        };
        let (resources, templates) = match caps.resources {
            Some(_) => (
                Some(count("resources/list", client.list_all_resources().map(|r| r.len()))?),
                Some(count(
                    "resources/templates/list",
                    client.list_all_resource_templates().map(|r| r.len()),
                )?),
            ),
            None => (None, None),
        };
        let prompts = match caps.prompts {
            Some(_) => Some(count("prompts/list", client.list_all_prompts().map(|p| p.len()))?),
            None => None,
        };
        Ok((n, tools, resources, templates, prompts))
    })?;
    let caps = &n.capabilities;
    let era = if n.protocol_version.is_session_era() { "session" } else { "stateless" };
    if as_json {
        print_json(&json!({
            "server": n.server_info,
            "protocolVersion": n.protocol_version.as_str(),
            "era": era,
            "capabilities": caps,
            "instructions": n.instructions,
            "counts": {"tools": tools, "resources": resources, "resourceTemplates": templates, "prompts": prompts},
        }));
        return Ok(());
    }
    println!("server        {} {}", n.server_info.name, n.server_info.version);
    println!("revision      {} ({era} era)", n.protocol_version.as_str());
    let shown = |c: Option<usize>| c.map_or_else(|| "not offered".to_owned(), |c| c.to_string());
    println!("tools         {}", shown(tools));
    println!("resources     {} (+ {} templates)", shown(resources), shown(templates));
    println!("prompts       {}", shown(prompts));
    let offered: Vec<&str> = [
        ("logging", caps.logging.is_some()),
        ("completions", caps.completions.is_some()),
        (
            "resource subscriptions",
            caps.resources.as_ref().is_some_and(|r| r.subscribe == Some(true)),
        ),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    if !offered.is_empty() {
        println!("also          {}", offered.join(", "));
    }
    if let Some(instructions) = n.instructions.filter(|i| !i.is_empty()) {
        println!("instructions  {instructions}");
    }
    Ok(())
}

/// `zest tools`: every tool, over every page.
pub(crate) fn tools(target: &TargetArgs, as_json: bool) -> Result<(), Failure> {
    let tools = with_session(target, |client| {
        client.list_all_tools().map_err(|e| Failure::call("tools/list", &e))
    })?;
    if as_json {
        print_json(&tools);
        return Ok(());
    }
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for tool in &tools {
        let description = tool.description.as_deref().unwrap_or("").lines().next().unwrap_or("");
        println!("{:width$}  {description}", tool.name);
    }
    if tools.is_empty() {
        println!("(no tools)");
    }
    Ok(())
}

/// The arguments of `zest call`.
#[derive(clap::Args, Debug)]
pub(crate) struct CallArgs {
    /// The tool to call.
    pub(crate) tool: String,
    /// An argument, `name=value`; the value is JSON when it parses as JSON and the tool's
    /// schema does not ask for a string, else text (repeatable).
    #[arg(long = "arg", short = 'a', value_name = "NAME=VALUE")]
    pub(crate) args: Vec<String>,
    /// All the arguments as one JSON object (merged under the `--arg`s).
    #[arg(long = "args-json", value_name = "JSON")]
    pub(crate) args_json: Option<String>,
    /// Where images and audio in the result are saved. Default: the current directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) save_dir: Option<PathBuf>,
}

/// `zest call`: calls one tool, shows its progress and prints its result.
pub(crate) fn call(target: &TargetArgs, call: &CallArgs, as_json: bool) -> Result<(), Failure> {
    let result = with_session(target, |client| call_on(client, call))?;
    if as_json {
        print_json(&result);
    } else if !result.is_error() {
        print_result(&result, &call.tool, call.save_dir.as_deref().unwrap_or(Path::new(".")))?;
    }
    if result.is_error() {
        let text: String = result.content.iter().filter_map(ContentBlock::as_text).collect();
        return Err(Failure::answered(format!("{} answered with an error: {text}", call.tool)));
    }
    Ok(())
}

fn call_on(client: &Client, call: &CallArgs) -> Result<CallToolResult, Failure> {
    let tools = client.list_all_tools().map_err(|e| Failure::call("tools/list", &e))?;
    let Some(tool) = tools.iter().find(|t| t.name == call.tool) else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        return Err(Failure::usage(format!(
            "no tool named {:?}; the server has: {}",
            call.tool,
            names.join(", ")
        )));
    };
    let arguments = arguments(tool, call)?;
    let started = Instant::now();
    let show = std::io::stderr().is_terminal();
    let on_progress = move |p: ProgressParams| {
        if show {
            let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = p.message.unwrap_or_default();
            let elapsed = started.elapsed().as_secs_f64();
            eprint!("\r\x1b[2Kprogress {}{total} {message} ({elapsed:.1}s)", p.progress);
            let _ = std::io::stderr().flush();
        }
    };
    let result = client.call_tool_with_progress(&call.tool, Value::Object(arguments), on_progress);
    if show {
        eprint!("\r\x1b[2K");
    }
    result.map_err(|e| Failure::call(&call.tool, &e))
}

/// The call's arguments: `--args-json`, then each `--arg` over it.
fn arguments(tool: &Tool, call: &CallArgs) -> Result<Map<String, Value>, Failure> {
    let mut arguments = match &call.args_json {
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(Failure::usage("--args-json must be a JSON object")),
            Err(e) => return Err(Failure::usage(format!("--args-json is not JSON: {e}"))),
        },
        None => Map::new(),
    };
    let properties = tool.input_schema.properties.as_ref();
    for pair in &call.args {
        let Some((name, raw)) = pair.split_once('=') else {
            return Err(Failure::usage(format!("--arg {pair:?}: write it as name=value")));
        };
        let wants_string = properties
            .and_then(|p| p.get(name))
            .and_then(|s| s.get("type"))
            .is_some_and(|t| t == "string");
        let value = match serde_json::from_str::<Value>(raw) {
            Ok(v) if !wants_string => v,
            _ => Value::String(raw.to_owned()),
        };
        arguments.insert(name.to_owned(), value);
    }
    Ok(arguments)
}

/// Text as it is, structured content as pretty JSON, images and audio saved to files.
fn print_result(result: &CallToolResult, tool: &str, save_dir: &Path) -> Result<(), Failure> {
    for (i, block) in result.content.iter().enumerate() {
        match block {
            ContentBlock::Text(t) => println!("{}", t.text),
            ContentBlock::Image(m) => saved(save_dir, tool, i, &m.mime_type, &m.data)?,
            ContentBlock::Audio(m) => saved(save_dir, tool, i, &m.mime_type, &m.data)?,
            ContentBlock::ResourceLink(r) => println!("[resource link] {}", r.uri),
            ContentBlock::Resource(r) => print_contents(&r.resource),
            ContentBlock::Unknown(v) => print_json(v),
            // A kind of block newer than this build: shown as the JSON it is.
            other => print_json(other),
        }
    }
    if let Some(structured) = &result.structured_content {
        println!("structured content:");
        print_json(structured);
    }
    Ok(())
}

fn saved(dir: &Path, tool: &str, index: usize, mime: &str, data: &str) -> Result<(), Failure> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| Failure::answered(format!("{tool}: {mime} content is not base64: {e}")))?;
    let ext = mime.rsplit('/').next().unwrap_or("bin").split(';').next().unwrap_or("bin");
    let file = dir.join(format!("{tool}-{index}.{ext}"));
    std::fs::write(&file, &bytes)
        .map_err(|e| Failure::usage(format!("could not save {}: {e}", file.display())))?;
    println!("[{mime}, {} bytes] saved to {}", bytes.len(), file.display());
    Ok(())
}

fn print_contents(contents: &ResourceContents) {
    match contents {
        ResourceContents::Text(t) => println!("{}", t.text),
        ResourceContents::Blob(b) => {
            let mime = b.mime_type.as_deref().unwrap_or("binary");
            println!("[{mime} blob, {} base64 characters] {}", b.blob.len(), b.uri);
        }
    }
}

/// `zest resources`: every resource and template.
pub(crate) fn resources(target: &TargetArgs, as_json: bool) -> Result<(), Failure> {
    let (resources, templates) = with_session(target, |client| {
        let resources = client.list_all_resources();
        let resources = resources.map_err(|e| Failure::call("resources/list", &e))?;
        let templates = client.list_all_resource_templates();
        Ok((resources, templates.map_err(|e| Failure::call("resources/templates/list", &e))?))
    })?;
    if as_json {
        print_json(&json!({"resources": resources, "resourceTemplates": templates}));
        return Ok(());
    }
    for r in &resources {
        println!("{}  {}", r.uri, r.name);
    }
    for t in &templates {
        println!("{}  {} (template)", t.uri_template, t.name);
    }
    if resources.is_empty() && templates.is_empty() {
        println!("(no resources)");
    }
    Ok(())
}

/// `zest read URI`.
pub(crate) fn read(target: &TargetArgs, uri: &str, as_json: bool) -> Result<(), Failure> {
    let read = with_session(target, |client| {
        client.read_resource(uri).map_err(|e| Failure::call(uri, &e))
    })?;
    if as_json {
        print_json(&read);
    } else {
        read.contents.iter().for_each(print_contents);
    }
    Ok(())
}

/// `zest prompts`.
pub(crate) fn prompts(target: &TargetArgs, as_json: bool) -> Result<(), Failure> {
    let prompts = with_session(target, |client| {
        client.list_all_prompts().map_err(|e| Failure::call("prompts/list", &e))
    })?;
    if as_json {
        print_json(&prompts);
        return Ok(());
    }
    for p in &prompts {
        let args: Vec<String> = p
            .arguments
            .iter()
            .flatten()
            .map(
                |a| if a.required == Some(true) { a.name.clone() } else { format!("[{}]", a.name) },
            )
            .collect();
        println!("{} {}  {}", p.name, args.join(" "), p.description.as_deref().unwrap_or(""));
    }
    if prompts.is_empty() {
        println!("(no prompts)");
    }
    Ok(())
}

/// `zest prompt NAME --arg k=v`.
pub(crate) fn prompt(
    target: &TargetArgs,
    name: &str,
    args: &[String],
    as_json: bool,
) -> Result<(), Failure> {
    let mut arguments = BTreeMap::new();
    for pair in args {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(Failure::usage(format!("--arg {pair:?}: write it as name=value")));
        };
        arguments.insert(k.to_owned(), v.to_owned());
    }
    let got = with_session(target, |client| {
        client.get_prompt(name, arguments).map_err(|e| Failure::call(name, &e))
    })?;
    if as_json {
        print_json(&got);
        return Ok(());
    }
    for message in &got.messages {
        let role = serde_json::to_value(message.role).unwrap_or_default();
        let text = match &message.content {
            ContentBlock::Text(t) => t.text.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        };
        println!("[{}] {text}", role.as_str().unwrap_or("?"));
    }
    Ok(())
}

/// `zest ping`: one round trip, timed.
pub(crate) fn ping(target: &TargetArgs, as_json: bool) -> Result<(), Failure> {
    let ms = with_session(target, |client| {
        let started = Instant::now();
        client.ping().map_err(|e| Failure::call("ping", &e))?;
        Ok(started.elapsed().as_secs_f64() * 1000.0)
    })?;
    if as_json {
        print_json(&json!({"ok": true, "ms": ms}));
    } else {
        println!("pong in {ms:.2} ms");
    }
    Ok(())
}

/// `zest demo`: serves the current directory over stdio from this same binary, and tours it
/// the way the other commands would (inspect, tools, two calls).
pub(crate) fn demo() -> Result<(), Failure> {
    let exe = std::env::current_exe()
        .map_err(|e| Failure::usage(format!("cannot find this program's path: {e}")))?;
    let target = TargetArgs {
        target: None,
        config: None,
        headers: Vec::new(),
        bearer_token: None,
        command: vec![exe.display().to_string(), "serve".to_owned(), ".".to_owned()],
        login: Default::default(),
    };
    println!("$ zest inspect -- zest serve .");
    inspect(&target, false)?;
    println!("\n$ zest tools -- zest serve .");
    tools(&target, false)?;
    let calls: [(&str, &[&str]); 2] = [
        ("list_directory", &[]),
        ("search_text", &["pattern=^fn main", "glob=**/*.rs", "max_results=5"]),
    ];
    for (tool, args) in calls {
        let shown: String = args.iter().map(|a| format!(" --arg '{a}'")).collect();
        println!("\n$ zest call {tool}{shown} -- zest serve .");
        let call = CallArgs {
            tool: tool.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            args_json: None,
            save_dir: None,
        };
        self::call(&target, &call, false)?;
    }
    Ok(())
}

/// `zest login`: connects (logging in if the server asks), lists tools so that a server
/// that lets the handshake through unauthorized still asks, and says what is kept.
pub(crate) fn login(target: &TargetArgs, as_json: bool) -> Result<(), Failure> {
    let Some(url) = target.url()? else {
        return Err(Failure::usage("zest login is for HTTP servers; stdio servers take no login"));
    };
    with_session(target, |client| {
        client.list_all_tools().map_err(|e| Failure::call("tools/list", &e)).map(drop)
    })?;
    let kept = TokenCache::default_location().load(&url);
    if as_json {
        let summary = kept.as_ref().map(|t| {
            serde_json::json!({"issuer": t.issuer, "scope": t.scope, "expiresAt": t.expires_at,
                "refreshable": t.refresh_token.is_some()})
        });
        print_json(&serde_json::json!({"url": url, "tokens": summary}));
        return Ok(());
    }
    match kept {
        Some(t) => println!(
            "logged in to {url} (issuer {}, scope {}, {})",
            t.issuer,
            t.scope.as_deref().unwrap_or("none"),
            if t.refresh_token.is_some() { "refreshable" } else { "not refreshable" }
        ),
        None => println!("{url} did not ask for authorization"),
    }
    Ok(())
}

/// `zest logout`: forgets the tokens kept for the server.
pub(crate) fn logout(target: &TargetArgs) -> Result<(), Failure> {
    let Some(url) = target.url()? else {
        return Err(Failure::usage("zest logout is for HTTP servers"));
    };
    let cache = TokenCache::default_location();
    let had = cache.load(&url).is_some();
    cache.store(&url, None).map_err(|e| Failure::usage(format!("the token cache: {e}")))?;
    println!(
        "{}",
        if had { format!("logged out of {url}") } else { format!("no tokens kept for {url}") }
    );
    Ok(())
}
