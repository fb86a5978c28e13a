//! Paths no other test walked (issue 9, item 5), in virtual time: invalid results and
//! notifications from the server, a batch where batches are not allowed, progress for a token
//! nobody issued, a server-to-client request that times out, and JSON nested far too deep.

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;
use zest_core::client::{self, decode_result, Event as ClientEvent};
use zest_core::error::{CloseReason, ProtocolViolation, RequestError};
use zest_core::io::{self, Output, StreamId};
use zest_core::jsonrpc::{codes, RawJson};
use zest_core::schema::methods::CallTool;
use zest_core::schema::CallToolParams;
use zest_core::server::Event as ServerEvent;
use zest_core::testkit::{Pair, VirtualClock, Wire};
use zest_core::RequestOptions;

fn echo_params() -> CallToolParams {
    serde_json::from_value(json!({"name": "echo", "arguments": {"text": "hi"}})).unwrap()
}

fn client_events(client: &mut client::Client) -> Vec<ClientEvent> {
    let mut events = Vec::new();
    while let Some(out) = client.poll_output() {
        if let Output::Event(e) = out {
            events.push(e);
        }
    }
    events
}

#[test]
fn an_initialize_result_of_the_wrong_shape_is_a_violation_and_closes_the_client() {
    let now = VirtualClock::new().now();
    let mut client = client::Client::new(client_config(), now);
    while client.poll_output().is_some() {}
    let line = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":5}}\n";
    client.handle_input(io::data(now, StreamId::STDIO, line));
    let events = client_events(&mut client);
    assert!(
        matches!(&events[..], [
            ClientEvent::Violation(ProtocolViolation::InvalidInitializeResult(detail)),
            ClientEvent::Closed(CloseReason::InitializeInvalid(same)),
        ] if detail == same && detail.contains("protocolVersion")),
        "{events:?}"
    );
}

#[test]
fn a_result_of_the_wrong_shape_fails_only_its_call_as_invalid_result() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let params = echo_params();
    let id = pair.client.send::<CallTool>(now, &params, RequestOptions::default()).unwrap();
    pair.pump();
    let ServerEvent::Call { id: sid, .. } = pair.take_server_events().remove(0) else {
        panic!("a call")
    };
    // `content` must be an array of blocks.
    pair.server.respond(now, sid, Ok(RawJson::from(json!({"content": 5})))).unwrap();
    pair.pump();
    let events = pair.take_client_events();
    let outcome = decode_result::<CallTool>(response_for(&events, &id));
    assert!(
        matches!(&outcome, Err(RequestError::InvalidResult(d)) if d.contains("content")),
        "{outcome:?}"
    );
    // The session goes on.
    let params = echo_params();
    let again = pair.client.send::<CallTool>(now, &params, RequestOptions::default()).unwrap();
    pair.pump();
    pair.serve(app);
    assert!(decode_result::<CallTool>(response_for(&pair.take_client_events(), &again)).is_ok());
}

#[test]
fn a_batch_from_the_server_outside_2025_03_26_is_a_violation_but_its_items_count() {
    let mut pair = ready_pair();
    pair.inject_to_client(
        b"[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}]\n",
    );
    let events = pair.take_client_events();
    assert_eq!(events[0], ClientEvent::Violation(ProtocolViolation::BatchNotAllowed), "{events:?}");
    assert_eq!(events.len(), 2, "and the notification inside it: {events:?}");
}

#[test]
fn malformed_progress_is_an_invalid_notification_and_changes_nothing() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let params = echo_params();
    let id = pair.client.send::<CallTool>(now, &params, RequestOptions::with_progress()).unwrap();
    pair.pump();
    pair.take_server_events();
    let progress = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":{id},\"progress\":\"half\"}}}}\n"
    );
    pair.inject_to_client(progress.as_bytes());
    let events = pair.take_client_events();
    assert!(
        matches!(&events[..], [ClientEvent::Violation(ProtocolViolation::InvalidNotification { method, .. })]
            if method == "notifications/progress"),
        "{events:?}"
    );
    assert_eq!(pair.client.in_flight(), 1, "the call is still waiting");
}

