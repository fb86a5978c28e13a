//! Large and over-long messages: what real results need passes with the defaults, and a message
//! over the limit ends the request it is (or answers) at once, in virtual time.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};
use zest_core::client::Event as ClientEvent;
use zest_core::error::{ProtocolViolation, RequestError};
use zest_core::framing::lines::{LineViolation, TOO_LONG_HEAD};
use zest_core::jsonrpc::{codes, RequestId};
use zest_core::schema::methods::CallTool;
use zest_core::server::ServerConfig;
use zest_core::testkit::{Pair, Wire};
use zest_core::RequestOptions;

fn call_echo(pair: &mut Pair<Handler>, text: &str) -> RequestId {
    let params = serde_json::from_value(json!({"name":"echo","arguments":{"text":text}})).unwrap();
    let now = pair.clock.now();
    pair.client.send::<CallTool>(now, &params, RequestOptions::default()).unwrap()
}

fn ready(client_max_line: usize, server: ServerConfig) -> Pair<Handler> {
    let mut client = client_config();
    client.max_message = client_max_line;
    let mut pair = Pair::new(client, server, registry());
    pair.handshake();
    pair.take_client_events();
    pair.take_server_events();
    pair
}

fn replies_since(pair: &Pair<Handler>, from: usize) -> Vec<Value> {
    pair.wire[from..]
        .iter()
        .filter_map(|w| match w {
            Wire::ToClient(t) => Some(serde_json::from_str(t).unwrap()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_16_mib_tool_result_passes_with_the_defaults() {
    let mut pair = ready_pair();
    let text = "QUJD".repeat(4 * 1024 * 1024);
    let id = call_echo(&mut pair, &text);
    pair.pump();
    pair.serve(app);
    let events = pair.take_client_events();
    let result = response_for(&events, &id).expect("a 16 MiB result is delivered");
    assert_eq!(value(&result)["content"][0]["text"].as_str().map(str::len), Some(text.len()));
}

#[test]
fn a_response_over_the_limit_fails_its_call_at_once_and_the_stream_goes_on() {
    let mut pair = ready(1024, server_config());
    let big = call_echo(&mut pair, &"x".repeat(4000));
    let small = call_echo(&mut pair, "small");
    pair.pump();
    let t0 = pair.clock.now();
    pair.serve(app);
    assert_eq!(pair.clock.now(), t0, "no time passed");
    let events = pair.take_client_events();
    assert_eq!(response_for(&events, &big), Err(RequestError::TooLarge { limit: 1024 }));
    assert!(events.iter().any(|e| matches!(
        e,
        ClientEvent::Violation(ProtocolViolation::Line(LineViolation::TooLong { limit: 1024, .. }))
    )));
    let small = response_for(&events, &small).expect("the next line is still handled");
    assert_eq!(value(&small)["content"][0]["text"], "small");
    // The call is over: its deadline is gone and no timeout reports it a second time.
    pair.advance(Duration::from_secs(600));
    let later = pair.take_client_events();
    assert!(!later.iter().any(|e| matches!(e, ClientEvent::Response { .. })), "{later:?}");
}

#[test]
fn an_id_beyond_the_head_is_a_violation_and_the_call_times_out() {
    let mut pair = ready(1024, server_config());
    let id = call_echo(&mut pair, "never answered in time");
    pair.pump();
    pair.take_server_events();
    let RequestId::Number(n) = id else { panic!("numeric ids") };
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"result\":{{\"pad\":\"{}\"}},\"id\":{n}}}\n",
        "y".repeat(2000)
    );
    pair.inject_to_client(line.as_bytes());
    let events = pair.take_client_events();
    let head = line.as_bytes()[..TOO_LONG_HEAD].to_vec();
    assert_eq!(
        events,
        [ClientEvent::Violation(ProtocolViolation::Line(LineViolation::TooLong {
            limit: 1024,
            dropped: line.len() - 1,
            head,
        }))]
    );
    pair.advance(Duration::from_secs(60));
    let events = pair.take_client_events();
    assert_eq!(response_for(&events, &id), Err(RequestError::TimedOut));
}

#[test]
fn an_over_long_request_with_a_readable_id_is_answered_with_that_id() {
    let mut server = server_config();
    server.max_line = 1024;
    let mut pair = ready(1024 * 1024, server);
    let from = pair.wire.len();
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"huge\",\"method\":\"tools/call\",\"params\":{{\"name\":\
         \"echo\",\"arguments\":{{\"text\":\"{}\"}}}}}}\n",
        "z".repeat(5000)
    );
    pair.inject_to_server(line.as_bytes());
    let replies = replies_since(&pair, from);
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(replies[0]["id"], "huge");
    assert_eq!(replies[0]["error"]["code"], codes::INVALID_REQUEST);
    assert_eq!(replies[0]["error"]["message"], "message larger than the 1024-byte limit");
}

#[test]
fn an_invalid_request_with_a_readable_id_is_answered_with_that_id() {
    let mut pair = ready_pair();
    for (line, id) in [
        (&br#"{"jsonrpc":"2.0","id":"m","method":5}"#[..], json!("m")),
        (br#"{"jsonrpc":"2.0","id":"n","method":null}"#, json!("n")),
        (br#"{"jsonrpc":"2.0","id":77,"method":"ping","method":"ping"}"#, json!(77)),
        (br#"{"jsonrpc":"2.0","method":["a"],"params":{},"id":"late"}"#, json!("late")),
    ] {
        let from = pair.wire.len();
        let mut bytes = line.to_vec();
        bytes.push(b'\n');
        pair.inject_to_server(&bytes);
        let replies = replies_since(&pair, from);
        assert_eq!(replies.len(), 1, "{replies:?}");
        assert_eq!(replies[0]["id"], id, "{}", String::from_utf8_lossy(line));
        assert_eq!(replies[0]["error"]["code"], codes::INVALID_REQUEST);
    }
}

/// The next frame the client machine writes, taken before the pair carries it.
fn next_client_frame(pair: &mut Pair<Handler>) -> bytes::Bytes {
    loop {
        match pair.client.poll_output().expect("a frame") {
            zest_core::io::Output::Transmit(zest_core::io::Transmit::Write { bytes, .. }) => {
                return bytes
            }
            _ => continue,
        }
    }
}

#[test]
fn a_recycled_buffer_carries_the_next_large_frame_once() {
    let mut pair = ready_pair();
    let buf = Vec::with_capacity(2 * 1024 * 1024);
    let ptr = buf.as_ptr();
    pair.client.recycle(buf);
    call_echo(&mut pair, &"r".repeat(1024 * 1024));
    let frame = next_client_frame(&mut pair);
    assert_eq!(frame.as_ptr(), ptr, "encoded into the handed-back buffer");
    assert!(frame.ends_with(b"}}}\n"));
    // Used up: the next large frame gets memory of its own.
    call_echo(&mut pair, &"s".repeat(1024 * 1024));
    assert_ne!(next_client_frame(&mut pair).as_ptr(), ptr);
    drop(frame);
}
