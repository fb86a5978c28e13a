//! The server handle: tools added and removed at run time (from outside and from a handler)
//! are listed after `list_changed` on every open session, resource updates reach only the
//! subscribed session, logs outside a request carry their logger name, handlers see the
//! client's info and capabilities, and `listChanged`/`subscribe` are declared only when the
//! app holds a handle.

use std::time::Duration;

use serde_json::json;
use std::os::unix::net::UnixStream;
use zest_blocking::core::client::ServerNotification;
use zest_blocking::schema::{LoggingLevel, ReadResourceParams, ReadResourceResult, Resource};
use zest_blocking::{
    in_memory, serve, serve_http, Client, ClientApi, ClientOptions, Context, Notifications,
    Registry, ServerConfig, ServerHandle,
};

/// Far above what any step here takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(30);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

fn read(
    _: &Context,
    p: ReadResourceParams,
) -> zest_blocking::core::handler::HandlerResult<ReadResourceResult> {
    Ok(ReadResourceResult::text(p.uri, Some("text/plain"), "notes"))
}

fn registry() -> Registry {
    let mut registry = Registry::new()
        .tool("echo", "Echoes", |Text { text }| text)
        .tool("install", "Adds the tool `late`", |Nothing {}, ctx: Context| {
            ctx.server()
                .add_tool("late", "Added by a handler", |Text { text }| format!("late {text}"));
            "installed"
        })
        .tool("whoami", "The client's name and whether it samples", |Nothing {}, ctx: Context| {
            let name = ctx.client_info().map(|i| i.name.clone()).unwrap_or_default();
            let samples = ctx.client_capabilities().is_some_and(|c| c.sampling.is_some());
            format!("{name} samples={samples}")
        });
    registry.resource(Resource::new("file:///notes", "notes"), read);
    registry
}

/// The session era: the handle's logs outside a request and its list changes on open
/// sessions are that era's (a 2026-07-28 client hears list changes on its listen only).
fn config() -> ServerConfig {
    ServerConfig::new("handle-test", "1.0").session_era()
}

/// The next notification `pick` accepts, skipping others; fails after [`HANG`].
fn next<T>(rx: &Notifications, mut pick: impl FnMut(ServerNotification) -> Option<T>) -> T {
    loop {
        let n = rx.recv_timeout(HANG).expect("a notification within the time limit");
        if let Some(found) = pick(n) {
            return found;
        }
    }
}

fn tools_changed(rx: &Notifications) {
    next(rx, |n| (n == ServerNotification::ToolListChanged).then_some(()));
}

/// The very next notification (what was sent before it would come first).
fn very_next(rx: &Notifications) -> ServerNotification {
    next(rx, Some)
}

fn tool_names(client: &Client) -> Vec<String> {
    let listed = client.list_tools(None).unwrap();
    listed.tools.into_iter().map(|t| t.name).collect()
}

fn text_of(client: &Client, tool: &str, args: serde_json::Value) -> String {
    let result = client.call_tool(tool, args).unwrap();
    result.content[0].as_text().unwrap().to_owned()
}

/// A log record both sessions get: whatever a session was sent before comes first.
fn marker(handle: &ServerHandle) {
    handle.log_as("marker", LoggingLevel::Info, json!("marker"));
}

fn is_marker(n: &ServerNotification) -> bool {
    matches!(n, ServerNotification::LoggingMessage(m) if m.logger.as_deref() == Some("marker"))
}

fn http_pair(handle_of: &zest_blocking::HttpServer) -> (ServerHandle, Client, Client) {
    let url = handle_of.url();
    let a = Client::connect(&url, ClientOptions::new("client-a", "1")).unwrap();
    let b = Client::connect(&url, ClientOptions::new("client-b", "1")).unwrap();
    (handle_of.handle(), a, b)
}

