//! HTTP/1.1 connection machines over [ureq-proto](ureq_proto): one TCP (or TLS) connection,
//! one exchange at a time, keep-alive between them.
//!
//! A runtime only moves bytes: it feeds what the socket read to `handle_data` (and EOF to
//! `handle_end`), writes every [`Transmit::Write`] in order, closes the socket at
//! [`Transmit::Close`], and sleeps until `poll_timeout`. The machines parse and frame heads
//! and bodies, enforce the limits in [`Config`], and report what happened as events: heads
//! ([`ResponseHead`], [`RequestHead`]), body chunks *as they arrive* (an SSE response that
//! never ends still yields its events), the end of a message, or one typed [`Error`].
//! Commands that are used wrongly fail with a [`UsageError`] and change nothing.
//!
//! ```text
//!  ClientConnection                      ServerConnection
//!
//!  ┌─► Idle                              ┌─► AwaitingHead (deadline)
//!  │    │ send_request                   │    │ Head
//!  │    ▼                                │    ▼
//!  │   AwaitingHead (deadline)           │   ReadingBody ── Data …
//!  │    │ Head                           │    │ End
//!  │    ▼                                │    ▼
//!  │   ReadingBody ── Data …             │   AwaitingResponse ── send_head ──► Responding
//!  │    │ End { reusable }               │    │ send_response        send_data … │ finish
//!  │    ▼                                │    ▼                                 │
//!  └── reusable?                         └── kept alive? ◄──────────────────────┘
//!       │ no                                  │ no (Connection: close, HTTP/1.0, EOF)
//!       ▼                                     ▼
//!      Closed                                Closed
//! ```
//!
//! A peer error, an EOF inside a message, or a missed deadline is one `Failed(e)` event. The
//! client then closes; the server waits for `reject(status)` (see [`Error::status`]) or
//! `close()`, unless no answer can reach the peer.
//!
//! Time is an argument: a head must arrive whole within [`Config::head_timeout`] of the
//! request being sent (client) or of the connection opening or the previous response ending
//! (server). `poll_timeout` returns that deadline while a head is awaited, and
//! `handle_timeout(now)` at or after it fails the exchange with [`Error::HeadTimeout`].
//!
//! Every event and the final outcome depend only on the bytes received, never on how reads
//! split them (STYLE rule 14; tested with every two-way split and fuzzed).
//!
//! # A request and its response, in memory
//!
//! ```
//! use std::time::Instant;
//! use bytes::Bytes;
//! use zest_core::http1::{ClientConnection, ClientEvent, Config, ServerConnection, ServerEvent,
//!                        Transmit};
//!
//! /// What a runtime does with transmits: write bytes to the socket (here, a Vec).
//! fn pump(out: impl FnMut() -> Option<Transmit>) -> Vec<u8> {
//!     std::iter::from_fn(out)
//!         .flat_map(|t| match t {
//!             Transmit::Write(bytes) => bytes.to_vec(),
//!             _ => Vec::new(),
//!         })
//!         .collect()
//! }
//!
//! let now = Instant::now();
//! let mut client = ClientConnection::new(Config::default());
//! let mut server = ServerConnection::new(Config::default(), now);
//!
//! let request = http::Request::post("http://example.test/mcp")
//!     .header("content-type", "application/json")
//!     .body(Bytes::from_static(b"{}"))
//!     .unwrap();
//! client.send_request(now, request).unwrap();
//! server.handle_data(&pump(|| client.poll_transmit()));
//!
//! let mut body = Vec::new();
//! while let Some(event) = server.poll_event() {
//!     match event {
//!         ServerEvent::Head(head) => assert_eq!(head.uri.path(), "/mcp"),
//!         ServerEvent::Data(chunk) => body.extend_from_slice(&chunk),
//!         ServerEvent::End => {
//!             let response = http::Response::new(Bytes::from(body.clone()));
//!             server.send_response(now, response).unwrap();
//!         }
//!         other => panic!("{other:?}"),
//!     }
//! }
//! client.handle_data(&pump(|| server.poll_transmit()));
//!
//! let events: Vec<_> = std::iter::from_fn(|| client.poll_event()).collect();
//! assert!(matches!(&events[0], ClientEvent::Head(head) if head.status == 200));
//! assert_eq!(events[1], ClientEvent::Data(Bytes::from_static(b"{}")));
//! assert_eq!(events[2], ClientEvent::End { reusable: true });
//! ```

use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use http::{header, HeaderMap, Method, Request, Response, StatusCode, Uri, Version};
use ureq_proto::BodyMode;

mod client;
mod error;
mod server;

pub use client::{ClientConnection, ClientEvent};
pub use error::{Error, UsageError};
pub use server::{ServerConnection, ServerEvent};

/// Default [`Config::max_head_bytes`]: 16 KiB.
pub const DEFAULT_MAX_HEAD_BYTES: usize = 16 * 1024;

/// Default [`Config::max_body_bytes`]: 16 MiB.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;

