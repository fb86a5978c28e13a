//! Every runtime's stdio client against the reference server
//! `@modelcontextprotocol/server-everything` (pinned in tests/peers; install with
//! scripts/install-peers), written once and instantiated for zest-tokio, zest-smol and
//! zest-blocking by a macro, as in runtime_contract.rs: the tools offered for the
//! capabilities the client declares, every tool that can run without a human or the network
//! called and its result checked, log records and resource updates, every resource read,
//! prompts fetched and completed, progress followed, a call cancelled mid-flight, and the
//! server's sampling, elicitation and roots requests answered by the client's handlers and
//! through a sampling policy.
//!
//! Nothing here reaches the network: `gzip-file-as-resource` is only called with a `data:`
//! URI, never its default https URL.

#[path = "support/clients.rs"]
mod clients;
#[path = "../../tests/support/everything.rs"]
mod everything;
#[path = "support/runners.rs"]
mod runners;
#[path = "../../tests/support/wire.rs"]
mod wire;

/// The tools registered after `initialized` for a client that declares sampling,
/// elicitation and roots (announced with `notifications/tools/list_changed`).
const CONDITIONAL_TOOLS: &[&str] = &[
    "get-roots-list",
    "simulate-research-query",
    "trigger-elicitation-request",
    "trigger-sampling-request",
];

/// Every tool offered to a client that declares sampling and roots but not elicitation.
const TOOLS_WITHOUT_ELICITATION: [&str; 15] = [
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-roots-list",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "simulate-research-query",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "trigger-sampling-request",
];

/// The tools the tour does not call, and why. Every other tool listed must be called.
const NOT_CALLED: &[(&str, &str)] = &[
    ("toggle-simulated-logging", "logging_and_subscription_toggles_send_notifications"),
    ("toggle-subscriber-updates", "logging_and_subscription_toggles_send_notifications"),
    ("trigger-long-running-operation", "long_running_operation_reports_progress and the cancel"),
    // Sends the user to a URL in a browser; only listed for a client that declares URL-mode
    // elicitation, which the policy test does.
    ("trigger-url-elicitation", "sampling_elicitation_and_roots_through_a_policy"),
];

/// The model the sampling policy's delegate answers as.
const MODEL: &str = "zest-canned-model";

