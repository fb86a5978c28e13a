//! Legacy HTTP+SSE: the endpoint event, same-origin rule, messages on the GET stream.

use serde_json::json;

use super::*;
use crate::error::{CloseReason, RequestError};

const SSE_URL: &str = "http://127.0.0.1:8080/mcp/sse";

fn legacy() -> Fake {
    let mut http = HttpClientConfig::new(SSE_URL.parse().unwrap());
    http.mode = HttpMode::LegacySse;
    Fake::new(http)
}

/// The legacy GET, answered with an event stream.
fn connect(f: &mut Fake) -> StreamId {
    let (sse, request) = f.take_one();
    assert_eq!(request.method, Method::GET);
    assert_eq!(request.uri, SSE_URL.parse::<Uri>().unwrap());
    assert_eq!(header(&request, "accept"), Some("text/event-stream"));
    f.open_sse(sse, &[]);
    assert!(f.take().is_empty(), "initialize waits for the endpoint");
    sse
}

#[test]
fn a_relative_endpoint_is_resolved_and_every_message_posted_there() {
    let mut f = legacy();
    let sse = connect(&mut f);
    f.data(sse, "event: endpoint\ndata: ../messages?sessionId=abc\n\n");
    let (init, request) = f.take_one();
    assert_eq!(request.method, Method::POST);
    assert_eq!(request.uri, "http://127.0.0.1:8080/messages?sessionId=abc".parse::<Uri>().unwrap());
    assert_eq!(rpc_method(&request), "initialize");
    assert_eq!(header(&request, "content-type"), Some("application/json"));
    f.accept(init);
    assert!(f.take_events().is_empty());

    // Answers come on the GET stream as `event: message`.
    let answer = init_result(&body(&request)["id"]);
    f.data(sse, &format!("event: message\ndata: {answer}\n\n"));
    assert!(matches!(f.take_events()[..], [Event::Ready(_)]));
    let (note, request) = f.take_one();
    assert_eq!(rpc_method(&request), "notifications/initialized");
    assert_eq!(header(&request, "mcp-session-id"), None);
    assert_eq!(header(&request, "mcp-protocol-version"), None);
    f.accept(note);
    assert!(f.take().is_empty(), "legacy has no second GET stream");

    let id = f.request("tools/list");
    let (call, request) = f.take_one();
    assert_eq!(request.uri.path(), "/messages");
    f.accept(call);
    let answer = result(&id, json!({"tools": []}));
    f.data(sse, &format!("event: message\ndata: {answer}\n\n"));
    assert!(matches!(&f.take_events()[..], [Event::Response { result: Ok(_), .. }]));

    // A later endpoint event changes nothing; the end of the stream ends the session.
    f.data(sse, "event: endpoint\ndata: /elsewhere\n\n");
    f.end(sse);
    assert_eq!(f.take_events(), [Event::Closed(CloseReason::TransportEnded)]);
}

#[test]
fn an_endpoint_on_another_origin_is_refused() {
    for endpoint in ["http://evil.test/messages", "//evil.test/m", "https://127.0.0.1:8080/m"] {
        let mut f = legacy();
        let sse = connect(&mut f);
        f.data(sse, &format!("event: endpoint\ndata: {endpoint}\n\n"));
        assert_eq!(
            f.take_events(),
            [Event::Closed(CloseReason::EndpointCrossOrigin(endpoint.into()))]
        );
        assert!(f.take().is_empty(), "nothing is posted there");
        assert_eq!(f.aborts, [sse]);
    }
}

#[test]
fn an_unusable_endpoint_is_refused() {
    let mut f = legacy();
    let sse = connect(&mut f);
    f.data(sse, "event: endpoint\ndata: /has space\n\n");
    assert_eq!(f.take_events(), [Event::Closed(CloseReason::EndpointInvalid("/has space".into()))]);
}

#[test]
fn a_refused_legacy_get_closes_with_the_status() {
    let mut f = legacy();
    let (sse, _) = f.take_one();
    f.head(sse, 403, &[]);
    let reason = CloseReason::HttpStatus { status: StatusCode::FORBIDDEN, www_authenticate: None };
    assert_eq!(f.take_events(), [Event::Closed(reason)]);
}

#[test]
fn a_refused_legacy_post_fails_its_request() {
    let mut f = legacy();
    let sse = connect(&mut f);
    f.data(sse, "event: endpoint\ndata: /messages\n\n");
    let (init, request) = f.take_one();
    f.accept(init);
    let answer = init_result(&body(&request)["id"]);
    f.data(sse, &format!("event: message\ndata: {answer}\n\n"));
    f.take_events();
    let (note, _) = f.take_one();
    f.accept(note);
    let id = f.request("tools/list");
    let (call, _) = f.take_one();
    f.head(call, 500, &[]);
    let error = RequestError::HttpStatus {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        www_authenticate: None,
    };
    assert_eq!(f.take_events(), [Event::Response { id, result: Err(error) }]);
    f.client.close(f.clock.now());
    f.drain();
    assert!(f.take().is_empty(), "no DELETE in legacy");
    assert_eq!(f.aborts, [sse]);
}
