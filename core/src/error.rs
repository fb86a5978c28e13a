//! Errors, split by blame (STYLE rule 9), and the one place JSON-RPC codes are chosen.
//!
//! | Kind | Door |
//! |---|---|
//! | [`UsageError`] (the caller did something wrong) | `Err` from command methods |
//! | [`ProtocolViolation`] (the peer misbehaved) | an `Event::Violation` |
//! | [`RequestError`] (one request failed) | inside `Event::Response` |
//! | [`CloseReason`] (the session is over) | exactly one `Event::Closed` |
//! | [`Rejection`] (we refuse a peer's request) | a JSON-RPC error response, via [`Rejection::to_jsonrpc`] |

use std::fmt;

use http::{Method, StatusCode};
use serde_json::json;

use crate::framing::lines::LineViolation;
use crate::framing::sse::SseViolation;
use crate::io::TransportFailure;
use crate::jsonrpc::{codes, DecodeError, ErrorObject, RequestId};

/// The caller used a machine wrongly. Nothing was sent.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UsageError {
    /// The session is closed.
    Closed,
    /// The method needs a server (or client) capability the peer did not declare (strict mode).
    CapabilityNotNegotiated {
        /// The method.
        method: String,
        /// The capability, e.g. `"tools"`.
        capability: &'static str,
    },
    /// A configuration value cannot be used (a relative URL, a token that is not a valid
    /// header value, …); says which and why.
    InvalidConfig(String),
    /// The method does not exist in the negotiated revision.
    MethodNotInVersion {
        /// The method.
        method: String,
        /// The negotiated revision.
        version: &'static str,
    },
    /// Requests other than `ping` wait until the handshake is done.
    NotReady,
    /// A response for a request id that is not awaiting one.
    UnknownRequest(RequestId),
    /// The configured limit on requests in flight is reached.
    TooManyInFlight {
        /// The limit.
        limit: usize,
    },
    /// Params for a request or notification must be a JSON object.
    ParamsNotAnObject,
    /// Progress must increase from one report to the next (and be finite).
    ProgressNotIncreasing,
    /// The item is not registered.
    NotRegistered(String),
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Closed => f.write_str("the session is closed"),
            Self::CapabilityNotNegotiated { method, capability } => {
                write!(f, "{method} needs the peer's {capability} capability")
            }
            Self::InvalidConfig(why) => write!(f, "invalid configuration: {why}"),
            Self::MethodNotInVersion { method, version } => {
                write!(f, "{method} does not exist in revision {version}")
            }
            Self::NotReady => f.write_str("the handshake is not finished"),
            Self::UnknownRequest(id) => write!(f, "no request {id} awaits a response"),
            Self::TooManyInFlight { limit } => write!(f, "{limit} requests already in flight"),
            Self::ParamsNotAnObject => f.write_str("params must be a JSON object"),
            Self::ProgressNotIncreasing => f.write_str("progress must increase with each report"),
            Self::NotRegistered(name) => write!(f, "{name} is not registered"),
        }
    }
}

impl std::error::Error for UsageError {}

/// The peer did something the protocol does not allow. Reported as an event; the session goes
/// on unless a [`CloseReason`] follows.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProtocolViolation {
    /// A batch where the negotiated revision has none.
    BatchNotAllowed,
    /// A frame that is not a JSON-RPC message.
    Decode(DecodeError),
    /// A request whose id is already in flight from the same peer.
    DuplicateRequestId(RequestId),
    /// The server answered an HTTP request with an error status where no request of ours can
    /// carry the failure (a notification's or a reply's POST, the standalone GET stream).
    HttpStatus {
        /// The HTTP method of the refused request.
        method: Method,
        /// The status.
        status: StatusCode,
    },
    /// The `initialize` result could not be read.
    InvalidInitializeResult(String),
    /// An `Mcp-Session-Id` that is not visible ASCII (0x21 to 0x7E); it was ignored.
    InvalidSessionId,
    /// A notification whose params do not fit its method.
    InvalidNotification {
        /// The method.
        method: String,
        /// What was wrong.
        detail: String,
    },
    /// A stdio line that is not JSON, or too long.
    Line(LineViolation),
    /// An SSE event was discarded (too large).
    Sse(SseViolation),
    /// A request that the lifecycle does not allow now.
    OutOfOrder {
        /// The method.
        method: String,
        /// The phase we were in.
        phase: &'static str,
    },
    /// A response whose id matches no request we sent (or sent and abandoned long ago).
    UnknownResponseId(Option<RequestId>),
    /// An answer to a POSTed request that is neither `application/json` nor
    /// `text/event-stream` (the content type as sent, empty when there was none).
    UnexpectedContentType(String),
    /// The server answered `initialize` with a revision this client does not support.
    UnsupportedVersion(String),
}