#[test]
fn progress_for_a_token_nobody_issued_is_dropped_silently() {
    let mut pair = ready_pair();
    pair.inject_to_client(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"nobody\",\"progress\":1}}\n",
    );
    pair.inject_to_client(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":999,\"progress\":1}}\n",
    );
    assert_eq!(pair.take_client_events(), []);
}

#[test]
fn a_server_request_that_times_out_ends_once_and_is_cancelled_on_the_wire() {
    let mut cfg = client_config();
    cfg.capabilities = serde_json::from_value(json!({"roots": {}})).unwrap();
    let mut pair = Pair::new(cfg, server_config(), registry());
    pair.handshake();
    pair.take_client_events();
    pair.take_server_events();
    let now = pair.clock.now();
    let opts = RequestOptions::default().timeout(Duration::from_secs(10));
    let id = pair.server.request(now, None, "roots/list", None, opts).unwrap();
    pair.pump();
    // The client's app never answers.
    let asked = pair.take_client_events();
    assert!(matches!(&asked[..], [ClientEvent::Request { .. }]), "{asked:?}");
    pair.advance(Duration::from_secs(10));
    let ended: Vec<_> = pair
        .take_server_events()
        .into_iter()
        .filter(|e| matches!(e, ServerEvent::Response { id: i, .. } if *i == id))
        .collect();
    assert!(
        matches!(&ended[..], [ServerEvent::Response { result: Err(RequestError::TimedOut), .. }]),
        "{ended:?}"
    );
    let cancelled = pair.wire.iter().filter(|w| {
        matches!(w, Wire::ToClient(t) if t.contains("notifications/cancelled") && t.contains(&format!("\"requestId\":{id}")))
    });
    assert_eq!(cancelled.count(), 1);
    // The client's app is told, and its late answer is taken without a word on the wire.
    let ClientEvent::Request { id: cid, .. } = &asked[0] else { unreachable!() };
    let told = pair.take_client_events();
    assert!(matches!(&told[..], [ClientEvent::Cancelled { id }] if id == cid), "{told:?}");
    let before = pair.wire.len();
    let late =
        pair.client.respond(pair.clock.now(), cid.clone(), Ok(RawJson::from(json!({"roots": []}))));
    pair.pump();
    assert_eq!(late, Ok(()), "answering a cancelled request is allowed and sends nothing");
    assert_eq!(pair.wire.len(), before);
    assert_eq!(pair.take_server_events(), []);
}

/// `depth` nested arrays around `inner`.
fn nested(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn json_nested_far_too_deep_is_an_error_with_its_id_not_a_stack_overflow() {
    let mut pair = ready_pair();
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":{}}}}}}}\n",
        nested(100_000, "1")
    );
    let before = pair.wire.len();
    pair.inject_to_server(line.as_bytes());
    let replies: Vec<_> = pair.wire[before..]
        .iter()
        .filter_map(|w| match w {
            Wire::ToClient(t) => Some(serde_json::from_str::<serde_json::Value>(t).unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(replies.len(), 1, "{replies:?}");
    // The envelope is fine; the arguments are too deep to read: invalid params, with the id.
    assert_eq!(replies[0]["id"], 7, "{replies:?}");
    assert_eq!(replies[0]["error"]["code"], codes::INVALID_PARAMS, "{replies:?}");
    assert!(replies[0]["error"]["message"].as_str().unwrap().contains("recursion"), "{replies:?}");
    // (That error answers an id the client never used.)
    let stray = pair.take_client_events();
    assert!(
        matches!(&stray[..], [ClientEvent::Violation(ProtocolViolation::UnknownResponseId(_))]),
        "{stray:?}"
    );
    // And the client survives the same from the server: an array is a batch to it, so a
    // disallowed batch whose one item is not a message.
    pair.inject_to_client(format!("{}\n", nested(100_000, "0")).as_bytes());
    let events = pair.take_client_events();
    assert!(
        matches!(
            &events[..],
            [
                ClientEvent::Violation(ProtocolViolation::BatchNotAllowed),
                ClientEvent::Violation(ProtocolViolation::Decode(_)),
            ]
        ),
        "{events:?}"
    );
    let now = pair.clock.now();
    let params = echo_params();
    let id = pair.client.send::<CallTool>(now, &params, RequestOptions::default()).unwrap();
    pair.pump();
    pair.serve(app);
    assert!(response_for(&pair.take_client_events(), &id).is_ok());
}
