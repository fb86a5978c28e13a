//! The client against the reference server `@modelcontextprotocol/server-everything` (stdio),
//! installed under tests/peers by scripts/install-peers.
//!
//! One session walks everything the server offers: every tool that can run without a human
//! or the network is called and its result checked, resources are read, prompts fetched,
//! completion asked, progress followed, a call cancelled mid-flight, and the server's
//! sampling, elicitation and roots requests answered by client handlers.

mod common;
#[path = "../../tests/support/wire.rs"]
mod wire;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Map, Value};
use smol::channel::Receiver;
use smol::future::FutureExt as _;
use zest_smol::core::client::ServerNotification;
use zest_smol::schema::{
    CallToolResult, ElicitAction, ElicitResult, ListRootsResult, LoggingLevel, Reference,
    ResourceContents, Root,
};
use zest_smol::{CallError, Client, ClientApi, ClientOptions, StdioCommand};

use common::{canned_sampling, run};

const ROOT_URI: &str = "file:///tmp/zest-smol-root";

/// Tools deliberately not called, and why. Every other listed tool must be called below.
const NOT_CALLED: &[(&str, &str)] = &[
    // Task-augmented only (`execution.taskSupport: "required"`); zest does not implement the
    // experimental tasks API, so a plain tools/call is refused by design.
    ("simulate-research-query", "needs the experimental tasks API"),
    // Sends the user to a URL in a browser: needs a human (only listed when the client
    // declares URL-mode elicitation).
    ("trigger-url-elicitation", "needs a human at a browser"),
];

fn everything() -> PathBuf {
    let bin = common::workspace().join("tests/peers/node_modules/.bin/mcp-server-everything");
    assert!(bin.exists(), "{} is missing: run scripts/install-peers", bin.display());
    bin
}

async fn connect() -> Client {
    connect_via(StdioCommand::new(everything()).arg("stdio")).await
}

/// server-everything started with the client's writes teed into `wire`.
async fn connect_recorded(wire: &wire::WireLog) -> Client {
    let (program, args) = wire.wrap(&everything(), &["stdio"]);
    connect_via(StdioCommand::new(program).args(args)).await
}

async fn connect_via(cmd: StdioCommand) -> Client {
    let handlers = canned_sampling()
        .on_elicitation(|_params| async move {
            let content: Map<String, Value> =
                serde_json::from_value(json!({"name": "Zest Smol", "check": true})).unwrap();
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(content),
                meta: None,
                extra: Default::default(),
            })
        })
        .on_roots(|| async move {
            let root: Root =
                serde_json::from_value(json!({"uri": ROOT_URI, "name": "zest-smol"})).unwrap();
            Ok(ListRootsResult { roots: vec![root], meta: None, extra: Default::default() })
        });
    let cmd = cmd
        .env("ZEST_SMOL_MARKER", "marker-7f3a")
        .on_stderr(|_| {})
        .shutdown_grace(Duration::from_millis(500));
    Client::spawn(cmd, ClientOptions::new("zest-smol-test", "0.1.0").handlers(handlers))
        .await
        .expect("server-everything starts and shakes hands")
}

/// Waits up to `secs` for a notification matching `pred`.
async fn notification(
    rx: &Receiver<ServerNotification>,
    secs: u64,
    pred: impl Fn(&ServerNotification) -> bool,
) -> ServerNotification {
    let wait = async {
        loop {
            let n = rx.recv().await.expect("the session is open");
            if pred(&n) {
                return n;
            }
        }
    };
    wait.or(async {
        smol::Timer::after(Duration::from_secs(secs)).await;
        panic!("no matching notification within {secs} s")
    })
    .await
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("\n")
}

fn json_of(result: &CallToolResult) -> Value {
    serde_json::to_value(result).unwrap()
}

async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let result = client.call_tool(name, args).await.unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(!result.is_error(), "{name} failed: {result:?}");
    result
}

/// The tools listed, re-listing until the capability-dependent ones (registered after
/// `initialized` and announced by tools/list_changed) appear.
async fn tools(client: &Client) -> BTreeSet<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let names: BTreeSet<String> =
            client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        if names.contains("trigger-sampling-request") {
            return names;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the sampling-dependent tools never appeared"
        );
        smol::Timer::after(Duration::from_millis(100)).await;
    }
}

