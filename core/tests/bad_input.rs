//! Bad input: each case gets its exact typed error or JSON-RPC error, and loses nothing else —
//! a request in flight across the bad input still completes.

mod common;

use common::*;
use serde_json::{json, Value};
use zest_core::client::Event as ClientEvent;
use zest_core::error::ProtocolViolation;
use zest_core::framing::lines::LineViolation;
use zest_core::jsonrpc::{codes, DecodeError, InvalidReason, RequestId};
use zest_core::schema::methods::CallTool;
use zest_core::server::{Event as ServerEvent, ServerConfig};
use zest_core::testkit::{Pair, Wire};
use zest_core::RequestOptions;

/// A ready pair with one tool call in flight (not yet answered by the app).
fn pair_with_call_in_flight(server: ServerConfig) -> (Pair<Handler>, RequestId) {
    let mut pair = Pair::new(client_config(), server, registry());
    pair.handshake();
    pair.take_client_events();
    pair.take_server_events();
    let now = pair.clock.now();
    let params =
        serde_json::from_value(json!({"name":"echo","arguments":{"text":"survivor"}})).unwrap();
    let id = pair.client.send::<CallTool>(now, &params, RequestOptions::default()).unwrap();
    pair.pump();
    (pair, id)
}

/// Lets the app answer the call in flight and checks the client got it.
fn assert_call_still_completes(pair: &mut Pair<Handler>, id: &RequestId) {
    pair.serve(app);
    let events = pair.take_client_events();
    let result = response_for(&events, id).expect("the call in flight completed");
    assert!(result.get().contains("survivor"));
}

/// The server's replies written since `from`, parsed.
fn replies_since(pair: &Pair<Handler>, from: usize) -> Vec<Value> {
    pair.wire[from..]
        .iter()
        .filter_map(|w| match w {
            Wire::ToClient(t) => {
                // Every frame is exactly one line: one `\n`, at its end.
                assert!(t.ends_with('\n') && t.matches('\n').count() == 1, "{t:?}");
                Some(serde_json::from_str(t).unwrap())
            }
            _ => None,
        })
        .collect()
}

fn inject(pair: &mut Pair<Handler>, bytes: &[u8]) -> (Vec<Value>, Vec<ServerEvent<Handler>>) {
    let from = pair.wire.len();
    pair.inject_to_server(bytes);
    let replies = replies_since(pair, from);
    let (calls, events) =
        pair.take_server_events().into_iter().partition(|e| matches!(e, ServerEvent::Call { .. }));
    pair.server_events = calls;
    (replies, events)
}

#[test]
fn malformed_json_gets_32700_with_a_null_id() {
    let (mut pair, id) = pair_with_call_in_flight(server_config());
    let (replies, events) = inject(&mut pair, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n");
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0]["error"]["code"], codes::PARSE_ERROR);
    assert_eq!(replies[0]["id"], Value::Null);
    assert!(matches!(
        &events[..],
        [ServerEvent::Violation(ProtocolViolation::Decode(DecodeError::Parse { .. }))]
    ));
    assert_call_still_completes(&mut pair, &id);
}

#[test]
fn json_that_is_not_jsonrpc_gets_32600() {
    let (mut pair, id) = pair_with_call_in_flight(server_config());
    let (replies, events) = inject(&mut pair, b"{\"hello\":\"world\"}\n");
    assert_eq!(replies.len(), 1, "one reply: {replies:?}");
    assert_eq!(replies[0]["error"]["code"], codes::INVALID_REQUEST);
    assert!(matches!(
        &events[..],
        [ServerEvent::Violation(ProtocolViolation::Decode(DecodeError::InvalidRequest {
            id: None,
            reason: InvalidReason::WrongVersion
        }))]
    ));
    assert_call_still_completes(&mut pair, &id);
}

