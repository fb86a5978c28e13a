//! A request the server may have read is never sent twice, once for every client runtime.
//! A `tools/call` written whole on a kept-alive connection that the server then closes
//! without an answer fails with a transport error, and the server saw it once (it must not
//! run twice). A pooled connection the server closed while it sat idle is found dead when
//! it is taken (a peek), so the next call goes out on a new connection and succeeds.

#[path = "support/clients.rs"]
mod clients;
#[path = "support/raw_http.rs"]
mod raw_http;

use std::io::BufReader;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use clients::{text, Blocking, Peer, Smol, Tokio};
use raw_http::{read_request, reply};
use serde_json::{json, Value};
use zest_core::api::CallError;
use zest_core::error::RequestError;

/// The server's state, shared with the test.
#[derive(Default)]
struct Server {
    /// `tools/call` requests read.
    calls: AtomicUsize,
    /// Read each `tools/call` whole, then close its connection without an answer.
    drop_calls: AtomicBool,
    /// Every accepted connection, to close them from the test.
    sockets: Mutex<Vec<TcpStream>>,
}

impl Server {
    /// Serves on `127.0.0.1`; returns the MCP endpoint's URL.
    fn start(self: &Arc<Self>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = self.clone();
        thread::spawn(move || {
            for socket in listener.incoming().flatten() {
                server.sockets.lock().unwrap().push(socket.try_clone().unwrap());
                let server = server.clone();
                thread::spawn(move || server.serve(socket));
            }
        });
        url
    }

    /// Closes every connection accepted so far (idle ones included).
    fn close_all(&self) {
        for socket in self.sockets.lock().unwrap().drain(..) {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }

    fn serve(&self, socket: TcpStream) {
        let mut out = socket.try_clone().expect("a second handle");
        let mut reader = BufReader::new(socket);
        while let Some(request) = read_request(&mut reader) {
            if request.method != "POST" {
                if !reply(&mut out, "405 Method Not Allowed", "application/json", b"") {
                    return;
                }
                continue;
            }
            let message: Value = serde_json::from_slice(&request.body).expect("a JSON body");
            let Some(id) = message.get("id").and_then(Value::as_u64) else {
                if !reply(&mut out, "202 Accepted", "application/json", b"") {
                    return;
                }
                continue;
            };
            let result = match message["method"].as_str() {
                Some("initialize") => {
                    json!({"protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}}, "serverInfo": {"name": "no-replay", "version": "1"}})
                }
                Some("tools/call") => {
                    self.calls.fetch_add(1, Ordering::SeqCst);
                    if self.drop_calls.load(Ordering::SeqCst) {
                        // Read whole, maybe run: the client must not send it again.
                        let _ = out.shutdown(Shutdown::Both);
                        return;
                    }
                    json!({"content": [{"type": "text", "text": "ran"}]})
                }
                _ => json!({}),
            };
            let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
            if !reply(&mut out, "200 OK", "application/json", body.as_bytes()) {
                return;
            }
        }
    }
}

fn a_call_read_whole_is_not_sent_again<P: Peer>() {
    let server = Arc::new(Server::default());
    let client = P::connect(&server.start());
    server.drop_calls.store(true, Ordering::SeqCst);
    let failed = client.try_call("t", json!({}));
    assert!(
        matches!(failed, Err(CallError::Request(RequestError::Transport(_)))),
        "{}: {failed:?}",
        P::RUNTIME
    );
    assert_eq!(server.calls.load(Ordering::SeqCst), 1, "{}: the call went out once", P::RUNTIME);
    client.close();
}

fn an_idle_connection_the_server_closed_is_not_used<P: Peer>() {
    let server = Arc::new(Server::default());
    let client = P::connect(&server.start());
    // The connection that carried the handshake sits in the pool; the server closes it.
    server.close_all();
    let result = client.try_call("t", json!({})).unwrap_or_else(|e| panic!("{}: {e}", P::RUNTIME));
    assert_eq!(text(&result), "ran");
    assert_eq!(server.calls.load(Ordering::SeqCst), 1, "{}", P::RUNTIME);
    client.close();
}

#[test]
fn tokio_never_sends_a_call_read_whole_twice() {
    a_call_read_whole_is_not_sent_again::<Tokio>();
}

#[test]
fn smol_never_sends_a_call_read_whole_twice() {
    a_call_read_whole_is_not_sent_again::<Smol>();
}

#[test]
fn blocking_never_sends_a_call_read_whole_twice() {
    a_call_read_whole_is_not_sent_again::<Blocking>();
}

#[test]
fn tokio_skips_an_idle_connection_the_server_closed() {
    an_idle_connection_the_server_closed_is_not_used::<Tokio>();
}

#[test]
fn smol_skips_an_idle_connection_the_server_closed() {
    an_idle_connection_the_server_closed_is_not_used::<Smol>();
}

#[test]
fn blocking_skips_an_idle_connection_the_server_closed() {
    an_idle_connection_the_server_closed_is_not_used::<Blocking>();
}
