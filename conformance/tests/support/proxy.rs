//! A round-robin HTTP/1.1 proxy on loopback for tests that put several server processes
//! behind one URL.
#![allow(dead_code, unreachable_pub)] // a module of each test binary that uses it

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// Far above what any exchange takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(30);
/// The most connections the proxy serves before it stops (a whole server suite makes some
/// hundreds).
const MAX_CONNECTIONS: usize = 5_000;

/// `host:port` of a URL like `http://127.0.0.1:PORT/mcp`.
pub fn authority(url: &str) -> String {
    url.trim_start_matches("http://").split('/').next().unwrap_or_default().to_owned()
}

/// Reads one HTTP/1.1 request (head and `Content-Length` body) from `client`.
fn read_request(client: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if client.read(&mut byte).ok()? == 0 || head.len() > 64 * 1024 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).ok()?;
    let length = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-length")))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    client.read_exact(&mut body).ok()?;
    Some((head, body))
}

/// A round-robin proxy: each client connection carries one request, which goes to the next
/// backend with `Connection: close`; the answer streams back until the backend closes.
/// Records which backend got each request body.
pub fn proxy(backends: Vec<String>, seen: Arc<Mutex<Vec<(usize, String)>>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let address = listener.local_addr().unwrap();
    thread::spawn(move || {
        for (turn, client) in listener.incoming().take(MAX_CONNECTIONS).enumerate() {
            let Ok(mut client) = client else { continue };
            let backend = turn % backends.len();
            let target = backends[backend].clone();
            let seen = seen.clone();
            thread::spawn(move || {
                client.set_read_timeout(Some(HANG)).unwrap();
                let Some((head, body)) = read_request(&mut client) else { return };
                seen.lock().unwrap().push((backend, String::from_utf8_lossy(&body).into_owned()));
                let kept: Vec<&str> = head
                    .trim_end()
                    .lines()
                    .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
                    .collect();
                let head = format!("{}\r\nconnection: close\r\n\r\n", kept.join("\r\n"));
                let mut server = TcpStream::connect(&target).expect("the backend listens");
                server.set_read_timeout(Some(HANG)).unwrap();
                server.write_all(head.as_bytes()).unwrap();
                server.write_all(&body).unwrap();
                let mut buf = [0u8; 16 * 1024];
                while let Ok(n) = server.read(&mut buf) {
                    if n == 0 || client.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    format!("http://{address}/mcp")
}
