//! Shared fixtures for the core tests: a small registry whose handlers are names.
#![allow(dead_code)]

use serde_json::{json, Value};
use zest_core::client::{self, ClientConfig};
use zest_core::jsonrpc::{ErrorObject, RawJson};
use zest_core::schema::{Prompt, Resource, ResourceTemplate, Tool};
use zest_core::server::{Call, Registry, ServerConfig};
use zest_core::testkit::Pair;

pub(crate) type Handler = &'static str;

pub(crate) fn tool(name: &str, input_schema: Value) -> Tool {
    serde_json::from_value(json!({"name": name, "inputSchema": input_schema})).unwrap()
}

pub(crate) fn registry() -> Registry<Handler> {
    let mut r = Registry::default();
    r.add_tool(
        tool(
            "echo",
            json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}),
        ),
        "echo",
    );
    r.add_tool(
        tool(
            "add",
            json!({"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},
                   "required":["a","b"],"additionalProperties":false}),
        ),
        "add",
    );
    let mut structured = tool("weather", json!({"type":"object"}));
    structured.output_schema = Some(
        serde_json::from_value(
            json!({"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}),
        )
        .unwrap(),
    );
    r.add_tool(structured, "weather");
    let resource: Resource =
        serde_json::from_value(json!({"uri":"test://static-text","name":"static"})).unwrap();
    r.add_resource(resource, "static");
    let template: ResourceTemplate =
        serde_json::from_value(json!({"uriTemplate":"test://template/{id}/data","name":"tmpl"}))
            .unwrap();
    r.add_resource_template(template, "template");
    let prompt: Prompt = serde_json::from_value(json!({
        "name":"greet","arguments":[{"name":"who","required":true},{"name":"tone"}]
    }))
    .unwrap();
    r.add_prompt(prompt, "greet");
    r
}

/// Answers calls the way a tiny app would.
pub(crate) fn app(handler: &Handler, call: &Call) -> Result<RawJson, ErrorObject> {
    let result = match (*handler, call) {
        ("echo", Call::Tool(p)) => {
            let text =
                p.arguments.as_ref().and_then(|a| a.get("text")).cloned().unwrap_or_default();
            json!({"content":[{"type":"text","text": text}]})
        }
        ("add", Call::Tool(p)) => {
            let a = p.arguments.as_ref().unwrap();
            let sum = a["a"].as_f64().unwrap() + a["b"].as_f64().unwrap();
            json!({"content":[{"type":"text","text": sum.to_string()}]})
        }
        ("weather", Call::Tool(p)) => {
            let bad = p.arguments.as_ref().is_some_and(|a| a.contains_key("broken"));
            let structured = if bad { json!({"temp":"hot"}) } else { json!({"temp": 21.5}) };
            json!({"content":[{"type":"text","text": structured.to_string()}],"structuredContent": structured})
        }
        (_, Call::ReadResource { params, vars }) => {
            json!({"contents":[{"uri": params.uri, "text": format!("vars={vars:?}")}]})
        }
        ("greet", Call::GetPrompt(p)) => {
            let who = &p.arguments.as_ref().unwrap()["who"];
            json!({"messages":[{"role":"user","content":{"type":"text","text": format!("hello {who}")}}]})
        }
        (_, Call::Complete(_)) => json!({"completion":{"values":["alpha","beta"],"hasMore":false}}),
        _ => return Err(ErrorObject::new(-32603, "no such handler")),
    };
    Ok(RawJson::from(result))
}

pub(crate) fn client_config() -> ClientConfig {
    ClientConfig::new("test-client", "1.0.0").session_era()
}

/// The test server: it announces list changes and offers subscriptions.
pub(crate) fn server_config() -> ServerConfig {
    let mut config = ServerConfig::new("test-server", "1.0.0");
    config.announce_changes = true;
    config
}

pub(crate) fn ready_pair() -> Pair<Handler> {
    let mut pair = Pair::new(client_config(), server_config(), registry());
    pair.handshake();
    pair.take_client_events();
    pair.take_server_events();
    pair
}

/// The single `Response` for `id` among `events`, panicking if there is not exactly one.
pub(crate) fn response_for(
    events: &[client::Event],
    id: &zest_core::jsonrpc::RequestId,
) -> Result<RawJson, zest_core::error::RequestError> {
    let found: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            client::Event::Response { id: i, result } if i == id => Some(result.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(found.len(), 1, "expected exactly one response for {id}, events: {events:?}");
    found.into_iter().next().unwrap()
}

pub(crate) fn value(raw: &RawJson) -> Value {
    raw.to_value().unwrap()
}
