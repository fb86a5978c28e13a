//! The four message shapes and their parts.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::key_search::{self, Keys};
use super::{codes, raw_text, text_pool};
use crate::framing::KEPT_BUFFER_MAX;

/// A request id: an integer or a string, echoed exactly as received (`1` and `"1"` differ).
/// MCP forbids `null`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id; zest's own requests use a counter.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

impl Serialize for RequestId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Number(n) => s.serialize_i64(*n),
            Self::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => Ok(Self::String(s)),
            Value::Number(n) => n
                .as_i64()
                .map(Self::Number)
                .ok_or_else(|| serde::de::Error::custom("request id must be an integer")),
            _ => Err(serde::de::Error::custom("request id must be a string or an integer")),
        }
    }
}

thread_local! {
    /// Where [`RawJson::from_serialize`] writes before it knows the text's length.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Serializes `value` into `buf` (emptied first) and copies the text out (into a kept buffer
/// when it is large, see [`text_pool`]).
fn serialize_into<T: Serialize + ?Sized>(buf: &mut Vec<u8>, value: &T) -> RawJson {
    buf.clear();
    // Invariant: serializing fails only for maps with non-string keys or a Serialize impl
    // that errors; our schema types have neither.
    serde_json::to_writer(&mut *buf, value).expect("schema types always serialize");
    // Invariant: serde_json writes valid UTF-8 JSON.
    let text = std::str::from_utf8(buf).expect("serde_json writes UTF-8");
    RawJson::copy_of(text)
}

/// A JSON value kept as the text the peer sent (or we serialized), parsed only on demand.
///
/// The text is always compact or as received; [`encode_line`](super::encode_line) makes sure a
/// stdio frame never contains a raw newline. Clones share the text (a 2026-07-28 client keeps
/// each request's params for a retry beside the copy it sends).
#[derive(Clone)]
pub struct RawJson(Arc<Text>);

/// A valid JSON text; one of [`text_pool::KEPT_TEXT_MIN`] bytes or more gives its buffer back to
/// the pool when dropped.
struct Text(String);

impl Drop for Text {
    fn drop(&mut self) {
        if self.0.capacity() >= text_pool::KEPT_TEXT_MIN {
            text_pool::give_back(std::mem::take(&mut self.0));
        }
    }
}

impl RawJson {
    /// Serializes `value` compactly.
    ///
    /// The text is written into a buffer each thread keeps (up to
    /// [`KEPT_BUFFER_MAX`](crate::framing::KEPT_BUFFER_MAX)), then copied once: into memory
    /// of its exact size, or a large one into a kept buffer (see [`KEPT_TEXT_MIN`]). Growing a
    /// fresh buffer by doubling instead left a large message's worth of freed memory per call
    /// at the top of the heap, which glibc gave back to the OS and faulted in again on the
    /// next call.
    ///
    /// [`KEPT_TEXT_MIN`]: super::KEPT_TEXT_MIN
    pub fn from_serialize<T: Serialize + ?Sized>(value: &T) -> Self {
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut buf) => {
                let raw = serialize_into(&mut buf, value);
                if buf.capacity() > KEPT_BUFFER_MAX {
                    *buf = Vec::new();
                }
                raw
            }
            // A Serialize impl that itself calls from_serialize: a buffer of its own.
            Err(_) => serialize_into(&mut Vec::new(), value),
        })
    }

    /// Wraps already-valid JSON text; `None` if it is not valid JSON.
    pub fn from_string(text: String) -> Option<Self> {
        let value = serde_json::from_str::<&RawValue>(&text).ok()?.get();
        if value.len() < text.len() {
            // Whitespace around the value is dropped, as `RawValue::from_string` does.
            return Some(Self::copy_of(value));
        }
        let mut text = text;
        if text.capacity() > 2 * text.len() {
            // A caller's reused buffer is not held for a small text.
            text.shrink_to_fit();
        }
        Some(Self(Arc::new(Text(text))))
    }

    /// A copy of `text`, which the caller knows is one valid JSON value (a member of a
    /// message serde_json read, say); a large one goes into a kept buffer
    /// ([`text_pool`]) rather than fresh memory.
    pub(crate) fn copy_of(text: &str) -> Self {
        let mut buf = text_pool::buffer_for(text.len());
        buf.push_str(text);
        Self::from_string_unchecked(buf)
    }

    /// The empty object `{}`.
    pub fn empty_object() -> Self {
        Self::from_string_unchecked("{}".to_owned())
    }

    fn from_string_unchecked(text: String) -> Self {
        // Invariant: callers pass text produced by serde_json, or valid pieces joined.
        raw_text::debug_assert_json(&text);
        Self(Arc::new(Text(text)))
    }

    pub(crate) fn from_raw(raw: Box<RawValue>) -> Self {
        Self(Arc::new(Text(Box::<str>::from(raw).into_string())))
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0 .0
    }

    /// False when no member at any depth can be named by one of `keys` (plain ASCII, nothing
    /// to escape): no `"key"` is in the text and no `\u` escape could spell one. True means
    /// one may be. A search for a few bytes is much cheaper than a JSON pass over a large text.
    pub(crate) fn may_name(&self, keys: &Keys) -> bool {
        keys.may_be_in(self.get().as_bytes())
    }

    /// [`may_name`](Self::may_name) for keys known only now, at any length with the search
    /// of long texts (see [`key_search`](super::key_search)).
    pub(crate) fn may_have_any_key(&self, keys: &[&str]) -> bool {
        key_search::may_name_any(self.get().as_bytes(), keys)
    }

    /// This object with each of `members` the object lacks added at its start; anything but
    /// an object comes back as it was. Only the top-level keys are read (values are skipped,
    /// not built), and the text is copied once: no `Value` round trip for a result of several
    /// MiB.
    pub fn with_members_if_absent(self, members: &[(&str, Value)]) -> Self {
        // A key whose quoted name is nowhere in the text is absent: no need to read the keys
        // (a search for a few bytes is much cheaper than a JSON pass over a large text).
        if !self.may_have_any_key(&members.iter().map(|(key, _)| *key).collect::<Vec<_>>()) {
            return self.with_leading_members(members);
        }
        let Ok(keys) = serde_json::from_str::<
            std::collections::BTreeMap<String, serde::de::IgnoredAny>,
        >(self.get()) else {
            return self;
        };
        let missing: Vec<(&str, Value)> = members
            .iter()
            .filter(|(key, _)| !keys.contains_key(*key))
            .map(|(key, value)| (*key, value.clone()))
            .collect();
        self.with_leading_members(&missing)
    }

    /// This object with `members` added at its start, for a caller that knows the object has
    /// none of them (a text without the key anywhere, say): the keys are not read.
    /// Anything but an object comes back as it was.
    pub fn with_leading_members(self, members: &[(&str, Value)]) -> Self {
        let mut head = String::new();
        for (i, (key, value)) in members.iter().enumerate() {
            if i > 0 {
                head.push(',');
            }
            // Serializing a string key and a `Value` cannot fail.
            head.push_str(&serde_json::to_string(key).unwrap_or_default());
            head.push(':');
            head.push_str(&serde_json::to_string(value).unwrap_or_default());
        }
        self.with_leading_text(&head)
    }

    /// This object with `members`, the text of one or more members (`"a":1,"b":2`, as
    /// serde_json writes them), added at its start; the caller knows the object has none of
    /// them. The text is moved, not copied, when this is its only holder: a large object grows
    /// in place by the members' length instead of being copied into a second buffer of its
    /// size. Anything but an object comes back as it was.
    pub(crate) fn with_leading_text(self, members: &str) -> Self {
        let text = self.get();
        let open = text.len() - text.trim_start().len();
        if members.is_empty() || !text[open..].starts_with('{') {
            return self;
        }
        let comma = if text[open + 1..].trim_start().starts_with('}') { "" } else { "," };
        let mut out = self.into_string();
        // Grown by exactly the members' length (if it has no room for them yet): a doubled
        // 1 MiB buffer would hold a megabyte for nothing.
        out.reserve_exact(members.len() + comma.len());
        if comma.is_empty() {
            out.insert_str(open + 1, members);
        } else {
            // One move of the rest of the text, not two.
            out.insert_str(open + 1, &[members, comma].concat());
        }
        // Invariant: members spliced in after an object's `{` leave a valid object.
        Self::from_string_unchecked(out)
    }

    /// The text, moved out when this is its only holder, copied otherwise.
    fn into_string(self) -> String {
        match Arc::try_unwrap(self.0) {
            Ok(mut text) => std::mem::take(&mut text.0),
            Err(shared) => shared.0.clone(),
        }
    }

    /// Parses a typed view. The error text is serde's, for `-32602` data, led by the path of
    /// the member that failed when it is not the whole value (`content[0].text: invalid
    /// type: …`).
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, String> {
        let text = self.get();
        serde_json::from_str(text).map_err(|e| super::error_path::describe(text, &e))
    }

    /// Parses into a [`Value`].
    ///
    /// Fails for valid JSON that `Value` cannot hold: a number beyond `f64` (`1e400`) or a
    /// lone surrogate escape (`"\ud800"`). A peer may send either, so this is a `Result`.
    pub fn to_value(&self) -> Result<Value, String> {
        self.parse()
    }

    /// The text without insignificant whitespace; numbers and strings exactly as written.
    ///
    /// Valid JSON has no raw control characters inside strings, so the result never contains
    /// a newline.
    pub(crate) fn compact(&self) -> Cow<'_, str> {
        let text = self.get();
        if !text.bytes().any(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let (mut in_string, mut escaped) = (false, false);
        for c in text.chars() {
            if in_string {
                out.push(c);
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => in_string = false,
                    _ => {}
                }
            } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
                in_string = c == '"';
                out.push(c);
            }
        }
        Cow::Owned(out)
    }

    /// True when the text is a JSON object.
    pub fn is_object(&self) -> bool {
        self.get().trim_start().starts_with('{')
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl PartialEq for RawJson {
    /// Semantic equality: `{"a":1}` equals `{ "a": 1 }` and `{"b":2,"a":1}`. Text that no
    /// `Value` can hold (see [`to_value`](Self::to_value)) is compared without its whitespace.
    fn eq(&self, other: &Self) -> bool {
        if self.get() == other.get() {
            return true;
        }
        match (self.to_value(), other.to_value()) {
            (Ok(a), Ok(b)) => a == b,
            _ => self.compact() == other.compact(),
        }
    }
}

impl Serialize for RawJson {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        raw_text::trusted(self.get()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(d).map(Self::from_raw)
    }
}

impl From<&Value> for RawJson {
    fn from(v: &Value) -> Self {
        Self::from_serialize(v)
    }
}

impl From<Value> for RawJson {
    fn from(v: Value) -> Self {
        Self::from_serialize(&v)
    }
}

/// A JSON-RPC error object: `{code, message, data?}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code; see [`codes`](super::codes).
    pub code: i64,
    /// One short sentence.
    pub message: String,
    /// Anything else the sender wants to say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32700: the message was not valid JSON.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(codes::PARSE_ERROR, message)
    }

    /// -32600: not a valid request, or not allowed now.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_REQUEST, message)
    }

    /// -32601: no such method, or a capability not offered.
    pub fn method_not_found(message: impl Into<String>) -> Self {
        Self::new(codes::METHOD_NOT_FOUND, message)
    }

    /// -32602: params that do not fit the method.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_PARAMS, message)
    }

    /// -32603: the receiver failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(codes::INTERNAL_ERROR, message)
    }

    /// -32002: no resource with that URI (up to 2025-11-25).
    pub fn resource_not_found(message: impl Into<String>) -> Self {
        Self::new(codes::RESOURCE_NOT_FOUND, message)
    }
}

