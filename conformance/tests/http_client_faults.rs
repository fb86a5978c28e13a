//! The HTTP client against scripted servers that misbehave on loopback, written once and run
//! with every client runtime: each fault ends the connect attempt with the same typed error
//! on every runtime, and none hangs.

#[macro_use]
#[path = "support/clients.rs"]
mod clients;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener};
use std::thread;
use std::time::Duration;

use clients::Peer;
use zest_core::error::CloseReason;
use zest_core::http::client::HttpMode;
use zest_core::runtime::http_client::HttpEndpoint;
use zest_core::runtime::ConnectError;

/// The client's message limit in these tests.
const LIMIT: usize = 4 * 1024 * 1024;

/// A server that answers each request on each of its first 16 connections with `answer`
/// (raw bytes), then closes that connection.
fn scripted(answer: Vec<u8>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("its address");
    thread::spawn(move || {
        for socket in listener.incoming().take(16) {
            let Ok(mut socket) = socket else { continue };
            let answer = answer.clone();
            thread::spawn(move || {
                let _ = socket.set_read_timeout(Some(Duration::from_secs(30)));
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                // The head, bounded; the body (if any) is not needed to answer.
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") && seen.len() < 64 * 1024 {
                    match socket.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = socket.write_all(&answer);
                let _ = socket.shutdown(Shutdown::Write);
            });
        }
    });
    addr
}

/// Connects client `C` to a server scripted to answer `answer`, in `mode`; the error.
fn fails<C: Peer>(answer: &[u8], mode: HttpMode, path: &str) -> ConnectError {
    let addr = scripted(answer.to_vec());
    let endpoint = HttpEndpoint::new(format!("http://{addr}{path}")).mode(mode);
    match C::try_connect_with(endpoint, LIMIT) {
        Ok(_) => panic!("{}: connected to a broken server", C::RUNTIME),
        Err(e) => e,
    }
}

fn a_500_is_an_http_status_error<C: Peer>() {
    let answer = b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n";
    let e = fails::<C>(answer, HttpMode::Auto, "/mcp");
    assert!(
        matches!(&e, ConnectError::HttpStatus { status, .. } if status.as_u16() == 500),
        "{e:?}"
    );
}

fn a_non_json_body_labelled_json_fails_the_handshake<C: Peer>() {
    let body = b"<html>not json</html>";
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let e = fails::<C>(&[head.as_bytes(), body].concat(), HttpMode::StreamableHttp, "/mcp");
    assert!(
        matches!(&e, ConnectError::Invalid(why) if why.contains("no JSON-RPC response")),
        "{e:?}"
    );
}

fn an_unexpected_content_type_fails_the_handshake<C: Peer>() {
    let answer = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 2\r\n\r\nhi";
    let e = fails::<C>(answer, HttpMode::StreamableHttp, "/mcp");
    assert!(
        matches!(&e, ConnectError::Invalid(why) if why.contains("no JSON-RPC response")),
        "{e:?}"
    );
}

fn a_truncated_chunked_body_is_a_transport_failure<C: Peer>() {
    let answer = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{\"js";
    let e = fails::<C>(answer, HttpMode::StreamableHttp, "/mcp");
    assert!(
        matches!(&e, ConnectError::Exited { reason, .. } if reason.to_string().contains("inside a body")),
        "{e:?}"
    );
}

fn an_endpoint_event_on_another_origin_is_refused<C: Peer>() {
    let answer = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nevent: endpoint\ndata: http://evil.example/messages\n\n";
    let e = fails::<C>(answer, HttpMode::LegacySse, "/sse");
    let reason = CloseReason::EndpointCrossOrigin("http://evil.example/messages".into());
    assert_eq!(e, ConnectError::Handshake(reason));
}

fn an_endless_sse_event_beyond_the_limit_is_dropped_and_fails_the_handshake<C: Peer>() {
    let mut answer = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: ".to_vec();
    answer.extend(std::iter::repeat_n(b'x', LIMIT + 1024 * 1024));
    let e = fails::<C>(&answer, HttpMode::StreamableHttp, "/mcp");
    // The event is dropped at the limit (a violation), and the stream ends owing the
    // response.
    assert!(
        matches!(&e, ConnectError::Invalid(why) if why.contains("no JSON-RPC response")),
        "{e:?}"
    );
}

fn a_garbage_answer_is_a_transport_failure<C: Peer>() {
    let e = fails::<C>(b"SSH-2.0-OpenSSH_9.6\r\n\r\n", HttpMode::StreamableHttp, "/mcp");
    assert!(
        matches!(&e, ConnectError::Exited { reason, .. } if reason.to_string().contains("malformed")),
        "{e:?}"
    );
}

with_every_client!(
    a_500_is_an_http_status_error,
    a_non_json_body_labelled_json_fails_the_handshake,
    an_unexpected_content_type_fails_the_handshake,
    a_truncated_chunked_body_is_a_transport_failure,
    an_endpoint_event_on_another_origin_is_refused,
    an_endless_sse_event_beyond_the_limit_is_dropped_and_fails_the_handshake,
    a_garbage_answer_is_a_transport_failure,
);
