//! Requests past `max_in_flight` wait for a slot instead of failing (in virtual time): they
//! go out in order as earlier ones end, time out from the call, are cancelled without a word
//! on the wire while held, and end with the session like the rest.

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;
use zest_core::client::Event as ClientEvent;
use zest_core::error::{RequestError, UsageError};
use zest_core::jsonrpc::RequestId;
use zest_core::schema::methods::CallTool;
use zest_core::schema::CallToolParams;
use zest_core::server::{Call, Event as ServerEvent};
use zest_core::testkit::{Pair, Wire};
use zest_core::RequestOptions;

fn pair_with_limit(limit: usize) -> Pair<Handler> {
    let mut config = client_config();
    config.max_in_flight = limit;
    let mut pair = Pair::new(config, server_config(), registry());
    pair.handshake();
    pair.take_client_events();
    pair.take_server_events();
    pair
}

fn echo(pair: &mut Pair<Handler>, text: &str, opts: RequestOptions) -> RequestId {
    let params: CallToolParams =
        serde_json::from_value(json!({"name": "echo", "arguments": {"text": text}})).unwrap();
    let now = pair.clock.now();
    pair.client.send::<CallTool>(now, &params, opts).expect("held, not refused")
}

/// The texts of the `tools/call` requests that reached the server, in order.
fn calls_seen(pair: &mut Pair<Handler>) -> Vec<(RequestId, String)> {
    pair.take_server_events()
        .into_iter()
        .filter_map(|e| match e {
            ServerEvent::Call { id, call: Call::Tool(p), .. } => {
                Some((id, p.arguments.unwrap()["text"].as_str().unwrap().to_owned()))
            }
            _ => None,
        })
        .collect()
}

fn cancellations_on_wire(pair: &Pair<Handler>) -> usize {
    pair.wire
        .iter()
        .filter(|w| matches!(w, Wire::ToServer(t) if t.contains("notifications/cancelled")))
        .count()
}

#[test]
fn requests_past_the_limit_wait_and_go_out_in_order() {
    let mut pair = pair_with_limit(2);
    let ids: Vec<_> =
        (0..5).map(|i| echo(&mut pair, &format!("m{i}"), RequestOptions::default())).collect();
    pair.pump();
    let first = calls_seen(&mut pair);
    assert_eq!(first.iter().map(|c| c.1.as_str()).collect::<Vec<_>>(), ["m0", "m1"]);
    assert_eq!(pair.client.in_flight(), 5, "all five await an outcome");
    let mut seen = first;
    let mut answered = 0;
    // Answer one call at a time: each answer lets exactly one held request out.
    while answered < seen.len() {
        let (sid, _) = seen[answered].clone();
        let now = pair.clock.now();
        pair.server.respond(now, sid, Ok(json!({"content": []}).into())).expect("answerable");
        answered += 1;
        pair.pump();
        let more = calls_seen(&mut pair);
        assert!(more.len() <= 1, "{more:?}");
        seen.extend(more);
        assert!(seen.len() - answered <= 2, "never more than the limit in flight");
    }
    let texts: Vec<_> = seen.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(texts, ["m0", "m1", "m2", "m3", "m4"]);
    let events = pair.take_client_events();
    for id in &ids {
        assert!(response_for(&events, id).is_ok());
    }
}

#[test]
fn a_held_request_times_out_from_the_call_and_is_never_sent() {
    let mut pair = pair_with_limit(1);
    let slow = echo(&mut pair, "slow", RequestOptions::default().timeout(Duration::from_secs(60)));
    let held = echo(&mut pair, "held", RequestOptions::default().timeout(Duration::from_secs(5)));
    pair.pump();
    assert_eq!(calls_seen(&mut pair).len(), 1);
    pair.advance(Duration::from_secs(5));
    let events = pair.take_client_events();
    assert_eq!(response_for(&events, &held), Err(RequestError::TimedOut));
    assert_eq!(cancellations_on_wire(&pair), 0, "nothing to cancel: it never left");
    // The slot is still the slow call's; when it ends nothing else goes out.
    pair.advance(Duration::from_secs(55));
    assert_eq!(response_for(&pair.take_client_events(), &slow), Err(RequestError::TimedOut));
    assert_eq!(cancellations_on_wire(&pair), 1, "the slow call was sent, so it is cancelled");
    assert!(calls_seen(&mut pair).is_empty());
}

#[test]
fn cancelling_a_held_request_sends_nothing_and_keeps_the_order() {
    let mut pair = pair_with_limit(1);
    let first = echo(&mut pair, "a", RequestOptions::default());
    let second = echo(&mut pair, "b", RequestOptions::default());
    let third = echo(&mut pair, "c", RequestOptions::default());
    pair.pump();
    let (sid, _) = calls_seen(&mut pair).remove(0);
    let now = pair.clock.now();
    pair.client.cancel(now, &second, None).expect("cancellable while held");
    pair.pump();
    assert_eq!(cancellations_on_wire(&pair), 0);
    assert_eq!(response_for(&pair.take_client_events(), &second), Err(RequestError::Cancelled));
    pair.server.respond(now, sid, Ok(json!({"content": []}).into())).unwrap();
    pair.pump();
    let next = calls_seen(&mut pair);
    assert_eq!(next.iter().map(|c| c.1.as_str()).collect::<Vec<_>>(), ["c"]);
    let events = pair.take_client_events();
    assert!(response_for(&events, &first).is_ok());
    assert_eq!(pair.client.in_flight(), 1, "only the third is left");
    assert!(events.iter().all(|e| !matches!(e, ClientEvent::Response { id, .. } if *id == third)));
}

#[test]
fn held_requests_end_with_the_session() {
    let mut pair = pair_with_limit(1);
    let ids: Vec<_> =
        (0..3).map(|i| echo(&mut pair, &i.to_string(), RequestOptions::default())).collect();
    pair.pump();
    let now = pair.clock.now();
    pair.client.close(now);
    pair.pump();
    let events = pair.take_client_events();
    for id in &ids {
        assert!(matches!(response_for(&events, id), Err(RequestError::Closed(_))), "{id}");
    }
    let sent = pair
        .wire
        .iter()
        .filter(|w| matches!(w, Wire::ToServer(t) if t.contains("tools/call")))
        .count();
    assert_eq!(sent, 1, "the held ones never went out, not even at the close");
}

#[test]
fn only_64_held_per_slot_are_accepted() {
    let mut pair = pair_with_limit(2);
    for i in 0..2 + 2 * 64 {
        echo(&mut pair, &i.to_string(), RequestOptions::default());
    }
    let params: CallToolParams =
        serde_json::from_value(json!({"name": "echo", "arguments": {"text": "x"}})).unwrap();
    let now = pair.clock.now();
    let refused = pair.client.send::<CallTool>(now, &params, RequestOptions::default());
    assert_eq!(refused, Err(UsageError::TooManyInFlight { limit: 2 }));
}
