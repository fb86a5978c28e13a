//! Errors, split by blame (STYLE rule 9), and the one place JSON-RPC codes and HTTP statuses
//! are chosen.
//!
//! | Kind | Door |
//! |---|---|
//! | [`UsageError`] (the caller did something wrong) | `Err` from command methods |
//! | [`ProtocolViolation`] (the peer misbehaved) | an `Event::Violation` |
//! | [`RequestError`] (one request failed) | inside `Event::Response` |
//! | [`CloseReason`] (the session is over) | exactly one `Event::Closed` |
//! | [`Rejection`] (we refuse a peer's request) | an error response, via [`Rejection::to_wire`] |

use std::fmt;

use http::{Method, StatusCode};
use serde_json::json;

use crate::auth::AuthError;
use crate::framing::lines::LineViolation;
use crate::framing::sse::SseViolation;
use crate::io::TransportFailure;
use crate::jsonrpc::{codes, DecodeError, ErrorObject, RequestId};
use crate::schema::{ClientCapabilities, ElicitUrlParams, ProtocolVersion};
use crate::transport::TransportKind;

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
    /// The configured limit on requests in flight is reached and 64 times as many already
    /// wait for a slot (requests past the limit are held, not refused, until then).
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
    /// 2026-07-28: this run of the handler asked the client for input under `key` that the
    /// call does not carry yet. Return the error (`?`): the call is answered with an
    /// input-required result, whatever the run returns, and the client's retry runs the
    /// handler again with the answer in hand.
    InputRequired {
        /// The key the client answers under.
        key: String,
    },
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
            Self::TooManyInFlight { limit } => {
                write!(f, "{limit} requests already in flight and 64 times as many waiting")
            }
            Self::ParamsNotAnObject => f.write_str("params must be a JSON object"),
            Self::ProgressNotIncreasing => f.write_str("progress must increase with each report"),
            Self::NotRegistered(name) => write!(f, "{name} is not registered"),
            Self::InputRequired { key } => {
                write!(f, "input {key} is asked of the client: this run of the handler ends")
            }
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
    /// The server asked for authorization and the OAuth flow failed (the request was never
    /// answered): see [`AuthError::kind`](crate::auth::AuthError::kind).
    Auth(AuthError),
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
    /// A `tools/call` result broke the `outputSchema` the server listed for the tool: no
    /// `structuredContent`, or content that does not match. `isError` results are not checked.
    OutputSchemaMismatch {
        /// The tool called.
        tool: String,
        /// The first few problems, each with its JSON-pointer path.
        problems: Vec<String>,
    },
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
    /// The response was larger than the client's `max_message` (a stdio line, a JSON body,
    /// an SSE event) and was dropped; the request is over.
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The HTTP exchange carrying the request failed before any resumable part of its answer
    /// arrived. `notifications/cancelled` was sent.
    Transport(TransportFailure),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auth(e) => write!(f, "{e}"),
            Self::Cancelled => f.write_str("request cancelled"),
            Self::Closed(reason) => write!(f, "session closed: {reason}"),
            Self::HttpStatus { status, .. } => write!(f, "refused with http status {status}"),
            Self::InvalidResult(d) => write!(f, "invalid result: {d}"),
            Self::OutputSchemaMismatch { tool, problems } => write!(
                f,
                "tool {tool:?} answered outside its outputSchema: {}",
                problems.join("; ")
            ),
            Self::Remote(e) => write!(f, "peer error: {e}"),
            Self::SessionExpired => f.write_str("the server ended the session"),
            Self::StreamLost => f.write_str("the response stream ended without the response"),
            Self::TimedOut => f.write_str("request timed out"),
            Self::TooLarge { limit } => write!(f, "response exceeds the {limit}-byte limit"),
            Self::Transport(why) => write!(f, "transport failed: {why}"),
        }
    }
}

impl std::error::Error for RequestError {}

impl RequestError {
    /// The URL-mode elicitations a `URLElicitationRequiredError` (-32042, 2025-11-25) lists:
    /// the server needs the user to complete them before this request can succeed. Show each
    /// URL in full and open it only with the user's consent; retry the request once the
    /// server says `notifications/elicitation/complete` for them (or the user asks to).
    /// `None` for any other outcome, or when the error's `data.elicitations` is malformed.
    pub fn url_elicitations(&self) -> Option<Vec<ElicitUrlParams>> {
        let Self::Remote(e) = self else { return None };
        if e.code != codes::URL_ELICITATION_REQUIRED {
            return None;
        }
        let list = e.data.as_ref()?.get("elicitations")?.clone();
        serde_json::from_value(list).ok()
    }
}

