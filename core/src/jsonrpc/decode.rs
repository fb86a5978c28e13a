//! Decoding one frame (a single message or a batch) from bytes.

use std::fmt;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::message::{ErrorObject, Message, Notification, RawJson, Request, RequestId, Response};
use super::peek::{peek, PeekKind};

/// What one frame held.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    /// A single message.
    Single(Message),
    /// A JSON array: each element decoded on its own, so one bad element loses nothing else.
    Batch(Vec<Result<Message, DecodeError>>),
}

/// Why bytes are not a JSON-RPC message. Maps to `-32700` or `-32600`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes are not UTF-8.
    InvalidUtf8,
    /// The text is not JSON (`-32700`).
    Parse {
        /// serde_json's description, with line and column.
        detail: String,
    },
    /// Valid JSON that is not a valid JSON-RPC message (`-32600`).
    InvalidRequest {
        /// The id, when it could be read, so the error response can echo it.
        id: Option<RequestId>,
        /// What is wrong.
        reason: InvalidReason,
    },
}

/// Why a JSON value is not a JSON-RPC message.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidReason {
    /// A batch with no elements.
    EmptyBatch,
    /// An id that is `null`, fractional, too large, or not a string or number.
    InvalidId,
    /// A `method` that is not a string.
    InvalidMethod,
    /// `params` that is neither an object nor an array.
    InvalidParams,
    /// Both `result` and `error`, or a request with either.
    MixedShape,
    /// No `method`, `result` or `error`.
    MissingMember,
    /// A result response with no id.
    MissingId,
    /// An `error` member that is not `{code, message, data?}`.
    MalformedError,
    /// Not a JSON object (or a field of the wrong type).
    NotAnObject(String),
    /// `jsonrpc` absent or not `"2.0"`.
    WrongVersion,
}

impl DecodeError {
    /// The JSON-RPC error object to answer with.
    pub fn to_error_object(&self) -> ErrorObject {
        use super::codes;
        match self {
            Self::InvalidUtf8 => ErrorObject::new(codes::PARSE_ERROR, "parse error: invalid UTF-8"),
            Self::Parse { detail } => {
                ErrorObject::new(codes::PARSE_ERROR, format!("parse error: {detail}"))
            }
            Self::InvalidRequest { reason, .. } => {
                ErrorObject::new(codes::INVALID_REQUEST, format!("invalid request: {reason}"))
            }
        }
    }

    /// The id to echo in the error response, if one could be read.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Self::InvalidRequest { id, .. } => id.as_ref(),
            _ => None,
        }
    }

    fn invalid(id: Option<RequestId>, reason: InvalidReason) -> Self {
        Self::InvalidRequest { id, reason }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidUtf8 => f.write_str("invalid UTF-8"),
            Self::Parse { detail } => write!(f, "invalid JSON: {detail}"),
            Self::InvalidRequest { reason, .. } => write!(f, "invalid JSON-RPC message: {reason}"),
        }
    }
}

impl std::error::Error for DecodeError {}

impl fmt::Display for InvalidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyBatch => f.write_str("empty batch"),
            Self::InvalidId => f.write_str("id must be a string or an integer"),
            Self::InvalidMethod => f.write_str("method must be a string"),
            Self::InvalidParams => f.write_str("params must be an object or an array"),
            Self::MixedShape => f.write_str("a message has exactly one of method, result, error"),
            Self::MissingMember => f.write_str("no method, result or error"),
            Self::MissingId => f.write_str("a result response needs an id"),
            Self::MalformedError => f.write_str("error must be {code, message, data?}"),
            Self::NotAnObject(detail) => write!(f, "not a JSON-RPC object ({detail})"),
            Self::WrongVersion => f.write_str("jsonrpc must be \"2.0\""),
        }
    }
}

