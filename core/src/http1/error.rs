//! What can go wrong on an HTTP/1.1 connection, split by blame (STYLE rule 9).

use std::fmt;

use http::StatusCode;

/// The peer broke HTTP/1.1, sent too much, or was too slow. Reported as a `Failed` event; the
/// exchange is over and the connection cannot be reused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The body (after chunked decoding) is longer than the configured limit.
    BodyTooLarge {
        /// The configured `max_body_bytes`.
        limit: u64,
    },
    /// The connection ended before a whole head arrived (possibly before any byte of it).
    ClosedBeforeHead,
    /// The connection ended inside a body whose end is marked by its length or its last chunk.
    ClosedInBody,
    /// The head did not arrive in whole before the header-read deadline.
    HeadTimeout,
    /// The head is longer than the configured limit.
    HeadTooLarge {
        /// The configured `max_head_bytes`.
        limit: usize,
    },
    /// The body's framing is broken: a bad chunk size, a missing CRLF, an endless chunk line.
    MalformedBody,
    /// The head cannot be parsed, or frames its body ambiguously (`Transfer-Encoding` with
    /// `Content-Length`, or a last transfer coding other than `chunked`).
    MalformedHead,
    /// A server received more bytes of later requests than it holds while it still answers the
    /// current one.
    PipelineTooLarge {
        /// The configured `max_head_bytes`, which also bounds this buffer.
        limit: usize,
    },
    /// The head has more header lines than ureq-proto parses (128).
    TooManyHeaders {
        /// The number of header lines accepted.
        limit: usize,
    },
    /// A client received bytes while no request was outstanding.
    UnexpectedData,
}

impl Error {
    /// The status a server SHOULD answer with (see `ServerConnection::reject`), or `None` when
    /// no answer can reach the peer.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Self::BodyTooLarge { .. } => Some(StatusCode::PAYLOAD_TOO_LARGE),
            Self::ClosedBeforeHead
            | Self::ClosedInBody
            | Self::PipelineTooLarge { .. }
            | Self::UnexpectedData => None,
            Self::HeadTimeout => Some(StatusCode::REQUEST_TIMEOUT),
            Self::HeadTooLarge { .. } | Self::TooManyHeaders { .. } => {
                Some(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
            }
            Self::MalformedBody | Self::MalformedHead => Some(StatusCode::BAD_REQUEST),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BodyTooLarge { limit } => write!(f, "body longer than {limit} bytes"),
            Self::ClosedBeforeHead => f.write_str("connection closed before a whole head arrived"),
            Self::ClosedInBody => f.write_str("connection closed inside a body"),
            Self::HeadTimeout => f.write_str("head not received before the deadline"),
            Self::HeadTooLarge { limit } => write!(f, "head longer than {limit} bytes"),
            Self::MalformedBody => f.write_str("malformed body framing"),
            Self::MalformedHead => f.write_str("malformed head"),
            Self::PipelineTooLarge { limit } => {
                write!(f, "more than {limit} bytes arrived before the response ended")
            }
            Self::TooManyHeaders { limit } => write!(f, "more than {limit} header lines"),
            Self::UnexpectedData => f.write_str("bytes arrived while no request was outstanding"),
        }
    }
}

impl std::error::Error for Error {}

/// The caller used a connection machine wrongly. Nothing was queued and the machine is
/// unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UsageError {
    /// A body was given where the status or method forbids one (a `HEAD` or `CONNECT`
    /// request; a 1xx, 204 or 304 response).
    BodyNotAllowed,
    /// The previous exchange has not ended (client), or a response is already under way
    /// (server).
    Busy,
    /// The connection is closed, failed, or ended by `Connection: close`.
    Closed,
    /// The head carries `Content-Length` or `Transfer-Encoding`; the machine frames bodies
    /// itself.
    FramingHeader,
    /// ureq-proto refused the head (an unsupported version, a bad header value …).
    InvalidHead {
        /// ureq-proto's explanation.
        reason: String,
    },
    /// A request without a `Host` header whose URI has no authority.
    MissingHost,
    /// A server was asked to respond while no request awaits a response (its head or body
    /// has not ended yet).
    NoRequest,
    /// A server response status below 200: interim and upgrade responses are not supported.
    NotFinal,
    /// `send_data` or `finish` without a streamed response under way.
    NotStreaming,
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BodyNotAllowed => f.write_str("this method or status carries no body"),
            Self::Busy => f.write_str("the previous exchange has not ended"),
            Self::Closed => f.write_str("the connection is closed"),
            Self::FramingHeader => {
                f.write_str("content-length and transfer-encoding are set by the machine")
            }
            Self::InvalidHead { reason } => write!(f, "invalid head: {reason}"),
            Self::MissingHost => f.write_str("request has neither a host header nor a uri host"),
            Self::NoRequest => f.write_str("no request awaits a response"),
            Self::NotFinal => f.write_str("response status must be 200 or above"),
            Self::NotStreaming => f.write_str("no streamed response is under way"),
        }
    }
}

impl std::error::Error for UsageError {}

/// Maps a ureq-proto error met while parsing a peer's head.
pub(super) fn head_error(e: &ureq_proto::Error, max_headers: usize) -> Error {
    match e {
        ureq_proto::Error::HttpParseTooManyHeaders => Error::TooManyHeaders { limit: max_headers },
        _ => Error::MalformedHead,
    }
}

/// Maps a ureq-proto error met while building our own head.
pub(super) fn usage_error(e: ureq_proto::Error) -> UsageError {
    match e {
        ureq_proto::Error::BodyNotAllowed => UsageError::BodyNotAllowed,
        other => UsageError::InvalidHead { reason: other.to_string() },
    }
}