/// Why a session ended. Reported exactly once, in `Event::Closed`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The server asked for authorization before the handshake, and the OAuth flow failed.
    Auth(AuthError),
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
            Self::Auth(e) => write!(f, "{e}"),
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

/// Why we refuse a peer's request. [`Rejection::to_wire`] is the only place in zest that picks
/// a JSON-RPC error code, or an HTTP status, for an error we send.
///
/// The first group refuses one JSON-RPC message; the second refuses an HTTP request before
/// any message in it is looked at (its statuses are fixed by the transport, and its error
/// body, which the spec makes optional, has no id); the third is specific to 2026-07-28.
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
    /// The user (or the app's policy on their behalf) refused the request, e.g. sampling.
    UserRejected(String),
    /// A stdio line longer than the configured limit, answered with the id read from its
    /// first bytes.
    MessageTooLarge {
        /// The limit in bytes.
        limit: usize,
    },

    /// HTTP: a `Host` header naming a host we do not serve (DNS rebinding guard), or none.
    ForbiddenHost,
    /// HTTP: an `Origin` header naming a site we do not serve (DNS rebinding guard).
    ForbiddenOrigin,
    /// HTTP: the server wants a bearer token ([`RouterConfig::bearer_token`]) and the
    /// request carried none (`invalid_token` false) or another one (true).
    ///
    /// [`RouterConfig::bearer_token`]: crate::http::server::RouterConfig::bearer_token
    Unauthorized {
        /// A token came, and it is not the one.
        invalid_token: bool,
    },
    /// HTTP: the body is larger than the configured limit.
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// HTTP: the session already has its standalone GET stream open.
    StreamConflict,
    /// HTTP: the server holds as many sessions as it may.
    TooManySessions,
    /// HTTP: the store a fleet of servers shares sessions through did not answer (the
    /// detail says why). Nothing was done; the request may be sent again.
    StoreUnavailable(String),
    /// HTTP: the `Accept` header does not list the media types the transport needs.
    NotAcceptable,
    /// HTTP: the body is not `application/json`.
    UnsupportedMediaType,
    /// HTTP: a method (GET, DELETE) this endpoint does not serve.
    HttpMethodNotAllowed,
    /// HTTP: a request other than `initialize` without the session header, where the server
    /// requires sessions.
    MissingSession,
    /// HTTP: a session id we never issued, or one that has ended; the client must start a new
    /// session.
    UnknownSession,
    /// A protocol version we do not support: the `MCP-Protocol-Version` header over HTTP, or
    /// (2026-07-28) the revision in the request's `_meta`.
    UnsupportedProtocolVersion {
        /// The version the peer asked for, as sent.
        requested: String,
        /// The versions we support, as wire strings.
        supported: Vec<String>,
    },

    /// 2026-07-28: an HTTP header disagrees with the body, or a required one is missing.
    HeaderMismatch {
        /// The header, e.g. `"Mcp-Method"`.
        header: String,
    },
    /// 2026-07-28: the request lacks a client capability the server needs to serve it.
    MissingRequiredClientCapability {
        /// The capabilities needed.
        required: Box<ClientCapabilities>,
    },
    /// 2026-07-28: a required `_meta` field of the request is missing or cannot be read.
    MissingRequestMeta {
        /// The `_meta` key.
        key: String,
    },
}

/// A rejection as it goes on the wire: the JSON-RPC error object, and over HTTP the status of
/// the response that carries it. Made by [`Rejection::to_wire`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct WireRejection {
    /// The error object; its response echoes the request's id when there is one.
    pub error: ErrorObject,
    /// The HTTP status to answer the POST (or GET, DELETE) with; `None` over stdio.
    ///
    /// Over Streamable HTTP a JSON-RPC error answering a request that was accepted travels
    /// with 200, like a result; refusals of the HTTP request itself have their own 4xx. Over
    /// the legacy HTTP+SSE transport the error travels on the SSE stream and the POST gets
    /// 202, unless the POST itself is refused.
    pub http_status: Option<u16>,
}