/// Default [`Config::head_timeout`]: 30 s.
pub const DEFAULT_HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// Default [`Config::max_backlog_bytes`]: 8 MiB.
pub const DEFAULT_MAX_BACKLOG_BYTES: usize = 8 * 1024 * 1024;

/// Header lines ureq-proto parses in one head; more is [`Error::TooManyHeaders`].
const MAX_HEADERS: usize = ureq_proto::client::MAX_RESPONSE_HEADERS;

/// Limits for one connection, the same for both roles.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// Longest head accepted, start line and final blank line included. Also bounds a chunk
    /// size or trailer line, and bytes a server buffers from a client that pipelines.
    pub max_head_bytes: usize,
    /// Longest body accepted, counted after chunked decoding; `None` for no limit (an SSE
    /// stream that is meant to stay open).
    pub max_body_bytes: Option<u64>,
    /// How long a head may take to arrive in whole.
    pub head_timeout: Duration,
    /// Server side: the most bytes a connection holds for a client that does not take
    /// them, besides the largest message among them (one message is never refused for its
    /// size). Past it the runtime closes the connection and its exchange fails as if the
    /// client had gone: an SSE stream can be resumed from the event store. Keep it above
    /// what the router sends a stream at once: a resumption's replay (the event store's
    /// capacity) and a new GET stream's backlog (`RouterConfig::max_backlog` messages). See
    /// [`backlog_exceeds`](crate::runtime::backlog_exceeds).
    pub max_backlog_bytes: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_head_bytes: DEFAULT_MAX_HEAD_BYTES,
            max_body_bytes: Some(DEFAULT_MAX_BODY_BYTES),
            head_timeout: DEFAULT_HEAD_TIMEOUT,
            max_backlog_bytes: DEFAULT_MAX_BACKLOG_BYTES,
        }
    }
}

/// What a runtime must do with the connection, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum Transmit {
    /// Close the connection, once every earlier `Write` is written. Nothing follows it.
    Close,
    /// Write these bytes.
    Write(Bytes),
}

/// The head of a response a client received (1xx interim responses are skipped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseHead {
    /// The status.
    pub status: StatusCode,
    /// HTTP/1.0 or HTTP/1.1.
    pub version: Version,
    /// The header fields, in received order per name.
    pub headers: HeaderMap,
}

impl ResponseHead {
    /// The head as an `http` response without a body.
    pub fn into_response(self) -> Response<()> {
        let mut response = Response::new(());
        *response.status_mut() = self.status;
        *response.version_mut() = self.version;
        *response.headers_mut() = self.headers;
        response
    }
}

impl From<Response<()>> for ResponseHead {
    fn from(response: Response<()>) -> Self {
        let (parts, ()) = response.into_parts();
        Self { status: parts.status, version: parts.version, headers: parts.headers }
    }
}

/// The head of a request a server received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestHead {
    /// The method.
    pub method: Method,
    /// The request target, usually origin-form (`/mcp?x=1`).
    pub uri: Uri,
    /// HTTP/1.0 or HTTP/1.1.
    pub version: Version,
    /// The header fields, in received order per name.
    pub headers: HeaderMap,
}

impl RequestHead {
    /// The head as an `http` request without a body.
    pub fn into_request(self) -> Request<()> {
        let mut request = Request::new(());
        *request.method_mut() = self.method;
        *request.uri_mut() = self.uri;
        *request.version_mut() = self.version;
        *request.headers_mut() = self.headers;
        request
    }
}

impl From<Request<()>> for RequestHead {
    fn from(request: Request<()>) -> Self {
        let (parts, ()) = request.into_parts();
        Self {
            method: parts.method,
            uri: parts.uri,
            version: parts.version,
            headers: parts.headers,
        }
    }
}

/// ureq-proto's body readers, as one interface for [`pump_body`].
trait BodyDecoder {
    /// Decodes from `input` into `output`; returns `(input used, output used)`.
    fn read(
        &mut self,
        input: &[u8],
        output: &mut [u8],
    ) -> Result<(usize, usize), ureq_proto::Error>;
    /// Whether the body's end has been read. Never true for a close-delimited body.
    fn is_done(&self) -> bool;
    /// Where a chunked decoder is; `None` for other bodies.
    fn chunk_position(&self) -> Option<ChunkPosition>;
}

/// Where a chunked body decoder is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ChunkPosition {
    /// Expecting a chunk-size line.
    SizeLine,
    /// Inside chunk data, or expecting the CRLF after it, a trailer or the final CRLF.
    Inside,
}

