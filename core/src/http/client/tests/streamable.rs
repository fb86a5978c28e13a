//! Streamable HTTP: handshake, headers, answers, the GET stream, expiry, close.

use serde_json::json;

use super::*;
use crate::client::{ServerNotification, ServerRequest};
use crate::error::{CloseReason, ProtocolViolation, RequestError, UsageError};
use crate::schema::{ClientCapabilities, RootsCapability};

#[test]
fn handshake_over_json_then_session_and_version_on_every_request() {
    let mut f = Fake::streamable();
    let (init, request) = f.take_one();
    assert_eq!(init, StreamId(1), "the client names its first exchange 1");
    assert!(is_post(&request));
    assert_eq!(header(&request, "accept"), Some("application/json, text/event-stream"));
    assert_eq!(header(&request, "content-type"), Some("application/json"));
    assert_eq!(header(&request, "mcp-session-id"), None);
    assert_eq!(header(&request, "mcp-protocol-version"), None);
    assert_eq!(rpc_method(&request), "initialize");

    f.answer_json(init, &[("mcp-session-id", "s-1")], &init_result(&body(&request)["id"]));
    assert!(matches!(f.take_events()[..], [Event::Ready(_)]));

    // `initialized` goes out with the GET stream beside it.
    let mut sent = f.take();
    assert_eq!(sent.len(), 2, "{sent:#?}");
    let (get, request) = sent.pop().unwrap();
    let (note, note_request) = sent.pop().unwrap();
    assert!(is_post(&note_request));
    assert_eq!(rpc_method(&note_request), "notifications/initialized");
    assert_eq!(header(&note_request, "mcp-session-id"), Some("s-1"));
    assert_eq!(header(&note_request, "mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(header(&note_request, "accept"), Some("application/json, text/event-stream"));
    f.accept(note);
    assert_eq!(request.method, Method::GET);
    assert_eq!(header(&request, "accept"), Some("text/event-stream"));
    assert_eq!(header(&request, "mcp-session-id"), Some("s-1"));
    assert_eq!(header(&request, "mcp-protocol-version"), Some("2025-11-25"));
    assert!(empty_body(&request));
    f.head(get, 405, &[]);

    let id = f.request("tools/list");
    let (stream, request) = f.take_one();
    assert_eq!(header(&request, "mcp-session-id"), Some("s-1"));
    assert_eq!(header(&request, "mcp-protocol-version"), Some("2025-11-25"));
    f.answer_json(stream, &[], &result(&id, json!({"tools": []})));
    let events = f.take_events();
    assert!(matches!(&events[..], [Event::Response { id: got, result: Ok(_) }] if *got == id));
}

#[test]
fn handshake_over_sse_skips_the_priming_event() {
    let mut f = Fake::streamable();
    let (init, request) = f.take_one();
    f.open_sse(init, &[("mcp-session-id", "s-2")]);
    f.data(init, "id: p0\nretry: 3000\ndata:\n\n");
    assert!(f.take_events().is_empty(), "the priming event is not a message");
    let answer = event(Some("p1"), &init_result(&body(&request)["id"]));
    // Split across reads, at an awkward place.
    let (a, b) = answer.split_at(17);
    f.data(init, a);
    f.data(init, b);
    assert!(matches!(f.take_events()[..], [Event::Ready(_)]));
    f.end(init);
    let sent = f.take();
    assert_eq!(sent.len(), 2, "`initialized` and the GET stream: {sent:#?}");
    for (_, request) in &sent {
        assert_eq!(header(request, "mcp-session-id"), Some("s-2"));
    }
    assert!(f.take_events().is_empty());
}

#[test]
fn notifications_get_202_and_a_refusal_is_a_violation() {
    let mut f = Fake::streamable();
    f.ready("s");
    let now = f.clock.now();
    f.client.notify(now, "notifications/roots/list_changed", None).unwrap();
    f.drain();
    let (stream, request) = f.take_one();
    assert!(request.headers.get("accept").is_some());
    f.accept(stream);
    assert!(f.take_events().is_empty());

    f.client.notify(now, "notifications/roots/list_changed", None).unwrap();
    f.drain();
    let (stream, _) = f.take_one();
    f.head(stream, 400, &[]);
    f.end(stream);
    assert_eq!(
        f.take_events(),
        [Event::Violation(ProtocolViolation::HttpStatus {
            method: Method::POST,
            status: StatusCode::BAD_REQUEST
        })]
    );
}

#[test]
fn custom_headers_and_bearer_go_on_every_request() {
    let mut config = config(HttpMode::StreamableHttp);
    config.headers.insert("x-tenant", HeaderValue::from_static("blue"));
    config.headers.insert("accept", HeaderValue::from_static("text/plain"));
    config.bearer = Some("tok-123".into());
    let mut f = Fake::new(config);
    let check = |request: &HttpRequest| {
        assert_eq!(header(request, "x-tenant"), Some("blue"));
        assert_eq!(header(request, "authorization"), Some("Bearer tok-123"));
        if request.method != Method::DELETE {
            assert_ne!(header(request, "accept"), Some("text/plain"), "ours win");
        }
    };
    let (init, request) = f.take_one();
    check(&request);
    f.answer_json(init, &[("mcp-session-id", "s")], &init_result(&body(&request)["id"]));
    let mut sent = f.take();
    let (get, request) = sent.pop().unwrap();
    check(&request);
    let (note, request) = sent.pop().unwrap();
    check(&request);
    f.accept(note);
    f.head(get, 405, &[]);
    f.client.close(f.clock.now());
    f.drain();
    let (_, delete) = f.take_one();
    check(&delete);
    assert!(!format!("{:?}", HttpClientConfig::new(URL.parse().unwrap())).contains("tok"));
}

#[test]
fn unusable_configs_are_refused() {
    let now = f_now();
    let relative = HttpClientConfig::new("/mcp".parse().unwrap());
    let bad = Client::new_http(ClientConfig::new("c", "1").session_era(), relative, now);
    assert!(matches!(bad, Err(UsageError::InvalidConfig(_))));
    let mut token = config(HttpMode::Auto);
    token.bearer = Some("line\nbreak".into());
    let bad = Client::new_http(ClientConfig::new("c", "1").session_era(), token, now);
    assert!(matches!(bad, Err(UsageError::InvalidConfig(_))));
    let debug = format!("{:?}", {
        let mut c = config(HttpMode::Auto);
        c.bearer = Some("secret-token".into());
        c
    });
    assert!(!debug.contains("secret-token"), "{debug}");
}

fn f_now() -> std::time::Instant {
    VirtualClock::new().now()
}

#[test]
fn a_server_request_inside_a_post_stream_is_answered_by_a_new_post() {
    let mut client = ClientConfig::new("c", "1").session_era();
    client.capabilities =
        ClientCapabilities { roots: Some(RootsCapability::default()), ..Default::default() };
    let mut f = Fake::with_config(client, config(HttpMode::StreamableHttp));
    f.ready("s");
    let id = f.request("tools/call");
    let (call, _) = f.take_one();
    f.open_sse(call, &[]);
    let ask = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"}).to_string();
    let ping = json!({"jsonrpc": "2.0", "id": "srv-2", "method": "ping"}).to_string();
    f.data(call, &(event(Some("1"), &ask) + &event(Some("2"), &ping)));
    let events = f.take_events();
    assert!(
        matches!(&events[..], [Event::Request { id, request: ServerRequest::ListRoots(_) }]
            if *id == RequestId::from("srv-1")),
        "{events:?}"
    );
    // The ping is answered by the machine, as a POST of its own.
    let (pong, request) = f.take_one();
    assert!(is_post(&request));
    assert_eq!(body(&request)["id"], "srv-2");
    assert_eq!(header(&request, "mcp-session-id"), Some("s"));
    f.accept(pong);

    let now = f.clock.now();
    f.client.respond(now, "srv-1".into(), Ok(crate::jsonrpc::RawJson::empty_object())).unwrap();
    f.drain();
    let (answer, request) = f.take_one();
    assert_eq!(body(&request)["id"], "srv-1");
    assert!(body(&request).get("result").is_some());
    f.accept(answer);

    f.data(call, &event(Some("3"), &result(&id, json!({"content": []}))));
    f.end(call);
    let events = f.take_events();
    assert!(matches!(&events[..], [Event::Response { result: Ok(_), .. }]), "{events:?}");
    assert!(f.take().is_empty());
}

#[test]
fn the_get_stream_carries_server_messages_and_405_stops_it() {
    let mut f = Fake::streamable();
    let (get, _) = f.handshake("s").expect("a GET stream");
    f.open_sse(get, &[]);
    let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    f.data(get, &event(Some("g1"), &note.to_string()));
    assert_eq!(f.take_events(), [Event::Notification(ServerNotification::ToolListChanged)]);

    // The server closes it: the client reconnects after the default retry, from g1.
    f.end(get);
    assert!(f.take().is_empty());
    assert_eq!(f.client.poll_timeout(), Some(f.clock.now() + Duration::from_secs(1)));
    f.advance(Duration::from_secs(1));
    let (again, request) = f.take_one();
    assert_eq!(request.method, Method::GET);
    assert_eq!(header(&request, "last-event-id"), Some("g1"));
    // 405 now: no more GET streams, no timer.
    f.head(again, 405, &[]);
    assert_eq!(f.client.poll_timeout(), None);
    f.advance(Duration::from_secs(10));
    assert!(f.take().is_empty());
    assert!(f.take_events().is_empty());
}

/// A server may ask on the GET stream in answer to a call (an elicitation with no related
/// request): calls made before that stream has its head wait for it, in order.
#[test]
fn calls_wait_until_the_first_get_stream_has_its_head() {
    for answer in ["sse", "405", "failed"] {
        let mut f = Fake::streamable();
        let (get, _) = f.handshake("s").expect("a GET stream");
        let first = f.request("tools/call");
        let second = f.request("tools/list");
        assert!(f.take().is_empty(), "{answer}: nothing goes before the GET stream's head");
        match answer {
            "sse" => f.open_sse(get, &[]),
            "405" => f.head(get, 405, &[]),
            _ => f.fail(get),
        }
        let sent = f.take();
        let ids: Vec<Value> = sent.iter().map(|(_, r)| body(r)["id"].clone()).collect();
        let want = [first, second].map(|id| serde_json::to_value(id).unwrap());
        assert_eq!(ids, want, "{answer}: both calls go, in order, once the GET stream settles");
        // Later calls are not held again, whatever becomes of the stream.
        let third = f.request("ping");
        let (_, request) = f.take_one();
        assert_eq!(body(&request)["id"], serde_json::to_value(third).unwrap(), "{answer}");
    }
}

#[test]
fn close_drops_calls_held_for_the_get_stream() {
    let mut f = Fake::streamable();
    let (get, _) = f.handshake("s").expect("a GET stream");
    let call = f.request("tools/call");
    f.client.close(f.clock.now());
    f.drain();
    let sent = f.take();
    assert!(sent.iter().all(|(_, r)| r.method == Method::DELETE), "only the DELETE: {sent:#?}");
    assert!(f.aborts.contains(&get));
    let events = f.take_events();
    let outcome = events.iter().find(|e| matches!(e, Event::Response { id, .. } if *id == call));
    assert!(
        matches!(outcome, Some(Event::Response { result: Err(_), .. })),
        "the held call gets its one outcome: {events:?}"
    );
}

#[test]
fn no_get_stream_when_not_asked() {
    let mut http = config(HttpMode::StreamableHttp);
    http.open_get_stream = false;
    let mut f = Fake::new(http);
    assert!(f.handshake("s").is_none());
}

#[test]
fn expired_session_fails_requests_and_initializes_again() {
    let mut f = Fake::streamable();
    let (get, _) = f.handshake("old").expect("a GET stream");
    f.open_sse(get, &[]);
    let slow = f.request("tools/call");
    let (slow_stream, _) = f.take_one();
    f.open_sse(slow_stream, &[]);
    let doomed = f.request("tools/list");
    let (doomed_stream, _) = f.take_one();
    f.head(doomed_stream, 404, &[]);

    let events = f.take_events();
    let failed: Vec<&RequestId> = (events.iter())
        .filter_map(|e| match e {
            Event::Response { id, result: Err(RequestError::SessionExpired) } => Some(id),
            _ => None,
        })
        .collect();
    assert_eq!(failed, [&slow, &doomed]);
    assert_eq!(events.last(), Some(&Event::SessionExpired));
    let mut aborted = f.aborts.clone();
    aborted.sort();
    assert_eq!(aborted, [get, slow_stream], "every stream of the old session is dropped");

    // A fresh initialize, without the old session id.
    let (init, request) = f.take_one();
    assert_eq!(rpc_method(&request), "initialize");
    assert_eq!(header(&request, "mcp-session-id"), None);
    assert_eq!(header(&request, "mcp-protocol-version"), None);

    // Requests made meanwhile fail at once; notifications are refused as before `Ready`.
    let meanwhile = f.request("tools/list");
    assert_eq!(
        f.take_events(),
        [Event::Response { id: meanwhile, result: Err(RequestError::SessionExpired) }]
    );
    assert!(f.take().is_empty(), "nothing is sent for it");
    let now = f.clock.now();
    assert_eq!(f.client.notify(now, "notifications/x", None), Err(UsageError::NotReady));

    f.answer_json(init, &[("mcp-session-id", "new")], &init_result(&body(&request)["id"]));
    assert!(matches!(f.take_events()[..], [Event::Ready(_)]));
    let mut sent = f.take();
    let (_, get) = sent.pop().expect("the new session's GET stream");
    let (note, request) = sent.pop().expect("`initialized`");
    assert_eq!(rpc_method(&request), "notifications/initialized");
    assert_eq!(header(&request, "mcp-session-id"), Some("new"));
    f.accept(note);
    assert_eq!(get.method, Method::GET);
    assert_eq!(header(&get, "mcp-session-id"), Some("new"));
}

#[test]
fn expiry_closes_the_session_when_reinitializing_is_off() {
    let mut http = config(HttpMode::StreamableHttp);
    http.reinitialize_on_expiry = false;
    let mut f = Fake::new(http);
    f.ready("s");
    let id = f.request("tools/list");
    let (stream, _) = f.take_one();
    f.head(stream, 404, &[]);
    assert_eq!(
        f.take_events(),
        [
            Event::Response { id, result: Err(RequestError::SessionExpired) },
            Event::Closed(CloseReason::SessionExpired),
        ]
    );
    assert!(f.client.is_closed());
}

#[test]
fn a_server_that_keeps_expiring_sessions_is_given_up_on() {
    let mut f = Fake::streamable();
    let mut closed = false;
    for round in 0..=crate::client::MAX_EXPIRIES_IN_A_ROW {
        let (init, request) = f.take_one();
        f.answer_json(init, &[("mcp-session-id", "s")], &init_result(&body(&request)["id"]));
        let (note, _) = f.take().into_iter().next().expect("`initialized`");
        f.head(note, 404, &[]);
        let events = f.take_events();
        closed = events.contains(&Event::Closed(CloseReason::SessionExpired));
        assert_eq!(closed, round == crate::client::MAX_EXPIRIES_IN_A_ROW, "{events:?}");
    }
    assert!(closed);
}

#[test]
fn a_404_without_a_session_id_is_just_a_failed_request() {
    let mut f = Fake::streamable();
    let (init, request) = f.take_one();
    // No session id: the server keeps no sessions.
    f.answer_json(init, &[], &init_result(&body(&request)["id"]));
    f.take_events();
    let (note, _) = f.take_one();
    f.accept(note);
    let (get, _) = f.take_one();
    f.head(get, 405, &[]);
    let id = f.request("tools/list");
    let (stream, _) = f.take_one();
    f.head(stream, 404, &[]);
    let events = f.take_events();
    assert!(
        matches!(&events[..], [Event::Response { id: got, result: Err(RequestError::HttpStatus {
            status: StatusCode::NOT_FOUND, .. }) }] if *got == id),
        "{events:?}"
    );
}

#[test]
fn close_aborts_streams_and_deletes_the_session() {
    let mut f = Fake::streamable();
    let (get, _) = f.handshake("s-9").expect("a GET stream");
    f.open_sse(get, &[]);
    let id = f.request("tools/call");
    let (call, _) = f.take_one();
    f.client.close(f.clock.now());
    f.drain();
    let (delete, request) = f.take_one();
    assert_eq!(request.method, Method::DELETE);
    assert_eq!(header(&request, "mcp-session-id"), Some("s-9"));
    assert_eq!(header(&request, "mcp-protocol-version"), Some("2025-11-25"));
    let mut aborted = f.aborts.clone();
    aborted.sort();
    assert_eq!(aborted, [get, call]);
    assert_eq!(
        f.take_events(),
        [
            Event::Response { id, result: Err(RequestError::Closed(CloseReason::Local)) },
            Event::Closed(CloseReason::Local),
        ]
    );
    // 405 to DELETE is fine, and nothing more happens.
    f.head(delete, 405, &[]);
    f.end(delete);
    assert!(f.take_events().is_empty());
    assert!(f.take().is_empty());
}

#[test]
fn a_request_refused_with_401_carries_the_challenge() {
    let mut f = Fake::streamable();
    f.ready("s");
    let id = f.request("tools/list");
    let (stream, _) = f.take_one();
    f.head(stream, 401, &[("www-authenticate", "Bearer resource_metadata=\"x\"")]);
    assert_eq!(
        f.take_events(),
        [Event::Response {
            id,
            result: Err(RequestError::HttpStatus {
                status: StatusCode::UNAUTHORIZED,
                www_authenticate: Some("Bearer resource_metadata=\"x\"".into()),
            }),
        }]
    );
}

#[test]
fn a_json_answer_without_the_response_fails_the_request() {
    let mut f = Fake::streamable();
    f.ready("s");
    let id = f.request("tools/list");
    let (stream, _) = f.take_one();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "hi"}});
    f.answer_json(stream, &[], &note.to_string());
    let events = f.take_events();
    assert!(matches!(&events[0], Event::Notification(ServerNotification::LoggingMessage(_))));
    assert_eq!(events[1], Event::Response { id, result: Err(RequestError::StreamLost) });
    // The server may still be working on it: it is told to stop.
    let (_, cancel) = f.take_one();
    assert_eq!(rpc_method(&cancel), "notifications/cancelled");
}

