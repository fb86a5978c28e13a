//! A POST answered by an SSE stream that sends only its priming event (an `id` and a
//! `retry`) and ends before the answer: the client must resume with `Last-Event-ID` and get
//! the answer on the GET, every time. 200 calls per client runtime, against a loopback
//! server written here that does exactly that. The streams end in turn with the chunked
//! body's end in the same write as the event, with that end a moment later, and with the
//! connection closing.

#[path = "support/clients.rs"]
mod clients;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use clients::{text, Blocking, Peer, Smol, Tokio};
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

/// One request: method, headers (lower-cased names), body.
struct Request {
    method: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let method = line.split(' ').next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (name, value) = trimmed.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(0, |(_, v)| v.parse().unwrap_or(0));
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request { method, headers, body })
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

/// Writes a whole response with `Content-Length`; the connection stays open.
fn reply(out: &mut TcpStream, status: &str, media: &str, body: &[u8]) -> bool {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {media}\r\nmcp-session-id: s1\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    out.write_all(head.as_bytes()).and_then(|()| out.write_all(body)).is_ok()
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
