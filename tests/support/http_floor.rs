//! The raw HTTP floor the HTTP benches print zest beside: a keep-alive HTTP/1.1 echo of each
//! POST body (zest-core's http1 machines on both sides, std threads, one connection and thread
//! per worker, no MCP, no JSON parsing). Included through
//! `#[path = ".../tests/support/http_floor.rs"] mod http_floor;` by zest-blocking's HTTP bench
//! and by bench/rmcp-compare, with `zest_core` in scope under that name.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Response};
use serde_json::json;
use zest_core::http1::{self, Config, ServerConnection, ServerEvent};
use zest_core::io::{HttpRequest, StreamId};
use zest_core::runtime::http_client::ClientConn;
use zest_core::runtime::OwnedEvent;

/// Echoes each POST body back as JSON, keep-alive, one thread per connection; returns the
/// bound address at once (the server runs on threads of its own for the process's life).
pub(crate) fn raw_echo_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(socket) = socket else { continue };
            let _ = socket.set_nodelay(true);
            thread::spawn(move || echo_connection(socket));
        }
    });
    addr
}

fn echo_connection(mut socket: TcpStream) {
    let mut conn = ServerConnection::new(Config::default(), Instant::now());
    let mut body = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        while let Some(event) = conn.poll_event() {
            match event {
                ServerEvent::Data(b) => body.extend_from_slice(&b),
                ServerEvent::End => {
                    let mut response = Response::new(Bytes::from(std::mem::take(&mut body)));
                    response
                        .headers_mut()
                        .insert("content-type", HeaderValue::from_static("application/json"));
                    if conn.send_response(Instant::now(), response).is_err() {
                        return;
                    }
                }
                ServerEvent::Failed(_) => return,
                _ => {}
            }
        }
        while let Some(t) = conn.poll_transmit() {
            match t {
                http1::Transmit::Write(b) => {
                    if socket.write_all(&b).is_err() {
                        return;
                    }
                }
                http1::Transmit::Close => return,
            }
        }
        match socket.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => conn.handle_data(&buf[..n]),
        }
    }
}

/// The body of a `tools/call echo` of `text`, as the floor's client POSTs it.
pub(crate) fn echo_body(text: &str) -> Bytes {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}}});
    Bytes::from(serde_json::to_vec(&call).expect("json"))
}

/// `calls` exchanges with no MCP, `concurrency` at once: each worker POSTs `body` on its own
/// keep-alive connection to `addr` and reads the echo. Every latency, the wall time, and the
/// connections, still open (the server's threads serving them live until they are dropped).
pub(crate) fn raw_run(
    addr: SocketAddr,
    body: &Bytes,
    calls: usize,
    concurrency: usize,
) -> (Vec<Duration>, Duration, Vec<TcpStream>) {
    let uri: http::Uri = format!("http://{addr}/mcp").parse().expect("uri");
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (uri, body) = (uri.clone(), body.clone());
            thread::spawn(move || raw_worker(addr, uri, body, calls / concurrency))
        })
        .collect();
    let (mut latencies, mut sockets) = (Vec::with_capacity(calls), Vec::new());
    for worker in workers {
        let (mine, socket) = worker.join().expect("a worker");
        latencies.extend(mine);
        sockets.push(socket);
    }
    (latencies, started.elapsed(), sockets)
}

fn raw_worker(
    addr: SocketAddr,
    uri: http::Uri,
    body: Bytes,
    calls: usize,
) -> (Vec<Duration>, TcpStream) {
    let mut socket = TcpStream::connect(addr).expect("connect");
    let _ = socket.set_nodelay(true);
    let mut conn = ClientConn::new(Config::default());
    let mut buf = vec![0u8; 64 * 1024];
    let mut latencies = Vec::with_capacity(calls);
    for i in 0..calls {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        let request =
            HttpRequest { method: Method::POST, uri: uri.clone(), headers, body: body.clone() };
        let t = Instant::now();
        conn.send(t, StreamId(i as u64 + 1), request).expect("idle connection");
        'exchange: loop {
            while let Some(http1::Transmit::Write(b)) = conn.poll_transmit() {
                socket.write_all(&b).expect("write");
            }
            while let Some((_, event)) = conn.poll_event() {
                match event {
                    OwnedEvent::End => break 'exchange,
                    OwnedEvent::Failed(f) => panic!("{f}"),
                    _ => {}
                }
            }
            let n = socket.read(&mut buf).expect("read");
            assert!(n > 0, "the floor server closed the connection");
            conn.handle_data(&buf[..n]);
        }
        latencies.push(t.elapsed());
    }
    (latencies, socket)
}