/// One module per runtime: `$rt` the crate, `$Handlers` its client handlers,
/// `[$($async_)?]` / `[$($aw)*]` `async` / `.await` or nothing, `$run` how a test body runs
/// (runners.rs), `$pause` a sleep, `$next_note` the next notification within a wait, if one
/// comes, and `$cancel` how a caller cancels a call mid-flight once it reported progress
/// (the async runtimes drop its future; zest-blocking cancels through the pending call's
/// handle and sees it end `Cancelled`).
macro_rules! stdio_everything {
    (
        $name:ident, $rt:ident, $Handlers:ident, [$($async_:tt)?], [$($aw:tt)*],
        run = $run:path, pause = $pause:expr, next_note = $next_note:expr,
        cancel_after_first_progress = $cancel:expr $(,)?
    ) => {
        mod $name {
            mod body {
                use std::collections::{BTreeMap, BTreeSet};
                use std::sync::{Arc, Mutex};
                use std::time::{Duration, Instant};

                use serde_json::{json, Value};
                use $rt::core::client::ServerNotification;
                use $rt::core::handler::$Handlers;
                use $rt::schema::{
                    CallToolResult, ContentBlock, CreateMessageResult, ElicitAction, ElicitResult,
                    LoggingLevel, Reference, ResourceContents, Root,
                };
                use $rt::{
                    CallError, Client, ClientApi, ClientOptions, SamplingPolicy, SamplingSummary,
                    StdioCommand,
                };

                use crate::clients::{canned, declined, roots, LIMIT, ROOT};
                use crate::{CONDITIONAL_TOOLS, MODEL, NOT_CALLED, TOOLS_WITHOUT_ELICITATION};

                /// What `get-env` must find in the child's environment.
                const PROBE: &str = concat!("from-the-", stringify!($name), "-test");

                $($async_)? fn pause(wait: Duration) {
                    ($pause)(wait) $($aw)*;
                }

                $($async_)? fn next_note(
                    client: &Client,
                    wait: Duration,
                ) -> Option<ServerNotification> {
                    ($next_note)(client, wait) $($aw)*
                }

                /// Waits (up to [`LIMIT`]) for a notification `pred` accepts, passing over
                /// the others.
                $($async_)? fn wait_for(
                    client: &Client,
                    what: &str,
                    pred: impl Fn(&ServerNotification) -> bool,
                ) {
                    let deadline = Instant::now() + LIMIT;
                    loop {
                        let left = deadline.saturating_duration_since(Instant::now());
                        match next_note(client, left) $($aw)* {
                            Some(note) if pred(&note) => return,
                            Some(_) => {}
                            None => panic!("no {what} notification within {LIMIT:?}"),
                        }
                    }
                }

                /// Sampling answered `canned: <the prompt>`, every elicitation declined, the one
                /// root [`ROOT`].
                fn handlers() -> $Handlers {
                    $Handlers::default()
                        .on_sampling(|p| $($async_ move)? { Ok(canned(&p)) })
                        .on_elicitation(|_| $($async_ move)? { Ok(declined()) })
                        .on_roots(|| $($async_ move)? { Ok(roots()) })
                }

                $($async_)? fn spawn(command: StdioCommand, handlers: $Handlers) -> Client {
                    let name = concat!(stringify!($name), "-everything-test");
                    let options = ClientOptions::new(name, "0.1.0").handlers(handlers);
                    Client::spawn(command, options) $($aw)*
                        .expect("server-everything starts and initializes")
                }

                fn server_everything() -> StdioCommand {
                    with_env(StdioCommand::new(crate::everything::bin()).arg("stdio"))
                }

                /// server-everything started with the client's writes teed into `wire`.
                fn recorded(wire: &crate::wire::WireLog) -> StdioCommand {
                    let (program, args) = wire.wrap(&crate::everything::bin(), &["stdio"]);
                    with_env(StdioCommand::new(program).args(args))
                }

                fn with_env(command: StdioCommand) -> StdioCommand {
                    command
                        .env("ZEST_PROBE", PROBE)
                        .on_stderr(|line| eprintln!("[everything] {line}"))
                        .shutdown_grace(Duration::from_millis(500))
                }

                fn texts(result: &CallToolResult) -> Vec<&str> {
                    result.content.iter().filter_map(ContentBlock::as_text).collect()
                }

                fn json_of(result: &CallToolResult) -> Value {
                    serde_json::to_value(result).expect("a result serializes")
                }

                $($async_)? fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
                    let result = client.call_tool(name, args) $($aw)*
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert!(!result.is_error(), "{name} failed: {result:?}");
                    result
                }

                /// Every tool listed, once `wanted` are among them: the tools that depend on
                /// the client's capabilities are registered after `initialized`, announced by
                /// `tools/list_changed`.
                $($async_)? fn tools_once_listed(
                    client: &Client,
                    wanted: &[&str],
                ) -> BTreeSet<String> {
                    let deadline = Instant::now() + LIMIT;
                    loop {
                        let tools = client.list_all_tools() $($aw)* .expect("tools/list");
                        let names: BTreeSet<String> = tools.into_iter().map(|t| t.name).collect();
                        if wanted.iter().all(|w| names.contains(*w)) {
                            return names;
                        }
                        assert!(Instant::now() < deadline, "{wanted:?} never listed: {names:?}");
                        // Woken by the announcement, or re-list after a while regardless.
                        let _ = next_note(client, Duration::from_millis(200)) $($aw)*;
                    }
                }

                pub(super) $($async_)? fn the_tools_offered_follow_the_capabilities_the_client_declares() {
                    // Sampling and roots, no elicitation: no tool that needs elicitation.
                    let handlers = $Handlers::default()
                        .on_sampling(|p| $($async_ move)? { Ok(canned(&p)) })
                        .on_roots(|| $($async_ move)? { Ok(roots()) });
                    let client = spawn(server_everything(), handlers) $($aw)*;
                    let n = client.negotiated();
                    assert_eq!(n.server_info.name, "mcp-servers/everything");
                    assert!(n.capabilities.tools.is_some() && n.capabilities.prompts.is_some());
                    let instructions = n.instructions.as_deref();
                    assert!(instructions.is_some_and(|i| i.contains("Everything Server")));
                    let listed = tools_once_listed(&client, &["trigger-sampling-request"]) $($aw)*;
                    let listed: Vec<&str> = listed.iter().map(String::as_str).collect();
                    assert_eq!(listed, TOOLS_WITHOUT_ELICITATION);
                    client.ping() $($aw)* .expect("ping");
                    client.close() $($aw)* .expect("close");
                }

                pub(super) $($async_)? fn every_tool_that_needs_no_human_returns_its_result() {
                    let client = spawn(server_everything(), handlers()) $($aw)*;
                    assert_eq!(client.negotiated().server_info.name, "mcp-servers/everything");
                    let listed = tools_once_listed(&client, CONDITIONAL_TOOLS) $($aw)*;
                    let mut called = BTreeSet::new();
                    let mut tool = |name: &'static str| {
                        assert!(listed.contains(name), "{name} is not listed: {listed:?}");
                        called.insert(name);
                        name
                    };

                    let args = json!({"message": "hi from zest"});
                    let echo = call(&client, tool("echo"), args) $($aw)*;
                    assert_eq!(texts(&echo), ["Echo: hi from zest"]);

                    let sum = call(&client, tool("get-sum"), json!({"a": 2, "b": 40})) $($aw)*;
                    assert_eq!(texts(&sum), ["The sum of 2 and 40 is 42."]);

                    let args = json!({"messageType": "error", "includeImage": true});
                    let annotated = call(&client, tool("get-annotated-message"), args) $($aw)*;
                    let annotated = json_of(&annotated);
                    assert_eq!(annotated["content"][0]["text"], "Error: Operation failed");
                    assert_eq!(annotated["content"][0]["annotations"]["priority"], 1.0);
                    assert_eq!(annotated["content"][1]["type"], "image", "{annotated}");
                    assert_eq!(annotated["content"][1]["mimeType"], "image/png", "{annotated}");

                    let env = call(&client, tool("get-env"), json!({})) $($aw)*;
                    let env: Value = serde_json::from_str(texts(&env)[0]).expect("get-env is JSON");
                    assert_eq!(env["ZEST_PROBE"], PROBE, "StdioCommand::env reaches the child");

                    let image = call(&client, tool("get-tiny-image"), json!({})) $($aw)*;
                    let image = json_of(&image)["content"]
                        .as_array()
                        .and_then(|blocks| blocks.iter().find(|c| c["type"] == "image").cloned())
                        .expect("an image block");
                    assert_eq!(image["mimeType"], "image/png");
                    assert!(image["data"].as_str().is_some_and(|d| d.len() > 100), "{image}");

                    let args = json!({"count": 2});
                    let links = call(&client, tool("get-resource-links"), args) $($aw)*;
                    let links = json_of(&links);
                    let blocks = links["content"].as_array().expect("content");
                    assert_eq!(blocks.len(), 3, "a text and two links: {links}");
                    assert!(blocks[1..].iter().all(|b| b["type"] == "resource_link"), "{links}");

                    let args = json!({"resourceType": "Text", "resourceId": 3});
                    let reference = call(&client, tool("get-resource-reference"), args) $($aw)*;
                    let reference = json_of(&reference);
                    assert_eq!(reference["content"][1]["type"], "resource", "{reference}");
                    let uri = &reference["content"][1]["resource"]["uri"];
                    assert_eq!(uri, "demo://resource/dynamic/text/3");

                    let args = json!({"location": "Chicago"});
                    let weather = call(&client, tool("get-structured-content"), args) $($aw)*;
                    let expected = json!({
                        "temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82
                    });
                    assert_eq!(weather.structured_content, Some(expected));

                    // A data: URI keeps the tool off the network ("hello zest", base64); the
                    // gzip magic 1f 8b 08 is "H4sI" in base64.
                    let data = "data:text/plain;base64,aGVsbG8genVzdA==";
                    let args =
                        json!({"name": "hello.txt.gz", "data": data, "outputType": "resource"});
                    let gz = call(&client, tool("gzip-file-as-resource"), args) $($aw)*;
                    let gz = json_of(&gz);
                    let resource = &gz["content"][0]["resource"];
                    assert_eq!(resource["mimeType"], "application/gzip", "{gz}");
                    let blob = resource["blob"].as_str();
                    assert!(blob.is_some_and(|b| b.starts_with("H4sI")), "{gz}");
                    let args =
                        json!({"name": "link.txt.gz", "data": data, "outputType": "resourceLink"});
                    let link = call(&client, "gzip-file-as-resource", args) $($aw)*;
                    let link = json_of(&link);
                    let uri = link["content"][0]["uri"].as_str().expect("a link");
                    let read = client.read_resource(uri) $($aw)* .expect("read the gzip");
                    let ResourceContents::Blob(blob) = &read.contents[0] else {
                        panic!("{read:?}")
                    };
                    assert!(blob.blob.starts_with("H4sI"), "{blob:?}");

                    let listed_roots = call(&client, tool("get-roots-list"), json!({})) $($aw)*;
                    assert!(texts(&listed_roots).concat().contains(ROOT), "{listed_roots:?}");

                    let args = json!({"prompt": "say hi"});
                    let sampled = call(&client, tool("trigger-sampling-request"), args) $($aw)*;
                    let sampled = texts(&sampled).concat();
                    let answer = "canned: Resource trigger-sampling-request context: say hi";
                    assert!(sampled.contains(answer), "our sampling handler answered: {sampled}");
                    assert!(sampled.contains(r#""model": "canned""#), "{sampled}");

                    let elicit = tool("trigger-elicitation-request");
                    let elicited = call(&client, elicit, json!({})) $($aw)*;
                    assert!(texts(&elicited).concat().contains("declined"), "{elicited:?}");

                    // Task-augmented only: zest does not offer the experimental tasks API, so
                    // the plain call is refused.
                    let args = json!({"topic": "zest"});
                    let refused = client.call_tool(tool("simulate-research-query"), args) $($aw)*
                        .expect("answered");
                    assert!(refused.is_error(), "{refused:?}");
                    let why = texts(&refused).concat();
                    assert!(why.contains("requires task augmentation"), "{why}");

                    let reasons: BTreeMap<&str, &str> = NOT_CALLED.iter().copied().collect();
                    for name in &listed {
                        assert!(
                            called.contains(name.as_str()) || reasons.contains_key(name.as_str()),
                            "tool {name} is listed but neither called nor skipped with a reason"
                        );
                    }
                    let status = client.close() $($aw)* .expect("close");
                    assert!(status.success() || status.code().is_none(), "{status:?}");
                }

                pub(super) $($async_)? fn logging_and_subscription_toggles_send_notifications() {
                    let client = spawn(server_everything(), handlers()) $($aw)*;
                    // The tools/list_changed that announced the conditional tools, kept for us
                    // although nobody was reading yet.
                    let changed =
                        |n: &ServerNotification| matches!(n, ServerNotification::ToolListChanged);
                    wait_for(&client, "tools/list_changed", changed) $($aw)*;

                    let level = client.set_logging_level(LoggingLevel::Debug) $($aw)*;
                    level.expect("logging/setLevel");
                    let started = call(&client, "toggle-simulated-logging", json!({})) $($aw)*;
                    assert!(texts(&started)[0].starts_with("Started simulated"), "{started:?}");
                    let simulated = |n: &ServerNotification| match n {
                        ServerNotification::LoggingMessage(m) => m.data.as_str().is_some_and(|d| {
                            d.contains("-level message") || d.contains("level-message")
                        }),
                        _ => false,
                    };
                    wait_for(&client, "simulated log", simulated) $($aw)*;
                    let stopped = call(&client, "toggle-simulated-logging", json!({})) $($aw)*;
                    assert!(texts(&stopped)[0].starts_with("Stopped simulated"), "{stopped:?}");

                    let watched = [
                        "demo://resource/dynamic/text/1",
                        "demo://resource/static/document/features.md",
                    ];
                    for uri in watched {
                        client.subscribe(uri) $($aw)* .expect("resources/subscribe");
                    }
                    let started = call(&client, "toggle-subscriber-updates", json!({})) $($aw)*;
                    assert!(texts(&started)[0].starts_with("Started simulated"), "{started:?}");
                    let deadline = Instant::now() + LIMIT;
                    let mut updated = BTreeSet::new();
                    while updated.len() < watched.len() {
                        let left = deadline.saturating_duration_since(Instant::now());
                        match next_note(&client, left) $($aw)* {
                            Some(ServerNotification::ResourceUpdated(u)) => {
                                assert!(watched.contains(&u.uri.as_str()), "not subscribed: {u:?}");
                                updated.insert(u.uri);
                            }
                            Some(_) => {}
                            None => panic!("updates for {updated:?} only, of {watched:?}"),
                        }
                    }
                    let stopped = call(&client, "toggle-subscriber-updates", json!({})) $($aw)*;
                    assert!(texts(&stopped)[0].starts_with("Stopped simulated"), "{stopped:?}");
                    for uri in watched {
                        client.unsubscribe(uri) $($aw)* .expect("resources/unsubscribe");
                    }
                    let status = client.close() $($aw)* .expect("close");
                    assert!(status.success() || status.code().is_none(), "{status:?}");
                }

                pub(super) $($async_)? fn every_resource_and_template_is_read() {
                    let client = spawn(server_everything(), handlers()) $($aw)*;
                    let resources = client.list_all_resources() $($aw)* .expect("resources/list");
                    assert!(resources.len() >= 7, "{resources:?}");
                    let documents = "demo://resource/static/document/";
                    let listed = resources.iter().any(|r| r.uri.starts_with(documents));
                    assert!(listed, "the static documents are listed: {resources:?}");
                    for resource in &resources {
                        let read = client.read_resource(&resource.uri) $($aw)*
                            .unwrap_or_else(|e| panic!("{}: {e}", resource.uri));
                        assert_eq!(read.contents[0].uri(), resource.uri);
                        let ResourceContents::Text(t) = &read.contents[0] else {
                            panic!("{} is text: {read:?}", resource.uri)
                        };
                        assert!(!t.text.is_empty(), "{} is empty", resource.uri);
                    }

                    let templates = client.list_all_resource_templates() $($aw)*;
                    let templates = templates.expect("resources/templates/list");
                    let uris: Vec<&str> =
                        templates.iter().map(|t| t.uri_template.as_str()).collect();
                    assert_eq!(uris.len(), 2, "{uris:?}");
                    let text = "demo://resource/dynamic/text/{resourceId}";
                    assert!(uris.contains(&text), "{uris:?}");
                    let item = client.read_resource("demo://resource/dynamic/text/7") $($aw)*
                        .expect("a text item");
                    let ResourceContents::Text(t) = &item.contents[0] else { panic!("{item:?}") };
                    assert!(t.text.starts_with("Resource 7: "), "{t:?}");
                    let blob = client.read_resource("demo://resource/dynamic/blob/6") $($aw)*
                        .expect("a blob item");
                    let ResourceContents::Blob(b) = &blob.contents[0] else { panic!("{blob:?}") };
                    assert!(!b.blob.is_empty(), "{b:?}");
                    client.close() $($aw)* .expect("close");
                }

                pub(super) $($async_)? fn prompts_are_fetched_and_completed() {
                    let client = spawn(server_everything(), handlers()) $($aw)*;
                    let prompts = client.list_all_prompts() $($aw)* .expect("prompts/list");
                    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
                    for expected in
                        ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"]
                    {
                        assert!(names.contains(&expected), "{expected} missing from {names:?}");
                    }

                    let simple = client.get_prompt("simple-prompt", BTreeMap::new()) $($aw)*
                        .expect("simple-prompt");
                    assert_eq!(
                        simple.messages[0].content.as_text(),
                        Some("This is a simple prompt without arguments.")
                    );
                    let args = BTreeMap::from([("city".to_owned(), "Lisbon".to_owned())]);
                    let weather = client.get_prompt("args-prompt", args) $($aw)*;
                    let weather = weather.expect("args-prompt");
                    let asked = weather.messages[0].content.as_text();
                    assert_eq!(asked, Some("What's weather in Lisbon?"));
                    let missing = client.get_prompt("args-prompt", BTreeMap::new()) $($aw)*;
                    assert!(matches!(missing, Err(CallError::Request(_))), "{missing:?}");
                    let args = BTreeMap::from([
                        ("resourceType".to_owned(), "Text".to_owned()),
                        ("resourceId".to_owned(), "2".to_owned()),
                    ]);
                    let embedded = client.get_prompt("resource-prompt", args) $($aw)*
                        .expect("resource-prompt");
                    let embedded = serde_json::to_value(&embedded).expect("serializes");
                    let content = &embedded["messages"][1]["content"];
                    assert_eq!(content["type"], "resource", "{embedded}");
                    assert_eq!(content["resource"]["uri"], "demo://resource/dynamic/text/2");

                    let reference = Reference::prompt("completable-prompt");
                    let done = client.complete(reference, "department", "Eng") $($aw)*
                        .expect("completion/complete");
                    assert_eq!(done.completion.values, ["Engineering"]);
                    client.close() $($aw)* .expect("close");
                }

                pub(super) $($async_)? fn long_running_operation_reports_progress() {
                    let client = spawn(server_everything(), handlers()) $($aw)*;
                    let seen = Arc::new(Mutex::new(Vec::new()));
                    let sink = seen.clone();
                    let result = client
                        .call_tool_with_progress(
                            "trigger-long-running-operation",
                            json!({"duration": 0.5, "steps": 5}),
                            move |p| sink.lock().unwrap().push((p.progress, p.total)),
                        )
                        $($aw)*
                        .expect("the operation completes");
                    assert!(!result.is_error(), "{result:?}");
                    assert_eq!(
                        texts(&result),
                        ["Long running operation completed. Duration: 0.5 seconds, Steps: 5."]
                    );
                    let expected: Vec<_> = (1..=5).map(|i| (f64::from(i), Some(5.0))).collect();
                    assert_eq!(*seen.lock().unwrap(), expected, "each step once, with its total");
                    client.close() $($aw)* .expect("close");
                }

                pub(super) $($async_)? fn a_cancelled_call_is_cancelled_on_the_wire_and_the_session_goes_on() {
                    let wire = crate::wire::WireLog::new(concat!(stringify!($name), "-cancel"));
                    let client = spawn(recorded(&wire), handlers()) $($aw)*;
                    let seen = Arc::new(Mutex::new(Vec::new()));
                    let started = Instant::now();
                    // 60 s of work, cancelled once the server surely runs it: after its first
                    // progress report.
                    let args = json!({"duration": 60, "steps": 120});
                    let operation = "trigger-long-running-operation";
                    ($cancel)(&client, operation, args, seen.clone()) $($aw)*;
                    // The cancel sent notifications/cancelled naming the call's id: on the wire.
                    let deadline = Instant::now() + LIMIT;
                    while let Err(e) = wire.cancelled_call(operation) {
                        assert!(Instant::now() < deadline, "{e}");
                        pause(Duration::from_millis(20)) $($aw)*;
                    }
                    // The session goes on at once, not after the 60 s operation, and no more
                    // progress arrives for the cancelled call.
                    let reported = seen.lock().unwrap().len();
                    client.ping() $($aw)* .expect("ping");
                    let echo = call(&client, "echo", json!({"message": "still here"})) $($aw)*;
                    assert_eq!(texts(&echo), ["Echo: still here"]);
                    assert!(started.elapsed() < LIMIT, "{:?}", started.elapsed());
                    pause(Duration::from_millis(300)) $($aw)*;
                    assert_eq!(seen.lock().unwrap().len(), reported, "progress kept coming");
                    client.close() $($aw)* .expect("close");
                }

                /// server-everything's sampling, elicitation and roots tools against a client
                /// configured with a sampling policy (the reviewer approves, the delegate
                /// answers), a form handler that leaves fields to their defaults, a URL handler,
                /// and a root list that changes mid-session.
                pub(super) $($async_)? fn sampling_elicitation_and_roots_through_a_policy() {
                    let summaries: Arc<Mutex<Vec<SamplingSummary>>> = Arc::default();
                    let delegated = Arc::new(Mutex::new(0));
                    let (seen, count) = (summaries.clone(), delegated.clone());
                    let policy = SamplingPolicy::reviewed(move |summary| {
                        seen.lock().unwrap().push(summary);
                        $($async_)? { true }
                    })
                    .max_tokens(1000)
                    .models(["claude-*"])
                    .delegate(move |request| {
                        *count.lock().unwrap() += 1;
                        let turns = request.messages.len();
                        $($async_ move)? {
                            let answer = format!("policy answer to {turns} turn(s)");
                            Ok(CreateMessageResult::text(MODEL, answer))
                        }
                    });
                    let root = |uri: &str| {
                        serde_json::from_value::<Root>(json!({"uri": uri, "name": "zest root"}))
                            .expect("a valid root")
                    };
                    let handlers = $Handlers::default()
                        .sampling_policy(policy)
                        // The user fills in their name only: every other field keeps the
                        // form's default.
                        .on_elicitation(|_| $($async_ move)? {
                            let answer = json!({"action": "accept", "content": {"name": "Ada"}});
                            Ok(serde_json::from_value(answer).expect("a valid elicitation result"))
                        })
                        .on_url_elicitation(|p| $($async_ move)? {
                            assert_eq!(p.url, "https://example.invalid/connect");
                            Ok(ElicitResult::new(ElicitAction::Decline))
                        })
                        .roots(vec![root("file:///tmp/zest-first")]);
                    let client = spawn(server_everything(), handlers) $($aw)*;
                    let names = tools_once_listed(&client, &["trigger-sampling-request"]) $($aw)*;
                    assert!(names.contains("trigger-url-elicitation"), "{names:?}");

                    let args = json!({"prompt": "say hi to zest"});
                    let sampled = call(&client, "trigger-sampling-request", args) $($aw)*;
                    let sampled = texts(&sampled).concat();
                    assert!(sampled.contains("policy answer to 1 turn(s)"), "{sampled}");
                    let reviewed = summaries.lock().unwrap().clone();
                    assert_eq!(
                        (reviewed.len(), reviewed[0].max_tokens, reviewed[0].message_count()),
                        (1, 100, 1)
                    );
                    let shown = format!("{:?} {}", reviewed[0], reviewed[0]);
                    assert!(
                        !shown.contains("say hi to zest") && !shown.contains("helpful test server"),
                        "{shown}"
                    );
                    // Over the limit: refused before the reviewer and the delegate, and the
                    // server is told.
                    let args = json!({"prompt": "long", "maxTokens": 5000});
                    let over = client.call_tool("trigger-sampling-request", args) $($aw)*;
                    let why = match &over {
                        Ok(r) => texts(r).concat(),
                        Err(e) => e.to_string(),
                    };
                    assert!(why.contains("exceeds this client's limit of 1000"), "{over:?}");
                    let counts = (summaries.lock().unwrap().len(), *delegated.lock().unwrap());
                    assert_eq!(counts, (1, 1));

                    let elicited = call(&client, "trigger-elicitation-request", json!({})) $($aw)*;
                    let raw = texts(&elicited).concat();
                    for part in [
                        "\"name\": \"Ada\"",
                        "It was a dark and stormy night.",
                        "\"integer\": 42",
                        "\"titledMultipleSelectEnum\": [\n      \"fish-1\"",
                    ] {
                        assert!(raw.contains(part), "{part} missing from {raw}");
                    }

                    // The error path: -32042 lists the URL to open; the client opens nothing
                    // by itself.
                    let args = json!({"url": "https://example.invalid/connect", "errorPath": true});
                    let url_tool = "trigger-url-elicitation";
                    let required = client.call_tool(url_tool, args.clone()) $($aw)*;
                    let required = required.expect_err("a -32042 error");
                    let list = required.url_elicitations().expect("a -32042 error");
                    assert_eq!(list[0].url, "https://modelcontextprotocol.io");
                    // The retry takes the request path, to our URL handler, which declines.
                    let declined = call(&client, url_tool, args) $($aw)*;
                    assert!(texts(&declined).concat().contains("declined"), "{declined:?}");

                    let listed = call(&client, "get-roots-list", json!({})) $($aw)*;
                    let first = texts(&listed).concat();
                    assert!(first.contains("file:///tmp/zest-first"), "{listed:?}");
                    client.set_roots(vec![root("file:///tmp/zest-second")]).expect("a file root");
                    for bad in ["https://example.invalid/", "file:///tmp/../etc", "/no/scheme"] {
                        assert!(client.set_roots(vec![root(bad)]).is_err(), "{bad} accepted");
                    }
                    // The server re-reads the list when told it changed; it answers from its
                    // cache meanwhile.
                    let deadline = Instant::now() + LIMIT;
                    loop {
                        let listed = call(&client, "get-roots-list", json!({})) $($aw)*;
                        if texts(&listed).concat().contains("file:///tmp/zest-second") {
                            break;
                        }
                        assert!(Instant::now() < deadline, "new roots never arrived: {listed:?}");
                        pause(Duration::from_millis(50)) $($aw)*;
                    }
                    client.close() $($aw)* .expect("close");
                }
            }

            #[test]
            fn the_tools_offered_follow_the_capabilities_the_client_declares() {
                $run(body::the_tools_offered_follow_the_capabilities_the_client_declares);
            }

            #[test]
            fn every_tool_that_needs_no_human_returns_its_result() {
                $run(body::every_tool_that_needs_no_human_returns_its_result);
            }

            #[test]
            fn logging_and_subscription_toggles_send_notifications() {
                $run(body::logging_and_subscription_toggles_send_notifications);
            }

            #[test]
            fn every_resource_and_template_is_read() {
                $run(body::every_resource_and_template_is_read);
            }

            #[test]
            fn prompts_are_fetched_and_completed() {
                $run(body::prompts_are_fetched_and_completed);
            }

            #[test]
            fn long_running_operation_reports_progress() {
                $run(body::long_running_operation_reports_progress);
            }

            #[test]
            fn a_cancelled_call_is_cancelled_on_the_wire_and_the_session_goes_on() {
                $run(body::a_cancelled_call_is_cancelled_on_the_wire_and_the_session_goes_on);
            }

            #[test]
            fn sampling_elicitation_and_roots_through_a_policy() {
                $run(body::sampling_elicitation_and_roots_through_a_policy);
            }
        }
    };
}