#[test]
fn server_everything_full_tour() {
    run(120, async {
        let client = connect().await;
        let notes = client.notifications();
        assert_eq!(client.negotiated().server_info.name, "mcp-servers/everything");

        let listed = tools(&client).await;
        // The capability-dependent tools were announced, and the notification was kept
        // for us even though nobody was reading yet.
        notification(&notes, 30, |n| matches!(n, ServerNotification::ToolListChanged)).await;
        client.ping().await.unwrap();
        let mut called = BTreeSet::new();
        let mut tool = |name: &'static str| {
            assert!(listed.contains(name), "{name} is not listed: {listed:?}");
            called.insert(name.to_owned());
            name
        };

        let r = call(&client, tool("echo"), json!({"message": "hi from smol"})).await;
        assert!(text(&r).contains("hi from smol"), "{r:?}");

        let r = call(&client, tool("get-sum"), json!({"a": 2, "b": 40})).await;
        assert!(text(&r).contains("42"), "{r:?}");

        let r = call(&client, tool("get-annotated-message"), json!({"messageType": "error"})).await;
        let priority = json_of(&r)["content"][0]["annotations"]["priority"].as_f64();
        assert_eq!(priority, Some(1.0), "{r:?}");

        let r = call(&client, tool("get-env"), json!({})).await;
        assert!(text(&r).contains("marker-7f3a"), "the child got our env: {r:?}");

        let r = call(&client, tool("get-resource-links"), json!({"count": 2})).await;
        let links = json_of(&r)["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["type"] == "resource_link")
            .count();
        assert_eq!(links, 2, "{r:?}");

        let r = call(
            &client,
            tool("get-resource-reference"),
            json!({"resourceType": "Text", "resourceId": 1}),
        )
        .await;
        let embedded = json_of(&r)["content"].as_array().unwrap().clone();
        assert!(
            embedded.iter().any(|c| c["type"] == "resource"
                && c["resource"]["uri"] == "demo://resource/dynamic/text/1"),
            "{r:?}"
        );

        let r = call(&client, tool("get-structured-content"), json!({"location": "Chicago"})).await;
        let structured = r.structured_content.clone().expect("structured content");
        assert!(structured.get("temperature").is_some(), "{structured}");

        let r = call(&client, tool("get-tiny-image"), json!({})).await;
        let image = json_of(&r)["content"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "image")
            .cloned()
            .expect("an image block");
        assert_eq!(image["mimeType"], "image/png");
        assert!(image["data"].as_str().unwrap().len() > 100);

        // Never the default https URL: a data: URI keeps the test off the network.
        let data = "data:text/plain;base64,aGVsbG8gZnJvbSB6ZXN0LXNtb2w=";
        let args = json!({"name": "hello.txt.gz", "data": data, "outputType": "resource"});
        let r = call(&client, tool("gzip-file-as-resource"), args).await;
        let resource = &json_of(&r)["content"][0]["resource"];
        assert_eq!(resource["mimeType"], "application/gzip");
        // base64 of the gzip magic 1f 8b 08.
        assert!(resource["blob"].as_str().unwrap().starts_with("H4sI"), "{resource}");
        let args = json!({"name": "link.txt.gz", "data": data, "outputType": "resourceLink"});
        let r = call(&client, "gzip-file-as-resource", args).await;
        let uri = json_of(&r)["content"][0]["uri"].as_str().unwrap().to_owned();
        let read = client.read_resource(&uri).await.unwrap();
        let ResourceContents::Blob(blob) = &read.contents[0] else { panic!("{read:?}") };
        assert!(blob.blob.starts_with("H4sI"));

        client.set_logging_level(LoggingLevel::Debug).await.unwrap();
        call(&client, tool("toggle-simulated-logging"), json!({})).await;
        notification(&notes, 30, |n| matches!(n, ServerNotification::LoggingMessage(_))).await;
        call(&client, "toggle-simulated-logging", json!({})).await;

        let watched = "demo://resource/static/document/features.md";
        client.subscribe(watched).await.unwrap();
        call(&client, tool("toggle-subscriber-updates"), json!({})).await;
        notification(
            &notes,
            30,
            |n| matches!(n, ServerNotification::ResourceUpdated(u) if u.uri == watched),
        )
        .await;
        call(&client, "toggle-subscriber-updates", json!({})).await;
        client.unsubscribe(watched).await.unwrap();

        let (tx, progress) = smol::channel::unbounded();
        let r = client
            .call_tool_with_progress(
                tool("trigger-long-running-operation"),
                json!({"duration": 1, "steps": 5}),
                move |p| {
                    let _ = tx.try_send((p.progress, p.total));
                },
            )
            .await
            .unwrap();
        assert!(!r.is_error(), "{r:?}");
        let reports: Vec<_> = std::iter::from_fn(|| progress.try_recv().ok()).collect();
        let expected: Vec<_> = (1..=5).map(|i| (f64::from(i), Some(5.0))).collect();
        assert_eq!(reports, expected);

        let r = call(&client, tool("get-roots-list"), json!({})).await;
        assert!(text(&r).contains(ROOT_URI), "the server saw our roots: {r:?}");

        let r = call(&client, tool("trigger-sampling-request"), json!({"prompt": "Say hi"})).await;
        assert!(text(&r).contains("canned-model"), "our sampling handler answered: {r:?}");
        assert!(text(&r).contains("Say hi"), "{r:?}");

        let r = call(&client, tool("trigger-elicitation-request"), json!({})).await;
        assert!(text(&r).contains("Zest Smol"), "our elicitation handler answered: {r:?}");

        let reasons: BTreeMap<&str, &str> = NOT_CALLED.iter().copied().collect();
        for name in &listed {
            assert!(
                called.contains(name) || reasons.contains_key(name.as_str()),
                "tool {name} is listed but neither called nor skipped with a reason"
            );
        }
        client.close().await.unwrap();
    });
}