/// Decodes one frame. Never panics; every failure is a typed [`DecodeError`].
pub fn decode(bytes: &[u8]) -> Result<Frame, DecodeError> {
    let text = std::str::from_utf8(bytes).map_err(|_| DecodeError::InvalidUtf8)?;
    let trimmed = text.trim_start_matches([' ', '\t', '\r', '\n']);
    if trimmed.starts_with('[') {
        let elements: Vec<&RawValue> = serde_json::from_str(text).map_err(parse_error)?;
        if elements.is_empty() {
            return Err(DecodeError::invalid(None, InvalidReason::EmptyBatch));
        }
        return Ok(Frame::Batch(elements.into_iter().map(|e| decode_one(e.get())).collect()));
    }
    decode_one(text).map(Frame::Single)
}

fn parse_error(e: serde_json::Error) -> DecodeError {
    DecodeError::Parse { detail: e.to_string() }
}

/// The members a JSON-RPC message may have. A present `null` is kept (`Some("null")`) so that
/// `"id": null` and a missing id stay distinguishable.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

fn decode_one(text: &str) -> Result<Message, DecodeError> {
    let env: Envelope<'_> = serde_json::from_str(text).map_err(|e| {
        if e.is_data() {
            // Valid JSON that is not an envelope (a duplicate member, or not an object): its id
            // is still echoed when a scan finds exactly one, in what reads as a request.
            let peek = peek(text.as_bytes());
            let id = peek.id.filter(|_| peek.kind != PeekKind::Response);
            DecodeError::invalid(id, InvalidReason::NotAnObject(e.to_string()))
        } else {
            parse_error(e)
        }
    })?;
    let id = env
        .id
        .map(|raw| parse_id(raw.get()).ok_or(DecodeError::invalid(None, InvalidReason::InvalidId)));
    let readable_id = id.clone().and_then(Result::ok);
    let invalid = |reason| DecodeError::invalid(readable_id.clone(), reason);
    if env.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return Err(invalid(InvalidReason::WrongVersion));
    }
    if let Some(method) = env.method {
        let Ok(method) = serde_json::from_str::<String>(method.get()) else {
            return Err(invalid(InvalidReason::InvalidMethod));
        };
        if env.result.is_some() || env.error.is_some() {
            return Err(invalid(InvalidReason::MixedShape));
        }
        let params = match env.params {
            None => None,
            Some(p) if matches!(p.get().as_bytes().first(), Some(b'{' | b'[')) => {
                Some(RawJson::copy_of(p.get()))
            }
            Some(p) if p.get() == "null" => None,
            Some(_) => return Err(invalid(InvalidReason::InvalidParams)),
        };
        return match id {
            None => Ok(Message::Notification(Notification { method, params })),
            Some(Ok(id)) => Ok(Message::Request(Request { id, method, params })),
            Some(Err(e)) => Err(e),
        };
    }
    let outcome = match (env.result, env.error) {
        (Some(_), Some(_)) => return Err(invalid(InvalidReason::MixedShape)),
        (None, None) => return Err(invalid(InvalidReason::MissingMember)),
        (Some(result), None) => Ok(RawJson::copy_of(result.get())),
        (None, Some(error)) => Err(serde_json::from_str::<ErrorObject>(error.get())
            .map_err(|_| invalid(InvalidReason::MalformedError))?),
    };
    let id = match (id, &outcome) {
        (Some(Ok(id)), _) => Some(id),
        // An error about an unreadable request may carry `"id": null` or none at all.
        (None, Err(_)) => None,
        (Some(Err(_)), Err(_)) if env.id.map(RawValue::get) == Some("null") => None,
        (None, Ok(_)) => return Err(invalid(InvalidReason::MissingId)),
        (Some(Err(e)), _) => return Err(e),
    };
    Ok(Message::Response(Response { id, outcome }))
}

/// Reads an id from its JSON token: a string, or an integer that fits `i64`.
pub(super) fn parse_id(raw: &str) -> Option<RequestId> {
    if raw.starts_with('"') {
        serde_json::from_str::<String>(raw).ok().map(RequestId::String)
    } else {
        raw.parse::<i64>().ok().map(RequestId::Number)
    }
}
