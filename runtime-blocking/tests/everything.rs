//! The client against the reference server `@modelcontextprotocol/server-everything` (pinned in
//! tests/peers). Tools that need a human (elicitation) are not offered: the client declares
//! only sampling and roots, answered by canned handlers.

mod common;
#[path = "../../tests/support/wire.rs"]
mod wire;

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zest_blocking::core::api::ProgressFn;
use zest_blocking::core::client::ServerNotification;
use zest_blocking::core::error::RequestError;
use zest_blocking::core::RequestOptions;
use zest_blocking::schema::methods::CallTool;
use zest_blocking::schema::{CallToolParams, CallToolResult, ListRootsResult, LoggingLevel, Root};
use zest_blocking::{CallError, Client, ClientApi, ClientOptions, StdioCommand};

const MARKER: &str = "zest-blocking-marker";

fn everything() -> Client {
    let bin = common::peer("node_modules/.bin/mcp-server-everything");
    everything_via(StdioCommand::new(bin).arg("stdio"))
}

/// server-everything started with the client's writes teed into `wire`.
fn everything_recorded(wire: &wire::WireLog) -> Client {
    let bin = common::peer("node_modules/.bin/mcp-server-everything");
    let (program, args) = wire.wrap(&bin, &["stdio"]);
    everything_via(StdioCommand::new(program).args(args))
}

fn everything_via(command: StdioCommand) -> Client {
    let command = command
        .env("ZEST_TEST_MARKER", MARKER)
        .shutdown_grace(Duration::from_millis(500))
        .on_stderr(|_| {});
    let handlers = common::canned_sampling().on_roots(|| {
        let root = Root {
            uri: "file:///tmp/zest-root".into(),
            name: Some("zest".into()),
            ..Default::default()
        };
        Ok(ListRootsResult { roots: vec![root], ..Default::default() })
    });
    Client::spawn(command, ClientOptions::new("zest-blocking-tests", "0.0.0").handlers(handlers))
        .expect("server-everything starts")
}

/// Lists tools until the ones registered after `initialized` (announced with
/// `tools/list_changed`) are there.
fn all_tools(client: &Client) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut names: Vec<String> =
            client.list_all_tools().expect("tools/list").into_iter().map(|t| t.name).collect();
        names.sort();
        if names.iter().any(|n| n == "trigger-sampling-request") || Instant::now() > deadline {
            return names;
        }
        // Woken by the list_changed announcement, or re-list after a while regardless.
        let _ = client.notifications().recv_timeout(Duration::from_millis(200));
    }
}

fn call(client: &Client, tool: &str, args: Value) -> Value {
    let result = client.call_tool(tool, args).unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(!result.is_error(), "{tool} failed: {result:?}");
    serde_json::to_value(result).expect("a result serializes")
}

fn texts(result: &Value) -> Vec<String> {
    let blocks = result["content"].as_array().cloned().unwrap_or_default();
    blocks.iter().filter_map(|b| b["text"].as_str().map(str::to_owned)).collect()
}

fn wait_for(client: &Client, what: &str, pred: impl Fn(&ServerNotification) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Some(n) = client.notifications().recv_timeout(Duration::from_millis(100)) {
            if pred(&n) {
                return;
            }
        }
    }
    panic!("no {what} notification within 30 s");
}

