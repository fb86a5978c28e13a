use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};

use super::*;
use crate::http1::Transmit as Wire;

fn written(conn: &mut ClientConn) -> Vec<u8> {
    std::iter::from_fn(|| conn.poll_transmit())
        .flat_map(|t| match t {
            Wire::Write(bytes) => bytes.to_vec(),
            Wire::Close => b"<close>".to_vec(),
        })
        .collect()
}

fn events(conn: &mut ClientConn) -> Vec<(StreamId, OwnedEvent)> {
    std::iter::from_fn(|| conn.poll_event()).collect()
}

fn post(url: &str, body: &'static [u8]) -> HttpRequest {
    HttpRequest {
        method: Method::POST,
        uri: url.parse().unwrap(),
        headers: HeaderMap::new(),
        body: Bytes::from_static(body),
    }
}

#[test]
fn urls_name_host_port_and_tls() {
    let t = Target::parse("https://Example.test/mcp").unwrap();
    assert_eq!(t, Target { host: "example.test".into(), port: 443, tls: true });
    let t = Target::parse("http://127.0.0.1:8080/mcp").unwrap();
    assert_eq!(t, Target { host: "127.0.0.1".into(), port: 8080, tls: false });
    assert!(t.is_loopback());
    let t = Target::parse("http://[::1]:9/mcp").unwrap();
    assert_eq!(t.host, "::1");
    assert_eq!(t.to_string(), "http://[::1]:9");
    assert!(t.is_loopback());
    assert_eq!(Target::parse("http://localhost/").unwrap().port, 80);
    assert!(!Target::parse("https://example.test").unwrap().is_loopback());
    for bad in ["ftp://x/", "/mcp", "not a url", "http:///x"] {
        assert!(Target::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn an_exchange_reports_head_body_and_end_then_is_reusable() {
    let now = crate::testkit::VirtualClock::new().now();
    let mut conn = ClientConn::new(Config::default());
    conn.send(now, StreamId(3), post("http://127.0.0.1:9/mcp", b"{}")).unwrap();
    let out = String::from_utf8(written(&mut conn)).unwrap();
    assert!(out.starts_with("POST /mcp HTTP/1.1\r\n"), "{out}");
    assert!(out.to_ascii_lowercase().contains("host: 127.0.0.1:9"), "{out}");
    assert!(!conn.is_reusable());
    assert!(conn.send(now, StreamId(4), post("http://127.0.0.1:9/mcp", b"")).is_err());
    conn.handle_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{",
    );
    conn.handle_data(b"}");
    let got = events(&mut conn);
    assert!(matches!(&got[0], (StreamId(3), OwnedEvent::Head(h)) if h.status == StatusCode::OK));
    assert_eq!(got[1], (StreamId(3), OwnedEvent::Data(Bytes::from_static(b"{"))));
    assert_eq!(got[2], (StreamId(3), OwnedEvent::Data(Bytes::from_static(b"}"))));
    assert_eq!(got[3], (StreamId(3), OwnedEvent::End));
    assert!(conn.is_reusable());
    assert!(conn.send(now, StreamId(4), post("http://127.0.0.1:9/mcp", b"")).is_ok());
}

#[test]
fn an_event_stream_has_no_body_limit_but_json_does() {
    let now = crate::testkit::VirtualClock::new().now();
    let config = Config { max_body_bytes: Some(4), ..Config::default() };
    let mut conn = ClientConn::new(config.clone());
    conn.send(now, StreamId(1), post("http://h/mcp", b"{}")).unwrap();
    conn.handle_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
    );
    conn.handle_data(b"a\r\ndata: 1234\n\r\n");
    let got = events(&mut conn);
    assert!(matches!(got[1], (_, OwnedEvent::Data(ref b)) if b.len() == 10), "{got:?}");
    let mut conn = ClientConn::new(config);
    conn.send(now, StreamId(2), post("http://h/mcp", b"{}")).unwrap();
    conn.handle_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n",
    );
    let got = events(&mut conn);
    assert_eq!(
        got.last(),
        Some(&(StreamId(2), OwnedEvent::Failed(TransportFailure::TooLarge { limit: 4 })))
    );
    assert!(conn.is_closed());
}

#[test]
fn a_head_later_than_the_read_timeout_times_out_and_early_timeouts_do_nothing() {
    let now = crate::testkit::VirtualClock::new().now();
    let config = Config { head_timeout: Duration::from_secs(5), ..Config::default() };
    let mut conn = ClientConn::new(config);
    conn.send(now, StreamId(1), post("http://h/mcp", b"{}")).unwrap();
    assert_eq!(conn.poll_timeout(), Some(now + Duration::from_secs(5)));
    conn.handle_timeout(now + Duration::from_secs(4));
    assert!(events(&mut conn).is_empty());
    conn.handle_timeout(now + Duration::from_secs(5));
    assert_eq!(events(&mut conn), [(StreamId(1), OwnedEvent::Failed(TransportFailure::TimedOut))]);
    assert!(written(&mut conn).ends_with(b"<close>"));
}

#[test]
fn eof_and_socket_failures_fail_the_exchange_once() {
    let now = crate::testkit::VirtualClock::new().now();
    let mut conn = ClientConn::new(Config::default());
    conn.send(now, StreamId(1), post("http://h/mcp", b"{}")).unwrap();
    conn.handle_end();
    let got = events(&mut conn);
    assert!(
        matches!(&got[..], [(StreamId(1), OwnedEvent::Failed(TransportFailure::Reset(_)))]),
        "{got:?}"
    );
    let mut conn = ClientConn::new(Config::default());
    conn.send(now, StreamId(2), post("http://h/mcp", b"{}")).unwrap();
    conn.handle_failed(TransportFailure::Tls("bad certificate".into()));
    conn.handle_failed(TransportFailure::Reset("again".into()));
    assert_eq!(
        events(&mut conn),
        [(StreamId(2), OwnedEvent::Failed(TransportFailure::Tls("bad certificate".into())))]
    );
}

#[test]
fn the_pool_reuses_the_newest_connection_and_forgets_idle_ones() {
    let now = crate::testkit::VirtualClock::new().now();
    let a = Target::parse("http://a/").unwrap();
    let b = Target::parse("http://b/").unwrap();
    let mut pool = Pool::new(2, Duration::from_secs(10));
    assert_eq!(pool.checkin(now, a.clone(), 1), None);
    assert_eq!(pool.checkin(now, a.clone(), 2), None);
    assert_eq!(pool.checkin(now, a.clone(), 3), Some(1), "the oldest no longer fits");
    assert_eq!(pool.checkin(now, b.clone(), 7), None);
    assert_eq!(pool.len(), 3);
    assert_eq!(pool.checkout(now, &a, |_| true), Some(3));
    assert_eq!(
        pool.checkout(now + Duration::from_secs(10), &a, |_| true),
        None,
        "2 idled too long"
    );
    assert_eq!(pool.checkout(now, &b, |_| true), Some(7));
    assert!(pool.is_empty());
    let mut none: Pool<u8> = Pool::new(0, Duration::from_secs(1));
    assert_eq!(none.checkin(now, a, 5), Some(5));
}

#[test]
fn an_endpoint_checks_its_url_and_headers_and_hides_its_token() {
    let e = HttpEndpoint::new("https://example.test/mcp").header("x-a", "1").bearer("secret");
    let config = e.http_config().unwrap();
    assert_eq!(config.headers.get("x-a").unwrap(), "1");
    assert!(!format!("{e:?}").contains("secret"));
    let bad = |e: HttpEndpoint| {
        matches!(e.http_config(), Err(crate::runtime::ConnectError::InvalidConfig(_)))
    };
    assert!(bad(HttpEndpoint::new("ftp://example.test/")));
    assert!(bad(HttpEndpoint::new("/mcp")));
    assert!(bad(HttpEndpoint::new("http://h/").header("bad name", "1")));
    assert!(bad(HttpEndpoint::new("http://h/").header("x", "line\nbreak")));
    let c = HttpEndpoint::new("http://h/").read_timeout(Duration::from_secs(3)).connection_config();
    assert_eq!(c.head_timeout, Duration::from_secs(3));
    assert_eq!(c.max_body_bytes, None, "the planner bounds bodies and events");
}

#[test]
fn an_idle_connection_is_open_only_when_a_peek_finds_nothing_to_read() {
    use std::io::{Error, ErrorKind};
    assert!(still_open(Err(Error::from(ErrorKind::WouldBlock))));
    assert!(!still_open(Ok(0)), "the server closed it");
    assert!(!still_open(Ok(1)), "a TLS alert or stray bytes");
    assert!(!still_open(Err(Error::from(ErrorKind::ConnectionReset))));
    let mut pool = Pool::new(4, Duration::from_secs(20));
    let now = crate::testkit::VirtualClock::new().now();
    let a = Target { host: "a".into(), port: 1, tls: false };
    let _ = pool.checkin(now, a.clone(), 1);
    let _ = pool.checkin(now, a.clone(), 2);
    assert_eq!(pool.checkout(now, &a, |c| *c != 2), Some(1), "the closed one is skipped");
    assert!(pool.is_empty(), "and dropped");
}

#[test]
fn only_a_request_whose_write_failed_is_handed_back_for_another_connection() {
    let now = crate::testkit::VirtualClock::new().now();
    // A write failure before anything came back: not reported, the request comes back.
    let mut conn = ClientConn::new(Config::default());
    conn.send_reused(now, StreamId(5), post("http://127.0.0.1:9/mcp", b"{}")).unwrap();
    conn.handle_write_failed(TransportFailure::Reset("broken pipe".into()));
    assert!(events(&mut conn).is_empty(), "a stale connection's failure is not reported");
    let (stream, request) = conn.take_stale().expect("the request to send again");
    assert_eq!(stream, StreamId(5));
    assert_eq!(&request.body[..], b"{}");
    assert!(conn.take_stale().is_none(), "taken once");
    assert!(conn.is_closed());

    // Written whole, then EOF before the head: the server may have run it. Reported, never
    // handed back.
    let mut conn = ClientConn::new(Config::default());
    conn.send_reused(now, StreamId(6), post("http://127.0.0.1:9/mcp", b"{}")).unwrap();
    let _ = written(&mut conn);
    conn.handle_end();
    let got = events(&mut conn);
    assert!(matches!(got[..], [(StreamId(6), OwnedEvent::Failed(TransportFailure::Reset(_)))]));
    assert!(conn.take_stale().is_none());

    // The same for a read failure.
    let mut conn = ClientConn::new(Config::default());
    conn.send_reused(now, StreamId(7), post("http://127.0.0.1:9/mcp", b"")).unwrap();
    conn.handle_failed(TransportFailure::Reset("connection reset".into()));
    assert!(matches!(events(&mut conn)[..], [(StreamId(7), OwnedEvent::Failed(_))]));
    assert!(conn.take_stale().is_none());

    // Once the answer started, a write failure is reported as usual too.
    let mut conn = ClientConn::new(Config::default());
    conn.send_reused(now, StreamId(8), post("http://127.0.0.1:9/mcp", b"")).unwrap();
    conn.handle_data(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n{",
    );
    conn.handle_write_failed(TransportFailure::Reset("broken pipe".into()));
    let got = events(&mut conn);
    assert!(matches!(got[0], (StreamId(8), OwnedEvent::Head(_))), "{got:?}");
    assert!(matches!(got.last(), Some((StreamId(8), OwnedEvent::Failed(_)))), "{got:?}");
    assert!(conn.take_stale().is_none());

    // A fresh connection (plain send) reports a write failure.
    let mut conn = ClientConn::new(Config::default());
    conn.send(now, StreamId(9), post("http://127.0.0.1:9/mcp", b"")).unwrap();
    conn.handle_write_failed(TransportFailure::Reset("broken pipe".into()));
    let got = events(&mut conn);
    assert!(matches!(got[..], [(StreamId(9), OwnedEvent::Failed(TransportFailure::Reset(_)))]));
    assert!(conn.take_stale().is_none());
}

#[test]
fn an_http_client_machine_drains_to_exchanges_and_events() {
    use crate::client::{Client, ClientConfig, Event};
    use crate::http::client::HttpClientConfig;
    let now = crate::testkit::VirtualClock::new().now();
    let http = HttpClientConfig::new("http://127.0.0.1:9/mcp".parse().unwrap());
    let mut client =
        Client::new_http(ClientConfig::new("c", "1").session_era(), http, now).unwrap();
    let mut outputs = HttpClientOutputs::new();
    let first = outputs.next(&mut client, now);
    let Some(HttpClientOutput::Open { stream, request }) = first else { panic!("{first:?}") };
    assert_eq!(request.method, Method::POST, "initialize goes out first");
    assert!(outputs.next(&mut client, now).is_none());
    // The exchange fails: the handshake ends with the session, as events.
    let failed = OwnedEvent::Failed(TransportFailure::Refused("nobody there".into()));
    client.handle_input(failed.input(now, stream));
    let mut events = Vec::new();
    while let Some(output) = outputs.next(&mut client, now) {
        match output {
            HttpClientOutput::Event(event) => events.push(event),
            other => panic!("{other:?}"),
        }
    }
    assert!(matches!(events.last(), Some(Event::Closed(_))), "{events:?}");
}