stdio_everything!(
    tokio_stdio, zest_tokio, AsyncClientHandlers, [async], [.await],
    run = crate::runners::on_tokio,
    pause = tokio::time::sleep,
    next_note = crate::runners::tokio_next_note,
    // Dropping the call's future cancels it.
    cancel_after_first_progress =
        |client: &Client, tool: &'static str, args: Value, seen: Arc<Mutex<Vec<f64>>>| {
            let client = client.clone();
            async move {
                let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
                let mut call = client.call_tool_with_progress(tool, args, move |p| {
                    seen.lock().unwrap().push(p.progress);
                    let _ = tx.send(p.progress);
                });
                tokio::select! {
                    outcome = &mut call => panic!("the operation finished early: {outcome:?}"),
                    first = progress.recv() => assert_eq!(first, Some(1.0)),
                }
                drop(call);
            }
        },
);

stdio_everything!(
    smol_stdio, zest_smol, AsyncClientHandlers, [async], [.await],
    run = crate::runners::on_smol,
    pause = crate::runners::smol_pause,
    next_note = crate::runners::smol_next_note,
    // Dropping the call's future cancels it.
    cancel_after_first_progress =
        |client: &Client, tool: &'static str, args: Value, seen: Arc<Mutex<Vec<f64>>>| {
            use smol::future::FutureExt as _;
            let client = client.clone();
            async move {
                let (tx, progress) = smol::channel::unbounded();
                let call = client.call_tool_with_progress(tool, args, move |p| {
                    seen.lock().unwrap().push(p.progress);
                    let _ = tx.try_send(p.progress);
                });
                let first = async {
                    let first = progress.recv().await.expect("progress is reported");
                    Err::<Result<CallToolResult, CallError>, f64>(first)
                };
                let outcome = async { Ok(call.await) }.or(first).await;
                assert_eq!(outcome.expect_err("the operation finished early"), 1.0);
            }
        },
);

