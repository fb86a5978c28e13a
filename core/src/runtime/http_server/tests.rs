use std::time::Duration;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderValue, StatusCode};

use super::*;
use crate::http1::Transmit as Wire;

fn conn(now: Instant) -> ServerConn {
    let config = Config { max_body_bytes: Some(16), ..Config::default() };
    ServerConn::new(config, now, Arc::new(StreamIds::new()))
}

fn written(conn: &mut ServerConn) -> String {
    let bytes: Vec<u8> = std::iter::from_fn(|| conn.poll_transmit())
        .flat_map(|t| match t {
            Wire::Write(bytes) => bytes.to_vec(),
            Wire::Close => b"<close>".to_vec(),
        })
        .collect();
    String::from_utf8(bytes).unwrap()
}

fn inbound(conn: &mut ServerConn) -> Vec<Inbound> {
    std::iter::from_fn(|| conn.poll_inbound()).collect()
}

fn respond(stream: StreamId, media: &'static str) -> Transmit {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(media));
    Transmit::Respond { stream, head: Box::new(ResponseHead { status: StatusCode::OK, headers }) }
}

fn write(stream: StreamId, bytes: &'static [u8]) -> Transmit {
    Transmit::Write { stream, bytes: Bytes::from_static(bytes) }
}

const POST: &[u8] = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 2\r\n\r\n{}";

#[test]
fn each_request_is_a_new_stream_and_a_json_answer_goes_out_with_its_length() {
    let now = crate::testkit::VirtualClock::new().now();
    let mut c = conn(now);
    c.handle_data(now, POST);
    let got = inbound(&mut c);
    let stream = got[0].stream;
    assert!(matches!(&got[0].event, OwnedEvent::Accept(h) if h.uri.path() == "/mcp"));
    assert_eq!(got[1].event, OwnedEvent::Data(Bytes::from_static(b"{}")));
    assert_eq!(got[2].event, OwnedEvent::End);
    assert_eq!(c.stream(), Some(stream));
    c.handle_transmit(now, respond(stream, "application/json"));
    c.handle_transmit(now, write(stream, b"{\"a\":"));
    assert_eq!(written(&mut c), "", "a JSON answer is gathered until its close");
    c.handle_transmit(now, write(stream, b"1}"));
    c.handle_transmit(now, Transmit::Close { stream });
    let out = written(&mut c);
    assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
    assert!(out.contains("content-length: 7\r\n"), "{out}");
    assert!(out.ends_with("\r\n\r\n{\"a\":1}"), "{out}");
    assert_eq!(c.stream(), None);
    c.handle_data(now, POST);
    let next = inbound(&mut c)[0].stream;
    assert_ne!(next, stream, "a kept-alive connection's next request is a new stream");
}

#[test]
fn an_sse_answer_streams_each_event_as_it_comes() {
    let now = crate::testkit::VirtualClock::new().now();
    let mut c = conn(now);
    c.handle_data(now, POST);
    let stream = inbound(&mut c)[0].stream;
    c.handle_transmit(now, respond(stream, "text/event-stream"));
    let head = written(&mut c);
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    c.handle_transmit(now, write(stream, b"data: 1\n\n"));
    assert_eq!(written(&mut c), "9\r\ndata: 1\n\n\r\n");
    c.handle_transmit(now, Transmit::Close { stream });
    assert_eq!(written(&mut c), "0\r\n\r\n");
    // Transmits for an exchange that is over are dropped.
    c.handle_transmit(now, write(stream, b"late"));
    assert_eq!(written(&mut c), "");
}

#[test]
fn an_answer_before_the_body_ends_waits_for_it() {
    let now = crate::testkit::VirtualClock::new().now();
    let mut c = conn(now);
    c.handle_data(now, &POST[..POST.len() - 1]);
    let stream = inbound(&mut c)[0].stream;
    c.handle_transmit(now, respond(stream, "application/json"));
    c.handle_transmit(now, Transmit::Close { stream });
    assert_eq!(written(&mut c), "");
    c.handle_data(now, b"}");
    assert!(written(&mut c).starts_with("HTTP/1.1 200 OK"));
}

#[test]
fn a_client_that_goes_away_fails_its_stream() {
    let now = crate::testkit::VirtualClock::new().now();
    let mut c = conn(now);
    c.handle_data(now, POST);
    let stream = inbound(&mut c)[0].stream;
    c.handle_transmit(now, respond(stream, "text/event-stream"));
    c.handle_end(now);
    let got = inbound(&mut c);
    assert!(
        matches!(&got[..], [Inbound { stream: s, event: OwnedEvent::Failed(_) }] if *s == stream)
    );
    assert!(written(&mut c).ends_with("<close>"));
    assert!(c.is_closed());
}

#[test]
fn an_oversized_body_is_refused_with_413_and_the_router_hears_failed() {
    let now = crate::testkit::VirtualClock::new().now();
    let mut c = conn(now);
    c.handle_data(now, b"POST /mcp HTTP/1.1\r\nhost: h\r\ncontent-length: 17\r\n\r\n");
    let got = inbound(&mut c);
    assert!(matches!(got[0].event, OwnedEvent::Accept(_)));
    assert_eq!(got[1].event, OwnedEvent::Failed(TransportFailure::TooLarge { limit: 16 }));
    let out = written(&mut c);
    assert!(out.starts_with("HTTP/1.1 413"), "{out}");
    assert!(out.contains("content-type: application/json\r\n"), "{out}");
    // The same JSON-RPC error the router gives a body it finds too large itself.
    let body = out.split("\r\n\r\n").nth(1).unwrap().trim_end_matches("<close>");
    let error: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(error["id"], serde_json::Value::Null);
    assert!(error["error"]["message"].as_str().unwrap().contains("16"), "{error}");
    assert!(out.ends_with("<close>"));
}

#[test]
fn a_slow_head_is_refused_with_408() {
    let now = crate::testkit::VirtualClock::new().now();
    let mut c = conn(now);
    c.handle_data(now, b"POST /mcp HTTP/1.1\r\n");
    let deadline = c.poll_timeout().unwrap();
    c.handle_timeout(deadline - Duration::from_millis(1));
    assert_eq!(written(&mut c), "");
    c.handle_timeout(deadline);
    assert!(written(&mut c).starts_with("HTTP/1.1 408"));
    assert!(inbound(&mut c).is_empty(), "no exchange had started");
}

#[test]
fn stream_ids_are_unique_and_never_zero() {
    let ids = StreamIds::new();
    let a = ids.next();
    let b = ids.next();
    assert_ne!(a, StreamId::STDIO);
    assert_ne!(a, b);
}