#[test]
fn handshake_and_every_tool_listed() {
    let client = everything();
    let n = client.negotiated();
    assert_eq!(n.server_info.name, "mcp-servers/everything");
    assert!(n.capabilities.tools.is_some() && n.capabilities.prompts.is_some());
    assert!(n.instructions.as_deref().is_some_and(|i| i.contains("Everything Server")));
    let expected = [
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
    assert_eq!(all_tools(&client), expected);
    client.ping().expect("ping");
}

#[test]
fn tools_that_need_no_human_return_their_results() {
    let client = everything();
    all_tools(&client);

    assert_eq!(texts(&call(&client, "echo", json!({"message": "hi"}))), ["Echo: hi"]);
    assert_eq!(
        texts(&call(&client, "get-sum", json!({"a": 2, "b": 40}))),
        ["The sum of 2 and 40 is 42."]
    );

    let annotated = call(
        &client,
        "get-annotated-message",
        json!({"messageType": "error", "includeImage": true}),
    );
    assert_eq!(annotated["content"][0]["text"], "Error: Operation failed");
    assert_eq!(annotated["content"][0]["annotations"]["priority"], 1.0);
    assert_eq!(annotated["content"][1]["type"], "image");

    let env = call(&client, "get-env", json!({}));
    let vars: Value = serde_json::from_str(&texts(&env)[0]).expect("get-env returns JSON");
    assert_eq!(vars["ZEST_TEST_MARKER"], MARKER, "StdioCommand::env reaches the child");

    let links = call(&client, "get-resource-links", json!({"count": 2}));
    let blocks = links["content"].as_array().expect("content");
    assert_eq!(blocks.len(), 3);
    assert!(blocks[1..].iter().all(|b| b["type"] == "resource_link"));

    let reference =
        call(&client, "get-resource-reference", json!({"resourceType": "Text", "resourceId": 3}));
    assert_eq!(reference["content"][1]["type"], "resource");
    assert_eq!(reference["content"][1]["resource"]["uri"], "demo://resource/dynamic/text/3");

    let weather = call(&client, "get-structured-content", json!({"location": "Chicago"}));
    assert_eq!(
        weather["structuredContent"],
        json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82})
    );

    let image = call(&client, "get-tiny-image", json!({}));
    assert_eq!(image["content"][1]["mimeType"], "image/png");

    // gzip-file-as-resource fetches `data` (an https URL by default); a data: URI keeps it off
    // the network. "hello" gzipped starts with the gzip magic 1f 8b 08, "H4sI" in base64.
    let gz = call(
        &client,
        "gzip-file-as-resource",
        json!({"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resource"}),
    );
    assert!(gz["content"][0]["resource"]["blob"].as_str().is_some_and(|b| b.starts_with("H4sI")));
    let link = call(
        &client,
        "gzip-file-as-resource",
        json!({"name": "again.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"}),
    );
    let uri = link["content"][0]["uri"].as_str().expect("a resource link");
    let read = serde_json::to_value(client.read_resource(uri).expect("read the gzip")).unwrap();
    assert!(read["contents"][0]["blob"].as_str().is_some_and(|b| b.starts_with("H4sI")));

    let roots = texts(&call(&client, "get-roots-list", json!({}))).join("\n");
    assert!(roots.contains("file:///tmp/zest-root"), "{roots}");

    let sampled = texts(&call(&client, "trigger-sampling-request", json!({"prompt": "hi"})));
    assert!(sampled[0].contains("canned: Resource trigger-sampling-request context: hi"));
    assert!(sampled[0].contains("zest-test-model"));

    // simulate-research-query requires task-based execution, which zest does not offer yet:
    // the plain call is refused.
    let refused = client.call_tool("simulate-research-query", json!({"topic": "zest"})).unwrap();
    assert!(refused.is_error());
    assert!(refused.content[0].as_text().unwrap().contains("requires task augmentation"));
}

#[test]
fn logging_and_subscription_toggles_send_notifications() {
    let client = everything();
    client.set_logging_level(LoggingLevel::Debug).expect("logging/setLevel");
    let started = texts(&call(&client, "toggle-simulated-logging", json!({})));
    assert!(started[0].starts_with("Started simulated"), "{started:?}");
    wait_for(
        &client,
        "log",
        |n| matches!(n, ServerNotification::LoggingMessage(m) if m.logger.is_none() || m.data.as_str().is_some_and(|d| d.contains("-level message") || d.contains("level-message"))),
    );
    let stopped = texts(&call(&client, "toggle-simulated-logging", json!({})));
    assert!(stopped[0].starts_with("Stopped simulated"), "{stopped:?}");

    let uri = "demo://resource/dynamic/text/1";
    client.subscribe(uri).expect("resources/subscribe");
    let started = texts(&call(&client, "toggle-subscriber-updates", json!({})));
    assert!(started[0].starts_with("Started simulated"), "{started:?}");
    wait_for(
        &client,
        "resource updated",
        |n| matches!(n, ServerNotification::ResourceUpdated(u) if u.uri == uri),
    );
    call(&client, "toggle-subscriber-updates", json!({}));
    client.unsubscribe(uri).expect("resources/unsubscribe");
}

