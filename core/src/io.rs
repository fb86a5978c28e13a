//! The machines' doors: what goes in ([`Input`]) and what comes out ([`Output`]).
//!
//! # Streams and who names them
//!
//! Every input and every transmit names a [`StreamId`]. The rule for who allocates them:
//! **the side that opens a stream names it.**
//!
//! - stdio has one stream, [`StreamId::STDIO`] (0), opened by whoever spawned the process.
//! - A client machine opens HTTP exchanges with [`Transmit::Http`] and names each one from its
//!   own counter (starting at 1); the runtime reports the response on that id
//!   ([`StreamEvent::Head`], then [`StreamEvent::Data`], then [`StreamEvent::End`] or
//!   [`StreamEvent::Failed`]).
//! - A server runtime names each HTTP exchange a peer opens ([`StreamEvent::Accept`]) with any
//!   id not in use on that machine (not 0), and never reuses an id while its exchange is open;
//!   the machine answers on the same id with [`Transmit::Respond`], [`Transmit::Write`] and
//!   [`Transmit::Close`].
//!
//! A machine therefore only ever sees ids it allocated (client side) or ids its runtime
//! allocated (server side), and the two never mix.

use std::fmt;
use std::time::Instant;

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode, Uri};

/// Names one byte stream of a connection. The runtime echoes it back with what it reads.
///
/// See the [module docs](self) for who allocates ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u64);

impl StreamId {
    /// The single stream of a stdio connection.
    pub const STDIO: Self = Self(0);
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stream {}", self.0)
    }
}

/// One thing that happened to a machine.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Input<'a> {
    /// Something arrived on a stream.
    Receive(Instant, Receive<'a>),
    /// Time passed. Harmless when early.
    Timeout(Instant),
}

/// Something that arrived on a stream.
#[derive(Clone, Debug)]
pub struct Receive<'a> {
    /// The stream, named as the [module docs](self) say.
    pub stream: StreamId,
    /// What happened.
    pub event: StreamEvent<'a>,
}

/// What happened on a stream.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum StreamEvent<'a> {
    /// Server side: a peer opened a new exchange with this request head. Its body follows as
    /// [`Data`](Self::Data), then [`End`](Self::End).
    Accept(Box<RequestHead>),
    /// Bytes, in any chunking (a stdio pipe, or an HTTP body as it arrives).
    Data(&'a [u8]),
    /// The peer closed the stream cleanly (EOF, or the end of an HTTP body).
    End,
    /// The stream broke; nothing more arrives on it.
    Failed(TransportFailure),
    /// Client side: the response head of an exchange opened with [`Transmit::Http`]. Its body
    /// follows as [`Data`](Self::Data), then [`End`](Self::End).
    Head(Box<ResponseHead>),
}

/// Why a stream broke, as far as the runtime can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportFailure {
    /// Nothing accepted the connection (refused, unreachable, name not resolved).
    Refused(String),
    /// The connection broke after it was made.
    Reset(String),
    /// The runtime's connect or read deadline passed.
    TimedOut,
    /// The TLS handshake or a TLS record failed (bad certificate, wrong name, …).
    Tls(String),
    /// A head or body was larger than the configured limit.
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The bytes were not valid HTTP, or the process pipe failed in another way.
    Other(String),
    /// The runtime cannot perform this kind of [`Transmit`] (named by [`Transmit::kind`]) on
    /// this connection.
    Unsupported(&'static str),
}

impl fmt::Display for TransportFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused(why) => write!(f, "connection refused: {why}"),
            Self::Reset(why) => write!(f, "connection reset: {why}"),
            Self::TimedOut => f.write_str("transport timed out"),
            Self::Tls(why) => write!(f, "tls failed: {why}"),
            Self::TooLarge { limit } => write!(f, "message larger than the {limit}-byte limit"),
            Self::Other(why) => f.write_str(why),
            Self::Unsupported(kind) => write!(f, "{kind} is not supported on this transport"),
        }
    }
}

/// The head of an HTTP request a peer sent (server side).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestHead {
    /// `GET`, `POST`, `DELETE`, …
    pub method: Method,
    /// The request target as sent (path and query; absolute form is accepted too).
    pub uri: Uri,
    /// The header fields.
    pub headers: HeaderMap,
}