impl std::error::Error for ErrorObject {}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

/// A request: it has an id and expects exactly one response.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The id the response echoes.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params, raw; an object in MCP.
    pub params: Option<RawJson>,
}

/// A notification: no id, never answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The params, raw.
    pub params: Option<RawJson>,
}

/// A response: a result or an error for the request with the same id.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The request's id; `None` only for an error about a request whose id could not be read.
    pub id: Option<RequestId>,
    /// The result, or the error.
    pub outcome: Result<RawJson, ErrorObject>,
}

/// One JSON-RPC message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A notification.
    Notification(Notification),
    /// A request.
    Request(Request),
    /// A result or error response.
    Response(Response),
}

impl Message {
    /// A request with params serialized from `params`.
    pub fn request<P: Serialize + ?Sized>(id: RequestId, method: &str, params: &P) -> Self {
        Self::Request(Request {
            id,
            method: method.to_owned(),
            params: Some(RawJson::from_serialize(params)),
        })
    }

    /// A notification with params serialized from `params`, or none.
    pub fn notification<P: Serialize + ?Sized>(method: &str, params: Option<&P>) -> Self {
        Self::Notification(Notification {
            method: method.to_owned(),
            params: params.map(RawJson::from_serialize),
        })
    }

    /// A result response.
    pub fn result(id: RequestId, result: RawJson) -> Self {
        Self::Response(Response { id: Some(id), outcome: Ok(result) })
    }

    /// An error response.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self::Response(Response { id, outcome: Err(error) })
    }
}
