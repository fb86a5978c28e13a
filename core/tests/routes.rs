//! Routes: what a session sends while serving a request names that request and the stream it
//! came on; replies go back on the stream their request came on; the rest is standalone.

mod common;

use std::time::Instant;

use zest_core::testkit::VirtualClock;

use common::*;
use serde_json::json;
use zest_core::io::StreamId;
use zest_core::jsonrpc::{RawJson, RequestId};
use zest_core::schema::LoggingLevel;
use zest_core::server::{Event, ListKind, ServerConfig, Session};
use zest_core::{OutgoingKind, RequestOptions, Route};

fn drain(s: &mut Session<Handler>) -> (Vec<(Route, serde_json::Value)>, Vec<Event<Handler>>) {
    let mut out = Vec::new();
    while let Some(o) = s.poll_outgoing() {
        out.push((o.route, serde_json::from_slice(&o.json).unwrap()));
    }
    let mut events = Vec::new();
    while let Some(e) = s.poll_event() {
        events.push(e);
    }
    (out, events)
}

fn frame(v: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&v).unwrap()
}

/// A session initialized over stream 1 with sampling offered by the client.
fn ready_session(now: Instant) -> Session<Handler> {
    let mut config = ServerConfig::new("t", "1");
    config.announce_changes = true;
    let mut s = Session::new(config, registry(), now);
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{"sampling":{}},
        "clientInfo":{"name":"c","version":"1"}}});
    s.handle_frame(now, StreamId(1), &frame(init));
    let (out, _) = drain(&mut s);
    assert_eq!(out[0].0, Route::Reply { id: Some(RequestId::Number(0)), stream: StreamId(1) });
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    s.handle_frame(now, StreamId(2), &frame(note));
    drain(&mut s);
    s
}

