//! The server machine on scripted client bytes.

use http::{Method, StatusCode};

use super::*;
use crate::http1::{Error, RequestHead, UsageError};

/// A server that was fed `chunks`, with the events so far (data merged).
fn fed(config: Config, chunks: &[&[u8]]) -> (ServerConnection, Vec<ServerEvent>) {
    let mut s = ServerConnection::new(config, t0());
    let mut events = Vec::new();
    for chunk in chunks {
        s.handle_data(chunk);
        events.extend(server_events(&mut s));
    }
    (s, merged_server(events))
}

fn head(method: Method, uri: &str, headers: &[(&'static str, &'static str)]) -> ServerEvent {
    let mut request = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    ServerEvent::Head(RequestHead::from(request.body(()).unwrap()))
}

fn failed(e: Error) -> ServerEvent {
    ServerEvent::Failed(e)
}

const SIZED: &[u8] = b"POST /mcp HTTP/1.1\r\nhost: h\r\ncontent-length: 5\r\n\r\nhello";
const CHUNKED: &[u8] =
    b"POST /mcp HTTP/1.1\r\nhost: h\r\ntransfer-encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n";

#[test]
fn content_length_and_chunked_request_bodies() {
    let (_, events) = fed(Config::default(), &[SIZED]);
    let expected_head = head(Method::POST, "/mcp", &[("host", "h"), ("content-length", "5")]);
    assert_eq!(events, [expected_head, sdata(b"hello"), ServerEvent::End]);
    let (_, events) = fed(Config::default(), &[CHUNKED]);
    assert_eq!(events[1..], [sdata(b"hello"), ServerEvent::End]);
}

#[test]
fn every_two_way_split_matches_whole() {
    for script in [SIZED, CHUNKED] {
        let (_, whole) = fed(Config::default(), &[script]);
        for i in 0..=script.len() {
            let (a, b) = script.split_at(i);
            assert_eq!(fed(Config::default(), &[a, b]).1, whole, "split at {i}");
        }
        let bytes: Vec<&[u8]> = script.chunks(1).collect();
        assert_eq!(fed(Config::default(), &bytes).1, whole, "byte by byte");
    }
}

#[test]
fn post_without_framing_headers_has_an_empty_body() {
    let (_, events) = fed(Config::default(), &[b"POST / HTTP/1.1\r\nhost: h\r\n\r\n"]);
    assert_eq!(events, [head(Method::POST, "/", &[("host", "h")]), ServerEvent::End]);
}

#[test]
fn full_response_then_keep_alive() {
    let now = t0();
    let (mut s, _) = fed(Config::default(), &[SIZED]);
    assert_eq!(s.poll_timeout(), None);
    let later = now + 5 * SECOND;
    s.send_response(later, ok(b"{}")).unwrap();
    let (bytes, closed) = written(|| s.poll_transmit());
    assert_eq!(bytes, b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}");
    assert!(!closed);
    assert_eq!(s.poll_timeout(), Some(later + 30 * SECOND), "the next head is due");
    s.handle_data(b"GET /again HTTP/1.1\r\nhost: h\r\n\r\n");
    assert_eq!(
        server_events(&mut s),
        [head(Method::GET, "/again", &[("host", "h")]), ServerEvent::End]
    );
}

#[test]
fn streamed_response_is_chunked() {
    let (mut s, _) = fed(Config::default(), &[b"GET /sse HTTP/1.1\r\nhost: h\r\n\r\n"]);
    let head = Response::builder().header("content-type", "text/event-stream").body(());
    s.send_head(head.unwrap()).unwrap();
    s.send_data(Bytes::from_static(b"data: 1\n\n")).unwrap();
    s.send_data(Bytes::new()).unwrap();
    assert_eq!(
        written(|| s.poll_transmit()).0,
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n\
          9\r\ndata: 1\n\n\r\n"
    );
    assert_eq!(s.send_head(Response::new(())), Err(UsageError::Busy));
    s.finish(t0()).unwrap();
    assert_eq!(written(|| s.poll_transmit()), (b"0\r\n\r\n".to_vec(), false));
    assert_eq!(s.finish(t0()), Err(UsageError::NotStreaming));
}

