//! The Streamable HTTP and legacy HTTP+SSE router, driven by a scripted HTTP client in
//! memory and virtual time. SSE answers and resumption: a call streams its progress, logs and requests to the client before its reply; dropped streams resume with `Last-Event-ID`; list changes and broadcasts go on the GET stream.

mod common;
mod router_harness;

use common::*;
use http::StatusCode;
use router_harness::*;
use serde_json::json;
use zest_core::http::server::SessionId;
use zest_core::io::Input;
use zest_core::jsonrpc::RawJson;
use zest_core::schema::LoggingLevel;
use zest_core::server::{Broadcast, Event, ListKind};
use zest_core::RequestOptions;

#[test]
fn handshake_per_revision_then_json_answers() {
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut http = Http::new(config());
        http.version = version;
        let session = http.handshake(json!({}));
        assert_eq!(session.len(), 32);
        assert!(session.bytes().all(|b| b.is_ascii_hexdigit()));
        let list = http.post(Some(&session), json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
        let a = http.answer(list);
        assert_eq!(a.status, Some(StatusCode::OK));
        assert_eq!(a.headers["content-type"], "application/json");
        assert!(a.closed);
        assert_eq!(a.json()["result"]["tools"].as_array().unwrap().len(), 3);
    }
}

#[test]
fn a_call_streams_its_progress_log_and_sampling_then_its_reply() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({"sampling":{}}));
    let call = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","id":"c1","method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"p1"}}}),
    );
    // The call waits for the app: the answer is an SSE stream, primed (2025-11-25).
    let a = http.answer(call);
    assert_eq!(a.status, Some(StatusCode::OK));
    assert_eq!(a.headers["content-type"], "text/event-stream");
    assert_eq!(a.events(), [(Some("1-0".to_owned()), String::new())]);
    assert!(a.body.starts_with(b"id: 1-0\nretry: 1000\n"), "{}", String::from_utf8_lossy(&a.body));
    let calls = http.take_calls();
    let (sid, id, _) = calls[0].clone();
    let now = http.now();
    let s = http.router.session_mut(&sid).unwrap();
    s.progress(now, &id, 0.5, Some(1.0), None).unwrap();
    s.log(now, Some(&id), LoggingLevel::Info, None, json!("working")).unwrap();
    let sampling =
        json!({"messages":[{"role":"user","content":{"type":"text","text":"?"}}],"maxTokens":5});
    let asked = s
        .request(
            now,
            Some(&id),
            "sampling/createMessage",
            Some(RawJson::from(sampling)),
            RequestOptions::default(),
        )
        .unwrap();
    http.pump();
    let messages = http.answer(call).messages();
    let methods: Vec<&str> = messages.iter().map(|m| m["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        ["notifications/progress", "notifications/message", "sampling/createMessage"]
    );
    assert_eq!(messages[0]["params"]["progressToken"], "p1");
    // The client answers the sampling request with a POST of its own: 202.
    let reply = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","id": messages[2]["id"],
        "result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}}),
    );
    assert_eq!(http.answer(reply).status, Some(StatusCode::ACCEPTED));
    assert!(http
        .events
        .iter()
        .any(|e| matches!(&e.event, Event::Response { id, result: Ok(_) } if *id == asked)));
    // The handler finishes: the reply ends the stream.
    let now = http.now();
    http.router
        .session_mut(&sid)
        .unwrap()
        .respond(now, id, Ok(RawJson::from(json!({"content":[]}))))
        .unwrap();
    http.pump();
    let a = http.answer(call);
    assert!(a.closed);
    let messages = a.messages();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[3]["id"], "c1");
    let ids: Vec<String> = a.events().into_iter().filter_map(|(id, _)| id).collect();
    assert_eq!(ids, ["1-0", "1-1", "1-2", "1-3", "1-4"]);
}

