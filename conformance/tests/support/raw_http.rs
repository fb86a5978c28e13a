//! A hand-written loopback HTTP/1.1 peer for client tests that need a server to misbehave
//! in one exact way: read one request at a time and answer it by hand.
#![allow(dead_code, unreachable_pub)] // a module of each test binary that uses it

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// One request: method, headers (lower-cased names), body.
pub struct Request {
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

pub fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
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

/// Writes a whole response with `Content-Length` and the session id `s1`; the connection
/// stays open. `false` once the connection is gone.
pub fn reply(out: &mut TcpStream, status: &str, media: &str, body: &[u8]) -> bool {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {media}\r\nmcp-session-id: s1\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    out.write_all(head.as_bytes()).and_then(|()| out.write_all(body)).is_ok()
}