/// How one rejection answers over HTTP.
enum Answer {
    /// A JSON-RPC error answering an accepted request: 200 (legacy SSE: 202, on the stream).
    InBand,
    /// Streamable HTTP 2026-07-28 answers with this status; earlier revisions in band.
    Stateless(u16),
    /// The HTTP request is refused with this status.
    Refused(u16),
}

impl Rejection {
    /// The one mapping of rejections to JSON-RPC codes and HTTP statuses
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>,
    /// <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports>), for the
    /// revision and transport of the session.
    ///
    /// `version` is the negotiated revision or, before one is agreed, the one the request
    /// claims (over HTTP, its `MCP-Protocol-Version` header, or 2025-03-26 when it has none).
    ///
    /// | Rejection | JSON-RPC code | Streamable HTTP status |
    /// |---|---|---|
    /// | `Decode` | -32700 (not JSON), else -32600 | 400 |
    /// | `BatchNotAllowed`, `InitializeInBatch` | -32600 | 400 |
    /// | `AlreadyInitialized`, `NotInitialized`, `InitializedNotReceived` | -32600 | 400 |
    /// | `DuplicateRequestId` | -32600 | 200 |
    /// | `MethodNotFound` | -32601 | 200; 404 in 2026-07-28 |
    /// | `InvalidParams`, `InvalidCursor` | -32602 | 200 |
    /// | `UnknownTool`, `UnknownPrompt`, `MissingPromptArgument` | -32602 | 200 |
    /// | `ResourceNotFound` | -32002; -32602 in 2026-07-28 | 200 |
    /// | `Internal` | -32603 | 200 |
    /// | `UserRejected` | -1 | 200 |
    /// | `MessageTooLarge` (stdio only) | -32600 | 200 |
    /// | `ForbiddenOrigin`, `ForbiddenHost` | -32600 | 403 |
    /// | `Unauthorized` | -32600 | 401 |
    /// | `StreamConflict` | -32600 | 409 |
    /// | `PayloadTooLarge` | -32600 | 413 |
    /// | `TooManySessions` | -32603 | 503 |
    /// | `StoreUnavailable` | -32603 | 503 |
    /// | `NotAcceptable` | -32600 | 406 |
    /// | `UnsupportedMediaType` | -32600 | 415 |
    /// | `HttpMethodNotAllowed` | -32600 | 405 |
    /// | `MissingSession` | -32600 | 400 |
    /// | `UnknownSession` | -32600 | 404 |
    /// | `UnsupportedProtocolVersion` | -32602; -32022 in 2026-07-28 | 400 |
    /// | `HeaderMismatch` | -32600; -32020 in 2026-07-28 | 400 |
    /// | `MissingRequiredClientCapability` | -32600; -32021 in 2026-07-28 | 400 |
    /// | `MissingRequestMeta` | -32602 | 400 |
    ///
    /// Over stdio there is no status. Over legacy HTTP+SSE the 200 rows become 202 (the error
    /// goes on the SSE stream), and so do the three lifecycle rows, which that transport
    /// cannot refuse at the HTTP level once the POST is read.
    pub fn to_wire(&self, version: ProtocolVersion, transport: TransportKind) -> WireRejection {
        let error = self.error_object(version.is_stateless());
        let http_status = match (transport, self.answer()) {
            (TransportKind::Stdio, _) => None,
            (TransportKind::LegacySse, Answer::Refused(status)) => {
                Some(if self.is_lifecycle() { 202 } else { status })
            }
            (TransportKind::LegacySse, _) => Some(202),
            (_, Answer::Refused(status)) => Some(status),
            (_, Answer::Stateless(status)) if version.is_stateless() => Some(status),
            (_, Answer::InBand | Answer::Stateless(_)) => Some(200),
        };
        WireRejection { error, http_status }
    }

    /// The JSON-RPC error object for this rejection in a session-era revision, as
    /// [`to_wire`](Self::to_wire) gives it. The code does not depend on the transport.
    pub fn to_jsonrpc(&self) -> ErrorObject {
        self.to_wire(ProtocolVersion::LATEST_SESSION, TransportKind::Stdio).error
    }

    fn is_lifecycle(&self) -> bool {
        matches!(
            self,
            Self::AlreadyInitialized | Self::NotInitialized | Self::InitializedNotReceived
        )
    }