#[test]
fn a_dropped_answer_resumes_with_last_event_id_and_nothing_twice() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let call = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":1}}}),
    );
    let (sid, id, _) = http.take_calls()[0].clone();
    let now = http.now();
    http.router.session_mut(&sid).unwrap().progress(now, &id, 1.0, None, None).unwrap();
    http.pump();
    let seen = http.answer(call).events();
    let last = seen.last().unwrap().0.clone().unwrap();
    assert_eq!(last, "1-1");
    http.drop_stream(call);
    // While nobody carries the stream, the session goes on and keeps what it sends.
    let s = http.router.session_mut(&sid).unwrap();
    s.progress(now, &id, 2.0, None, None).unwrap();
    s.respond(now, id, Ok(RawJson::from(json!({"content":[]})))).unwrap();
    http.pump();
    let before = http.answer(call).body.len();
    let resumed = http.get(&session, Some(&last));
    let a = http.answer(resumed);
    assert_eq!(a.status, Some(StatusCode::OK));
    assert!(a.closed, "the reply was among the replayed events: the stream ends");
    let replayed = a.messages();
    assert_eq!(replayed.len(), 2, "{replayed:?}");
    assert_eq!(replayed[0]["params"]["progress"], 2.0);
    assert_eq!(replayed[1]["id"], 5);
    assert_eq!(http.answer(call).body.len(), before, "nothing went to the dead exchange");
    // A client that resumes from the same id again did not get that replay (the connection
    // broke on the way): it gets the same events again, and from the last one, nothing.
    let again = http.get(&session, Some(&last));
    assert_eq!(http.answer(again).messages(), replayed);
    let done = http.get(&session, Some("1-3"));
    assert!(http.answer(done).messages().is_empty());
    // Two sweeps later the stream is forgotten.
    assert_eq!(http.router.events_held(), Some(3));
    for _ in 0..2 {
        let t = http.router.poll_timeout().unwrap();
        http.clock.advance_to(t);
        http.router.handle_input(Input::Timeout(t));
        http.pump();
    }
    assert_eq!(http.router.events_held(), Some(0));
    let late = http.get(&session, Some(&last));
    assert!(http.answer(late).messages().is_empty());
}

/// A stream written whole stays resumable for a while: the connection may break after the
/// router wrote the last event and before it arrived (regression: it was forgotten at once,
/// and the call failed with `StreamLost` though it had been answered).
#[test]
fn a_stream_written_whole_stays_resumable_until_the_second_sweep() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let call = http.post(Some(&session), echo_x(5));
    let (sid, id, _) = http.take_calls()[0].clone();
    let now = http.now();
    http.router
        .session_mut(&sid)
        .unwrap()
        .respond(now, id, Ok(RawJson::from(json!({"content":[]}))))
        .unwrap();
    http.pump();
    assert!(http.answer(call).closed, "the reply went out and the stream ended");
    // The client saw only the priming event: the reply was lost on the way.
    let resumed = http.get(&session, Some("1-0"));
    let replayed = http.answer(resumed).messages();
    assert_eq!(replayed.len(), 1, "{replayed:?}");
    assert_eq!(replayed[0]["id"], 5);
}

#[test]
fn a_resumed_open_stream_carries_what_comes_next() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let call = http.post(Some(&session), echo_x(5));
    let (sid, id, _) = http.take_calls()[0].clone();
    http.drop_stream(call);
    let resumed = http.get(&session, Some("1-0"));
    assert!(!http.answer(resumed).closed);
    let now = http.now();
    http.router
        .session_mut(&sid)
        .unwrap()
        .respond(now, id, Ok(RawJson::from(json!({"content":[]}))))
        .unwrap();
    http.pump();
    let a = http.answer(resumed);
    assert!(a.closed);
    assert_eq!(a.messages()[0]["id"], 5);
}

#[test]
fn list_changes_go_on_the_get_stream_and_wait_for_one() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let now = http.now();
    http.router.change_registry(now, &[ListKind::Tools], |r| {
        r.add_tool(tool("extra", json!({"type":"object"})), "echo");
    });
    http.pump();
    // No GET stream yet: the notification waits, then arrives first on the new stream.
    let get = http.get(&session, None);
    let a = http.answer(get);
    assert_eq!(a.status, Some(StatusCode::OK));
    assert!(!a.closed);
    assert_eq!(a.messages()[0]["method"], "notifications/tools/list_changed");
    // Every session sees the new registry.
    let list = http.post(Some(&session), json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert_eq!(http.answer(list).json()["result"]["tools"].as_array().unwrap().len(), 4);
    // One standalone stream per session.
    let second = http.get(&session, None);
    assert_eq!(http.answer(second).status, Some(StatusCode::CONFLICT));
    // A log line outside any request goes there too.
    let sid = SessionId::clone(http.router.sessions().next().unwrap());
    let now = http.now();
    http.router
        .session_mut(&sid)
        .unwrap()
        .log(now, None, LoggingLevel::Info, None, json!("idle"))
        .unwrap();
    http.pump();
    assert_eq!(http.answer(get).messages()[1]["method"], "notifications/message");
}

