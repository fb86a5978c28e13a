//! The client and server machines wired back to back in memory.

use http::Method;

use super::*;

/// Both machines and the instant they share; bytes move only when a test says so.
struct Pair {
    client: ClientConnection,
    server: ServerConnection,
    now: Instant,
}

impl Pair {
    fn new() -> Self {
        let now = t0();
        let config = Config::default();
        Self {
            client: ClientConnection::new(config.clone()),
            server: ServerConnection::new(config, now),
            now,
        }
    }

    /// Delivers what the client queued to the server; returns the server's events.
    fn deliver_to_server(&mut self) -> Vec<ServerEvent> {
        let (bytes, closed) = written(|| self.client.poll_transmit());
        self.server.handle_data(&bytes);
        if closed {
            self.server.handle_end();
        }
        server_events(&mut self.server)
    }

    /// Delivers what the server queued to the client; returns the client's events.
    fn deliver_to_client(&mut self) -> Vec<ClientEvent> {
        let (bytes, closed) = written(|| self.server.poll_transmit());
        self.client.handle_data(&bytes);
        if closed {
            self.client.handle_end();
        }
        client_events(&mut self.client)
    }
}

fn status_of(events: &[ClientEvent]) -> u16 {
    match events.first() {
        Some(ClientEvent::Head(h)) => h.status.as_u16(),
        other => panic!("expected a head, got {other:?}"),
    }
}

#[test]
fn content_length_round_trip() {
    let mut p = Pair::new();
    p.client.send_request(p.now, post("http://h.test/mcp", b"{\"jsonrpc\":\"2.0\"}")).unwrap();
    let events = p.deliver_to_server();
    let [ServerEvent::Head(head), ServerEvent::Data(body), ServerEvent::End] = &events[..] else {
        panic!("{events:?}");
    };
    assert_eq!((head.method.clone(), head.uri.path()), (Method::POST, "/mcp"));
    assert_eq!(head.headers["host"], "h.test");
    assert_eq!(&body[..], b"{\"jsonrpc\":\"2.0\"}");
    p.server.send_response(p.now, ok(b"{\"result\":{}}")).unwrap();
    let events = p.deliver_to_client();
    assert_eq!(status_of(&events), 200);
    assert_eq!(events[1..], [data(b"{\"result\":{}}"), ClientEvent::End { reusable: true }]);
    assert!(p.client.is_idle());
}

#[test]
fn chunked_round_trip_streams_each_chunk() {
    let mut p = Pair::new();
    p.client.send_request(p.now, get("http://h.test/sse")).unwrap();
    assert_eq!(p.deliver_to_server()[1..], [ServerEvent::End]);
    let head = Response::builder().header("content-type", "text/event-stream");
    p.server.send_head(head.body(()).unwrap()).unwrap();
    assert_eq!(status_of(&p.deliver_to_client()), 200);
    for event in [&b"data: 1\n\n"[..], b"data: 2\n\n"] {
        p.server.send_data(Bytes::from_static(event)).unwrap();
        assert_eq!(
            p.deliver_to_client(),
            [ClientEvent::Data(Bytes::from_static(event))],
            "before the end"
        );
    }
    assert!(!p.client.is_idle());
    p.server.finish(p.now).unwrap();
    assert_eq!(p.deliver_to_client(), [ClientEvent::End { reusable: true }]);
}

#[test]
fn close_delimited_round_trip_after_the_client_asks_to_close() {
    // Our server always frames its bodies; the close-delimited case is the client asking to
    // close, which ends with both sides closed and no reuse.
    let mut p = Pair::new();
    let request = Request::get("http://h.test/").header("connection", "close");
    p.client.send_request(p.now, request.body(Bytes::new()).unwrap()).unwrap();
    let _ = p.deliver_to_server();
    p.server.send_response(p.now, ok(b"bye")).unwrap();
    let events = p.deliver_to_client();
    assert_eq!(events[1..], [data(b"bye"), ClientEvent::End { reusable: false }]);
    assert!(p.client.is_closed() && p.server.is_closed());
    assert_eq!(written(|| p.client.poll_transmit()), (vec![], true));
}

#[test]
fn keep_alive_two_requests_on_one_connection() {
    let mut p = Pair::new();
    for (i, path) in ["/one", "/two"].into_iter().enumerate() {
        p.now += 10 * SECOND;
        p.client.send_request(p.now, post(&format!("http://h.test{path}"), b"ping")).unwrap();
        assert_eq!(p.client.poll_timeout(), Some(p.now + 30 * SECOND));
        let events = p.deliver_to_server();
        assert!(matches!(&events[0], ServerEvent::Head(h) if h.uri.path() == path), "request {i}");
        p.server.send_response(p.now, ok(b"pong")).unwrap();
        assert_eq!(p.server.poll_timeout(), Some(p.now + 30 * SECOND), "next head due");
        let events = p.deliver_to_client();
        assert_eq!(
            events[1..],
            [data(b"pong"), ClientEvent::End { reusable: true }],
            "request {i}"
        );
    }
    assert!(!p.client.is_closed() && !p.server.is_closed());
}

#[test]
fn server_rejection_reaches_the_client() {
    let mut p = Pair::new();
    p.server = ServerConnection::new(small(1024, Some(2)), p.now);
    p.client.send_request(p.now, post("http://h.test/", b"too long")).unwrap();
    let events = p.deliver_to_server();
    let ServerEvent::Failed(error) = &events[1] else { panic!("{events:?}") };
    p.server.reject(error.status().unwrap()).unwrap();
    let events = p.deliver_to_client();
    assert_eq!(status_of(&events), 413);
    assert_eq!(events[1..], [ClientEvent::End { reusable: false }]);
}
