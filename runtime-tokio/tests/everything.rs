//! zest-tokio's client against the reference server `@modelcontextprotocol/server-everything`
//! (pinned in tests/peers; install with scripts/install-peers).
//!
//! Nothing here reaches the network: `gzip-file-as-resource` is only called with a `data:`
//! URI, never its default https URL.

mod common;
#[path = "../../tests/support/wire.rs"]
mod wire;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zest_tokio::core::client::ServerNotification;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::{
    CallToolResult, ContentBlock, CreateMessageResult, ElicitResult, ListRootsResult, LoggingLevel,
    Reference, ResourceContents,
};
use zest_tokio::{CallError, Client, ClientApi, ClientOptions, StdioCommand};

const MODEL: &str = "zest-canned-model";

/// The tools that appear at once, whatever the client offers.
const BASE_TOOLS: &[&str] = &[
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
];

/// The tools registered after `initialized` because of our sampling, elicitation and roots
/// handlers (announced with `notifications/tools/list_changed`).
const CONDITIONAL_TOOLS: &[&str] =
    &["get-roots-list", "trigger-elicitation-request", "trigger-sampling-request"];

fn everything() -> StdioCommand {
    let bin = common::peer("node_modules/.bin/mcp-server-everything");
    with_env(StdioCommand::new(bin).arg("stdio"))
}

/// server-everything started with the client's writes teed into `wire`.
fn everything_recorded(wire: &wire::WireLog) -> StdioCommand {
    let bin = common::peer("node_modules/.bin/mcp-server-everything");
    let (program, args) = wire.wrap(&bin, &["stdio"]);
    with_env(StdioCommand::new(program).args(args))
}

fn with_env(command: StdioCommand) -> StdioCommand {
    command
        .env("ZEST_PROBE", "from-the-zest-tokio-test")
        .on_stderr(|line| eprintln!("[everything] {line}"))
        .shutdown_grace(Duration::from_millis(500))
}

fn handlers() -> AsyncClientHandlers {
    AsyncClientHandlers::default()
        .on_sampling(|params| async move {
            let asked = serde_json::to_value(&params.messages).unwrap_or_default();
            let result: CreateMessageResult = serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": format!("canned answer to {asked}")},
                "model": MODEL,
                "stopReason": "endTurn"
            }))
            .expect("a valid sampling result");
            Ok(result)
        })
        .on_elicitation(|_params| async move {
            Ok(serde_json::from_value::<ElicitResult>(json!({"action": "decline"})).unwrap())
        })
        .on_roots(|| async move {
            let roots = json!({"roots": [{"uri": "file:///tmp/zest-root", "name": "zest root"}]});
            Ok(serde_json::from_value::<ListRootsResult>(roots).unwrap())
        })
}

async fn connect() -> Client {
    let options = ClientOptions::new("zest-tokio-everything-test", "0.1.0").handlers(handlers());
    Client::spawn(everything(), options).await.expect("server-everything starts and initializes")
}

fn texts(result: &CallToolResult) -> Vec<&str> {
    result.content.iter().filter_map(ContentBlock::as_text).collect()
}

async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let result = client.call_tool(name, args).await.unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(!result.is_error(), "{name} failed: {result:?}");
    result
}