#[test]
fn wrong_jsonrpc_version_gets_32600_echoing_the_id() {
    let (mut pair, id) = pair_with_call_in_flight(server_config());
    let (replies, _) =
        inject(&mut pair, b"{\"jsonrpc\":\"1.0\",\"id\":\"v\",\"method\":\"ping\"}\n");
    assert_eq!(replies.len(), 1, "one reply: {replies:?}");
    assert_eq!(replies[0]["error"]["code"], codes::INVALID_REQUEST);
    assert_eq!(replies[0]["id"], "v");
    assert!(replies[0]["error"]["message"].as_str().unwrap().contains("2.0"));
    assert_call_still_completes(&mut pair, &id);
}

#[test]
fn unknown_method_gets_32601() {
    let (mut pair, id) = pair_with_call_in_flight(server_config());
    let (replies, _) =
        inject(&mut pair, b"{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":\"tools/explode\"}\n");
    assert_eq!(replies.len(), 1, "one reply: {replies:?}");
    assert_eq!(
        replies[0],
        json!({"jsonrpc":"2.0","id":"m","error":{"code":codes::METHOD_NOT_FOUND,"message":"method not found: tools/explode"}})
    );
    assert_call_still_completes(&mut pair, &id);
}

#[test]
fn bad_params_get_32602() {
    let (mut pair, id) = pair_with_call_in_flight(server_config());
    let (replies, _) = inject(
        &mut pair,
        b"{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"tools/call\",\"params\":{\"name\":7}}\n",
    );
    assert_eq!(replies.len(), 1, "one reply: {replies:?}");
    assert_eq!(replies[0]["error"]["code"], codes::INVALID_PARAMS);
    assert_eq!(replies[0]["id"], "p");
    let (replies, _) = inject(&mut pair, b"{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}\n");
    assert_eq!(replies.len(), 1, "one reply: {replies:?}");
    assert_eq!(replies[0]["error"]["code"], codes::INVALID_PARAMS);
    assert_eq!(replies[0]["id"], "l");
    assert_call_still_completes(&mut pair, &id);
}

#[test]
fn a_response_with_an_unknown_id_is_a_violation_and_nothing_else() {
    let (mut pair, id) = pair_with_call_in_flight(server_config());
    pair.inject_to_client(b"{\"jsonrpc\":\"2.0\",\"id\":999,\"result\":{}}\n");
    let events = pair.take_client_events();
    assert_eq!(
        events,
        [ClientEvent::Violation(ProtocolViolation::UnknownResponseId(Some(RequestId::Number(
            999
        ))))]
    );
    assert_call_still_completes(&mut pair, &id);
}

#[test]
fn a_duplicate_in_flight_request_id_is_rejected_and_the_first_survives() {
    let (mut pair, first) = pair_with_call_in_flight(server_config());
    // The client machine's own id for the call in flight is 1; reuse it from "the client".
    let dup = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"dup\"}}}}}}\n",
        match &first { RequestId::Number(n) => n.to_string(), RequestId::String(s) => format!("{s:?}") }
    );
    let from = pair.wire.len();
    pair.server.handle_input(zest_core::io::data(
        pair.clock.now(),
        zest_core::io::StreamId::STDIO,
        dup.as_bytes(),
    ));
    let mut events = Vec::new();
    while let Some(o) = pair.server.poll_output() {
        match o {
            zest_core::io::Output::Transmit(zest_core::io::Transmit::Write { bytes, .. }) => {
                pair.wire.push(Wire::ToClient(String::from_utf8_lossy(&bytes).into_owned()))
            }
            zest_core::io::Output::Event(e) => events.push(e),
            _ => {}
        }
    }
    let replies = replies_since(&pair, from);
    assert_eq!(replies.len(), 1, "one reply: {replies:?}");
    assert_eq!(replies[0]["error"]["code"], codes::INVALID_REQUEST);
    assert_eq!(replies[0]["error"]["message"], "request id is already in flight");
    assert!(events
        .contains(&ServerEvent::Violation(ProtocolViolation::DuplicateRequestId(first.clone()))));
    // The client machine would report that rejection as the (error) response to its own call,
    // so do not deliver it; the first call is still answered normally by the app.
    assert_call_still_completes(&mut pair, &first);
}