#[test]
fn what_a_call_sends_travels_with_it_and_its_reply_goes_back_on_its_stream() {
    let now = VirtualClock::new().now();
    let mut s = ready_session(now);
    let call = json!({"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{
        "name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"p"}}});
    s.handle_frame(now, StreamId(7), &frame(call));
    let (out, events) = drain(&mut s);
    assert!(out.is_empty());
    let Event::Call { id, .. } = &events[0] else { panic!("{events:?}") };
    let call_id = id.clone();
    let related = Route::Related { id: call_id.clone(), stream: StreamId(7) };

    s.progress(now, &call_id, 1.0, None, None).unwrap();
    s.log(now, Some(&call_id), LoggingLevel::Info, None, json!("working")).unwrap();
    let sampling = json!({"messages":[],"maxTokens":5});
    let sid = s
        .request(
            now,
            Some(&call_id),
            "sampling/createMessage",
            Some(RawJson::from(sampling)),
            RequestOptions::default(),
        )
        .unwrap();
    // A log line made outside any request is standalone.
    s.log(now, None, LoggingLevel::Info, None, json!("idle")).unwrap();
    let (out, _) = drain(&mut s);
    let routes: Vec<&Route> = out.iter().map(|(r, _)| r).collect();
    assert_eq!(routes, [&related, &related, &related, &Route::Standalone]);
    assert_eq!(out[2].1["method"], "sampling/createMessage");

    // The client's answer to the sampling request arrives on another stream (its own POST).
    let answer = json!({"jsonrpc":"2.0","id":sid,"result":{
        "role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}});
    s.handle_frame(now, StreamId(8), &frame(answer));
    let (out, events) = drain(&mut s);
    assert!(out.is_empty());
    assert!(matches!(&events[0], Event::Response { id, result: Ok(_) } if *id == sid));

    s.respond(now, call_id.clone(), Ok(RawJson::from(json!({"content":[]})))).unwrap();
    let (out, _) = drain(&mut s);
    assert_eq!(out[0].0, Route::Reply { id: Some(call_id.clone()), stream: StreamId(7) });
    // Once answered, the call has no stream any more: later messages are standalone.
    s.log(now, Some(&call_id), LoggingLevel::Info, None, json!("late")).unwrap();
    s.notify_list_changed(now, ListKind::Tools);
    let (out, _) = drain(&mut s);
    assert_eq!(
        out.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>(),
        [Route::Standalone, Route::Standalone]
    );
}

#[test]
fn errors_for_unreadable_messages_go_back_where_they_came_from() {
    let now = VirtualClock::new().now();
    let mut s = ready_session(now);
    s.handle_frame(now, StreamId(9), b"{not json");
    let (out, _) = drain(&mut s);
    assert_eq!(out[0].0, Route::Reply { id: None, stream: StreamId(9) });
    assert_eq!(out[0].1["error"]["code"], -32700);
    let unknown = json!({"jsonrpc":"2.0","id":5,"method":"nope/nope"});
    s.handle_frame(now, StreamId(10), &frame(unknown));
    let (out, _) = drain(&mut s);
    assert_eq!(out[0].0, Route::Reply { id: Some(RequestId::Number(5)), stream: StreamId(10) });
}

#[test]
fn outgoing_messages_say_what_they_are() {
    let now = VirtualClock::new().now();
    let mut s = ready_session(now);
    let id = s.request(now, None, "roots/list", None, RequestOptions::default());
    // The client offered no roots capability: refused locally, nothing sent.
    assert!(id.is_err());
    s.log(now, None, LoggingLevel::Info, None, json!("x")).unwrap();
    let ping = s.request(now, None, "ping", None, RequestOptions::default()).unwrap();
    let kinds: Vec<OutgoingKind> =
        std::iter::from_fn(|| s.poll_outgoing()).map(|o| o.kind).collect();
    assert_eq!(
        kinds,
        [
            OutgoingKind::Notification { method: "notifications/message".into() },
            OutgoingKind::Request { id: ping, method: "ping".into() },
        ]
    );
}

#[test]
fn a_batch_reply_goes_back_on_the_batch_stream() {
    let now = VirtualClock::new().now();
    let mut s = Session::new(ServerConfig::new("t", "1"), registry(), now);
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}});
    s.handle_frame(now, StreamId(1), &frame(init));
    drain(&mut s);
    let batch = json!([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]);
    s.handle_frame(now, StreamId(3), &frame(batch));
    let (out, _) = drain(&mut s);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, Route::Reply { id: Some(RequestId::Number(1)), stream: StreamId(3) });
    assert_eq!(out[0].1.as_array().map(Vec::len), Some(2));
}

#[test]
fn a_session_era_handler_asks_with_a_related_request_and_sees_its_session() {
    use zest_core::jsonrpc::RawJson;
    use zest_core::schema::{ElicitParams, InputRequest, InputRequiredResult};
    let now = VirtualClock::new().now();
    let mut s = ready_session(now);
    let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{
        "name":"echo","arguments":{"text":"hi"}}});
    s.handle_frame(now, StreamId(4), &frame(call));
    let (_, events) = drain(&mut s);
    let Event::Call { id, context, .. } = &events[0] else { panic!("{events:?}") };
    assert!(context.round.is_none(), "asks go out as requests in this era");
    let info = context.session.as_ref().expect("the session is known");
    assert_eq!(info.protocol_version.as_str(), "2025-06-18");
    assert_eq!(info.client_info.name, "c");
    assert!(info.client_capabilities.sampling.is_some());
    let id = id.clone();
    let sample: zest_core::schema::CreateMessageParams =
        serde_json::from_value(json!({"messages":[],"maxTokens":3})).unwrap();
    let sample = Some(RawJson::from_serialize(&sample));
    let asked = s.request(now, Some(&id), "sampling/createMessage", sample, Default::default());
    let Ok(sent) = asked else { panic!("{asked:?}") };
    let (out, _) = drain(&mut s);
    assert_eq!(out[0].0, Route::Related { id: id.clone(), stream: StreamId(4) });
    assert_eq!(out[0].1["method"], "sampling/createMessage");
    assert_eq!(out[0].1["id"], serde_json::to_value(&sent).unwrap());
    // The client offered no elicitation: refused locally, as for any request.
    let elicit: ElicitParams = serde_json::from_value(
        json!({"message":"name?","requestedSchema":{"type":"object","properties":{}}}),
    )
    .unwrap();
    let params = Some(RawJson::from_serialize(&elicit));
    assert!(s.request(now, Some(&id), "elicitation/create", params, Default::default()).is_err());
    // The same ask in 2026-07-28 words, as an input-required result.
    let mut asks = std::collections::BTreeMap::new();
    asks.insert("who".to_owned(), InputRequest::Elicit(Box::new(elicit)));
    let result = InputRequiredResult::new(asks, Some("opaque".into()));
    let wire = serde_json::to_value(&result).unwrap();
    assert_eq!(wire["resultType"], "input_required");
    assert_eq!(wire["inputRequests"]["who"]["method"], "elicitation/create");
    assert_eq!(wire["inputRequests"]["who"]["params"]["message"], "name?");
    let back: InputRequiredResult = serde_json::from_value(wire).unwrap();
    assert!(matches!(back.input_requests["who"], InputRequest::Elicit(_)));
    assert_eq!(back.request_state.as_deref(), Some("opaque"));
}