/// Lists tools until the conditional ones have been registered (they arrive just after
/// `initialized`, announced by `tools/list_changed`).
async fn all_tools(client: &Client) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let names: Vec<String> =
            client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        if CONDITIONAL_TOOLS.iter().all(|t| names.iter().any(|n| n == t)) {
            return names;
        }
        assert!(Instant::now() < deadline, "conditional tools never appeared: {names:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn handshake_and_every_tool_that_needs_no_human() {
    let client = connect().await;
    let notes = client.notifications();
    let n = client.negotiated();
    assert_eq!(n.server_info.name, "mcp-servers/everything");
    assert!(n.capabilities.tools.is_some() && n.capabilities.prompts.is_some());

    let names = all_tools(&client).await;
    for expected in BASE_TOOLS.iter().chain(CONDITIONAL_TOOLS) {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }

    client.ping().await.expect("ping");
    client.set_logging_level(LoggingLevel::Debug).await.expect("logging/setLevel");
    // Simulated logging and resource updates tick every 5 s; start them first, check last.
    client.subscribe("demo://resource/dynamic/text/1").await.unwrap();
    let toggled = call(&client, "toggle-simulated-logging", json!({})).await;
    assert!(texts(&toggled)[0].contains("tarted"), "{toggled:?}");
    let toggled = call(&client, "toggle-subscriber-updates", json!({})).await;
    assert!(texts(&toggled)[0].contains("tarted"), "{toggled:?}");

    let echo = call(&client, "echo", json!({"message": "hi from zest"})).await;
    assert_eq!(texts(&echo), ["Echo: hi from zest"]);

    let sum = call(&client, "get-sum", json!({"a": 2, "b": 40})).await;
    assert_eq!(texts(&sum), ["The sum of 2 and 40 is 42."]);

    let env = call(&client, "get-env", json!({})).await;
    let env: Value = serde_json::from_str(texts(&env)[0]).expect("get-env returns JSON");
    assert_eq!(env["ZEST_PROBE"], "from-the-zest-tokio-test", "our env reached the child");

    let annotated = call(
        &client,
        "get-annotated-message",
        json!({"messageType": "error", "includeImage": true}),
    )
    .await;
    assert_eq!(texts(&annotated), ["Error: Operation failed"]);
    assert!(matches!(&annotated.content[1], ContentBlock::Image(i) if i.mime_type == "image/png"));

    let image = call(&client, "get-tiny-image", json!({})).await;
    assert!(image.content.iter().any(|c| matches!(c, ContentBlock::Image(_))), "{image:?}");

    let links = call(&client, "get-resource-links", json!({"count": 2})).await;
    let links: Vec<_> = links
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::ResourceLink(r) => Some(r.uri.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(links.len(), 2, "{links:?}");

    let reference =
        call(&client, "get-resource-reference", json!({"resourceType": "Text", "resourceId": 3}))
            .await;
    let embedded = reference.content.iter().find_map(|c| match c {
        ContentBlock::Resource(r) => Some(r.resource.uri().to_owned()),
        _ => None,
    });
    assert_eq!(embedded.as_deref(), Some("demo://resource/dynamic/text/3"));

    let weather = call(&client, "get-structured-content", json!({"location": "Chicago"})).await;
    let structured = weather.structured_content.expect("structured content");
    assert_eq!(structured["temperature"], 36);
    assert_eq!(structured["conditions"], "Light rain / drizzle");

    // A data: URI, so the tool never fetches from the network ("hello zest", base64).
    let gz = call(
        &client,
        "gzip-file-as-resource",
        json!({
            "name": "hello.txt.gz",
            "data": "data:text/plain;base64,aGVsbG8genVzdA==",
            "outputType": "resource"
        }),
    )
    .await;
    let blob = gz.content.iter().find_map(|c| match c {
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::Blob(b) => Some(b.blob.clone()),
            _ => None,
        },
        _ => None,
    });
    // base64 of the gzip magic bytes 1f 8b 08 is "H4sI".
    assert!(blob.as_deref().is_some_and(|b| b.starts_with("H4sI")), "{blob:?}");

    let sampled = call(&client, "trigger-sampling-request", json!({"prompt": "say hi"})).await;
    assert!(texts(&sampled)[0].contains(MODEL), "our sampling handler answered: {sampled:?}");
    assert!(texts(&sampled)[0].contains("say hi"), "{sampled:?}");

    let elicited = call(&client, "trigger-elicitation-request", json!({})).await;
    assert!(texts(&elicited).concat().contains("declined"), "{elicited:?}");

    let roots = call(&client, "get-roots-list", json!({})).await;
    assert!(texts(&roots).concat().contains("file:///tmp/zest-root"), "{roots:?}");

    // The task-only tool refuses a plain call: tasks are not part of this client.
    let tools = client.list_all_tools().await.unwrap();
    if tools.iter().any(|t| t.name == "simulate-research-query") {
        let plain = client.call_tool("simulate-research-query", json!({"topic": "zest"})).await;
        assert!(
            matches!(&plain, Err(CallError::Request(_)))
                || plain.as_ref().is_ok_and(|r| r.is_error()),
            "{plain:?}"
        );
    }

    // The receiver taken first holds every notification since the handshake: the
    // tools/list_changed that announced the conditional tools, then the 5 s tickers' output.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let (mut changed, mut logged, mut updated) = (false, false, false);
    while !(changed && logged && updated) {
        match tokio::time::timeout_at(deadline, notes.recv()).await {
            Ok(Ok(ServerNotification::ToolListChanged)) => changed = true,
            Ok(Ok(ServerNotification::LoggingMessage(_))) => logged = true,
            Ok(Ok(ServerNotification::ResourceUpdated(u))) => {
                assert_eq!(u.uri, "demo://resource/dynamic/text/1");
                updated = true;
            }
            Ok(Ok(_)) => {}
            other => panic!("changed {changed}, logged {logged}, updated {updated}: {other:?}"),
        }
    }
    client.unsubscribe("demo://resource/dynamic/text/1").await.expect("unsubscribe");
    let status = client.close().await.unwrap();
    assert!(status.success() || status.code().is_none(), "{status:?}");
}

