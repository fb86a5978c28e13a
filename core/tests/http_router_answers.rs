//! The Streamable HTTP and legacy HTTP+SSE router, driven by a scripted HTTP client in
//! memory and virtual time. How a POST is answered: one JSON body or an SSE stream, decided when its calls are answered, when one reports first, or after `json_wait`; the JSON mode.

mod common;
mod router_harness;

use std::time::Duration;

use common::*;
use http::StatusCode;
use router_harness::*;
use serde_json::{json, Value};
use zest_core::io::Input;

#[test]
fn json_mode_answers_a_slow_call_with_one_body() {
    let mut cfg = config();
    cfg.json_response = true;
    let mut http = Http::new(cfg);
    let session = http.handshake(json!({}));
    let call = http.post(Some(&session), echo_x(3));
    assert!(!http.answers.contains_key(&call), "nothing until the reply");
    http.answer_first_call();
    let a = http.answer(call);
    assert_eq!(a.status, Some(StatusCode::OK));
    assert_eq!(a.json()["result"]["content"][0]["text"], "x");
}

#[test]
fn a_call_answered_before_the_answer_is_decided_gets_one_json_body() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    http.decide = false;
    let call = http.post(Some(&session), echo_x(3));
    assert!(!http.answers.contains_key(&call), "undecided: nothing sent yet");
    // The handler is done (on a thread, say) before the POST has waited `json_wait`: its
    // reply is all the POST needs, so it goes at once, without `decide_answers`.
    http.answer_first_call();
    let a = http.answer(call);
    assert_eq!(a.status, Some(StatusCode::OK));
    assert_eq!(a.headers["content-type"], "application/json");
    assert_eq!(a.json()["result"]["content"][0]["text"], "x");
    assert!(a.closed);
    assert_eq!(http.router.exchange_count(), 0);
    assert_eq!(
        http.router.poll_timeout().map(|t| t > http.now() + Duration::from_secs(1)),
        Some(true)
    );
}

#[test]
fn a_call_that_reports_progress_before_the_decision_is_streamed() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    http.decide = false;
    let call = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":"p"}}}),
    );
    let (sid, id, call_params) = http.take_calls()[0].clone();
    let now = http.now();
    let s = http.router.session_mut(&sid).unwrap();
    s.progress(now, &id, 1.0, Some(2.0), None).unwrap();
    s.respond(now, id, Ok(app(&"echo", &call_params).unwrap())).unwrap();
    http.router.decide_answers();
    http.pump();
    let a = http.answer(call);
    assert_eq!(a.headers["content-type"], "text/event-stream");
    let methods: Vec<Value> = a.messages().iter().map(|m| m["method"].clone()).collect();
    assert_eq!(methods, [json!("notifications/progress"), Value::Null]);
    assert!(a.closed);
}

#[test]
fn an_answer_left_undecided_streams_once_it_has_waited_json_wait() {
    let mut http = Http::new(config().json_wait(Duration::from_millis(5)));
    let session = http.handshake(json!({}));
    http.decide = false;
    let call = http.post(Some(&session), echo_x(3));
    assert!(!http.answers.contains_key(&call));
    let start = http.now();
    assert_eq!(http.router.poll_timeout(), Some(start + Duration::from_millis(5)));
    // Other inputs, on this session too, leave it to its handler for now.
    let ping = http.post(Some(&session), json!({"jsonrpc":"2.0","id":4,"method":"ping"}));
    assert_eq!(http.answer(ping).json()["id"], 4);
    assert!(!http.answers.contains_key(&call), "a ping does not decide the call's answer");
    http.clock.advance(Duration::from_millis(4));
    http.router.handle_input(Input::Timeout(http.now()));
    http.pump();
    assert!(!http.answers.contains_key(&call), "not yet due");
    http.clock.advance(Duration::from_millis(1));
    http.router.handle_input(Input::Timeout(http.now()));
    http.pump();
    let a = http.answer(call);
    assert_eq!(a.headers["content-type"], "text/event-stream");
    assert!(!a.closed, "the stream waits for the handler's reply");
    http.answer_first_call();
    let a = http.answer(call);
    assert_eq!(a.messages().last().unwrap()["result"]["content"][0]["text"], "x");
    assert!(a.closed);
}

#[test]
fn a_client_gone_before_its_answer_is_decided_leaves_no_deadline() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    http.decide = false;
    let call = http.post(Some(&session), echo_x(3));
    let start = http.now();
    assert_eq!(http.router.poll_timeout(), Some(start + Duration::from_millis(5)));
    http.drop_stream(call);
    assert!(http.router.poll_timeout().is_some_and(|t| t > start + Duration::from_secs(1)));
}

#[test]
fn a_session_closed_while_an_answer_is_undecided_ends_its_stream_with_a_head() {
    let mut http = Http::new(config());
    let session = http.handshake(json!({}));
    http.decide = false;
    let call = http.post(Some(&session), echo_x(3));
    let (sid, ..) = http.take_calls()[0].clone();
    let now = http.now();
    http.router.close_session(now, &sid);
    http.pump();
    let a = http.answer(call);
    // Not refused (a close without a head would be a 500): a stream that ends, as it would
    // had it been decided before the session closed.
    assert_eq!(a.status, Some(StatusCode::OK), "{a:?}");
    assert_eq!(a.headers["content-type"], "text/event-stream");
    assert!(a.closed);
}

#[test]
fn json_mode_answers_a_post_whose_calls_were_all_cancelled_with_an_empty_stream() {
    let mut cfg = config();
    cfg.json_response = true;
    let mut http = Http::new(cfg);
    let session = http.handshake(json!({}));
    let call = http.post(Some(&session), echo_x(8));
    assert!(!http.answers.contains_key(&call));
    let cancel = http.post(
        Some(&session),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":8,"reason":"enough"}}),
    );
    assert_eq!(http.answer(cancel).status, Some(StatusCode::ACCEPTED));
    let a = http.answer(call);
    // No reply is due, an empty `application/json` body would not parse, and a POST of
    // requests gets JSON or SSE (not 202): an event stream that ends with no event.
    assert_eq!(a.status, Some(StatusCode::OK), "{a:?}");
    assert_eq!(a.headers["content-type"], "text/event-stream");
    assert!(a.body.is_empty() && a.closed);
    assert_eq!(http.router.exchange_count(), 0);
}
