//! A POST answered by an SSE stream that sends only its priming event (an `id` and a
//! `retry`) and ends before the answer: the client must resume with `Last-Event-ID` and get
//! the answer on the GET, every time. 200 calls per client runtime, against a loopback
//! server written here that does exactly that. The streams end in turn with the chunked
//! body's end in the same write as the event, with that end a moment later, and with the
//! connection closing.

#[path = "support/clients.rs"]
mod clients;
#[path = "support/raw_http.rs"]
mod raw_http;

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use clients::{text, Blocking, Peer, Smol, Tokio};
use raw_http::{read_request, reply, Request};
use serde_json::{json, Value};

const CALLS: usize = 200;

/// What the server saw.
#[derive(Default)]
struct Seen {
    primed: AtomicUsize,
    resumed: AtomicUsize,
}

/// Serves one MCP session on `127.0.0.1`; returns its URL.
fn priming_server(seen: Arc<Seen>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            let seen = seen.clone();
            thread::spawn(move || serve(socket, &seen));
        }
    });
    url
}

fn serve(socket: TcpStream, seen: &Seen) {
    let mut out = socket.try_clone().expect("a second handle");
    let mut reader = BufReader::new(socket);
    while let Some(request) = read_request(&mut reader) {
        let keep = match request.method.as_str() {
            "POST" => post(&mut out, &request, seen),
            "GET" => resume(&mut out, &request, seen),
            _ => reply(&mut out, "200 OK", "application/json", b"{}"),
        };
        if !keep {
            return;
        }
    }
}

/// How a stream ends.
#[derive(Clone, Copy)]
enum End {
    /// The chunked body's end, in the same write as the events.
    Chunked,
    /// The chunked body's end, written a moment after the events.
    ChunkedLater,
    /// The connection closes.
    Close,
}

/// Writes an SSE response of `events` and ends it as `end` says; `false` once the
/// connection is closed.
fn stream(out: &mut TcpStream, events: &str, end: End) -> bool {
    let sse = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: s1\r\n";
    let chunk = format!("{:x}\r\n{events}\r\n", events.len());
    let written = match end {
        End::Close => out.write_all(format!("{sse}connection: close\r\n\r\n{events}").as_bytes()),
        End::Chunked => out.write_all(
            format!("{sse}transfer-encoding: chunked\r\n\r\n{chunk}0\r\n\r\n").as_bytes(),
        ),
        End::ChunkedLater => out
            .write_all(format!("{sse}transfer-encoding: chunked\r\n\r\n{chunk}").as_bytes())
            .and_then(|()| out.flush())
            .and_then(|()| {
                thread::sleep(std::time::Duration::from_millis(2));
                out.write_all(b"0\r\n\r\n")
            }),
    };
    written.is_ok() && !matches!(end, End::Close)
}

fn post(out: &mut TcpStream, request: &Request, seen: &Seen) -> bool {
    let message: Value = serde_json::from_slice(&request.body).expect("a JSON body");
    let Some(id) = message.get("id").and_then(Value::as_u64) else {
        return reply(out, "202 Accepted", "application/json", b"");
    };
    match message["method"].as_str() {
        Some("initialize") => {
            let result = json!({"protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "priming", "version": "1"}});
            let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
            reply(out, "200 OK", "application/json", body.as_bytes())
        }
        Some("tools/call") => {
            let n = seen.primed.fetch_add(1, Ordering::SeqCst);
            // The priming event only; the answer waits for the client to resume.
            let end = [End::Chunked, End::ChunkedLater, End::Close][n % 3];
            stream(out, &format!("id: {id}-0\nretry: 5\ndata:\n\n"), end)
        }
        _ => {
            let body = json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string();
            reply(out, "200 OK", "application/json", body.as_bytes())
        }
    }
}

fn resume(out: &mut TcpStream, request: &Request, seen: &Seen) -> bool {
    let Some(last) = request.header("last-event-id") else {
        return reply(out, "405 Method Not Allowed", "application/json", b"");
    };
    let id: u64 = last.split('-').next().and_then(|n| n.parse().ok()).expect("an event id");
    seen.resumed.fetch_add(1, Ordering::SeqCst);
    let result = json!({"content": [{"type": "text", "text": format!("answer {id}")}]});
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
    stream(out, &format!("id: {id}-1\ndata: {answer}\n\n"), End::Chunked)
}

fn every_primed_call_resumes<P: Peer>() {
    let seen = Arc::new(Seen::default());
    let url = priming_server(seen.clone());
    let client = P::connect(&url);
    for i in 0..CALLS {
        let result = client
            .try_call("t", json!({}))
            .unwrap_or_else(|e| panic!("{}: call {i} failed: {e}", P::RUNTIME));
        assert!(text(&result).starts_with("answer "), "{}: {result:?}", P::RUNTIME);
    }
    assert_eq!(seen.primed.load(Ordering::SeqCst), CALLS);
    assert_eq!(
        seen.resumed.load(Ordering::SeqCst),
        CALLS,
        "{}: one resumption per call",
        P::RUNTIME
    );
    client.close();
}

#[test]
fn tokio_resumes_every_primed_call() {
    every_primed_call_resumes::<Tokio>();
}

#[test]
fn smol_resumes_every_primed_call() {
    every_primed_call_resumes::<Smol>();
}

#[test]
fn blocking_resumes_every_primed_call() {
    every_primed_call_resumes::<Blocking>();
}