/// The head of an HTTP response (client side: received; server side: to send).
#[derive(Clone, Debug, PartialEq)]
pub struct ResponseHead {
    /// The status code.
    pub status: StatusCode,
    /// The header fields. The runtime's HTTP layer adds framing headers (`Content-Length` or
    /// `Transfer-Encoding`) itself.
    pub headers: HeaderMap,
}

/// Whether `headers` label the body an event stream (`Content-Type: text/event-stream`,
/// parameters allowed, case ignored).
pub fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"))
}

/// An HTTP request for the runtime to perform (client side).
#[derive(Clone, Debug, PartialEq)]
pub struct HttpRequest {
    /// `GET`, `POST`, `DELETE`.
    pub method: Method,
    /// The absolute URL.
    pub uri: Uri,
    /// The header fields to send (the runtime adds `Host`, `Content-Length` and framing).
    pub headers: HeaderMap,
    /// The whole body; empty for `GET` and `DELETE`.
    pub body: Bytes,
}

/// Something the runtime must do.
///
/// Exhaustive on purpose: a runtime matches every variant by name, so a new kind of effect is
/// a compile error in every runtime rather than an effect dropped without a word. A runtime
/// that cannot perform one on a given connection (an HTTP request on a stdio pipe) fails that
/// session with [`TransportFailure::Unsupported`].
#[must_use]
#[derive(Clone, Debug, PartialEq)]
pub enum Transmit {
    /// Drop the stream at once, without finishing it (cancel an HTTP exchange, close an SSE
    /// stream the machine no longer wants). Nothing more is reported for it.
    Abort {
        /// Which.
        stream: StreamId,
    },
    /// Finish writing and close the stream (on stdio: close the child's stdin; on an accepted
    /// HTTP exchange: end the response body).
    Close {
        /// Which.
        stream: StreamId,
    },
    /// Client side: open a new HTTP exchange named `stream` and report its response on it.
    Http {
        /// The new stream's id, allocated by the machine.
        stream: StreamId,
        /// What to send.
        request: Box<HttpRequest>,
    },
    /// Server side: send the response head on an accepted exchange. Its body follows as
    /// [`Write`](Self::Write)s and ends with [`Close`](Self::Close).
    Respond {
        /// The accepted exchange.
        stream: StreamId,
        /// Status and header fields.
        head: Box<ResponseHead>,
    },
    /// Write the bytes, in order, to the stream.
    Write {
        /// Where.
        stream: StreamId,
        /// What; a whole frame (a stdio line, an SSE event, a JSON body).
        bytes: Bytes,
    },
}

/// What a stdio runtime can do: the two transmits a pipe supports.
#[must_use]
#[derive(Clone, Debug, PartialEq)]
pub enum StdioTransmit {
    /// Close our writing side (the child's stdin, or our stdout).
    Close,
    /// Write these bytes (whole lines).
    Write(Bytes),
}

/// What an HTTP client does with a [`Transmit`] ([`Transmit::into_http_client`]).
#[must_use]
#[derive(Clone, Debug, PartialEq)]
pub enum HttpClientTransmit {
    /// Perform `request` as exchange `stream` and report its response on it.
    Open {
        /// The exchange.
        stream: StreamId,
        /// What to send.
        request: Box<HttpRequest>,
    },
    /// Stop exchange `stream`: close its connection, report nothing more.
    Abort {
        /// The exchange.
        stream: StreamId,
    },
}

impl Transmit {
    /// The stream it acts on.
    pub fn stream(&self) -> StreamId {
        match self {
            Self::Abort { stream }
            | Self::Close { stream }
            | Self::Http { stream, .. }
            | Self::Respond { stream, .. }
            | Self::Write { stream, .. } => *stream,
        }
    }

    /// Narrows this transmit to what a stdio pipe can do. `Err` names why not; a runtime
    /// feeds it back as [`StreamEvent::Failed`] once it has drained the outputs, which ends
    /// the session with that reason.
    pub fn into_stdio(self) -> Result<StdioTransmit, TransportFailure> {
        match self {
            Self::Close { .. } => Ok(StdioTransmit::Close),
            Self::Write { bytes, .. } => Ok(StdioTransmit::Write(bytes)),
            Self::Abort { .. } | Self::Http { .. } | Self::Respond { .. } => {
                Err(TransportFailure::Unsupported(self.kind()))
            }
        }
    }