#[test]
fn an_oversized_json_answer_fails_the_request() {
    let http = config(HttpMode::StreamableHttp);
    let mut f = Fake::with_config(
        ClientConfig::new("test-client", "1.0").session_era().max_message(512),
        http,
    );
    f.ready("s");
    let id = f.request("tools/list");
    let (stream, _) = f.take_one();
    f.head(stream, 200, &[("content-type", "application/json")]);
    f.data(stream, &"x".repeat(500));
    f.data(stream, &"x".repeat(13));
    assert_eq!(f.aborts, [stream]);
    let error = RequestError::TooLarge { limit: 512 };
    assert_eq!(f.take_events(), [Event::Response { id, result: Err(error) }]);
}

#[test]
fn an_oversized_sse_event_fails_the_request_it_answers_and_the_stream_goes_on() {
    let http = config(HttpMode::StreamableHttp);
    let mut f = Fake::with_config(
        ClientConfig::new("test-client", "1.0").session_era().max_message(512),
        http,
    );
    f.ready("s");
    let first = f.request("tools/list");
    let (stream, _) = f.take_one();
    f.open_sse(stream, &[]);
    let big =
        json!({"jsonrpc": "2.0", "id": first, "result": {"tools": [], "pad": "x".repeat(600)}});
    f.data(stream, &format!("id: 1\ndata: {big}\n\n"));
    let events = f.take_events();
    assert!(matches!(&events[0], Event::Violation(ProtocolViolation::Sse(_))), "{events:?}");
    let error = RequestError::TooLarge { limit: 512 };
    assert_eq!(events[1], Event::Response { id: first, result: Err(error) });
    // A notification too large to read fails nothing; the session still answers.
    let second = f.request("tools/list");
    let (stream, _) = f.take_one();
    f.open_sse(stream, &[]);
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "y".repeat(600)}});
    let answer = json!({"jsonrpc": "2.0", "id": second, "result": {"tools": []}});
    f.data(stream, &format!("data: {note}\n\ndata: {answer}\n\n"));
    let events = f.take_events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(matches!(&events[0], Event::Violation(ProtocolViolation::Sse(_))));
    assert!(matches!(&events[1], Event::Response { id, result: Ok(_) } if *id == second));
}