#[test]
fn resources_are_read() {
    let client = everything();
    let resources = client.list_all_resources().expect("resources/list");
    assert!(resources.len() >= 5, "{resources:?}");
    for r in &resources {
        let read = client.read_resource(&r.uri).unwrap_or_else(|e| panic!("{}: {e}", r.uri));
        let value = serde_json::to_value(&read).unwrap();
        let text = value["contents"][0]["text"].as_str().unwrap_or_default();
        assert!(!text.is_empty(), "{} is empty", r.uri);
    }
    let templates = client.list_all_resource_templates().expect("templates");
    assert_eq!(templates.len(), 2);
    let text =
        serde_json::to_value(client.read_resource("demo://resource/dynamic/text/5").unwrap())
            .unwrap();
    assert!(text["contents"][0]["text"].as_str().is_some_and(|t| t.contains('5')), "{text}");
    let blob =
        serde_json::to_value(client.read_resource("demo://resource/dynamic/blob/6").unwrap())
            .unwrap();
    assert!(blob["contents"][0]["blob"].as_str().is_some_and(|b| !b.is_empty()), "{blob}");
}

#[test]
fn prompts_are_fetched() {
    let client = everything();
    let names: Vec<String> =
        client.list_all_prompts().expect("prompts/list").into_iter().map(|p| p.name).collect();
    assert!(names.contains(&"simple-prompt".to_owned()), "{names:?}");

    let simple =
        serde_json::to_value(client.get_prompt("simple-prompt", BTreeMap::new()).unwrap()).unwrap();
    assert!(simple["messages"][0]["content"]["text"].is_string());

    let args = BTreeMap::from([("city".to_owned(), "Paris".to_owned())]);
    let with_args = serde_json::to_value(client.get_prompt("args-prompt", args).unwrap()).unwrap();
    assert!(with_args["messages"][0]["content"]["text"].as_str().unwrap().contains("Paris"));

    let args = BTreeMap::from([
        ("resourceType".to_owned(), "Text".to_owned()),
        ("resourceId".to_owned(), "2".to_owned()),
    ]);
    let embedded =
        serde_json::to_value(client.get_prompt("resource-prompt", args).unwrap()).unwrap();
    assert_eq!(embedded["messages"][1]["content"]["type"], "resource");
    assert_eq!(
        embedded["messages"][1]["content"]["resource"]["uri"],
        "demo://resource/dynamic/text/2"
    );
}