    /// The status column of [`to_wire`](Self::to_wire).
    fn answer(&self) -> Answer {
        match self {
            Self::DuplicateRequestId
            | Self::InvalidParams(_)
            | Self::UnknownTool(_)
            | Self::UnknownPrompt(_)
            | Self::MissingPromptArgument(_)
            | Self::InvalidCursor
            | Self::ResourceNotFound(_)
            | Self::Internal(_)
            | Self::UserRejected(_)
            | Self::MessageTooLarge { .. } => Answer::InBand,
            // 2026-07-28: an unknown method gets 404, which the body tells apart from a
            // legacy server's 404
            // (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports).
            Self::MethodNotFound(_) => Answer::Stateless(404),
            Self::ForbiddenOrigin | Self::ForbiddenHost => Answer::Refused(403),
            Self::Unauthorized { .. } => Answer::Refused(401),
            Self::StreamConflict => Answer::Refused(409),
            Self::PayloadTooLarge { .. } => Answer::Refused(413),
            Self::TooManySessions | Self::StoreUnavailable(_) => Answer::Refused(503),
            Self::UnknownSession => Answer::Refused(404),
            Self::HttpMethodNotAllowed => Answer::Refused(405),
            Self::NotAcceptable => Answer::Refused(406),
            Self::UnsupportedMediaType => Answer::Refused(415),
            Self::Decode(_)
            | Self::BatchNotAllowed
            | Self::InitializeInBatch
            | Self::AlreadyInitialized
            | Self::NotInitialized
            | Self::InitializedNotReceived
            | Self::MissingSession
            | Self::UnsupportedProtocolVersion { .. }
            | Self::HeaderMismatch { .. }
            | Self::MissingRequiredClientCapability { .. }
            | Self::MissingRequestMeta { .. } => Answer::Refused(400),
        }
    }

