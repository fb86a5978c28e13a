use std::time::Instant;

use serde_json::{json, Value};

use super::Broadcast;
use crate::io::StreamId;
use crate::schema::{LoggingLevel, Resource, Tool};
use crate::server::{ListKind, Registry, ServerConfig, Session};
use crate::testkit::VirtualClock;

fn registry() -> Registry<()> {
    let mut registry = Registry::new();
    registry.add_tool(Tool::new("echo", "Echoes", json!({"type": "object"})), ());
    registry.add_resource(Resource::new("file:///a", "a"), ());
    registry
}

/// An open session; returns it with the capabilities it declared.
fn open(announce: bool, now: Instant) -> (Session<()>, Value) {
    let mut config = ServerConfig::new("t", "1");
    config.announce_changes = announce;
    let mut s = Session::new(config, registry(), now);
    send(
        &mut s,
        now,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}),
    );
    send(&mut s, now, json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let sent = drain(&mut s);
    (s, sent[0]["result"]["capabilities"].clone())
}

fn send(s: &mut Session<()>, now: Instant, message: Value) {
    s.handle_frame(now, StreamId::STDIO, &serde_json::to_vec(&message).unwrap());
}

fn drain(s: &mut Session<()>) -> Vec<Value> {
    while s.poll_event().is_some() {}
    std::iter::from_fn(|| s.poll_outgoing())
        .map(|o| serde_json::from_slice(&o.json).unwrap())
        .collect()
}

fn methods(sent: &[Value]) -> Vec<&str> {
    sent.iter().filter_map(|m| m["method"].as_str()).collect()
}

fn add_tool(name: &'static str) -> Broadcast<()> {
    Broadcast::ChangeRegistry {
        changed: vec![ListKind::Tools],
        change: Box::new(move |r| {
            r.add_tool(Tool::new(name, "new", json!({"type": "object"})), ())
        }),
    }
}

#[test]
fn a_tool_added_is_announced_then_listed() {
    let now = VirtualClock::new().now();
    let (mut s, caps) = open(true, now);
    assert_eq!(caps["tools"]["listChanged"], true);
    assert_eq!(caps["prompts"]["listChanged"], true, "declared while empty");
    assert_eq!(caps["resources"], json!({"listChanged": true, "subscribe": true}));
    add_tool("late").apply(now, &mut s);
    assert_eq!(methods(&drain(&mut s)), ["notifications/tools/list_changed"]);
    send(&mut s, now, json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    let listed = drain(&mut s);
    let names: Vec<&str> = listed[0]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "late"]);
}

#[test]
fn without_announcing_lists_are_fixed_and_nothing_is_sent() {
    let now = VirtualClock::new().now();
    let (mut s, caps) = open(false, now);
    assert_eq!(caps["tools"], json!({}), "no listChanged");
    assert_eq!(caps["resources"], json!({}), "no listChanged, no subscribe");
    assert!(caps.get("prompts").is_none(), "no prompts registered");
    add_tool("late").apply(now, &mut s);
    assert!(drain(&mut s).is_empty());
    send(
        &mut s,
        now,
        json!({"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///a"}}),
    );
    assert_eq!(drain(&mut s)[0]["error"]["code"], -32601, "subscribe is not offered");
}

#[test]
fn resource_updates_reach_subscribers_only() {
    let now = VirtualClock::new().now();
    let (mut s, _) = open(true, now);
    Broadcast::ResourceUpdated { uri: "file:///a".into() }.apply(now, &mut s);
    assert!(drain(&mut s).is_empty(), "not subscribed yet");
    send(
        &mut s,
        now,
        json!({"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///a"}}),
    );
    drain(&mut s);
    Broadcast::ResourceUpdated { uri: "file:///b".into() }.apply(now, &mut s);
    Broadcast::ResourceUpdated { uri: "file:///a".into() }.apply(now, &mut s);
    let sent = drain(&mut s);
    assert_eq!(methods(&sent), ["notifications/resources/updated"]);
    assert_eq!(sent[0]["params"]["uri"], "file:///a");
}

#[test]
fn logs_name_their_logger_and_respect_the_level() {
    let now = VirtualClock::new().now();
    let (mut s, _) = open(true, now);
    let log = |level| Broadcast::Log { level, logger: Some("db".into()), data: json!("hi") };
    log(LoggingLevel::Debug).apply(now, &mut s);
    let sent = drain(&mut s);
    assert_eq!(sent[0]["method"], "notifications/message");
    assert_eq!(sent[0]["params"], json!({"level": "debug", "logger": "db", "data": "hi"}));
    send(
        &mut s,
        now,
        json!({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"warning"}}),
    );
    drain(&mut s);
    log(LoggingLevel::Info).apply(now, &mut s);
    assert!(drain(&mut s).is_empty(), "below the client's level");
    log(LoggingLevel::Error).apply(now, &mut s);
    assert_eq!(methods(&drain(&mut s)), ["notifications/message"]);
}

#[test]
fn nothing_reaches_a_session_not_yet_initialized() {
    let now = VirtualClock::new().now();
    let mut config = ServerConfig::new("t", "1");
    config.announce_changes = true;
    let mut s = Session::new(config, registry(), now);
    add_tool("late").apply(now, &mut s);
    Broadcast::Log { level: LoggingLevel::Error, logger: None, data: json!(1) }.apply(now, &mut s);
    assert!(drain(&mut s).is_empty());
    assert!(s.registry().tools().any(|t| t.name == "late"), "the change still applies");
}

#[test]
fn a_change_that_panics_changes_and_announces_nothing() {
    let now = VirtualClock::new().now();
    let (mut s, _) = open(true, now);
    let change = Broadcast::ChangeRegistry {
        changed: vec![ListKind::Tools],
        change: Box::new(|r: &mut Registry<()>| {
            r.remove_tool("echo");
            panic!("a bad schema");
        }),
    };
    change.apply(now, &mut s);
    assert!(drain(&mut s).is_empty());
    assert!(s.registry().tools().any(|t| t.name == "echo"), "the registry is as it was");
}

#[test]
fn a_full_queue_drops_logs_and_updates_but_never_a_registry_change() {
    use super::{BroadcastBudget, BROADCAST_QUEUE};
    let budget = BroadcastBudget::new();
    let shared = budget.clone();
    let log = || Broadcast::<()>::Log { level: LoggingLevel::Info, logger: None, data: json!(1) };
    let update = Broadcast::<()>::ResourceUpdated { uri: "file:///a".into() };
    let change = Broadcast::<()>::ChangeRegistry { changed: vec![], change: Box::new(|_| {}) };
    for _ in 0..BROADCAST_QUEUE {
        assert!(budget.admit(&log()));
    }
    assert!(!shared.admit(&log()), "full: a handle clone sees the same count");
    assert!(!budget.admit(&update));
    assert!(budget.admit(&change), "a registry change always goes");
    assert_eq!(budget.waiting(), BROADCAST_QUEUE);
    // The loop takes one (a registry change does not count): one more fits.
    shared.taken(&change);
    assert!(!budget.admit(&update));
    shared.taken(&log());
    assert!(budget.admit(&update));
    assert_eq!(budget.waiting(), BROADCAST_QUEUE);
}