impl fmt::Display for ProtocolViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BatchNotAllowed => f.write_str("batch not allowed in this revision"),
            Self::Decode(e) => write!(f, "{e}"),
            Self::DuplicateRequestId(id) => write!(f, "request id {id} is already in flight"),
            Self::HttpStatus { method, status } => {
                write!(f, "the server answered a {method} with http status {status}")
            }
            Self::InvalidSessionId => f.write_str("session id is not visible ascii"),
            Self::InvalidInitializeResult(d) => write!(f, "invalid initialize result: {d}"),
            Self::InvalidNotification { method, detail } => {
                write!(f, "invalid {method} notification: {detail}")
            }
            Self::Line(v) => write!(f, "{v}"),
            Self::OutOfOrder { method, phase } => write!(f, "{method} not allowed while {phase}"),
            Self::Sse(v) => write!(f, "{v}"),
            Self::UnknownResponseId(Some(id)) => write!(f, "response for unknown request id {id}"),
            Self::UnknownResponseId(None) => f.write_str("error response without an id"),
            Self::UnexpectedContentType(t) => write!(f, "unexpected content type {t:?}"),
            Self::UnsupportedVersion(v) => write!(f, "unsupported protocol version {v:?}"),
        }
    }
}

/// Why one request ended without a result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RequestError {
    /// We cancelled it (`notifications/cancelled` was sent).
    Cancelled,
    /// The session closed before a response came.
    Closed(CloseReason),
    /// The server refused the HTTP request that carried this request (Streamable HTTP or
    /// legacy HTTP+SSE). On 401 or 403 `www_authenticate` holds the challenge, for OAuth.
    HttpStatus {
        /// The status.
        status: StatusCode,
        /// The `WWW-Authenticate` header, when the server sent one.
        www_authenticate: Option<String>,
    },
    /// The result arrived but does not fit the method's result type.
    InvalidResult(String),
    /// The peer answered with a JSON-RPC error.
    Remote(ErrorObject),
    /// The server ended the HTTP session (404 to a request that carried its session id) before
    /// the response came; also the outcome of requests issued while the client re-initializes.
    SessionExpired,
    /// The HTTP answer that was to carry the response ended without it and could not be
    /// resumed (no event id to resume from, or every resumption attempt failed).
    /// `notifications/cancelled` was sent.
    StreamLost,
    /// No response before the deadline (`notifications/cancelled` was sent).
    TimedOut,
    /// The HTTP exchange carrying the request failed before any resumable part of its answer
    /// arrived. `notifications/cancelled` was sent.
    Transport(TransportFailure),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cancelled => f.write_str("request cancelled"),
            Self::Closed(reason) => write!(f, "session closed: {reason}"),
            Self::HttpStatus { status, .. } => write!(f, "refused with http status {status}"),
            Self::InvalidResult(d) => write!(f, "invalid result: {d}"),
            Self::Remote(e) => write!(f, "peer error: {e}"),
            Self::SessionExpired => f.write_str("the server ended the session"),
            Self::StreamLost => f.write_str("the response stream ended without the response"),
            Self::TimedOut => f.write_str("request timed out"),
            Self::Transport(why) => write!(f, "transport failed: {why}"),
        }
    }
}

impl std::error::Error for RequestError {}

/// Why a session ended. Reported exactly once, in `Event::Closed`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The legacy HTTP+SSE server's `endpoint` event named a URI on another origin (scheme,
    /// host or port) than its SSE URL; posting there could leak messages and credentials.
    EndpointCrossOrigin(String),
    /// The legacy HTTP+SSE server's `endpoint` event held no usable URI.
    EndpointInvalid(String),
    /// The server refused the session's HTTP request with this status: `initialize` (after
    /// back-compat detection, where it applies) or the legacy SSE stream. 401 and 403 never
    /// fall back to legacy HTTP+SSE; `www_authenticate` holds the challenge, for OAuth.
    HttpStatus {
        /// The status.
        status: StatusCode,
        /// The `WWW-Authenticate` header, when the server sent one.
        www_authenticate: Option<String>,
    },
    /// `initialize` failed with a JSON-RPC error.
    InitializeRejected(ErrorObject),
    /// `initialize` got no answer in time.
    InitializeTimedOut,
    /// The `initialize` result was unusable (bad shape or unsupported revision).
    InitializeInvalid(String),
    /// The local side called `close`.
    Local,
    /// The server ended the HTTP session (404) and re-initializing is off, or failed again at
    /// once.
    SessionExpired,
    /// The peer closed its end (EOF on stdio).
    TransportEnded,
    /// The transport failed (process died, pipe broke).
    TransportFailed(TransportFailure),
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EndpointCrossOrigin(uri) => {
                write!(f, "legacy endpoint {uri} is on another origin than the sse url")
            }
            Self::EndpointInvalid(uri) => write!(f, "legacy endpoint {uri:?} is not a usable uri"),
            Self::HttpStatus { status, .. } => {
                write!(f, "the server answered with http status {status}")
            }
            Self::InitializeRejected(e) => write!(f, "initialize rejected: {e}"),
            Self::InitializeTimedOut => f.write_str("initialize timed out"),
            Self::InitializeInvalid(d) => write!(f, "initialize result unusable: {d}"),
            Self::Local => f.write_str("closed locally"),
            Self::SessionExpired => f.write_str("the server ended the session"),
            Self::TransportEnded => f.write_str("the peer closed the connection"),
            Self::TransportFailed(d) => write!(f, "transport failed: {d}"),
        }
    }
}