#[test]
fn server_everything_resources_prompts_and_completion() {
    run(60, async {
        let client = connect().await;

        let resources = client.list_all_resources().await.unwrap();
        assert!(resources.len() >= 7, "{resources:?}");
        for resource in &resources {
            let read = client.read_resource(&resource.uri).await.unwrap();
            assert_eq!(read.contents[0].uri(), resource.uri);
            match &read.contents[0] {
                ResourceContents::Text(t) => assert!(!t.text.is_empty()),
                ResourceContents::Blob(b) => assert!(!b.blob.is_empty()),
            }
        }
        let templates = client.list_all_resource_templates().await.unwrap();
        let templates: BTreeSet<_> = templates.into_iter().map(|t| t.uri_template).collect();
        assert!(templates.contains("demo://resource/dynamic/text/{resourceId}"), "{templates:?}");
        let item = client.read_resource("demo://resource/dynamic/text/3").await.unwrap();
        let ResourceContents::Text(t) = &item.contents[0] else { panic!("{item:?}") };
        assert!(t.text.contains('3'), "{t:?}");
        let item = client.read_resource("demo://resource/dynamic/blob/3").await.unwrap();
        assert!(matches!(&item.contents[0], ResourceContents::Blob(_)), "{item:?}");

        let prompts = client.list_all_prompts().await.unwrap();
        let names: BTreeSet<_> = prompts.iter().map(|p| p.name.as_str()).collect();
        for expected in ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"] {
            assert!(names.contains(expected), "{names:?}");
        }
        let simple = client.get_prompt("simple-prompt", BTreeMap::new()).await.unwrap();
        assert!(!simple.messages.is_empty());
        let args = BTreeMap::from([("city".to_owned(), "Paris".to_owned())]);
        let with_args = client.get_prompt("args-prompt", args).await.unwrap();
        let said = serde_json::to_string(&with_args.messages).unwrap();
        assert!(said.contains("Paris"), "{said}");
        let args = BTreeMap::from([
            ("resourceType".to_owned(), "Text".to_owned()),
            ("resourceId".to_owned(), "2".to_owned()),
        ]);
        let embedded = client.get_prompt("resource-prompt", args).await.unwrap();
        let said = serde_json::to_string(&embedded.messages).unwrap();
        assert!(said.contains("demo://resource/dynamic/text/2"), "{said}");
        let missing = client.get_prompt("args-prompt", BTreeMap::new()).await;
        assert!(matches!(missing, Err(CallError::Request(_))), "{missing:?}");

        let reference =
            Reference::Prompt { name: "completable-prompt".into(), title: None, extra: Map::new() };
        let done = client.complete(reference, "department", "Eng").await.unwrap();
        assert_eq!(done.completion.values, vec!["Engineering".to_owned()]);

        client.close().await.unwrap();
    });
}

#[test]
fn server_everything_call_cancelled_mid_flight() {
    run(60, async {
        let wire = wire::WireLog::new("smol-cancel");
        let client = connect_recorded(&wire).await;
        let (tx, progress) = smol::channel::unbounded();
        let long = client.call_tool_with_progress(
            "trigger-long-running-operation",
            json!({"duration": 20, "steps": 200}),
            move |p| {
                let _ = tx.try_send(p.progress);
            },
        );
        // Run the call until its first progress report, then drop its future.
        let first = async {
            let first = progress.recv().await.unwrap();
            Err::<Result<CallToolResult, CallError>, f64>(first)
        };
        let outcome = async { Ok(long.await) }.or(first).await;
        assert_eq!(outcome.unwrap_err(), 1.0, "the call was still running when dropped");
        // Dropping it sent notifications/cancelled naming its id: seen on the wire.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while let Err(e) = wire.cancelled_call("trigger-long-running-operation") {
            assert!(std::time::Instant::now() < deadline, "{e}");
            smol::Timer::after(Duration::from_millis(20)).await;
        }
        // The session goes on, and no more progress arrives for the cancelled call.
        while progress.try_recv().is_ok() {}
        client.ping().await.unwrap();
        let r = call(&client, "echo", json!({"message": "after cancel"})).await;
        assert!(text(&r).contains("after cancel"));
        smol::Timer::after(Duration::from_millis(300)).await;
        assert!(progress.try_recv().is_err(), "progress kept coming after the cancel");
        client.close().await.unwrap();
    });
}

