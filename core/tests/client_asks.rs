//! The client machine's side of what the server asks: modes and tools the client did not
//! declare, URL-mode elicitation and its completion notification, -32042, and roots that
//! change.

mod common;

use common::*;
use serde_json::{json, Value};
use zest_core::client::{Event, ServerNotification, ServerRequest};
use zest_core::error::{RequestError, UsageError};
use zest_core::jsonrpc::{codes, ErrorObject};
use zest_core::schema::methods::CallTool;
use zest_core::testkit::{Pair, Wire};
use zest_core::RequestOptions;

fn pair_declaring(capabilities: Value) -> Pair<Handler> {
    let mut cfg = client_config();
    cfg.capabilities = serde_json::from_value(capabilities).unwrap();
    let mut pair = Pair::new(cfg, server_config(), registry());
    pair.handshake();
    pair.take_client_events();
    pair.take_server_events();
    pair
}

/// What the client last wrote, as JSON.
fn last_to_server(pair: &Pair<Handler>) -> Value {
    let last = pair.wire.iter().rev().find_map(|w| match w {
        Wire::ToServer(t) => Some(t.clone()),
        _ => None,
    });
    serde_json::from_str(&last.expect("the client wrote something")).unwrap()
}

fn inject(pair: &mut Pair<Handler>, message: Value) {
    let mut line = message.to_string().into_bytes();
    line.push(b'\n');
    pair.inject_to_client(&line);
}

const URL_REQUEST: &str =
    r#"{"mode":"url","message":"Sign in","elicitationId":"e-1","url":"https://example.org/c"}"#;

#[test]
fn modes_and_tools_the_client_did_not_declare_get_32602_and_never_reach_the_app() {
    let mut pair = pair_declaring(json!({"sampling": {}, "elicitation": {}}));
    let url: Value = serde_json::from_str(URL_REQUEST).unwrap();
    let with_tools = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 10,
        "tools": [{"name": "t", "inputSchema": {"type": "object"}}]
    });
    for (id, method, params, says) in [
        ("u", "elicitation/create", url, "url-mode"),
        ("t", "sampling/createMessage", with_tools, "sampling.tools"),
    ] {
        inject(&mut pair, json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert!(pair.take_client_events().is_empty(), "{method} reached the app");
        let answer = last_to_server(&pair);
        assert_eq!(answer["id"], id);
        assert_eq!(answer["error"]["code"], codes::INVALID_PARAMS);
        assert!(answer["error"]["message"].as_str().unwrap().contains(says), "{answer}");
    }
    // A client declaring URL mode only refuses forms.
    let mut pair = pair_declaring(json!({"elicitation": {"url": {}}}));
    let form = json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {}}});
    inject(
        &mut pair,
        json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": form}),
    );
    assert!(pair.take_client_events().is_empty());
    assert_eq!(last_to_server(&pair)["error"]["code"], codes::INVALID_PARAMS);
}

fn completion(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
           "params": {"elicitationId": id}})
}

fn completions(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Notification(ServerNotification::ElicitationComplete(p)) => {
                Some(p.elicitation_id.clone())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_completion_is_reported_once_for_a_url_elicitation_the_server_started_and_never_otherwise() {
    let mut pair = pair_declaring(json!({"elicitation": {"form": {}, "url": {}}}));
    inject(&mut pair, completion("e-1"));
    assert!(pair.take_client_events().is_empty(), "an unknown id is ignored");
    let request: Value = serde_json::from_str(URL_REQUEST).unwrap();
    inject(
        &mut pair,
        json!({"jsonrpc": "2.0", "id": 9, "method": "elicitation/create", "params": request}),
    );
    let events = pair.take_client_events();
    assert!(
        matches!(&events[..], [Event::Request { request: ServerRequest::Elicit(_), .. }]),
        "{events:?}"
    );
    inject(&mut pair, completion("e-2"));
    inject(&mut pair, completion("e-1"));
    inject(&mut pair, completion("e-1"));
    assert_eq!(completions(&pair.take_client_events()), ["e-1"], "once, and only the known id");
}

#[test]
fn a_32042_error_lists_its_elicitations_and_their_completions_are_reported() {
    let mut pair = pair_declaring(json!({"elicitation": {"url": {}}}));
    let now = pair.clock.now();
    let params =
        serde_json::from_value(json!({"name": "echo", "arguments": {"text": "x"}})).unwrap();
    let id = pair.client.send::<CallTool>(now, &params, RequestOptions::default()).unwrap();
    pair.pump();
    pair.serve(|_, _| {
        Err(ErrorObject::new(
            codes::URL_ELICITATION_REQUIRED,
            "This request requires more information.",
        )
        .with_data(json!({"elicitations": [{"mode": "url", "elicitationId": "auth-7",
                "url": "https://example.org/connect?e=auth-7", "message": "Authorize access"}]})))
    });
    let events = pair.take_client_events();
    let error = response_for(&events, &id).unwrap_err();
    let required = error.url_elicitations().expect("the elicitations of a -32042");
    assert_eq!(required.len(), 1);
    assert_eq!(
        (required[0].elicitation_id.as_str(), required[0].url.as_str()),
        ("auth-7", "https://example.org/connect?e=auth-7")
    );
    assert!(RequestError::TimedOut.url_elicitations().is_none());
    inject(&mut pair, completion("auth-7"));
    assert_eq!(completions(&pair.take_client_events()), ["auth-7"]);
}

#[test]
fn roots_changed_notifies_only_when_list_changed_was_declared() {
    let mut pair = pair_declaring(json!({"roots": {"listChanged": true}}));
    let now = pair.clock.now();
    assert_eq!(pair.client.roots_changed(now), Ok(true));
    pair.pump();
    assert_eq!(last_to_server(&pair)["method"], "notifications/roots/list_changed");
    let events = pair.take_server_events();
    assert!(format!("{events:?}").contains("RootsListChanged"), "{events:?}");

    let mut pair = pair_declaring(json!({"roots": {}}));
    let written = pair.wire.len();
    assert_eq!(pair.client.roots_changed(now), Ok(false));
    pair.pump();
    assert_eq!(pair.wire.len(), written, "nothing sent without listChanged");
    pair.client.close(now);
    pair.pump();
    assert_eq!(pair.client.roots_changed(now), Err(UsageError::Closed));
}