#[tokio::test]
async fn resources_and_prompts() {
    let client = connect().await;
    let resources = client.list_all_resources().await.unwrap();
    assert!(!resources.is_empty());
    let document = resources
        .iter()
        .find(|r| r.uri.starts_with("demo://resource/static/document/"))
        .expect("the static documents are listed");
    let read = client.read_resource(&document.uri).await.unwrap();
    match &read.contents[0] {
        ResourceContents::Text(t) => assert!(!t.text.is_empty()),
        other => panic!("a document is text: {other:?}"),
    }

    let templates = client.list_all_resource_templates().await.unwrap();
    let uris: Vec<_> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(uris.contains(&"demo://resource/dynamic/text/{resourceId}"), "{uris:?}");
    let item = client.read_resource("demo://resource/dynamic/text/7").await.unwrap();
    match &item.contents[0] {
        ResourceContents::Text(t) => assert!(t.text.starts_with("Resource 7: "), "{t:?}"),
        other => panic!("{other:?}"),
    }
    let blob = client.read_resource("demo://resource/dynamic/blob/2").await.unwrap();
    assert!(matches!(&blob.contents[0], ResourceContents::Blob(_)), "{blob:?}");

    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<_> = prompts.iter().map(|p| p.name.as_str()).collect();
    for expected in ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    let simple = client.get_prompt("simple-prompt", BTreeMap::new()).await.unwrap();
    assert_eq!(
        simple.messages[0].content.as_text(),
        Some("This is a simple prompt without arguments.")
    );
    let args = BTreeMap::from([("city".to_owned(), "Lisbon".to_owned())]);
    let weather = client.get_prompt("args-prompt", args).await.unwrap();
    assert_eq!(weather.messages[0].content.as_text(), Some("What's weather in Lisbon?"));
    let args = BTreeMap::from([
        ("resourceType".to_owned(), "Text".to_owned()),
        ("resourceId".to_owned(), "4".to_owned()),
    ]);
    let embedded = client.get_prompt("resource-prompt", args).await.unwrap();
    assert!(
        embedded.messages.iter().any(|m| matches!(&m.content, ContentBlock::Resource(_))),
        "{embedded:?}"
    );
    let done = client.complete(Reference::prompt("completable-prompt"), "department", "Eng").await;
    assert_eq!(done.unwrap().completion.values, ["Engineering"]);
    client.close().await.unwrap();
}

