//! A dropped SSE answer over real sockets, with every client runtime against the server of
//! its own runtime: a relay between them cuts the connection carrying a call's stream after
//! its first progress event; the client resumes with `Last-Event-ID` and every event and the
//! response arrive exactly once.

#[path = "support/clients.rs"]
mod clients;
#[path = "support/served.rs"]
mod served;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use clients::{text, Blocking, Peer, Smol, Tokio};
use serde_json::json;
use served::Served;
use zest_conformance::fixture::content::{self, PROGRESS_STEPS};
use zest_tokio::HttpConfig;

/// Relays loopback connections to `backend`; the first server→client chunk that carries a
/// progress notification is passed on, then that connection is cut (both ways).
fn cutting_relay(backend: SocketAddr, cut: Arc<AtomicBool>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("its address");
    thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let Ok(server) = TcpStream::connect(backend) else { continue };
            let cut = cut.clone();
            thread::spawn(move || relay(client, server, &cut));
        }
    });
    addr
}

/// Copies `client`'s bytes to `server` on a thread of its own and `server`'s back here,
/// until the first chunk with a progress notification when nothing was cut before.
fn relay(client: TcpStream, server: TcpStream, cut: &AtomicBool) {
    let (Ok(mut up_from), Ok(mut up_to)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    thread::spawn(move || {
        let _ = std::io::copy(&mut up_from, &mut up_to);
        let _ = up_to.shutdown(Shutdown::Write);
    });
    let (mut down_from, mut down_to) = (server, client);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match down_from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if down_to.write_all(&buf[..n]).is_err() {
            break;
        }
        let progress = buf[..n].windows(22).any(|w| w == b"notifications/progress");
        if progress && !cut.swap(true, Ordering::SeqCst) {
            break;
        }
    }
    let _ = down_to.shutdown(Shutdown::Both);
    let _ = down_from.shutdown(Shutdown::Both);
}

fn a_stream_cut_mid_answer_resumes_and_delivers_everything_once<C: Peer>() {
    let mut http = HttpConfig::new();
    http.router.retry = Some(Duration::from_millis(50));
    let server = Served::start_with(served::runtime_of::<C>(), http);
    let cut = Arc::new(AtomicBool::new(false));
    let relay = cutting_relay(server.local_addr(), cut.clone());
    let client = C::connect(&format!("http://{relay}/mcp"));
    let (result, seen) = client.call_with_progress("test_tool_with_progress", json!({}));
    assert!(cut.load(Ordering::SeqCst), "{}: the relay cut a stream", C::RUNTIME);
    assert_eq!(text(&result), text(&content::progress_done()), "{}", C::RUNTIME);
    assert_eq!(seen, PROGRESS_STEPS, "{}: each progress event once", C::RUNTIME);
    client.close();
    server.shutdown();
}

#[test]
fn tokio_resumes_a_cut_stream_and_delivers_everything_once() {
    a_stream_cut_mid_answer_resumes_and_delivers_everything_once::<Tokio>();
}

#[test]
fn smol_resumes_a_cut_stream_and_delivers_everything_once() {
    a_stream_cut_mid_answer_resumes_and_delivers_everything_once::<Smol>();
}

#[test]
fn blocking_resumes_a_cut_stream_and_delivers_everything_once() {
    a_stream_cut_mid_answer_resumes_and_delivers_everything_once::<Blocking>();
}