#[test]
fn a_post_that_fails_before_its_head_fails_its_request() {
    let mut f = Fake::streamable();
    f.ready("s");
    let id = f.request("tools/list");
    let (stream, _) = f.take_one();
    f.fail(stream);
    let error = RequestError::Transport(TransportFailure::Reset("test".into()));
    assert_eq!(f.take_events(), [Event::Response { id, result: Err(error) }]);
}

#[test]
fn an_invalid_session_id_is_ignored() {
    let mut f = Fake::streamable();
    let (init, request) = f.take_one();
    f.answer_json(init, &[("mcp-session-id", "has space")], &init_result(&body(&request)["id"]));
    let events = f.take_events();
    assert_eq!(events[0], Event::Violation(ProtocolViolation::InvalidSessionId));
    let (_, note) = f.take_one();
    assert_eq!(header(&note, "mcp-session-id"), None);
}

#[test]
fn server_requests_of_an_expired_session_are_cancelled() {
    let mut client = ClientConfig::new("c", "1").session_era();
    client.capabilities =
        ClientCapabilities { roots: Some(RootsCapability::default()), ..Default::default() };
    let mut f = Fake::with_config(client, config(HttpMode::StreamableHttp));
    f.ready("s");
    let call = f.request("tools/call");
    let (stream, _) = f.take_one();
    f.open_sse(stream, &[]);
    let ask = json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"}).to_string();
    f.data(stream, &event(None, &ask));
    assert!(matches!(f.take_events()[..], [Event::Request { .. }]));
    f.request("ping");
    let (ping, _) = f.take_one();
    f.head(ping, 404, &[]);
    let events = f.take_events();
    assert!(events.contains(&Event::Cancelled { id: 7.into() }), "{events:?}");
    assert!(
        events.contains(&Event::Response { id: call, result: Err(RequestError::SessionExpired) })
    );
    f.take();
    // Answering it now is allowed and sends nothing.
    let now = f.clock.now();
    f.client.respond(now, 7.into(), Ok(crate::jsonrpc::RawJson::empty_object())).unwrap();
    f.drain();
    assert!(f.take().is_empty());
}

#[test]
fn a_ping_due_with_the_initialize_deadline_still_gets_its_outcome() {
    // Found by the http_client fuzz target: both deadlines passed in one timeout input.
    let mut f = Fake::streamable();
    let ping = f.request("ping");
    f.advance(Duration::from_secs(3600));
    assert_eq!(
        f.take_events(),
        [
            Event::Response { id: ping, result: Err(RequestError::TimedOut) },
            Event::Closed(CloseReason::InitializeTimedOut),
        ]
    );
}
