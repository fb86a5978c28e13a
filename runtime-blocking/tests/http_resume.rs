//! A dropped SSE answer over real sockets: a relay between zest-blocking's client and server
//! cuts the connection carrying a call's stream after its first progress event; the client
//! resumes with `Last-Event-ID` and every event and the response arrive exactly once.

#[path = "common/http.rs"]
mod http_common;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use http_common::*;
use serde_json::json;
use zest_blocking::{Client, ClientApi, ClientOptions, HttpConfig};

/// Relays loopback connections to `backend`; the first server→client chunk that carries a
/// progress notification is passed on, then that connection is cut (both ways).
fn cutting_relay(backend: SocketAddr, cut: Arc<AtomicBool>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let Ok(server) = TcpStream::connect(backend) else { continue };
            let cut = cut.clone();
            thread::spawn(move || {
                let (mut cr, mut sw) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (mut sr, mut cw) = (server, client);
                thread::spawn(move || {
                    let _ = std::io::copy(&mut cr, &mut sw);
                    let _ = sw.shutdown(Shutdown::Write);
                });
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    let n = match sr.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    if cw.write_all(&buf[..n]).is_err() {
                        break;
                    }
                    let progress = buf[..n].windows(22).any(|w| w == b"notifications/progress");
                    if progress && !cut.swap(true, Ordering::SeqCst) {
                        break;
                    }
                }
                let _ = cw.shutdown(Shutdown::Both);
                let _ = sr.shutdown(Shutdown::Both);
            });
        }
    });
    addr
}

#[test]
fn a_stream_cut_mid_answer_resumes_and_delivers_everything_once() {
    let mut http = HttpConfig::new();
    http.router.retry = Some(Duration::from_millis(50));
    let server = server_with(http);
    let cut = Arc::new(AtomicBool::new(false));
    let relay = cutting_relay(server.local_addr(), cut.clone());
    let url = format!("http://{relay}/mcp");
    let client = Client::connect(&url, ClientOptions::new("resume-test", "1")).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = client
        .call_tool_with_progress("steps", json!({"n": 4}), move |p| {
            sink.lock().unwrap().push(p.progress);
        })
        .expect("the call survived the cut");
    assert!(cut.load(Ordering::SeqCst), "the relay cut a stream");
    assert_eq!(result.content[0].as_text(), Some("done after 4 steps"));
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0, 4.0], "each progress event once");
    client.close().unwrap();
    server.shutdown();
}