    /// Narrows this transmit to what an HTTP client performs: open an exchange, or abort
    /// one. `Err` names why not; a runtime hands it to the client's
    /// [`fail`](crate::client::Client::fail) once it has drained the outputs.
    pub fn into_http_client(self) -> Result<HttpClientTransmit, TransportFailure> {
        match self {
            Self::Http { stream, request } => Ok(HttpClientTransmit::Open { stream, request }),
            Self::Abort { stream } => Ok(HttpClientTransmit::Abort { stream }),
            Self::Close { .. } | Self::Write { .. } | Self::Respond { .. } => {
                Err(TransportFailure::Unsupported(self.kind()))
            }
        }
    }

    /// A short name for the variant, for "this runtime does not support …" errors.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Abort { .. } => "abort",
            Self::Close { .. } => "close",
            Self::Http { .. } => "http request",
            Self::Respond { .. } => "http response",
            Self::Write { .. } => "write",
        }
    }
}

/// One output of a machine: an effect to perform or an event to handle.
///
/// Exhaustive on purpose: these are the only two doors out. What may grow is inside them
/// ([`Transmit`] and each machine's event type are `#[non_exhaustive]`).
#[must_use]
#[derive(Clone, Debug, PartialEq)]
pub enum Output<E> {
    /// An effect for the runtime.
    Transmit(Transmit),
    /// Something for the application.
    Event(E),
}

impl Input<'_> {
    /// The time carried by this input.
    pub fn now(&self) -> Instant {
        match self {
            Self::Receive(now, _) | Self::Timeout(now) => *now,
        }
    }
}

/// Shorthand for `Input::Receive(now, Receive { stream, event: StreamEvent::Data(bytes) })`.
pub fn data(now: Instant, stream: StreamId, bytes: &[u8]) -> Input<'_> {
    Input::Receive(now, Receive { stream, event: StreamEvent::Data(bytes) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_carries_writes_and_closes_and_names_what_it_cannot() {
        let bytes = Bytes::from_static(b"{}\n");
        let write = Transmit::Write { stream: StreamId::STDIO, bytes: bytes.clone() };
        assert_eq!(write.into_stdio(), Ok(StdioTransmit::Write(bytes)));
        assert_eq!(
            Transmit::Close { stream: StreamId::STDIO }.into_stdio(),
            Ok(StdioTransmit::Close)
        );
        let request = HttpRequest {
            method: Method::GET,
            uri: Uri::from_static("http://127.0.0.1/mcp"),
            headers: HeaderMap::new(),
            body: Bytes::new(),
        };
        let http = Transmit::Http { stream: StreamId(1), request: Box::new(request) };
        let failure = http.into_stdio().unwrap_err();
        assert_eq!(failure, TransportFailure::Unsupported("http request"));
        assert_eq!(failure.to_string(), "http request is not supported on this transport");
        let abort = Transmit::Abort { stream: StreamId(1) }.into_stdio();
        assert_eq!(abort, Err(TransportFailure::Unsupported("abort")));
    }

    #[test]
    fn an_http_client_opens_and_aborts_exchanges_and_names_what_it_cannot() {
        let request = HttpRequest {
            method: Method::POST,
            uri: Uri::from_static("http://127.0.0.1/mcp"),
            headers: HeaderMap::new(),
            body: Bytes::new(),
        };
        let open = Transmit::Http { stream: StreamId(2), request: Box::new(request.clone()) };
        let request = Box::new(request);
        assert_eq!(
            open.into_http_client(),
            Ok(HttpClientTransmit::Open { stream: StreamId(2), request })
        );
        let abort = Transmit::Abort { stream: StreamId(2) }.into_http_client();
        assert_eq!(abort, Ok(HttpClientTransmit::Abort { stream: StreamId(2) }));
        let write = Transmit::Write { stream: StreamId(2), bytes: Bytes::new() };
        assert_eq!(write.into_http_client(), Err(TransportFailure::Unsupported("write")));
        let close = Transmit::Close { stream: StreamId(2) }.into_http_client();
        assert_eq!(close, Err(TransportFailure::Unsupported("close")));
    }
}