/// Why we refuse a peer's request. [`Rejection::to_jsonrpc`] is the only place in zest that
/// picks a JSON-RPC error code for an error we send.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Rejection {
    /// The frame could not be decoded.
    Decode(DecodeError),
    /// A batch where the negotiated revision has none.
    BatchNotAllowed,
    /// `initialize` inside a batch.
    InitializeInBatch,
    /// The request id is already in flight.
    DuplicateRequestId,
    /// A second `initialize`.
    AlreadyInitialized,
    /// A request other than `initialize`/`ping` before `initialize`.
    NotInitialized,
    /// A request before `notifications/initialized` (strict mode).
    InitializedNotReceived,
    /// The method is unknown, or belongs to a capability we do not offer.
    MethodNotFound(String),
    /// The params do not fit the method.
    InvalidParams(String),
    /// An unknown tool.
    UnknownTool(String),
    /// An unknown prompt.
    UnknownPrompt(String),
    /// A prompt argument marked required is missing.
    MissingPromptArgument(String),
    /// A cursor we did not issue.
    InvalidCursor,
    /// No resource at that URI.
    ResourceNotFound(String),
    /// Something failed on our side.
    Internal(String),
}

impl Rejection {
    /// The JSON-RPC error object for this rejection.
    pub fn to_jsonrpc(&self) -> ErrorObject {
        use codes::*;
        match self {
            Self::Decode(DecodeError::InvalidUtf8) => {
                ErrorObject::new(PARSE_ERROR, "parse error: invalid UTF-8")
            }
            Self::Decode(DecodeError::Parse { detail }) => {
                ErrorObject::new(PARSE_ERROR, format!("parse error: {detail}"))
            }
            Self::Decode(e) => ErrorObject::new(INVALID_REQUEST, e.to_string()),
            Self::BatchNotAllowed => {
                ErrorObject::new(INVALID_REQUEST, "batches are not allowed in this revision")
            }
            Self::InitializeInBatch => {
                ErrorObject::new(INVALID_REQUEST, "initialize must not be part of a batch")
            }
            Self::DuplicateRequestId => {
                ErrorObject::new(INVALID_REQUEST, "request id is already in flight")
            }
            Self::AlreadyInitialized => ErrorObject::new(INVALID_REQUEST, "already initialized"),
            Self::NotInitialized => {
                ErrorObject::new(INVALID_REQUEST, "server not initialized: send initialize first")
            }
            Self::InitializedNotReceived => ErrorObject::new(
                INVALID_REQUEST,
                "server not ready: send notifications/initialized first",
            ),
            Self::MethodNotFound(m) => {
                ErrorObject::new(METHOD_NOT_FOUND, format!("method not found: {m}"))
            }
            Self::InvalidParams(d) => {
                ErrorObject::new(INVALID_PARAMS, format!("invalid params: {d}"))
            }
            Self::UnknownTool(name) => {
                ErrorObject::new(INVALID_PARAMS, format!("unknown tool: {name}"))
            }
            Self::UnknownPrompt(name) => {
                ErrorObject::new(INVALID_PARAMS, format!("unknown prompt: {name}"))
            }
            Self::MissingPromptArgument(arg) => {
                ErrorObject::new(INVALID_PARAMS, format!("missing required prompt argument: {arg}"))
            }
            Self::InvalidCursor => ErrorObject::new(INVALID_PARAMS, "invalid cursor"),
            Self::ResourceNotFound(uri) => {
                ErrorObject::new(RESOURCE_NOT_FOUND, format!("resource not found: {uri}"))
                    .with_data(json!({ "uri": uri }))
            }
            Self::Internal(d) => ErrorObject::new(INTERNAL_ERROR, format!("internal error: {d}")),
        }
    }
}