    /// The code column of [`to_wire`](Self::to_wire), with message and data.
    fn error_object(&self, modern: bool) -> ErrorObject {
        use codes::*;
        let (code, message) = match self {
            Self::Decode(DecodeError::InvalidUtf8) => {
                (PARSE_ERROR, "parse error: invalid UTF-8".to_owned())
            }
            Self::Decode(DecodeError::Parse { detail }) => {
                (PARSE_ERROR, format!("parse error: {detail}"))
            }
            Self::Decode(e) => (INVALID_REQUEST, e.to_string()),
            Self::BatchNotAllowed => {
                (INVALID_REQUEST, "batches are not allowed in this revision".to_owned())
            }
            Self::InitializeInBatch => {
                (INVALID_REQUEST, "initialize must not be part of a batch".to_owned())
            }
            Self::DuplicateRequestId => {
                (INVALID_REQUEST, "request id is already in flight".to_owned())
            }
            Self::AlreadyInitialized => (INVALID_REQUEST, "already initialized".to_owned()),
            Self::NotInitialized => {
                (INVALID_REQUEST, "server not initialized: send initialize first".to_owned())
            }
            Self::InitializedNotReceived => (
                INVALID_REQUEST,
                "server not ready: send notifications/initialized first".to_owned(),
            ),
            Self::MethodNotFound(m) => (METHOD_NOT_FOUND, format!("method not found: {m}")),
            Self::InvalidParams(d) => (INVALID_PARAMS, format!("invalid params: {d}")),
            Self::UnknownTool(name) => (INVALID_PARAMS, format!("unknown tool: {name}")),
            Self::UnknownPrompt(name) => (INVALID_PARAMS, format!("unknown prompt: {name}")),
            Self::MissingPromptArgument(arg) => {
                (INVALID_PARAMS, format!("missing required prompt argument: {arg}"))
            }
            Self::InvalidCursor => (INVALID_PARAMS, "invalid cursor".to_owned()),
            Self::ResourceNotFound(uri) => {
                // 2026-07-28 reserves -32002 and answers a missing resource with -32602.
                let code = if modern { INVALID_PARAMS } else { RESOURCE_NOT_FOUND };
                return ErrorObject::new(code, format!("resource not found: {uri}"))
                    .with_data(json!({ "uri": uri }));
            }
            Self::Internal(d) => (INTERNAL_ERROR, format!("internal error: {d}")),
            Self::UserRejected(d) => (USER_REJECTED, d.clone()),
            Self::MessageTooLarge { limit } => {
                (INVALID_REQUEST, format!("message larger than the {limit}-byte limit"))
            }
            Self::ForbiddenOrigin => (INVALID_REQUEST, "forbidden origin".to_owned()),
            Self::ForbiddenHost => (INVALID_REQUEST, "forbidden host".to_owned()),
            Self::Unauthorized { invalid_token: false } => {
                (INVALID_REQUEST, "unauthorized: send Authorization: Bearer <token>".to_owned())
            }
            Self::Unauthorized { invalid_token: true } => {
                (INVALID_REQUEST, "unauthorized: the bearer token is not valid".to_owned())
            }
            Self::PayloadTooLarge { limit } => {
                (INVALID_REQUEST, format!("body larger than the {limit}-byte limit"))
            }
            Self::StreamConflict => {
                (INVALID_REQUEST, "the session already has a standalone stream".to_owned())
            }
            Self::TooManySessions => (INTERNAL_ERROR, "too many sessions".to_owned()),
            Self::StoreUnavailable(detail) => (
                INTERNAL_ERROR,
                format!("the shared session store is unavailable ({detail}); retry"),
            ),
            Self::NotAcceptable => (
                INVALID_REQUEST,
                "not acceptable: accept application/json and text/event-stream".to_owned(),
            ),
            Self::UnsupportedMediaType => {
                (INVALID_REQUEST, "unsupported media type: send application/json".to_owned())
            }
            Self::HttpMethodNotAllowed => (INVALID_REQUEST, "http method not allowed".to_owned()),
            Self::MissingSession => (INVALID_REQUEST, "missing session id".to_owned()),
            Self::UnknownSession => (INVALID_REQUEST, "session not found".to_owned()),
            Self::UnsupportedProtocolVersion { requested, supported } => {
                // Session era: the shape of the spec's example answer to `initialize`.
                let code = if modern { UNSUPPORTED_PROTOCOL_VERSION } else { INVALID_PARAMS };
                return ErrorObject::new(
                    code,
                    format!("unsupported protocol version: {requested}"),
                )
                .with_data(json!({ "supported": supported, "requested": requested }));
            }
            Self::HeaderMismatch { header } => {
                let code = if modern { HEADER_MISMATCH } else { INVALID_REQUEST };
                (code, format!("header {header} is missing or does not match the body"))
            }
            Self::MissingRequiredClientCapability { required } => {
                let code =
                    if modern { MISSING_REQUIRED_CLIENT_CAPABILITY } else { INVALID_REQUEST };
                return ErrorObject::new(code, "missing required client capability")
                    .with_data(json!({ "requiredCapabilities": required }));
            }
            Self::MissingRequestMeta { key } => {
                (INVALID_PARAMS, format!("missing or malformed required _meta field {key}"))
            }
        };
        ErrorObject::new(code, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::InvalidReason;
    use ProtocolVersion as V;
    use TransportKind as T;

    /// One row per variant: the code in a session-era revision and in 2026-07-28, then the
    /// HTTP status over Streamable HTTP (session era, 2026-07-28) and over legacy HTTP+SSE.
    fn table() -> Vec<(Rejection, [i64; 2], [u16; 3])> {
        use codes::*;
        let invalid = DecodeError::InvalidRequest {
            id: Some(RequestId::Number(1)),
            reason: InvalidReason::InvalidId,
        };
        let text = |s: &str| s.to_owned();
        vec![
            (Rejection::Decode(DecodeError::InvalidUtf8), [PARSE_ERROR; 2], [400, 400, 400]),
            (
                Rejection::Decode(DecodeError::Parse { detail: text("eof") }),
                [PARSE_ERROR; 2],
                [400, 400, 400],
            ),
            (Rejection::Decode(invalid), [INVALID_REQUEST; 2], [400, 400, 400]),
            (Rejection::BatchNotAllowed, [INVALID_REQUEST; 2], [400, 400, 400]),
            (Rejection::InitializeInBatch, [INVALID_REQUEST; 2], [400, 400, 400]),
            (Rejection::DuplicateRequestId, [INVALID_REQUEST; 2], [200, 200, 202]),
            (Rejection::AlreadyInitialized, [INVALID_REQUEST; 2], [400, 400, 202]),
            (Rejection::NotInitialized, [INVALID_REQUEST; 2], [400, 400, 202]),
            (Rejection::InitializedNotReceived, [INVALID_REQUEST; 2], [400, 400, 202]),
            (Rejection::MethodNotFound(text("x/y")), [METHOD_NOT_FOUND; 2], [200, 404, 202]),
            (Rejection::InvalidParams(text("no")), [INVALID_PARAMS; 2], [200, 200, 202]),
            (Rejection::UnknownTool(text("t")), [INVALID_PARAMS; 2], [200, 200, 202]),
            (Rejection::UnknownPrompt(text("p")), [INVALID_PARAMS; 2], [200, 200, 202]),
            (Rejection::MissingPromptArgument(text("a")), [INVALID_PARAMS; 2], [200, 200, 202]),
            (Rejection::InvalidCursor, [INVALID_PARAMS; 2], [200, 200, 202]),
            (
                Rejection::ResourceNotFound(text("file:///x")),
                [RESOURCE_NOT_FOUND, INVALID_PARAMS],
                [200, 200, 202],
            ),
            (Rejection::Internal(text("oops")), [INTERNAL_ERROR; 2], [200, 200, 202]),
            (Rejection::UserRejected(text("no")), [USER_REJECTED; 2], [200, 200, 202]),
            (Rejection::ForbiddenOrigin, [INVALID_REQUEST; 2], [403, 403, 403]),
            (Rejection::NotAcceptable, [INVALID_REQUEST; 2], [406, 406, 406]),
            (Rejection::UnsupportedMediaType, [INVALID_REQUEST; 2], [415, 415, 415]),
            (Rejection::HttpMethodNotAllowed, [INVALID_REQUEST; 2], [405, 405, 405]),
            (Rejection::MissingSession, [INVALID_REQUEST; 2], [400, 400, 400]),
            (Rejection::UnknownSession, [INVALID_REQUEST; 2], [404, 404, 404]),
            (
                Rejection::UnsupportedProtocolVersion {
                    requested: text("1999-01-01"),
                    supported: vec![text("2025-11-25")],
                },
                [INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION],
                [400, 400, 400],
            ),
            (
                Rejection::HeaderMismatch { header: text("Mcp-Method") },
                [INVALID_REQUEST, HEADER_MISMATCH],
                [400, 400, 400],
            ),
            (
                Rejection::MissingRequiredClientCapability { required: Box::default() },
                [INVALID_REQUEST, MISSING_REQUIRED_CLIENT_CAPABILITY],
                [400, 400, 400],
            ),
            (
                Rejection::MissingRequestMeta {
                    key: text("io.modelcontextprotocol/protocolVersion"),
                },
                [INVALID_PARAMS; 2],
                [400, 400, 400],
            ),
        ]
    }

    #[test]
    fn every_rejection_has_its_code_and_status_per_revision_and_transport() {
        for (rejection, [session_code, modern_code], [http, http_2026, legacy]) in table() {
            for v in ProtocolVersion::SESSION_ERA {
                let stdio = rejection.to_wire(v, T::Stdio);
                assert_eq!((stdio.error.code, stdio.http_status), (session_code, None), "{v}");
                let shttp = rejection.to_wire(v, T::StreamableHttp);
                assert_eq!((shttp.error.code, shttp.http_status), (session_code, Some(http)));
                assert_eq!(shttp.error, stdio.error, "the body does not depend on the transport");
            }
            let legacy_wire = rejection.to_wire(V::V2024_11_05, T::LegacySse);
            assert_eq!(legacy_wire.http_status, Some(legacy), "{rejection:?}");
            let modern = rejection.to_wire(V::V2026_07_28, T::StreamableHttp);
            assert_eq!((modern.error.code, modern.http_status), (modern_code, Some(http_2026)));
            assert_eq!(rejection.to_wire(V::V2026_07_28, T::Stdio).http_status, None);
            assert_eq!(rejection.to_jsonrpc().code, session_code, "{rejection:?}");
        }
    }

    #[test]
    fn version_rejections_carry_what_was_asked_and_what_is_supported() {
        let r = Rejection::UnsupportedProtocolVersion {
            requested: "2099-01-01".into(),
            supported: vec!["2025-06-18".into(), "2025-11-25".into()],
        };
        let data = r.to_wire(V::V2026_07_28, T::StreamableHttp).error.data.unwrap();
        assert_eq!(data["requested"], "2099-01-01");
        assert_eq!(data["supported"][1], "2025-11-25");
        let missing = Rejection::ResourceNotFound("file:///gone".into()).to_jsonrpc();
        assert_eq!(missing.data.unwrap()["uri"], "file:///gone");
    }
}
