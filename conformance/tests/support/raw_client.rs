//! A plain HTTP/1.1 client for tests that must choose which process each request goes to:
//! one request per connection (`Connection: close`), chunked bodies decoded, and a GET
//! whose SSE events are handed over as they arrive.
#![allow(dead_code, unreachable_pub)] // a module of each test binary that uses it

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use zest_core::framing::sse::{SseDecoder, SseItem};

/// One answer: status, headers (lower-cased names) and the decoded body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// An SSE event: its id and data.
pub type Event = (Option<String>, String);

fn open(url: &str, method: &str, headers: &[(&str, &str)], body: &str) -> io::Result<TcpStream> {
    let rest = url.strip_prefix("http://").expect("loopback http only");
    let (authority, path) =
        rest.split_once('/').map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let mut stream = TcpStream::connect(authority)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let fields: String = headers.iter().map(|(n, v)| format!("{n}: {v}\r\n")).collect();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\n{fields}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes())?;
    Ok(stream)
}

/// Reads a response head: status, headers, and (as `body`) what of the body came with it.
fn read_head(stream: &mut TcpStream) -> io::Result<Reply> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        raw.extend_from_slice(&buf[..n]);
        let mut fields = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut fields);
        let parsed = response.parse(&raw).map_err(|e| io::Error::other(e.to_string()))?;
        if let httparse::Status::Complete(end) = parsed {
            let headers = response
                .headers
                .iter()
                .map(|h| (h.name.to_ascii_lowercase(), String::from_utf8_lossy(h.value).into()))
                .collect();
            let status = response.code.unwrap_or(0);
            return Ok(Reply { status, headers, body: raw[end..].to_vec() });
        }
    }
}

/// Decodes chunked transfer coding as bytes arrive.
#[derive(Default)]
struct Dechunk {
    pending: Vec<u8>,
    /// Bytes left in the current chunk (plus its CRLF), when inside one.
    left: usize,
}

impl Dechunk {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        self.pending.extend_from_slice(bytes);
        loop {
            if self.left > 0 {
                let take = self.left.min(self.pending.len());
                let data = take.min(self.left.saturating_sub(2));
                out.extend_from_slice(&self.pending[..data]);
                self.pending.drain(..take);
                self.left -= take;
                if self.left > 0 {
                    return;
                }
            }
            let Some(end) = self.pending.windows(2).position(|w| w == b"\r\n") else { return };
            let line = String::from_utf8_lossy(&self.pending[..end]).into_owned();
            let size = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16);
            self.pending.drain(..end + 2);
            match size {
                Ok(0) | Err(_) => return,
                Ok(size) => self.left = size + 2,
            }
        }
    }
}

/// One request, read to its end.
pub fn request(url: &str, method: &str, headers: &[(&str, &str)], body: &str) -> io::Result<Reply> {
    let mut stream = open(url, method, headers, body)?;
    let Reply { status, headers, body: mut rest } = read_head(&mut stream)?;
    stream.read_to_end(&mut rest)?;
    let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        let mut out = Vec::new();
        Dechunk::default().feed(&rest, &mut out);
        out
    } else {
        rest
    };
    Ok(Reply { status, headers, body })
}

/// A GET whose SSE events arrive on the receiver as the server writes them; the status
/// comes first. The channel closes when the stream ends.
pub fn events(url: &str, headers: &[(&str, &str)]) -> io::Result<(u16, Receiver<Event>)> {
    let mut stream = open(url, "GET", headers, "")?;
    let Reply { status, headers, body: first } = read_head(&mut stream)?;
    let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let (mut dechunk, mut decoder) = (Dechunk::default(), SseDecoder::default());
        let mut bytes = first;
        let mut buf = [0u8; 4096];
        loop {
            let mut body = Vec::new();
            if chunked {
                dechunk.feed(&bytes, &mut body);
            } else {
                body = std::mem::take(&mut bytes);
            }
            let mut gone = false;
            decoder.feed(&body, &mut |item| {
                if let SseItem::Event(e) = item {
                    let event = (e.id.map(str::to_owned), e.data.to_owned());
                    gone |= tx.send(event).is_err();
                }
            });
            match stream.read(&mut buf) {
                Ok(n) if n > 0 && !gone => bytes = buf[..n].to_vec(),
                _ => return,
            }
        }
    });
    Ok((status, rx))
}