#[test]
fn an_over_long_line_is_dropped_and_the_next_line_still_parsed() {
    let mut server = server_config();
    server.max_line = 1024;
    let (mut pair, id) = pair_with_call_in_flight(server);
    let mut long =
        b"{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":\"ping\",\"params\":{\"pad\":\"".to_vec();
    long.extend(std::iter::repeat_n(b'x', 1 << 20));
    long.extend_from_slice(b"\"}}\n{\"jsonrpc\":\"2.0\",\"id\":\"next\",\"method\":\"ping\"}\n");
    let (replies, events) = inject(&mut pair, &long);
    assert_eq!(
        replies,
        [
            json!({"jsonrpc":"2.0","id":"big","error":{"code":codes::INVALID_REQUEST,
                   "message":"message larger than the 1024-byte limit"}}),
            json!({"jsonrpc":"2.0","id":"next","result":{}})
        ]
    );
    assert!(matches!(
        &events[..],
        [ServerEvent::Violation(ProtocolViolation::Line(LineViolation::TooLong {
            limit: 1024,
            ..
        }))]
    ));
    assert_call_still_completes(&mut pair, &id);
}

#[test]
fn invalid_utf8_gets_32700() {
    let (mut pair, id) = pair_with_call_in_flight(server_config());
    let (replies, events) =
        inject(&mut pair, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\x28\"}\n");
    assert_eq!(replies.len(), 1, "one reply: {replies:?}");
    assert_eq!(replies[0]["error"]["code"], codes::PARSE_ERROR);
    assert_eq!(
        events,
        [ServerEvent::Violation(ProtocolViolation::Decode(DecodeError::InvalidUtf8))]
    );
    assert_call_still_completes(&mut pair, &id);
}

#[test]
fn a_non_json_banner_line_is_reported_never_parsed_never_answered() {
    let (mut pair, id) = pair_with_call_in_flight(server_config());
    pair.inject_to_client(b"Server v1.2 starting, token=abc123 ...\n");
    let events = pair.take_client_events();
    let [ClientEvent::Violation(ProtocolViolation::Line(LineViolation::NotJson { excerpt, len }))] =
        &events[..]
    else {
        panic!("{events:?}")
    };
    assert_eq!(*len, 38);
    assert!(excerpt.len() <= 48, "{excerpt}");
    let (replies, _) = inject(&mut pair, b"Listening on stdio\n");
    assert!(replies.is_empty(), "no JSON-RPC answer to a banner");
    assert_call_still_completes(&mut pair, &id);
}

#[test]
fn batches_are_rejected_outside_2025_03_26_and_answered_as_one_array_inside_it() {
    let (mut pair, id) = pair_with_call_in_flight(server_config());
    let (replies, _) =
        inject(&mut pair, b"[{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"ping\"}]\n");
    assert_eq!(replies.len(), 1, "one reply: {replies:?}");
    assert_eq!(replies[0]["error"]["code"], codes::INVALID_REQUEST);
    assert_call_still_completes(&mut pair, &id);

    let mut cfg = client_config();
    cfg.protocol_version = zest_core::schema::ProtocolVersion::V2025_03_26;
    let mut pair: Pair<Handler> = Pair::new(cfg, server_config(), registry());
    pair.handshake();
    let (replies, _) = inject(
        &mut pair,
        b"[{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"},7,{\"jsonrpc\":\"2.0\",\"id\":\"t\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"in batch\"}}}]\n",
    );
    assert!(replies.is_empty(), "the array waits for the tool call: {replies:?}");
    let from = pair.wire.len();
    pair.serve(app);
    let replies = replies_since(&pair, from);
    assert_eq!(replies.len(), 1, "one array, nothing else: {replies:?}");
    let batch = replies[0].as_array().expect("one array");
    assert_eq!(batch.len(), 3, "ping, the invalid element, the tool call: {batch:?}");
    assert_eq!(batch[0]["id"], "a");
    assert_eq!(batch[1]["error"]["code"], codes::INVALID_REQUEST);
    assert_eq!(batch[2]["id"], "t");
    let (replies, _) =
        inject(&mut pair, b"[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}]\n");
    assert!(replies.is_empty(), "notifications only: no reply, not even []");
}
