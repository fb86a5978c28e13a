//! Types shared by every method family: `_meta`, icons, annotations, roles, pagination.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::wire;
use crate::jsonrpc::RequestId;

/// The `_meta` object reserved on params, results and many nested types.
///
/// Keys under reserved prefixes (second label `modelcontextprotocol` or `mcp`) belong to the
/// spec; implementations MUST NOT assume anything about values under them.
pub type Meta = Map<String, Value>;

/// An opaque pagination cursor. Clients MUST NOT parse, modify or persist it.
pub type Cursor = String;

/// The token that ties `notifications/progress` to a request: a string or an integer, with the
/// same wire shape and exact-echo rule as a request id.
pub type ProgressToken = RequestId;

/// The `_meta` key under which a request asks for progress notifications.
pub const PROGRESS_TOKEN_KEY: &str = "progressToken";

/// Reads `_meta.progressToken` from a request's params.
///
/// Returns `None` when there is no `_meta`, no token, or a token that is neither a string nor an
/// integer (the receiver then sends no progress).
pub fn progress_token(meta: Option<&Meta>) -> Option<ProgressToken> {
    progress_token_of(meta?.get(PROGRESS_TOKEN_KEY)?)
}

/// `value` as a progress token: a string or an integer (a number with a fraction is none).
pub(crate) fn progress_token_of(value: &Value) -> Option<ProgressToken> {
    match value {
        Value::String(s) => Some(RequestId::String(s.clone())),
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        _ => None,
    }
}

/// Sets `_meta.progressToken`, creating `_meta` if needed. The token MUST be unique among the
/// sender's active requests.
pub fn set_progress_token(meta: &mut Option<Meta>, token: ProgressToken) {
    let value = match token {
        RequestId::Number(n) => Value::from(n),
        RequestId::String(s) => Value::String(s),
    };
    meta.get_or_insert_with(Meta::new).insert(PROGRESS_TOKEN_KEY.to_owned(), value);
}

/// Who a message or piece of content is from or for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The model's side of the conversation.
    Assistant,
    /// The human's side of the conversation.
    User,
}

/// The background an icon is designed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum IconTheme {
    /// For dark backgrounds.
    Dark,
    /// For light backgrounds.
    Light,
}

/// An icon a user interface may show (2025-11-25+).
///
/// `src` is an HTTP(S) URL or a `data:` URI; consumers SHOULD only fetch from trusted origins
/// and treat SVG with care.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// The image URI.
    pub src: String,
    /// A MIME type override, e.g. `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `48x48`, or `any`; absent means any size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme it suits; absent means any.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_theme")]
    pub theme: Option<IconTheme>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Hints to the client about how to use or show an object (2025-03-26+; the same fields came
/// from the `Annotated` base in 2024-11-05).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (effectively required).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "wire::opt_f64_js")]
    pub priority: Option<f64>,
    /// ISO 8601 time of last modification (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The name and version of an MCP client or server (`clientInfo`, `serverInfo`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name; the display fallback when `title` is absent.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The implementation's version.
    pub version: String,
    /// What the implementation does (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// The project's website (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Implementation {
    /// An implementation with just a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self { name: name.into(), version: version.into(), ..Self::default() }
    }
}

/// Params of a method that takes none but `_meta` (`ping`, `roots/list`, the `initialized` and
/// `list_changed` notifications). Decodes from `{}`; an absent `params` means the same.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyParams {
    /// Request or notification metadata, e.g. `progressToken`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A result that carries nothing but success (`ping`, `logging/setLevel`, subscriptions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of a paginated list request (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedParams {
    /// Where to continue: a previous result's `nextCursor`, echoed unmodified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata, e.g. `progressToken`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An icon theme this crate does not know reads as no theme, so one odd icon cannot fail a
/// whole list result.
fn lenient_theme<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<IconTheme>, D::Error> {
    let value = Option::<Value>::deserialize(d)?;
    Ok(value.and_then(|v| serde_json::from_value(v).ok()))
}
