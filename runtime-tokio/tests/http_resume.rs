//! A dropped SSE answer over real sockets: a relay between zest-tokio's client and server cuts
//! the connection carrying a call's stream after its first progress event; the client resumes
//! with `Last-Event-ID` and every event and the response arrive exactly once.

#[path = "common/http.rs"]
mod http_common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_common::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use zest_tokio::{Client, ClientApi, ClientOptions, HttpConfig};

/// Relays loopback connections to `backend`; the first server→client chunk that carries a
/// progress notification is passed on, then that connection is cut (both ways).
async fn cutting_relay(backend: SocketAddr, cut: Arc<AtomicBool>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(backend).await else { continue };
            let cut = cut.clone();
            tokio::spawn(async move {
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let up = tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut cr, &mut sw).await;
                });
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    let n = match sr.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    if cw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    let progress = buf[..n].windows(22).any(|w| w == b"notifications/progress");
                    if progress && !cut.swap(true, Ordering::SeqCst) {
                        break;
                    }
                }
                up.abort();
            });
        }
    });
    addr
}

#[tokio::test]
async fn a_stream_cut_mid_answer_resumes_and_delivers_everything_once() {
    let mut http = HttpConfig::new();
    http.router.retry = Some(Duration::from_millis(50));
    let server = server_with(http).await;
    let cut = Arc::new(AtomicBool::new(false));
    let relay = cutting_relay(server.local_addr(), cut.clone()).await;
    let url = format!("http://{relay}/mcp");
    let client = Client::connect(&url, ClientOptions::new("resume-test", "1")).await.unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let call = client.call_tool_with_progress("steps", json!({"n": 4}), move |p| {
        sink.lock().unwrap().push(p.progress);
    });
    let result = tokio::time::timeout(Duration::from_secs(10), call).await.expect("bounded");
    let result = result.expect("the call survived the cut");
    assert!(cut.load(Ordering::SeqCst), "the relay cut a stream");
    assert_eq!(result.content[0].as_text(), Some("done after 4 steps"));
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0, 4.0], "each progress event once");
    client.close().await.unwrap();
    server.shutdown().await;
}