/// server-everything's sampling, elicitation and roots tools against a client configured with
/// a sampling policy (the reviewer approves, the delegate answers), a form handler that leaves
/// fields to their defaults, a URL handler, and a root list that changes mid-session.
#[test]
fn server_everything_sampling_elicitation_and_roots_through_a_policy() {
    use std::sync::{Arc, Mutex};
    use zest_smol::schema::CreateMessageResult;
    use zest_smol::{AsyncClientHandlers, SamplingPolicy, SamplingSummary};

    run(120, async {
        let summaries: Arc<Mutex<Vec<SamplingSummary>>> = Arc::default();
        let delegated = Arc::new(Mutex::new(0));
        let (seen, count) = (summaries.clone(), delegated.clone());
        let policy = SamplingPolicy::reviewed(move |summary| {
            seen.lock().unwrap().push(summary);
            async { true }
        })
        .max_tokens(1000)
        .models(["claude-*"])
        .delegate(move |request| {
            *count.lock().unwrap() += 1;
            let turns = request.messages.len();
            async move {
                Ok(CreateMessageResult::text(
                    "zest-smol-model",
                    format!("policy answer to {turns} turn(s)"),
                ))
            }
        });
        let root = |uri: &str| serde_json::from_value::<Root>(json!({"uri": uri})).unwrap();
        let handlers = AsyncClientHandlers::default()
            .sampling_policy(policy)
            .on_elicitation(|_| async {
                Ok(serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}}))
                    .unwrap())
            })
            .on_url_elicitation(|p| async move {
                assert_eq!(p.url, "https://example.invalid/connect");
                Ok(ElicitResult {
                    action: ElicitAction::Decline,
                    content: None,
                    meta: None,
                    extra: Map::new(),
                })
            })
            .roots(vec![root("file:///tmp/zest-smol-first")]);
        let cmd = StdioCommand::new(everything())
            .arg("stdio")
            .on_stderr(|_| {})
            .shutdown_grace(Duration::from_millis(500));
        let options = ClientOptions::new("zest-smol-policy-test", "0.1.0").handlers(handlers);
        let client = Client::spawn(cmd, options).await.unwrap();
        let names = tools(&client).await;
        assert!(names.contains("trigger-url-elicitation"), "{names:?}");

        let sampled =
            call(&client, "trigger-sampling-request", json!({"prompt": "say hi to zest"})).await;
        assert!(text(&sampled).contains("policy answer to 1 turn(s)"), "{sampled:?}");
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
        let over = client
            .call_tool("trigger-sampling-request", json!({"prompt": "x", "maxTokens": 5000}))
            .await;
        let why = match &over {
            Ok(r) => text(r),
            Err(e) => e.to_string(),
        };
        assert!(why.contains("exceeds this client's limit of 1000"), "{over:?}");
        assert_eq!((summaries.lock().unwrap().len(), *delegated.lock().unwrap()), (1, 1));

        let raw = text(&call(&client, "trigger-elicitation-request", json!({})).await);
        for part in ["\"name\": \"Ada\"", "It was a dark and stormy night.", "\"integer\": 42"] {
            assert!(raw.contains(part), "{part} missing from {raw}");
        }

        let args = json!({"url": "https://example.invalid/connect", "errorPath": true});
        let required = client.call_tool("trigger-url-elicitation", args.clone()).await.unwrap_err();
        let list = required.url_elicitations().expect("a -32042 error");
        assert_eq!(list[0].url, "https://modelcontextprotocol.io");
        let declined = call(&client, "trigger-url-elicitation", args).await;
        assert!(text(&declined).contains("declined"), "{declined:?}");

        let roots = call(&client, "get-roots-list", json!({})).await;
        assert!(text(&roots).contains("file:///tmp/zest-smol-first"), "{roots:?}");
        client.set_roots(vec![root("file:///tmp/zest-smol-second")]).unwrap();
        assert!(client.set_roots(vec![root("file:///tmp/../etc")]).is_err());
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let roots = call(&client, "get-roots-list", json!({})).await;
            if text(&roots).contains("file:///tmp/zest-smol-second") {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "new roots never arrived: {roots:?}");
            smol::Timer::after(Duration::from_millis(50)).await;
        }
        client.close().await.unwrap();
    });
}
