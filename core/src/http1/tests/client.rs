//! The client machine on scripted server bytes.

use http::{header, Method, Request, StatusCode};

use super::*;
use crate::http1::{Error, ResponseHead, UsageError};

/// A client that has sent `request` and queued its bytes, which are dropped.
fn sent(config: Config, request: Request<Bytes>) -> ClientConnection {
    let mut c = ClientConnection::new(config);
    c.send_request(t0(), request).unwrap();
    let _ = written(|| c.poll_transmit());
    c
}

/// Feeds `chunks` after a GET (then EOF if `eof`); returns the events with data merged.
fn feed(method: Method, chunks: &[&[u8]], eof: bool) -> Vec<ClientEvent> {
    let request = Request::builder().method(method).uri("http://h.test/").body(Bytes::new());
    let mut c = sent(Config::default(), request.unwrap());
    let mut events = Vec::new();
    for chunk in chunks {
        c.handle_data(chunk);
        events.extend(client_events(&mut c));
    }
    if eof {
        c.handle_end();
        events.extend(client_events(&mut c));
    }
    merged_client(events)
}

fn head(status: u16, headers: &[(&'static str, &'static str)]) -> ClientEvent {
    let mut response = Response::builder().status(status);
    for (k, v) in headers {
        response = response.header(*k, *v);
    }
    ClientEvent::Head(ResponseHead::from(response.body(()).unwrap()))
}

const END: ClientEvent = ClientEvent::End { reusable: true };
const LAST: ClientEvent = ClientEvent::End { reusable: false };

const SIZED: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nhello world";
const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\
    5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nx-trailer: t\r\n\r\n";
const CLOSE_DELIMITED: &[u8] = b"HTTP/1.1 200 OK\r\n\r\nhello world";
const INTERIM: &[u8] =
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n\
    HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nhello world";

const CHUNKED_CRS: &[u8] = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\
    b\r\ndata: x\r\n\r\n\r\n1\r\n\r\r\n0\r\n\r\n";
const BAD_CHUNK_END: &[u8] =
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhelloX\r\n";

/// Every response the split tests run, with whether EOF follows it.
const SCRIPTS: &[(&[u8], bool)] = &[
    (SIZED, false),
    (CHUNKED, false),
    (CHUNKED_CRS, false),
    (BAD_CHUNK_END, false),
    (CLOSE_DELIMITED, true),
    (INTERIM, false),
];

#[test]
fn content_length_body() {
    let events = feed(Method::GET, &[SIZED], false);
    assert_eq!(events, [head(200, &[("content-length", "11")]), data(b"hello world"), END]);
}

#[test]
fn chunked_body_with_extension_and_trailer() {
    let events = feed(Method::GET, &[CHUNKED], false);
    assert_eq!(events, [head(200, &[("transfer-encoding", "chunked")]), data(b"hello world"), END]);
}

#[test]
fn carriage_returns_inside_chunk_data() {
    let events = feed(Method::GET, &[CHUNKED_CRS], false);
    assert_eq!(events[1..], [data(b"data: x\r\n\r\n\r"), END]);
}

#[test]
fn bytes_before_a_broken_chunk_end_are_delivered() {
    let events = feed(Method::GET, &[BAD_CHUNK_END], false);
    assert_eq!(events[1..], [data(b"hello"), ClientEvent::Failed(Error::MalformedBody)]);
}

#[test]
fn close_delimited_body_ends_at_eof_only() {
    let open = feed(Method::GET, &[CLOSE_DELIMITED], false);
    assert_eq!(open, [head(200, &[]), data(b"hello world")]);
    let closed = feed(Method::GET, &[CLOSE_DELIMITED], true);
    assert_eq!(closed, [head(200, &[]), data(b"hello world"), LAST]);
}

#[test]
fn interim_responses_are_skipped() {
    let events = feed(Method::GET, &[INTERIM], false);
    assert_eq!(events, [head(200, &[("content-length", "11")]), data(b"hello world"), END]);
}