#[test]
fn long_running_operation_reports_progress() {
    let client = everything();
    let (tx, rx) = mpsc::channel();
    let result = client
        .call_tool_with_progress(
            "trigger-long-running-operation",
            json!({"duration": 0.3, "steps": 3}),
            move |p| {
                let _ = tx.send((p.progress, p.total));
            },
        )
        .expect("the operation completes");
    assert!(!result.is_error());
    assert_eq!(
        result.content[0].as_text(),
        Some("Long running operation completed. Duration: 0.3 seconds, Steps: 3.")
    );
    let progress: Vec<_> = rx.try_iter().collect();
    assert_eq!(progress, [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);
}

#[test]
fn a_call_is_cancelled_mid_flight() {
    let wire = wire::WireLog::new("blocking-cancel");
    let client = everything_recorded(&wire);
    let params: CallToolParams = serde_json::from_value(json!({
        "name": "trigger-long-running-operation",
        "arguments": {"duration": 60, "steps": 120}
    }))
    .unwrap();
    let (tx, rx) = mpsc::channel();
    let on_progress: ProgressFn = Box::new(move |p| {
        let _ = tx.send(p.progress);
    });
    let pending = client.start_with_progress::<CallTool>(
        params,
        RequestOptions::with_progress(),
        Some(on_progress),
    );
    let first = rx.recv_timeout(Duration::from_secs(30)).expect("the operation reports progress");
    assert_eq!(first, 1.0);
    let cancel = pending.cancel_handle().expect("the call was sent");
    let started = Instant::now();
    std::thread::spawn(move || cancel.cancel());
    let outcome: Result<CallToolResult, CallError> = pending.wait();
    assert_eq!(outcome, Err(CallError::Request(RequestError::Cancelled)));
    // At once, not when the 60 s operation would have ended.
    assert!(started.elapsed() < Duration::from_secs(30), "cancel took {:?}", started.elapsed());
    // The server was told: notifications/cancelled naming the call's id went out on the wire.
    wire.expect_cancelled_call("trigger-long-running-operation");
    // The session goes on.
    assert_eq!(
        texts(&call(&client, "echo", json!({"message": "still here"}))),
        ["Echo: still here"]
    );
}

/// server-everything's sampling, elicitation and roots tools against a client configured with
/// a sampling policy (the reviewer approves, the delegate answers), a form handler that leaves
/// fields to their defaults, a URL handler, and a root list that changes mid-session.
#[test]
fn sampling_elicitation_and_roots_through_a_policy() {
    use std::sync::{Arc, Mutex};
    use zest_blocking::core::handler::SyncClientHandlers;
    use zest_blocking::schema::{CreateMessageResult, ElicitAction, ElicitResult};
    use zest_blocking::{SamplingPolicy, SamplingSummary};

    let summaries: Arc<Mutex<Vec<SamplingSummary>>> = Arc::default();
    let delegated = Arc::new(Mutex::new(0));
    let (seen, count) = (summaries.clone(), delegated.clone());
    let policy = SamplingPolicy::reviewed(move |summary| {
        seen.lock().unwrap().push(summary);
        true
    })
    .max_tokens(1000)
    .models(["claude-*"])
    .delegate(move |request| {
        *count.lock().unwrap() += 1;
        let turns = request.messages.len();
        Ok(CreateMessageResult::text(
            "zest-blocking-model",
            format!("policy answer to {turns} turn(s)"),
        ))
    });
    let root = |uri: &str| Root { uri: uri.into(), ..Default::default() };
    let handlers = SyncClientHandlers::default()
        .sampling_policy(policy)
        .on_elicitation(|_| {
            Ok(serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}}))
                .unwrap())
        })
        .on_url_elicitation(|p| {
            assert_eq!(p.url, "https://example.invalid/connect");
            Ok(ElicitResult::new(ElicitAction::Decline))
        })
        .roots(vec![root("file:///tmp/zest-blocking-first")]);
    let bin = common::peer("node_modules/.bin/mcp-server-everything");
    let command = StdioCommand::new(bin)
        .arg("stdio")
        .shutdown_grace(Duration::from_millis(500))
        .on_stderr(|_| {});
    let options = ClientOptions::new("zest-blocking-policy-test", "0.0.0").handlers(handlers);
    let client = Client::spawn(command, options).expect("server-everything starts");
    let names = all_tools(&client);
    assert!(names.iter().any(|n| n == "trigger-url-elicitation"), "{names:?}");

    let sampled = call(&client, "trigger-sampling-request", json!({"prompt": "say hi to zest"}));
    assert!(texts(&sampled)[0].contains("policy answer to 1 turn(s)"), "{sampled}");
    let reviewed = summaries.lock().unwrap().clone();
    assert_eq!((reviewed.len(), reviewed[0].max_tokens, reviewed[0].message_count()), (1, 100, 1));
    let shown = format!("{:?} {}", reviewed[0], reviewed[0]);
    assert!(!shown.contains("say hi to zest") && !shown.contains("helpful test server"), "{shown}");
    let over =
        client.call_tool("trigger-sampling-request", json!({"prompt": "x", "maxTokens": 5000}));
    let why = match &over {
        Ok(r) => texts(&serde_json::to_value(r).unwrap()).concat(),
        Err(e) => e.to_string(),
    };
    assert!(why.contains("exceeds this client's limit of 1000"), "{over:?}");
    assert_eq!((summaries.lock().unwrap().len(), *delegated.lock().unwrap()), (1, 1));

    let raw = texts(&call(&client, "trigger-elicitation-request", json!({}))).concat();
    for part in ["\"name\": \"Ada\"", "It was a dark and stormy night.", "\"integer\": 42"] {
        assert!(raw.contains(part), "{part} missing from {raw}");
    }

    let args = json!({"url": "https://example.invalid/connect", "errorPath": true});
    let required = client.call_tool("trigger-url-elicitation", args.clone()).unwrap_err();
    let list = required.url_elicitations().expect("a -32042 error");
    assert_eq!(list[0].url, "https://modelcontextprotocol.io");
    let declined = call(&client, "trigger-url-elicitation", args);
    assert!(texts(&declined).concat().contains("declined"), "{declined}");

    let roots = call(&client, "get-roots-list", json!({}));
    assert!(texts(&roots).concat().contains("file:///tmp/zest-blocking-first"), "{roots}");
    client.set_roots(vec![root("file:///tmp/zest-blocking-second")]).unwrap();
    assert!(client.set_roots(vec![root("/no/scheme")]).is_err());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let roots = call(&client, "get-roots-list", json!({}));
        if texts(&roots).concat().contains("file:///tmp/zest-blocking-second") {
            break;
        }
        assert!(Instant::now() < deadline, "new roots never arrived: {roots}");
        std::thread::sleep(Duration::from_millis(50));
    }
    client.close().unwrap();
}
