//! Resuming a POST's SSE answer with `Last-Event-ID`: exactly once, bounded, never hanging.

use serde_json::json;

use super::*;
use crate::client::ServerNotification;
use crate::error::RequestError;

fn log(text: &str) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": text}})
    .to_string()
}

fn responses(
    events: &[Event],
) -> Vec<(&RequestId, &Result<crate::jsonrpc::RawJson, RequestError>)> {
    (events.iter())
        .filter_map(|e| match e {
            Event::Response { id, result } => Some((id, result)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_dropped_stream_resumes_from_the_last_event_id_exactly_once() {
    let mut f = Fake::streamable();
    f.ready("s");
    let id = f.request("tools/call");
    let (call, _) = f.take_one();
    f.open_sse(call, &[]);
    f.data(call, "id: e0\nretry: 250\ndata:\n\n");
    f.data(call, &event(Some("e1"), &log("one")));
    // The connection breaks mid-event: the half event is discarded.
    f.data(call, "id: e2\ndata: {\"jsonrpc\"");
    f.fail(call);
    let events = f.take_events();
    assert!(matches!(&events[..], [Event::Notification(ServerNotification::LoggingMessage(_))]));
    assert!(f.take().is_empty(), "the client waits `retry` first");
    let start = f.clock.now();
    assert_eq!(f.client.poll_timeout(), Some(start + Duration::from_millis(250)));
    f.advance(Duration::from_millis(249));
    assert!(f.take().is_empty(), "an early timeout does nothing");

    f.advance(Duration::from_millis(1));
    let (resume, request) = f.take_one();
    assert_eq!(request.method, Method::GET);
    assert_eq!(header(&request, "last-event-id"), Some("e1"));
    assert_eq!(header(&request, "accept"), Some("text/event-stream"));
    assert_eq!(header(&request, "mcp-session-id"), Some("s"));
    assert_eq!(header(&request, "mcp-protocol-version"), Some("2025-11-25"));

    // The replay overlaps: the response comes twice, and reaches the application once.
    f.open_sse(resume, &[]);
    let answer = result(&id, json!({"content": []}));
    f.data(resume, &(event(Some("e2"), &answer) + &event(Some("e2"), &answer)));
    f.end(resume);
    let events = f.take_events();
    assert_eq!(responses(&events).len(), 1, "{events:?}");
    assert!(matches!(responses(&events)[0], (got, Ok(_)) if *got == id));
    assert!(!events.iter().any(|e| matches!(e, Event::Violation(_))), "{events:?}");
    // The same response arriving once more later (say on a second replay) is dropped too.
    assert!(f.take().is_empty());
    assert_eq!(f.client.in_flight(), 0);
}

#[test]
fn a_stream_that_ends_without_its_response_and_without_ids_fails_at_once() {
    let mut f = Fake::streamable();
    f.ready("s");
    let id = f.request("tools/call");
    let (call, _) = f.take_one();
    f.open_sse(call, &[]);
    f.data(call, &event(None, &log("working")));
    f.end(call);
    let events = f.take_events();
    assert_eq!(events.last(), Some(&Event::Response { id, result: Err(RequestError::StreamLost) }));
    let (_, cancel) = f.take_one();
    assert_eq!(rpc_method(&cancel), "notifications/cancelled");
    assert_eq!(f.client.poll_timeout(), None, "nothing left to wait for");
}

#[test]
fn a_stream_that_breaks_before_any_id_fails_with_the_transport_error() {
    let mut f = Fake::streamable();
    f.ready("s");
    let id = f.request("tools/call");
    let (call, _) = f.take_one();
    f.open_sse(call, &[]);
    f.fail(call);
    let error = RequestError::Transport(TransportFailure::Reset("test".into()));
    assert_eq!(f.take_events(), [Event::Response { id, result: Err(error) }]);
}

#[test]
fn resumption_attempts_are_bounded() {
    let mut http = config(HttpMode::StreamableHttp);
    http.max_resume_attempts = 2;
    let mut f = Fake::new(http);
    f.ready("s");
    let id = f.request("tools/call");
    let (call, _) = f.take_one();
    f.open_sse(call, &[]);
    f.data(call, "id: a\ndata:\n\n");
    f.end(call);
    for attempt in 1..=2 {
        f.advance(Duration::from_secs(1));
        let (resume, request) = f.take_one();
        assert_eq!(header(&request, "last-event-id"), Some("a"), "attempt {attempt}");
        if attempt == 1 {
            f.head(resume, 503, &[]);
            let events = f.take_events();
            assert!(matches!(&events[..], [Event::Violation(_)]), "{events:?}");
        } else {
            f.fail(resume);
        }
    }
    assert_eq!(f.take_events(), [Event::Response { id, result: Err(RequestError::StreamLost) }]);
    assert_eq!(rpc_method(&f.take_one().1), "notifications/cancelled");
    f.advance(Duration::from_secs(5));
    assert!(f.take().is_empty());
}

#[test]
fn progress_on_a_resumed_stream_restarts_the_attempt_count() {
    let mut http = config(HttpMode::StreamableHttp);
    http.max_resume_attempts = 1;
    let mut f = Fake::new(http);
    f.ready("s");
    let id = f.request("tools/call");
    let (mut stream, _) = f.take_one();
    f.open_sse(stream, &[]);
    // A polling server: every connection sends one event and closes (MCP 2025-11-25).
    for n in 0..5 {
        f.data(stream, &event(Some(&format!("p{n}")), &log("tick")));
        f.end(stream);
        f.advance(Duration::from_secs(1));
        let (next, request) = f.take_one();
        assert_eq!(header(&request, "last-event-id"), Some(format!("p{n}").as_str()));
        stream = next;
        f.open_sse(stream, &[]);
    }
    f.data(stream, &event(Some("done"), &result(&id, json!({"content": []}))));
    f.end(stream);
    let events = f.take_events();
    assert!(matches!(responses(&events)[..], [(_, Ok(_))]), "{events:?}");
}

#[test]
fn a_405_to_resumption_fails_the_request() {
    let mut f = Fake::streamable();
    f.ready("s");
    let id = f.request("tools/call");
    let (call, _) = f.take_one();
    f.open_sse(call, &[]);
    f.data(call, "id: a\ndata:\n\n");
    f.fail(call);
    f.advance(Duration::from_secs(1));
    let (resume, _) = f.take_one();
    f.head(resume, 405, &[]);
    assert_eq!(f.take_events(), [Event::Response { id, result: Err(RequestError::StreamLost) }]);
}

#[test]
fn a_response_replayed_on_another_stream_is_dropped() {
    let mut f = Fake::streamable();
    let (get, _) = f.handshake("s").expect("a GET stream");
    f.open_sse(get, &[]);
    let id = f.request("tools/list");
    let (call, _) = f.take_one();
    let answer = result(&id, json!({"tools": []}));
    f.answer_json(call, &[], &answer);
    assert_eq!(responses(&f.take_events()).len(), 1);
    f.data(get, &event(Some("g"), &answer));
    assert!(f.take_events().is_empty(), "no duplicate, no unknown-id violation");
}

#[test]
fn the_servers_retry_is_capped() {
    let mut http = config(HttpMode::StreamableHttp);
    http.max_retry = Duration::from_secs(5);
    let mut f = Fake::new(http);
    f.ready("s");
    f.request("tools/call");
    let (call, _) = f.take_one();
    f.open_sse(call, &[]);
    f.data(call, "id: a\nretry: 86400000\ndata:\n\n");
    f.end(call);
    assert_eq!(f.client.poll_timeout(), Some(f.clock.now() + Duration::from_secs(5)));
}

#[test]
fn a_request_that_timed_out_is_not_resumed_and_its_late_copies_are_dropped() {
    let mut f = Fake::streamable();
    f.ready("s");
    let now = f.clock.now();
    let opts = RequestOptions::default().timeout(Duration::from_secs(2));
    let id = f.client.request(now, "tools/call", None, opts).unwrap();
    f.drain();
    let (call, _) = f.take_one();
    f.open_sse(call, &[]);
    f.data(call, "id: a\nretry: 5000\ndata:\n\n");
    f.end(call);
    f.advance(Duration::from_secs(2));
    assert_eq!(
        f.take_events(),
        [Event::Response { id: id.clone(), result: Err(RequestError::TimedOut) }]
    );
    assert_eq!(rpc_method(&f.take_one().1), "notifications/cancelled");
    assert_eq!(f.client.poll_timeout(), None, "no reconnection is pending");
    f.advance(Duration::from_secs(10));
    assert!(f.take().is_empty());

    // Its response, arriving late and twice on another stream, is dropped both times.
    let other = f.request("tools/list");
    let (list, _) = f.take_one();
    f.open_sse(list, &[]);
    let late = result(&id, json!({"content": []}));
    f.data(list, &(event(None, &late) + &event(None, &late)));
    assert!(f.take_events().is_empty());
    f.data(list, &event(None, &result(&other, json!({"tools": []}))));
    assert!(matches!(&f.take_events()[..], [Event::Response { result: Ok(_), .. }]));
}