#[test]
fn large_chunks_are_framed_whole() {
    let (mut s, _) = fed(Config::default(), &[b"GET / HTTP/1.1\r\nhost: h\r\n\r\n"]);
    s.send_head(Response::new(())).unwrap();
    let _ = written(|| s.poll_transmit());
    let big = Bytes::from(vec![b'x'; 50_000]);
    s.send_data(big.clone()).unwrap();
    s.finish(t0()).unwrap();
    let (wire, _) = written(|| s.poll_transmit());
    let mut c = ClientConnection::new(Config::default());
    c.send_request(t0(), get("http://h/")).unwrap();
    c.handle_data(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
    c.handle_data(&wire);
    let events = merged_client(client_events(&mut c));
    assert_eq!(events[1..], [ClientEvent::Data(big), ClientEvent::End { reusable: true }]);
}

#[test]
fn pipelined_request_waits_for_the_response() {
    let two = [SIZED, b"GET /2 HTTP/1.1\r\nhost: h\r\n\r\n"].concat();
    let (mut s, events) = fed(Config::default(), &[&two]);
    assert_eq!(events.len(), 3, "only the first request so far: {events:?}");
    s.send_response(t0(), ok(b"")).unwrap();
    assert_eq!(
        server_events(&mut s),
        [head(Method::GET, "/2", &[("host", "h")]), ServerEvent::End]
    );
}

#[test]
fn pipelined_bytes_are_bounded() {
    let (mut s, _) = fed(small(64, None), &[b"GET / HTTP/1.1\r\nhost: h\r\n\r\n"]);
    s.handle_data(&[b'x'; 64]);
    assert_eq!(server_events(&mut s), []);
    s.handle_data(b"x");
    assert_eq!(server_events(&mut s), [failed(Error::PipelineTooLarge { limit: 64 })]);
    assert_eq!(written(|| s.poll_transmit()), (vec![], true));
}

#[test]
fn malformed_request_can_be_rejected_with_400() {
    let (mut s, events) = fed(Config::default(), &[b"GET /a b c\r\n\r\n"]);
    assert_eq!(events, [failed(Error::MalformedHead)]);
    assert_eq!(Error::MalformedHead.status(), Some(StatusCode::BAD_REQUEST));
    assert_eq!(s.send_response(t0(), ok(b"")), Err(UsageError::NoRequest));
    s.reject(StatusCode::BAD_REQUEST).unwrap();
    assert_eq!(
        written(|| s.poll_transmit()),
        (
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec(),
            true
        )
    );
    assert!(s.is_closed());
    assert_eq!(s.reject(StatusCode::BAD_REQUEST), Err(UsageError::Closed));
}

#[test]
fn ambiguous_body_framing_is_malformed() {
    for bad in [
        &b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n"[..],
        b"POST / HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\n",
        b"POST / HTTP/1.1\r\ntransfer-encoding: chunked, gzip\r\n\r\n",
        b"POST / HTTP/1.0\r\ntransfer-encoding: chunked\r\n\r\n",
        b"POST / HTTP/1.1\r\ncontent-length: 1, 2\r\n\r\n",
        b"POST / HTTP/1.1\r\ncontent-length: -1\r\n\r\n",
    ] {
        assert_eq!(fed(Config::default(), &[bad]).1, [failed(Error::MalformedHead)]);
    }
    let bad_chunk = b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhelloX\r\n";
    assert_eq!(
        fed(Config::default(), &[bad_chunk]).1[1..],
        [sdata(b"hello"), failed(Error::MalformedBody)]
    );
}

#[test]
fn head_too_large_is_431_and_body_too_large_is_413() {
    let (_, events) = fed(small(20, None), &[SIZED]);
    assert_eq!(events, [failed(Error::HeadTooLarge { limit: 20 })]);
    assert_eq!(
        Error::HeadTooLarge { limit: 20 }.status(),
        Some(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
    );

    let (_, events) = fed(small(1024, Some(4)), &[SIZED]);
    assert_eq!(events[1..], [failed(Error::BodyTooLarge { limit: 4 })]);
    let (mut s, events) = fed(small(1024, Some(4)), &[CHUNKED]);
    assert_eq!(events[1..], [sdata(b"hell"), failed(Error::BodyTooLarge { limit: 4 })]);
    s.reject(StatusCode::PAYLOAD_TOO_LARGE).unwrap();
    assert!(written(|| s.poll_transmit()).0.starts_with(b"HTTP/1.1 413 Payload Too Large\r\n"));
}

#[test]
fn expect_continue_is_answered_unless_the_body_is_refused() {
    let expect = b"POST / HTTP/1.1\r\nhost: h\r\nexpect: 100-continue\r\ncontent-length: 5\r\n\r\n";
    let (mut s, _) = fed(Config::default(), &[expect]);
    assert_eq!(written(|| s.poll_transmit()), (b"HTTP/1.1 100 Continue\r\n\r\n".to_vec(), false));
    let (mut s, events) = fed(small(1024, Some(4)), &[expect]);
    assert_eq!(events[1..], [failed(Error::BodyTooLarge { limit: 4 })]);
    assert_eq!(written(|| s.poll_transmit()), (vec![], false));
}

#[test]
fn head_deadline_fires_at_the_instant_and_not_before() {
    let now = t0();
    let mut s = ServerConnection::new(Config::default(), now);
    let deadline = now + 30 * SECOND;
    assert_eq!(s.poll_timeout(), Some(deadline));
    s.handle_data(b"GET / HTTP/1.1\r\n");
    s.handle_timeout(deadline - Duration::from_nanos(1));
    assert_eq!(server_events(&mut s), []);
    s.handle_timeout(deadline);
    assert_eq!(server_events(&mut s), [failed(Error::HeadTimeout)]);
    assert_eq!(s.poll_timeout(), None);
    s.reject(StatusCode::REQUEST_TIMEOUT).unwrap();
    assert!(written(|| s.poll_transmit()).0.starts_with(b"HTTP/1.1 408 Request Timeout\r\n"));
}

#[test]
fn client_asking_to_close_gets_connection_close() {
    let (mut s, _) =
        fed(Config::default(), &[b"GET / HTTP/1.1\r\nhost: h\r\nconnection: close\r\n\r\n"]);
    s.send_response(t0(), ok(b"x")).unwrap();
    let (bytes, closed) = written(|| s.poll_transmit());
    assert_eq!(bytes, b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: close\r\n\r\nx");
    assert!(closed && s.is_closed());
    let (mut s, _) = fed(Config::default(), &[b"GET / HTTP/1.0\r\n\r\n"]);
    s.send_response(t0(), ok(b"x")).unwrap();
    assert!(written(|| s.poll_transmit()).1, "HTTP/1.0 without keep-alive closes");
}

#[test]
fn server_choosing_to_close() {
    let (mut s, _) = fed(Config::default(), &[b"GET / HTTP/1.1\r\nhost: h\r\n\r\n"]);
    let response = Response::builder().header("connection", "close").body(Bytes::new());
    s.send_response(t0(), response.unwrap()).unwrap();
    assert!(written(|| s.poll_transmit()).1);
}

#[test]
fn head_request_announces_but_does_not_send_the_body() {
    let (mut s, _) = fed(Config::default(), &[b"HEAD / HTTP/1.1\r\nhost: h\r\n\r\n"]);
    s.send_response(t0(), ok(b"hello")).unwrap();
    assert_eq!(written(|| s.poll_transmit()).0, b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n");
    let (mut s, _) = fed(Config::default(), &[b"HEAD / HTTP/1.1\r\nhost: h\r\n\r\n"]);
    s.send_head(Response::new(())).unwrap();
    s.send_data(Bytes::from_static(b"dropped")).unwrap();
    let now = t0();
    s.finish(now).unwrap();
    assert_eq!(
        written(|| s.poll_transmit()).0,
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    assert_eq!(s.poll_timeout(), Some(now + 30 * SECOND));
}

#[test]
fn response_usage_errors() {
    let (mut s, _) = fed(Config::default(), &[b"GET / HTTP/1.1\r\nhost: h\r\n"]);
    assert_eq!(s.send_response(t0(), ok(b"")), Err(UsageError::NoRequest));
    assert_eq!(s.send_data(Bytes::from_static(b"x")), Err(UsageError::NotStreaming));
    s.handle_data(b"\r\n");
    let _ = server_events(&mut s);
    let mut interim = ok(b"");
    *interim.status_mut() = StatusCode::CONTINUE;
    assert_eq!(s.send_response(t0(), interim), Err(UsageError::NotFinal));
    let framed = Response::builder().header("content-length", "0").body(Bytes::new());
    assert_eq!(s.send_response(t0(), framed.unwrap()), Err(UsageError::FramingHeader));
    let mut no_content = ok(b"x");
    *no_content.status_mut() = StatusCode::NO_CONTENT;
    assert_eq!(s.send_response(t0(), no_content), Err(UsageError::BodyNotAllowed));
    assert_eq!(written(|| s.poll_transmit()), (vec![], false), "refusals queue nothing");
    let mut no_content = ok(b"");
    *no_content.status_mut() = StatusCode::NO_CONTENT;
    s.send_response(t0(), no_content).unwrap();
    assert_eq!(written(|| s.poll_transmit()).0, b"HTTP/1.1 204 No Content\r\n\r\n");
}

#[test]
fn eof_between_inside_and_after_requests() {
    let mut s = ServerConnection::new(Config::default(), t0());
    s.handle_end();
    assert_eq!(server_events(&mut s), []);
    assert_eq!(written(|| s.poll_transmit()), (vec![], true));

    let (mut s, _) = fed(Config::default(), &[b"GET / HT"]);
    s.handle_end();
    assert_eq!(server_events(&mut s), [failed(Error::ClosedBeforeHead)]);
    assert!(written(|| s.poll_transmit()).1);

    let (mut s, _) = fed(Config::default(), &[&SIZED[..SIZED.len() - 1]]);
    s.handle_end();
    assert_eq!(server_events(&mut s), [failed(Error::ClosedInBody)]);

    let (mut s, _) = fed(Config::default(), &[SIZED]);
    s.handle_end();
    s.send_response(t0(), ok(b"late")).unwrap();
    let (bytes, closed) = written(|| s.poll_transmit());
    assert!(bytes.ends_with(b"late") && closed, "answered, then closed");
}