#[test]
fn a_broadcast_reaches_every_session_and_updates_only_subscribers() {
    let mut http = Http::new(config());
    let a = http.handshake(json!({}));
    let b = http.handshake(json!({}));
    let (get_a, get_b) = (http.get(&a, None), http.get(&b, None));
    let uri = "test://static-text";
    let sub = json!({"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri": uri}});
    let subscribed = http.post(Some(&a), sub);
    assert!(http.answer(subscribed).json()["result"].is_object());
    let now = http.now();
    Broadcast::ResourceUpdated { uri: uri.into() }.apply_all(now, &mut http.router);
    let log =
        Broadcast::Log { level: LoggingLevel::Info, logger: Some("db".into()), data: json!(1) };
    log.apply_all(now, &mut http.router);
    let change = Broadcast::ChangeRegistry {
        changed: vec![ListKind::Tools],
        change: Box::new(|r: &mut zest_core::server::Registry<Handler>| {
            r.remove_tool("echo");
        }),
    };
    change.apply_all(now, &mut http.router);
    http.pump();
    let methods = |get| -> Vec<String> {
        let messages = http.answer(get).messages();
        messages.iter().map(|m| m["method"].as_str().unwrap_or("").to_owned()).collect()
    };
    let logged = ["notifications/message", "notifications/tools/list_changed"];
    assert_eq!(methods(get_b), logged, "b did not subscribe");
    let mut for_a = vec!["notifications/resources/updated"];
    for_a.extend(logged);
    assert_eq!(methods(get_a), for_a);
    assert_eq!(http.answer(get_a).messages()[1]["params"]["logger"], "db");
    let list = http.post(Some(&b), json!({"jsonrpc":"2.0","id":4,"method":"tools/list"}));
    let tools = http.answer(list).json()["result"]["tools"].clone();
    assert!(tools.as_array().unwrap().iter().all(|t| t["name"] != "echo"), "{tools}");
}

/// Regression (found by the fault-injection properties): what the session sent on its GET
/// stream while the client was reconnecting waited in the backlog for a *fresh* GET, so a
/// client that resumed with `Last-Event-ID` never got it.
#[test]
fn a_resumed_get_stream_gets_what_was_sent_while_it_was_down() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let sid = SessionId::clone(http.router.sessions().next().unwrap());
    let get = http.get(&session, None);
    let log = |http: &mut Http, text: &str| {
        let now = http.now();
        let s = http.router.session_mut(&sid).unwrap();
        s.log(now, None, LoggingLevel::Info, None, json!(text)).unwrap();
        http.pump();
    };
    log(&mut http, "one");
    let events = http.answer(get).events();
    let last = events.last().unwrap().0.clone().unwrap();
    http.drop_stream(get);
    log(&mut http, "two");
    let resumed = http.get(&session, Some(&last));
    let a = http.answer(resumed);
    assert_eq!(a.status, Some(StatusCode::OK));
    let messages = a.messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["params"]["data"], "two");
    // It is carried on the resumed stream from now on.
    log(&mut http, "three");
    assert_eq!(http.answer(resumed).messages()[1]["params"]["data"], "three");
}

#[test]
fn a_cancelled_call_ends_its_stream() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    let call = http.post(Some(&session), echo_x(8));
    assert!(!http.answer(call).closed);
    let cancel = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":8,"reason":"enough"}}),
    );
    assert_eq!(http.answer(cancel).status, Some(StatusCode::ACCEPTED));
    assert!(http.answer(call).closed, "no reply will come: the stream ends");
}