#[test]
fn stdio_tool_added_and_removed_from_outside_is_announced_then_listed() {
    // In both eras: in 2026-07-28 the change, made the moment the client is ready, travels on
    // the client's listen, which is acknowledged before the client is ready.
    for config in [config(), ServerConfig::new("handle-test", "1.0")] {
        let (client, server) = in_memory(config, registry()).unwrap();
        let rx = client.notifications();
        let handle = server.handle();
        handle.add_tool("late", "Added from outside", |Text { text }| text);
        tools_changed(rx);
        assert!(tool_names(&client).contains(&"late".to_owned()));
        assert_eq!(text_of(&client, "late", json!({"text": "hi"})), "hi");
        handle.remove_tool("late");
        tools_changed(rx);
        assert!(!tool_names(&client).contains(&"late".to_owned()));
        client.close().unwrap();
        server.stopped();
    }
}

#[test]
fn stdio_tool_added_from_a_handler_is_announced_then_listed() {
    let (client, server) = in_memory(config(), registry()).unwrap();
    let rx = client.notifications();
    assert_eq!(text_of(&client, "install", json!({})), "installed");
    tools_changed(rx);
    assert_eq!(text_of(&client, "late", json!({"text": "x"})), "late x");
    client.close().unwrap();
    server.stopped();
}

#[test]
fn stdio_resource_updates_need_a_subscription_and_logs_name_their_logger() {
    let (client, server) = in_memory(config(), registry()).unwrap();
    let rx = client.notifications();
    let handle = server.handle();
    handle.resource_updated("file:///notes");
    marker(&handle);
    assert!(is_marker(&very_next(rx)), "not subscribed: no update before the marker");
    client.subscribe("file:///notes").unwrap();
    handle.resource_updated("file:///other");
    handle.resource_updated("file:///notes");
    let n = very_next(rx);
    assert!(
        matches!(&n, ServerNotification::ResourceUpdated(u) if u.uri == "file:///notes"),
        "{n:?}"
    );
    handle.log_as("db", LoggingLevel::Warning, json!({"slow": true}));
    let n = very_next(rx);
    let ServerNotification::LoggingMessage(m) = n else { panic!("{n:?}") };
    assert_eq!(
        (m.logger.as_deref(), m.level, m.data),
        (Some("db"), LoggingLevel::Warning, json!({"slow": true}))
    );
    client.close().unwrap();
    server.stopped();
}

#[test]
fn a_handler_sees_the_clients_info_and_capabilities() {
    let (client, server) = in_memory(config(), registry()).unwrap();
    assert_eq!(text_of(&client, "whoami", json!({})), "zest-in-memory samples=false");
    client.close().unwrap();
    server.stopped();
}

#[test]
fn capabilities_declare_changes_only_with_a_handle() {
    let (client, server) = in_memory(config(), registry()).unwrap();
    let caps = &client.negotiated().capabilities;
    assert_eq!(caps.tools.as_ref().and_then(|t| t.list_changed), Some(true));
    assert_eq!(caps.resources.as_ref().and_then(|r| r.subscribe), Some(true));
    assert_eq!(caps.prompts.as_ref().and_then(|p| p.list_changed), Some(true), "declared empty");
    client.close().unwrap();
    server.stopped();

    // Plain `serve`: nobody outside can change anything, so nothing is promised, in either
    // era (in 2026-07-28 the client itself refuses a subscription nothing would answer).
    for config in [config(), ServerConfig::new("handle-test", "1.0")] {
        let (server_reader, client_writer) = UnixStream::pair().unwrap();
        let (client_reader, server_writer) = UnixStream::pair().unwrap();
        let served =
            std::thread::spawn(move || serve(config, registry(), server_reader, server_writer));
        let client =
            Client::over(client_reader, client_writer, ClientOptions::new("plain", "1")).unwrap();
        let caps = &client.negotiated().capabilities;
        assert_eq!(caps.tools.as_ref().map(|t| t.list_changed), Some(None));
        let resources = caps.resources.as_ref().map(|r| (r.subscribe, r.list_changed));
        assert_eq!(resources, Some((None, None)));
        assert!(caps.prompts.is_none());
        assert!(client.subscribe("file:///notes").is_err(), "subscribe is not offered");
        client.close().unwrap();
        served.join().unwrap();
    }
}