#[test]
fn every_two_way_split_matches_whole() {
    for &(script, eof) in SCRIPTS {
        let whole = feed(Method::GET, &[script], eof);
        for i in 0..=script.len() {
            let (a, b) = script.split_at(i);
            assert_eq!(feed(Method::GET, &[a, b], eof), whole, "split at {i}");
        }
    }
}

#[test]
fn byte_by_byte_matches_whole() {
    for &(script, eof) in SCRIPTS {
        let bytes: Vec<&[u8]> = script.chunks(1).collect();
        assert_eq!(feed(Method::GET, &bytes, eof), feed(Method::GET, &[script], eof));
    }
}

#[test]
fn every_prefix_gives_a_prefix_of_the_events() {
    for &(script, eof) in SCRIPTS {
        let whole = feed(Method::GET, &[script], eof);
        let (ClientEvent::Head(_), ClientEvent::Data(body)) = (&whole[0], &whole[1]) else {
            panic!("unexpected {whole:?}");
        };
        for i in 0..script.len() {
            let events = feed(Method::GET, &[&script[..i]], false);
            match &events[..] {
                [] => {}
                [h] => assert_eq!(h, &whole[0], "prefix {i}"),
                [h, ClientEvent::Data(part)] => {
                    assert_eq!(h, &whole[0], "prefix {i}");
                    assert!(body.starts_with(part), "prefix {i}");
                }
                other => panic!("prefix {i} gave {other:?}"),
            }
        }
    }
}

#[test]
fn chunks_of_an_open_stream_surface_before_it_ends() {
    let mut c = sent(Config::default(), get("http://h.test/sse"));
    c.handle_data(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n");
    assert_eq!(client_events(&mut c), []);
    c.handle_data(b"transfer-encoding: chunked\r\n\r\n");
    assert!(matches!(&client_events(&mut c)[..], [ClientEvent::Head(h)] if h.status == 200));
    c.handle_data(b"9\r\ndata: 1\n\n\r\n");
    assert_eq!(client_events(&mut c), [data(b"data: 1\n\n")]);
    c.handle_data(b"9\r\ndata: 2");
    assert_eq!(client_events(&mut c), [data(b"data: 2")]);
    c.handle_data(b"\n\n\r\n");
    assert_eq!(client_events(&mut c), [data(b"\n\n")]);
    assert!(!c.is_idle() && !c.is_closed());
    assert_eq!(c.poll_timeout(), None, "no deadline once the head arrived");
}

#[test]
fn request_bytes_on_the_wire() {
    let mut c = ClientConnection::new(Config::default());
    let request = Request::post("http://h.test:8080/mcp?x=1")
        .header("accept", "application/json, text/event-stream")
        .body(Bytes::from_static(b"{}"))
        .unwrap();
    c.send_request(t0(), request).unwrap();
    let (bytes, closed) = written(|| c.poll_transmit());
    assert!(!closed);
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        "POST /mcp?x=1 HTTP/1.1\r\nhost: h.test:8080\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: 2\r\n\r\n{}"
    );
}

#[test]
fn a_small_body_leaves_with_its_head_and_a_large_one_as_it_is() {
    let mut c = ClientConnection::new(Config::default());
    c.send_request(t0(), post("http://h.test/", b"{\"id\":1}")).unwrap();
    let writes: Vec<_> = std::iter::from_fn(|| c.poll_transmit()).collect();
    assert!(matches!(&writes[..], [Transmit::Write(b)] if b.ends_with(b"\r\n\r\n{\"id\":1}")));

    let large = Bytes::from(vec![b'x'; 64 * 1024]);
    let request = Request::post("http://h.test/").body(large.clone()).unwrap();
    let mut c = ClientConnection::new(Config::default());
    c.send_request(t0(), request).unwrap();
    let writes: Vec<_> = std::iter::from_fn(|| c.poll_transmit()).collect();
    match &writes[..] {
        [Transmit::Write(head), Transmit::Write(body)] => {
            assert!(head.ends_with(b"content-length: 65536\r\n\r\n"));
            // The caller's buffer itself, not a copy.
            assert_eq!(body.as_ptr(), large.as_ptr());
        }
        other => panic!("expected the head and the body: {other:?}"),
    }
}

