//! Back-compat detection
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#backwards-compatibility>):
//! which answers to the first `initialize` fall back
//! to legacy HTTP+SSE, and which do not.

use super::*;
use crate::error::CloseReason;

#[test]
fn status_400_404_and_405_fall_back_to_legacy() {
    for status in [400, 404, 405] {
        let mut f = Fake::new(config(HttpMode::Auto));
        let (init, first) = f.take_one();
        assert!(is_post(&first));
        f.head(init, status, &[("content-type", "text/plain")]);
        f.data(init, "not here");
        f.end(init);
        assert!(f.take_events().is_empty(), "{status}: no outcome yet");
        let (sse, request) = f.take_one();
        assert_eq!(request.method, Method::GET, "{status}");
        assert_eq!(request.uri, URL.parse::<Uri>().unwrap());
        assert_eq!(header(&request, "accept"), Some("text/event-stream"));
        f.open_sse(sse, &[]);
        f.data(sse, "event: endpoint\ndata: /messages?session=1\n\n");
        let (post, again) = f.take_one();
        assert_eq!(again.uri.path(), "/messages", "{status}");
        assert_eq!(again.body, first.body, "{status}: the same initialize, same id");
        f.accept(post);
        let answer = init_result(&body(&again)["id"]);
        f.data(sse, &format!("event: message\ndata: {answer}\n\n"));
        assert!(matches!(f.take_events()[..], [Event::Ready(_)]), "{status}");
    }
}

#[test]
fn status_401_and_403_never_fall_back() {
    for status in [401, 403] {
        let mut f = Fake::new(config(HttpMode::Auto));
        let (init, _) = f.take_one();
        f.head(init, status, &[("www-authenticate", "Bearer realm=\"mcp\"")]);
        let reason = CloseReason::HttpStatus {
            status: StatusCode::from_u16(status).unwrap(),
            www_authenticate: Some("Bearer realm=\"mcp\"".into()),
        };
        assert_eq!(f.take_events(), [Event::Closed(reason)], "{status}");
        assert!(f.take().is_empty(), "{status}: no GET");
    }
}

#[test]
fn a_successful_initialize_settles_on_streamable_http() {
    let mut f = Fake::new(config(HttpMode::Auto));
    f.ready("s");
    // Later 404s are session matters, never a cue to fall back.
    f.request("tools/list");
    let (stream, _) = f.take_one();
    f.head(stream, 404, &[]);
    let (_, request) = f.take_one();
    assert!(is_post(&request));
    assert_eq!(rpc_method(&request), "initialize");
}

#[test]
fn forced_streamable_http_does_not_fall_back() {
    let mut f = Fake::streamable();
    let (init, _) = f.take_one();
    f.head(init, 404, &[]);
    let reason = CloseReason::HttpStatus { status: StatusCode::NOT_FOUND, www_authenticate: None };
    assert_eq!(f.take_events(), [Event::Closed(reason)]);
    assert!(f.take().is_empty());
}

#[test]
fn a_fallback_that_finds_no_legacy_server_closes_with_its_status() {
    let mut f = Fake::new(config(HttpMode::Auto));
    let (init, _) = f.take_one();
    f.head(init, 405, &[]);
    let (sse, _) = f.take_one();
    f.head(sse, 404, &[]);
    let reason = CloseReason::HttpStatus { status: StatusCode::NOT_FOUND, www_authenticate: None };
    assert_eq!(f.take_events(), [Event::Closed(reason)]);
}

#[test]
fn detection_is_bounded_by_the_initialize_timeout() {
    let mut f = Fake::new(config(HttpMode::Auto));
    let (init, _) = f.take_one();
    f.head(init, 404, &[]);
    let (sse, _) = f.take_one();
    f.open_sse(sse, &[]);
    // No endpoint event ever comes.
    let deadline = f.client.poll_timeout().expect("the initialize deadline");
    f.advance(deadline - f.clock.now());
    assert_eq!(f.take_events(), [Event::Closed(CloseReason::InitializeTimedOut)]);
    assert_eq!(f.aborts, [sse]);
}

#[test]
fn an_initialize_answer_without_a_response_closes_as_invalid_not_as_ended() {
    let invalid = || {
        CloseReason::InitializeInvalid("the answer to initialize held no JSON-RPC response".into())
    };
    // A body labelled JSON that is not JSON.
    let mut f = Fake::streamable();
    let (init, _) = f.take_one();
    f.answer_json(init, &[], "<html>no</html>");
    let events = f.take_events();
    assert!(events.iter().any(|e| matches!(e, Event::Violation(_))), "{events:?}");
    assert_eq!(events.last(), Some(&Event::Closed(invalid())));
    // A content type that is neither JSON nor SSE.
    let mut f = Fake::streamable();
    let (init, _) = f.take_one();
    f.head(init, 200, &[("content-type", "text/html")]);
    f.data(init, "hi");
    f.end(init);
    let events = f.take_events();
    assert!(events.iter().any(|e| matches!(e, Event::Violation(_))), "{events:?}");
    assert_eq!(events.last(), Some(&Event::Closed(invalid())));
}
