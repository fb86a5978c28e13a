//! A dropped SSE answer over real sockets: a relay between zest-smol's client and server cuts
//! the connection carrying a call's stream after its first progress event; the client resumes
//! with `Last-Event-ID` and every event and the response arrive exactly once.

mod common;
#[path = "common/http.rs"]
mod http_common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::run;
use http_common::*;
use serde_json::json;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::net::{TcpListener, TcpStream};
use zest_smol::{Client, ClientApi, ClientOptions, HttpConfig};

/// Relays loopback connections to `backend`; the first server→client chunk that carries a
/// progress notification is passed on, then that connection is cut (both ways).
async fn cutting_relay(backend: SocketAddr, cut: Arc<AtomicBool>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    smol::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(backend).await else { continue };
            let cut = cut.clone();
            smol::spawn(async move {
                let (client_read, mut server_write) = (client.clone(), server.clone());
                let up = smol::spawn(async move {
                    let _ = smol::io::copy(client_read, &mut server_write).await;
                });
                let (mut server_read, mut client_write) = (server.clone(), client.clone());
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    let n = match server_read.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    if client_write.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    let progress = buf[..n].windows(22).any(|w| w == b"notifications/progress");
                    if progress && !cut.swap(true, Ordering::SeqCst) {
                        break;
                    }
                }
                drop(up);
                let _ = client.shutdown(std::net::Shutdown::Both);
                let _ = server.shutdown(std::net::Shutdown::Both);
            })
            .detach();
        }
    })
    .detach();
    addr
}

#[test]
fn a_stream_cut_mid_answer_resumes_and_delivers_everything_once() {
    run(60, async {
        let mut http = HttpConfig::new();
        http.router.retry = Some(Duration::from_millis(50));
        let server = server_with(http).await;
        let cut = Arc::new(AtomicBool::new(false));
        let relay = cutting_relay(server.local_addr(), cut.clone()).await;
        let url = format!("http://{relay}/mcp");
        let client = Client::connect(&url, ClientOptions::new("resume-test", "1")).await.unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let result = client
            .call_tool_with_progress("steps", json!({"n": 4}), move |p| {
                sink.lock().unwrap().push(p.progress);
            })
            .await
            .expect("the call survived the cut");
        assert!(cut.load(Ordering::SeqCst), "the relay cut a stream");
        assert_eq!(result.content[0].as_text(), Some("done after 4 steps"));
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0, 4.0], "each progress event once");
        client.close().await.unwrap();
        server.shutdown().await;
    });
}