#[tokio::test]
async fn long_running_operation_reports_progress() {
    let client = connect().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = client
        .call_tool_with_progress(
            "trigger-long-running-operation",
            json!({"duration": 0.5, "steps": 5}),
            move |p| sink.lock().unwrap().push((p.progress, p.total)),
        )
        .await
        .unwrap();
    assert!(texts(&result)[0].starts_with("Long running operation completed"), "{result:?}");
    let seen = seen.lock().unwrap().clone();
    let expected: Vec<_> = (1..=5).map(|i| (f64::from(i), Some(5.0))).collect();
    assert_eq!(seen, expected);
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_call_dropped_mid_flight_is_cancelled_and_the_session_goes_on() {
    let wire = wire::WireLog::new("tokio-cancel");
    let options = ClientOptions::new("zest-tokio-everything-test", "0.1.0").handlers(handlers());
    let client = Client::spawn(everything_recorded(&wire), options).await.unwrap();
    let started = Instant::now();
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let mut slow = client.call_tool_with_progress(
        "trigger-long-running-operation",
        json!({"duration": 60, "steps": 120}),
        move |p| {
            let _ = tx.send(p.progress);
        },
    );
    // Dropped once the server is surely running it: after its first progress report.
    tokio::select! {
        outcome = &mut slow => panic!("the 60 s operation finished early: {outcome:?}"),
        first = progress.recv() => assert_eq!(first, Some(1.0)),
    }
    drop(slow);
    // The dropped call sent notifications/cancelled naming its id: seen on the wire.
    let deadline = Instant::now() + Duration::from_secs(30);
    while let Err(e) = wire.cancelled_call("trigger-long-running-operation") {
        assert!(Instant::now() < deadline, "{e}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The session is still usable at once.
    let echo = call(&client, "echo", json!({"message": "still here"})).await;
    assert_eq!(texts(&echo), ["Echo: still here"]);
    // Not after the 60 s operation.
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    client.close().await.unwrap();
}

/// server-everything's sampling, elicitation and roots tools against a client configured with
/// a sampling policy (the reviewer approves, the delegate answers), a form handler that leaves
/// fields to their defaults, a URL handler, and a root list that changes mid-session.
#[tokio::test]
async fn sampling_elicitation_and_roots_through_a_policy() {
    use zest_tokio::schema::Root;
    use zest_tokio::{SamplingPolicy, SamplingSummary};

    let summaries: Arc<Mutex<Vec<SamplingSummary>>> = Arc::default();
    let delegated = Arc::new(Mutex::new(0));
    let (seen, count) = (summaries.clone(), delegated.clone());
    let policy =
        SamplingPolicy::reviewed(move |summary| {
            seen.lock().unwrap().push(summary);
            async { true }
        })
        .max_tokens(1000)
        .models(["claude-*"])
        .delegate(move |request| {
            *count.lock().unwrap() += 1;
            let turns = request.messages.len();
            async move {
                Ok(CreateMessageResult::text(MODEL, format!("policy answer to {turns} turn(s)")))
            }
        });
    let root = |uri: &str| {
        serde_json::from_value::<Root>(json!({"uri": uri, "name": "zest root"})).unwrap()
    };
    let handlers = AsyncClientHandlers::default()
        .sampling_policy(policy)
        // The user fills in their name only: every other field keeps the form's default.
        .on_elicitation(|_| async {
            Ok(serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}}))
                .unwrap())
        })
        .on_url_elicitation(|p| async move {
            assert_eq!(p.url, "https://example.invalid/connect");
            Ok(serde_json::from_value::<ElicitResult>(json!({"action": "decline"})).unwrap())
        })
        .roots(vec![root("file:///tmp/zest-first")]);
    let options = ClientOptions::new("zest-tokio-policy-test", "0.1.0").handlers(handlers);
    let client = Client::spawn(everything(), options).await.unwrap();
    let names = all_tools(&client).await;
    assert!(names.iter().any(|n| n == "trigger-url-elicitation"), "{names:?}");

    let sampled =
        call(&client, "trigger-sampling-request", json!({"prompt": "say hi to zest"})).await;
    assert!(texts(&sampled)[0].contains("policy answer to 1 turn(s)"), "{sampled:?}");
    let reviewed = summaries.lock().unwrap().clone();
    assert_eq!(reviewed.len(), 1);
    assert_eq!((reviewed[0].max_tokens, reviewed[0].message_count()), (100, 1));
    let shown = format!("{:?} {}", reviewed[0], reviewed[0]);
    assert!(!shown.contains("say hi to zest") && !shown.contains("helpful test server"), "{shown}");
    // Over the limit: refused before the reviewer and the delegate, and the server is told.
    let over = client
        .call_tool("trigger-sampling-request", json!({"prompt": "long", "maxTokens": 5000}))
        .await;
    let why = match &over {
        Ok(r) => texts(r).concat(),
        Err(e) => e.to_string(),
    };
    assert!(why.contains("exceeds this client's limit of 1000"), "{over:?}");
    assert_eq!((summaries.lock().unwrap().len(), *delegated.lock().unwrap()), (1, 1));

    let elicited = call(&client, "trigger-elicitation-request", json!({})).await;
    let raw = texts(&elicited).concat();
    for part in [
        "\"name\": \"Ada\"",
        "It was a dark and stormy night.",
        "\"integer\": 42",
        "\"titledMultipleSelectEnum\": [\n      \"fish-1\"",
    ] {
        assert!(raw.contains(part), "{part} missing from {raw}");
    }

    // The error path: -32042 lists the URL to open; the client opens nothing by itself.
    let args = json!({"url": "https://example.invalid/connect", "errorPath": true});
    let required = client.call_tool("trigger-url-elicitation", args.clone()).await.unwrap_err();
    let list = required.url_elicitations().expect("a -32042 error");
    assert_eq!(list[0].url, "https://modelcontextprotocol.io");
    // The retry takes the request path, to our URL handler, which declines.
    let declined = call(&client, "trigger-url-elicitation", args).await;
    assert!(texts(&declined).concat().contains("declined"), "{declined:?}");

    let roots = call(&client, "get-roots-list", json!({})).await;
    assert!(texts(&roots).concat().contains("file:///tmp/zest-first"), "{roots:?}");
    client.set_roots(vec![root("file:///tmp/zest-second")]).unwrap();
    assert!(client.set_roots(vec![root("https://example.invalid/")]).is_err());
    // The server re-reads the list when told it changed; it answers from its cache meanwhile.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let roots = call(&client, "get-roots-list", json!({})).await;
        if texts(&roots).concat().contains("file:///tmp/zest-second") {
            break;
        }
        assert!(Instant::now() < deadline, "the new roots never reached the server: {roots:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    client.close().await.unwrap();
}