#[test]
fn empty_post_announces_zero_length_and_get_announces_none() {
    let mut c = ClientConnection::new(Config::default());
    c.send_request(t0(), post("http://h.test/", b"")).unwrap();
    let (bytes, _) = written(|| c.poll_transmit());
    assert!(bytes.ends_with(b"content-length: 0\r\n\r\n"));
    let mut c = ClientConnection::new(Config::default());
    c.send_request(t0(), get("http://h.test/")).unwrap();
    let (bytes, _) = written(|| c.poll_transmit());
    assert_eq!(bytes, b"GET / HTTP/1.1\r\nhost: h.test\r\n\r\n");
}

#[test]
fn response_to_head_and_204_have_no_body() {
    let events = feed(Method::HEAD, &[b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"], false);
    assert_eq!(events, [head(200, &[("content-length", "5")]), END]);
    let events = feed(Method::GET, &[b"HTTP/1.1 204 No Content\r\n\r\n"], false);
    assert_eq!(events, [head(204, &[]), END]);
}

#[test]
fn connection_close_ends_without_reuse() {
    let mut c = sent(Config::default(), get("http://h.test/"));
    c.handle_data(b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    assert_eq!(
        client_events(&mut c),
        [head(200, &[("connection", "close"), ("content-length", "0")]), LAST]
    );
    assert_eq!(written(|| c.poll_transmit()), (vec![], true));
    assert!(c.is_closed());
    assert_eq!(c.send_request(t0(), get("http://h.test/")), Err(UsageError::Closed));
}

#[test]
fn http10_response_without_keep_alive_ends_without_reuse() {
    let events = feed(Method::GET, &[b"HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\nx"], false);
    assert_eq!(events.last(), Some(&LAST));
}

#[test]
fn a_second_request_waits_for_the_first_response() {
    let mut c = sent(Config::default(), get("http://h.test/a"));
    assert_eq!(c.send_request(t0(), get("http://h.test/b")), Err(UsageError::Busy));
    c.handle_data(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\no");
    assert_eq!(c.send_request(t0(), get("http://h.test/b")), Err(UsageError::Busy));
    c.handle_data(b"k");
    assert_eq!(client_events(&mut c).last(), Some(&END));
    assert!(c.is_idle());
    c.send_request(t0(), get("http://h.test/b")).unwrap();
    let (bytes, _) = written(|| c.poll_transmit());
    assert!(bytes.starts_with(b"GET /b HTTP/1.1\r\n"));
}

#[test]
fn usage_errors_change_nothing() {
    let mut c = ClientConnection::new(Config::default());
    let framed = Request::post("http://h.test/").header("content-length", "2").body(Bytes::new());
    assert_eq!(c.send_request(t0(), framed.unwrap()), Err(UsageError::FramingHeader));
    let chunked = Request::post("http://h.test/").header("transfer-encoding", "chunked");
    let chunked = chunked.body(Bytes::new()).unwrap();
    assert_eq!(c.send_request(t0(), chunked), Err(UsageError::FramingHeader));
    assert_eq!(c.send_request(t0(), get("/no-host")), Err(UsageError::MissingHost));
    let head_with_body = Request::head("http://h.test/").body(Bytes::from_static(b"x")).unwrap();
    assert_eq!(c.send_request(t0(), head_with_body), Err(UsageError::BodyNotAllowed));
    let http2 = Request::get("http://h.test/").version(http::Version::HTTP_2).body(Bytes::new());
    assert!(matches!(c.send_request(t0(), http2.unwrap()), Err(UsageError::InvalidHead { .. })));
    let connect = Request::connect("/x").header(header::HOST, "h.test").body(Bytes::new());
    assert!(matches!(c.send_request(t0(), connect.unwrap()), Err(UsageError::InvalidHead { .. })));
    assert!(c.is_idle());
    assert_eq!(c.poll_transmit(), None);
    let with_host = Request::get("/mcp").header(header::HOST, "h.test").body(Bytes::new());
    c.send_request(t0(), with_host.unwrap()).unwrap();
}

#[test]
fn head_deadline_fires_at_the_instant_and_not_before() {
    let now = t0();
    let mut c = ClientConnection::new(Config::default());
    assert_eq!(c.poll_timeout(), None);
    c.send_request(now, get("http://h.test/")).unwrap();
    let deadline = now + 30 * SECOND;
    assert_eq!(c.poll_timeout(), Some(deadline));
    c.handle_data(b"HTTP/1.1 200 OK\r\n");
    c.handle_timeout(deadline - Duration::from_nanos(1));
    assert_eq!(client_events(&mut c), []);
    assert_eq!(c.poll_timeout(), Some(deadline));
    c.handle_timeout(deadline);
    assert_eq!(client_events(&mut c), [ClientEvent::Failed(Error::HeadTimeout)]);
    assert!(written(|| c.poll_transmit()).1);
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn no_deadline_once_the_head_arrived() {
    let now = t0();
    let mut c = ClientConnection::new(Config::default());
    c.send_request(now, get("http://h.test/")).unwrap();
    c.handle_data(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
    c.handle_timeout(now + 3600 * SECOND);
    assert!(matches!(&client_events(&mut c)[..], [ClientEvent::Head(_)]));
    assert!(!c.is_closed());
}

#[test]
fn head_limit_is_exact() {
    let response = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
    let len = response.len();
    for (max, fits) in [(len, true), (len - 1, false)] {
        for chunks in [vec![&response[..]], response.chunks(1).collect()] {
            let mut c = sent(small(max, None), get("http://h.test/"));
            for chunk in chunks {
                c.handle_data(chunk);
            }
            let events = client_events(&mut c);
            if fits {
                assert_eq!(events.last(), Some(&END), "max {max}");
            } else {
                assert_eq!(events, [ClientEvent::Failed(Error::HeadTooLarge { limit: max })]);
                assert!(c.is_closed());
            }
        }
    }
}

#[test]
fn too_many_header_lines() {
    let mut response = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..200 {
        response.extend_from_slice(format!("x-{i}: v\r\n").as_bytes());
    }
    response.extend_from_slice(b"\r\n");
    let events = feed(Method::GET, &[&response], false);
    assert_eq!(events, [ClientEvent::Failed(Error::TooManyHeaders { limit: 128 })]);
}

#[test]
fn declared_length_over_the_body_limit_fails_at_the_head() {
    let mut c = sent(small(1024, Some(10)), get("http://h.test/"));
    c.handle_data(b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\n");
    let events = client_events(&mut c);
    assert_eq!(events[1..], [ClientEvent::Failed(Error::BodyTooLarge { limit: 10 })]);
    assert!(c.is_closed());
}

#[test]
fn chunked_body_over_the_limit_delivers_exactly_the_limit() {
    for chunks in [vec![CHUNKED], CHUNKED.chunks(1).collect()] {
        let mut c = sent(small(1024, Some(7)), get("http://h.test/"));
        let mut events = Vec::new();
        for chunk in chunks {
            c.handle_data(chunk);
            events.extend(client_events(&mut c));
        }
        let events = merged_client(events);
        assert_eq!(
            events[1..],
            [data(b"hello w"), ClientEvent::Failed(Error::BodyTooLarge { limit: 7 })]
        );
    }
}

#[test]
fn lifting_the_body_limit_for_a_stream() {
    let mut c = sent(small(1024, Some(4)), get("http://h.test/sse"));
    c.handle_data(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
    c.set_max_body_bytes(None);
    c.handle_data(b"9\r\ndata: 1\n\n\r\n");
    assert_eq!(client_events(&mut c)[1..], [data(b"data: 1\n\n")]);
}

#[test]
fn eof_before_the_head_or_inside_the_body() {
    let events = feed(Method::GET, &[b"HTTP/1.1 200 OK\r\n"], true);
    assert_eq!(events, [ClientEvent::Failed(Error::ClosedBeforeHead)]);
    let events = feed(Method::GET, &[b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nabc"], true);
    assert_eq!(events[1..], [data(b"abc"), ClientEvent::Failed(Error::ClosedInBody)]);
    let events =
        feed(Method::GET, &[b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\na"], true);
    assert_eq!(events[1..], [data(b"a"), ClientEvent::Failed(Error::ClosedInBody)]);
}

#[test]
fn eof_while_idle_closes_quietly() {
    let mut c = ClientConnection::new(Config::default());
    c.handle_end();
    assert_eq!(client_events(&mut c), []);
    assert_eq!(written(|| c.poll_transmit()), (vec![], true));
    assert!(c.is_closed());
}

#[test]
fn malformed_heads_and_bodies() {
    for bad in [&b"HTTP/1.1 2x0 OK\r\n\r\n"[..], b"HTTP/1.1 099 Low\r\n\r\n", b"SSH-2.0-x\r\n\r\n"]
    {
        assert_eq!(feed(Method::GET, &[bad], false), [ClientEvent::Failed(Error::MalformedHead)]);
    }
    let conflicting = b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n";
    assert_eq!(
        feed(Method::GET, &[conflicting], false),
        [ClientEvent::Failed(Error::MalformedHead)]
    );
    let bad_chunk = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n";
    assert_eq!(
        feed(Method::GET, &[bad_chunk], false)[1..],
        [ClientEvent::Failed(Error::MalformedBody)]
    );
}

#[test]
fn an_endless_chunk_line_is_malformed() {
    let mut c = sent(small(64, None), get("http://h.test/"));
    c.handle_data(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
    for _ in 0..64 {
        c.handle_data(b"0");
    }
    assert_eq!(client_events(&mut c).len(), 1, "only the head");
    c.handle_data(b"0");
    assert_eq!(client_events(&mut c), [ClientEvent::Failed(Error::MalformedBody)]);
}

#[test]
fn bytes_while_idle_are_unexpected() {
    let mut c = sent(Config::default(), get("http://h.test/"));
    c.handle_data(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nxy");
    let events = client_events(&mut c);
    assert_eq!(events[1..], [data(b"x"), END, ClientEvent::Failed(Error::UnexpectedData)]);
    assert!(c.is_closed());
    c.handle_data(b"more");
    assert_eq!(client_events(&mut c), []);
}

#[test]
fn switching_protocols_ends_without_reuse() {
    let events =
        feed(Method::GET, &[b"HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n\r\n"], false);
    assert_eq!(events, [head(101, &[("upgrade", "x")]), LAST]);
}

#[test]
fn head_converts_to_an_http_response() {
    let events = feed(Method::GET, &[SIZED], false);
    let ClientEvent::Head(h) = &events[0] else { panic!() };
    let response = h.clone().into_response();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-length"], "11");
}

#[test]
fn connect_tunnel_ends_the_exchange_without_reuse() {
    let mut c = ClientConnection::new(Config::default());
    c.send_request(t0(), Request::connect("h.test:443").body(Bytes::new()).unwrap()).unwrap();
    let (bytes, _) = written(|| c.poll_transmit());
    assert_eq!(bytes, b"CONNECT h.test:443 HTTP/1.1\r\nhost: h.test:443\r\n\r\n");
    c.handle_data(b"HTTP/1.1 200 Connection Established\r\n\r\n");
    assert_eq!(client_events(&mut c)[1..], [LAST]);
}