#[test]
fn http_tool_added_from_outside_reaches_every_session() {
    let server = serve_http("127.0.0.1:0", config(), registry()).unwrap();
    let (handle, a, b) = http_pair(&server);
    let (rx_a, rx_b) = (a.notifications(), b.notifications());
    let caps = &a.negotiated().capabilities;
    assert_eq!(caps.tools.as_ref().and_then(|t| t.list_changed), Some(true));
    handle.add_tool("late", "Added from outside", |Text { text }| text);
    for (client, rx) in [(&a, rx_a), (&b, rx_b)] {
        tools_changed(rx);
        assert!(tool_names(client).contains(&"late".to_owned()));
    }
    handle.remove_tool("late");
    for (client, rx) in [(&a, rx_a), (&b, rx_b)] {
        tools_changed(rx);
        assert!(!tool_names(client).contains(&"late".to_owned()));
    }
    a.close().unwrap();
    b.close().unwrap();
    server.shutdown();
}

#[test]
fn http_tool_added_from_a_handler_reaches_every_session() {
    let server = serve_http("127.0.0.1:0", config(), registry()).unwrap();
    let (_, a, b) = http_pair(&server);
    let (rx_a, rx_b) = (a.notifications(), b.notifications());
    assert_eq!(text_of(&a, "install", json!({})), "installed");
    tools_changed(rx_a);
    tools_changed(rx_b);
    assert_eq!(text_of(&b, "late", json!({"text": "b"})), "late b");
    assert_eq!(text_of(&b, "whoami", json!({})), "client-b samples=false");
    a.close().unwrap();
    b.close().unwrap();
    server.shutdown();
}

#[test]
fn http_resource_updates_reach_only_the_subscribed_session_and_logs_reach_all() {
    let server = serve_http("127.0.0.1:0", config(), registry()).unwrap();
    let (handle, a, b) = http_pair(&server);
    let (rx_a, rx_b) = (a.notifications(), b.notifications());
    a.subscribe("file:///notes").unwrap();
    handle.resource_updated("file:///notes");
    marker(&handle);
    let n = very_next(rx_a);
    assert!(
        matches!(&n, ServerNotification::ResourceUpdated(u) if u.uri == "file:///notes"),
        "{n:?}"
    );
    assert!(is_marker(&very_next(rx_a)));
    assert!(is_marker(&very_next(rx_b)), "b did not subscribe: the marker comes first");
    handle.log_as("db", LoggingLevel::Error, json!("down"));
    for rx in [rx_a, rx_b] {
        let n = very_next(rx);
        let ServerNotification::LoggingMessage(m) = n else { panic!("{n:?}") };
        assert_eq!((m.logger.as_deref(), m.data), (Some("db"), json!("down")));
    }
    a.close().unwrap();
    b.close().unwrap();
    server.shutdown();
}

#[test]
fn a_handle_kept_after_its_http_server_stopped_does_not_keep_the_server_alive() {
    // The registry's one tool holds `alive`: the router holding the registry is gone once
    // only the test's own count is left.
    let alive = std::sync::Arc::new(());
    let held = alive.clone();
    let registry = Registry::new().tool("echo", "Echoes", move |Text { text }| {
        let _ = &held;
        text
    });
    let server = serve_http("127.0.0.1:0", config(), registry).unwrap();
    let handle = server.handle();
    server.shutdown();
    let deadline = std::time::Instant::now() + HANG;
    while std::sync::Arc::strong_count(&alive) > 1 {
        assert!(std::time::Instant::now() < deadline, "the handle keeps the server's router");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Telling a stopped server's sessions something is telling nobody.
    handle.log(LoggingLevel::Info, json!("after the end"));
}
