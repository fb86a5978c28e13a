//! zest-smol's HTTP client against a scripted server on loopback: a keep-alive connection
//! the server closed while idle is replaced without the call noticing. The faults every
//! client runtime answers alike are in `conformance/tests/http_client_faults.rs`.

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::run;
use serde_json::{json, Value};
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::net::{TcpListener, TcpStream};
use zest_smol::{Client, ClientApi, ClientOptions, HttpEndpoint, HttpMode};

fn options() -> ClientOptions {
    // The scripted servers here answer a session-era handshake.
    let mut options =
        ClientOptions::new("zest-smol-http-faults", "1").with_config(|c| c.session_era());
    options.config.init_timeout = Duration::from_secs(10);
    options
}

/// Reads one request (head and `content-length` body); `None` at EOF.
async fn read_request(socket: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(i) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
        assert!(seen.len() < 64 * 1024, "a bounded head");
    };
    let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = seen[end..].to_vec();
    while body.len() < length {
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => body.extend_from_slice(&buf[..n]),
        }
    }
    Some((head, body))
}

/// A Streamable HTTP server that answers exactly one request per connection and then closes
/// it, although its answers never say `connection: close`: every pooled connection is stale
/// by the time the client reuses it. Counts the connections it accepted.
async fn one_answer_per_connection(accepted: Arc<AtomicUsize>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    smol::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            accepted.fetch_add(1, Ordering::SeqCst);
            smol::spawn(async move {
                let Some((_, body)) = read_request(&mut socket).await else { return };
                let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let answer = match (&message["id"], message["method"].as_str()) {
                    (Value::Null, _) => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".into(),
                    (id, Some(method)) => {
                        let result = if method == "initialize" {
                            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                                   "serverInfo": {"name": "one-shot", "version": "1"}})
                        } else {
                            json!({})
                        };
                        let body =
                            json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                             mcp-session-id: s1\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        )
                    }
                    _ => "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n".into(),
                };
                let _ = socket.write_all(answer.as_bytes()).await;
                // Closed right away: the client learns it only when it reuses the connection.
                drop(socket);
            })
            .detach();
        }
    })
    .detach();
    addr
}

#[test]
fn a_stale_keep_alive_connection_is_replaced_without_the_call_noticing() {
    run(60, async {
        let accepted = Arc::new(AtomicUsize::new(0));
        let addr = one_answer_per_connection(accepted.clone()).await;
        let mut endpoint =
            HttpEndpoint::new(format!("http://{addr}/mcp")).mode(HttpMode::StreamableHttp);
        endpoint.open_get_stream = false;
        let client = Client::connect_to(endpoint, options()).await.expect("connect");
        assert_eq!(client.negotiated().server_info.name, "one-shot");
        for _ in 0..3 {
            // Let the server's close reach the client's idle connection first.
            smol::Timer::after(Duration::from_millis(20)).await;
            client.ping().await.expect("a ping on a stale connection is retried");
        }
        // initialize, initialized, three pings: one connection each.
        assert_eq!(accepted.load(Ordering::SeqCst), 5);
        // The DELETE meets a stale connection too; close still succeeds.
        client.close().await.unwrap();
    });
}