stdio_everything!(
    blocking_stdio,
    zest_blocking,
    SyncClientHandlers,
    [],
    [],
    run = crate::runners::on_blocking,
    pause = std::thread::sleep,
    next_note = |client: &Client, wait: Duration| client.notifications().recv_timeout(wait),
    // The pending call's handle cancels it, from another thread; the call ends `Cancelled`.
    cancel_after_first_progress =
        |client: &Client, tool: &'static str, args: Value, seen: Arc<Mutex<Vec<f64>>>| {
            use zest_blocking::core::error::RequestError;
            use zest_blocking::core::RequestOptions;
            use zest_blocking::schema::methods::CallTool;
            let params = serde_json::from_value(json!({"name": tool, "arguments": args}))
                .expect("valid call params");
            let (tx, progress) = std::sync::mpsc::channel();
            let on_progress: zest_blocking::core::api::ProgressFn = Box::new(move |p| {
                seen.lock().unwrap().push(p.progress);
                let _ = tx.send(p.progress);
            });
            let pending = client.start_with_progress::<CallTool>(
                params,
                RequestOptions::with_progress(),
                Some(on_progress),
            );
            let first = progress.recv_timeout(LIMIT).expect("the operation reports progress");
            assert_eq!(first, 1.0);
            let cancel = pending.cancel_handle().expect("the call was sent");
            let started = Instant::now();
            std::thread::spawn(move || cancel.cancel());
            let outcome: Result<CallToolResult, CallError> = pending.wait();
            assert_eq!(outcome, Err(CallError::Request(RequestError::Cancelled)));
            // At once, not when the 60 s operation would have ended.
            assert!(started.elapsed() < LIMIT, "cancel took {:?}", started.elapsed());
        },
);