/// Runs buffered bytes through `decoder` until the body ends or more bytes are needed.
///
/// Decoded bytes go to `emit` as they come, never more than `limit` in total (counted in
/// `received`): the bytes up to the limit are emitted, then [`Error::BodyTooLarge`]. Returns
/// whether the body has ended; bytes after its end stay in `rx`.
///
/// ureq-proto drops the bytes a read decoded when the same read then fails, so how reads
/// were split would decide whether the last bytes before a framing error are delivered. To
/// keep events independent of that, chunked input goes in pieces that cannot both yield data
/// and fail: a chunk-size line alone, or bytes up to (not including) the next CR. A line the
/// decoder waits on (a CRLF after data, a trailer) goes alone, and a line longer than
/// `max_head_bytes` or with a stray CR is malformed.
fn pump_body(
    decoder: &mut impl BodyDecoder,
    rx: &mut BytesMut,
    received: &mut u64,
    config: &Config,
    emit: &mut impl FnMut(Bytes),
) -> Result<bool, Error> {
    let max_line = config.max_head_bytes;
    // Everything decoded here goes out as one chunk, however many pieces it took.
    let mut body = BytesMut::new();
    let result = loop {
        if decoder.is_done() || rx.is_empty() {
            break Ok(decoder.is_done());
        }
        let piece = match decoder.chunk_position() {
            None => decode(decoder, rx, rx.len()),
            Some(ChunkPosition::SizeLine) => decode_line(decoder, rx, max_line),
            Some(ChunkPosition::Inside) => {
                let next_cr = rx.iter().skip(1).position(|&b| b == b'\r');
                match decode(decoder, rx, next_cr.map_or(rx.len(), |p| p + 1)) {
                    Ok((0, _)) => decode_line(decoder, rx, max_line),
                    other => other,
                }
            }
        };
        let (used, mut out) = match piece {
            Ok(piece) => piece,
            Err(e) => break Err(e),
        };
        rx.advance(used);
        if let Some(limit) = config.max_body_bytes {
            let room = limit.saturating_sub(*received);
            if out.len() as u64 > room {
                // `room < out.len()`, a usize, so the cast is lossless.
                out.truncate(room as usize);
                body.unsplit(out);
                *received = limit;
                break Err(Error::BodyTooLarge { limit });
            }
        }
        *received += out.len() as u64;
        body.unsplit(out);
        if used == 0 {
            // Waiting for the rest of a line; a stalled decoder must not buffer forever.
            if rx.len() > max_line {
                break Err(Error::MalformedBody);
            }
            break Ok(false);
        }
    };
    if !body.is_empty() {
        emit(body.freeze());
    }
    result
}

/// Decodes the first `len` bytes of `rx`; returns the bytes used and the bytes decoded.
fn decode(
    decoder: &mut impl BodyDecoder,
    rx: &[u8],
    len: usize,
) -> Result<(usize, BytesMut), Error> {
    let mut out = BytesMut::zeroed(len);
    let (used, produced) = decoder.read(&rx[..len], &mut out).map_err(|_| Error::MalformedBody)?;
    out.truncate(produced);
    Ok((used, out))
}

/// Decodes the first line of `rx`, CRLF included, once it is complete.
fn decode_line(
    decoder: &mut impl BodyDecoder,
    rx: &[u8],
    max_line: usize,
) -> Result<(usize, BytesMut), Error> {
    match rx.windows(2).position(|w| w == b"\r\n") {
        Some(end) if end + 2 > max_line || rx[..end].contains(&b'\r') => Err(Error::MalformedBody),
        Some(end) => decode(decoder, rx, end + 2),
        None if rx.len() > max_line => Err(Error::MalformedBody),
        None => Ok((0, BytesMut::new())),
    }
}

/// Where a ureq-proto body reader in `mode` is, given whether it sits on a chunk boundary.
fn chunk_position(mode: BodyMode, on_boundary: bool) -> Option<ChunkPosition> {
    match (mode, on_boundary) {
        (BodyMode::Chunked, true) => Some(ChunkPosition::SizeLine),
        (BodyMode::Chunked, false) => Some(ChunkPosition::Inside),
        _ => None,
    }
}

/// The bytes a head must end within. Parsing only this window makes a head's fate
/// independent of how many bytes after it came in the same read.
fn head_window(rx: &[u8], max: usize) -> &[u8] {
    &rx[..rx.len().min(max)]
}

/// Whether a received request frames its body unambiguously (RFC 9112 §6.1, §6.3): with
/// `Transfer-Encoding`, there is no `Content-Length`, the version is 1.1 and the last coding
/// is `chunked`. Anything else invites request smuggling and is refused.
fn request_framing_ok(request: &Request<()>) -> bool {
    let headers = request.headers();
    let codings: Vec<&[u8]> = headers
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
        .collect();
    let Some(last) = codings.last() else {
        return true;
    };
    !headers.contains_key(header::CONTENT_LENGTH)
        && request.version() == Version::HTTP_11
        && last.trim_ascii().eq_ignore_ascii_case(b"chunked")
}

/// Whether any `Connection` header lists `token` (lowercase).
fn connection_has(headers: &HeaderMap, token: &str) -> bool {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

/// Whether the caller put body framing headers on a head the machine frames itself.
fn has_framing_headers(headers: &HeaderMap) -> bool {
    headers.contains_key(header::CONTENT_LENGTH) || headers.contains_key(header::TRANSFER_ENCODING)
}

#[cfg(test)]
mod tests;
