//! Tools: `tools/list` and `tools/call`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::json_schema::SchemaError;

use super::{ContentBlock, Cursor, Icon, Meta};

/// A tool the server offers.
///
/// Display name precedence: `title`, then `annotations.title`, then `name`. Names SHOULD be 1–128
/// characters of `[A-Za-z0-9_.-]` and are case-sensitive (2025-11-25 guidance).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The name `tools/call` uses.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does; a hint to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; its root is `type: "object"`.
    pub input_schema: ObjectSchema,
    /// JSON Schema of `structuredContent` (2025-06-18+). When present, the server's structured
    /// results MUST conform and clients SHOULD validate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<ObjectSchema>,
    /// Behaviour hints (2025-03-26+); untrusted unless the server is trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Tool metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know (e.g. 2025-11-25 `execution`), kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A JSON Schema whose root is an object, as tools use for input and output.
///
/// Only the root keywords MCP names are typed; every other keyword (`additionalProperties`,
/// `$defs`, …) stays in `extra`. `Default` is `{"type": "object"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectSchema {
    /// The dialect; absent means JSON Schema 2020-12 (2025-11-25+).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The root type; MCP requires `"object"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Property schemas, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<Map<String, Value>>,
    /// Names of required properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// Other keywords, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for ObjectSchema {
    fn default() -> Self {
        Self {
            schema: None,
            kind: "object".to_owned(),
            properties: None,
            required: None,
            extra: Map::new(),
        }
    }
}

/// Why a JSON value cannot be a tool's `inputSchema` or `outputSchema`; see
/// [`ObjectSchema::try_from_value`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ObjectSchemaError {
    /// The value is not a JSON object.
    NotAnObject,
    /// The root `type` is absent or is not `"object"`.
    RootNotObject {
        /// The root `type` given, if any.
        found: Option<Value>,
    },
    /// zest's validator cannot apply the schema (see
    /// [`check_schema`](crate::json_schema::check_schema)).
    Unusable(SchemaError),
}

impl fmt::Display for ObjectSchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAnObject => f.write_str("the schema is not a JSON object"),
            Self::RootNotObject { found: None } => {
                f.write_str("the schema has no root type; it must be \"object\"")
            }
            Self::RootNotObject { found: Some(kind) } => {
                write!(f, "the schema's root type is {kind}, not \"object\"")
            }
            Self::Unusable(e) => write!(f, "the schema cannot be applied: {e}"),
        }
    }
}

impl std::error::Error for ObjectSchemaError {}

/// Hints about a tool's behaviour (2025-03-26+). All are hints, never guarantees; clients MUST
/// NOT trust them from untrusted servers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy, not just add (default true; meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Result of `tools/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// This page of tools.
    pub tools: Vec<Tool>,
    /// Cursor of the next page; absent at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Params of `tools/call`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolParams {
    /// The tool's name. An unknown name gets -32602.
    pub name: String,
    /// The arguments, which the server MUST validate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Request metadata, e.g. `progressToken`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know (e.g. 2025-11-25 `task`), kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Result of `tools/call`.
///
/// Failures of the tool itself (including invalid argument values) are reported here with
/// `is_error: Some(true)`, not as a JSON-RPC error, so the model can see them.
/// Its `Deserialize` reads each member once, any it does not know straight into `extra`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured result. Required by the spec; read as empty when a server omits it.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Structured result (2025-06-18+; an object through 2025-11-25). A tool that returns it
    /// SHOULD also return the same JSON as a text block; see [`CallToolResult::structured`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool failed; absent means false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolResult {
    /// A successful result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![ContentBlock::text(text)], ..Self::default() }
    }

    /// A failed result (`isError: true`) of one text block describing the failure.
    pub fn error_text(text: impl Into<String>) -> Self {
        Self { is_error: Some(true), ..Self::text(text) }
    }

    /// A successful structured result, with the same JSON serialized into a text block for
    /// clients that predate structured output.
    pub fn structured(value: Value) -> Self {
        Self {
            content: vec![ContentBlock::text(value.to_string())],
            structured_content: Some(value),
            ..Self::default()
        }
    }

    /// True when `is_error` is set to true.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}
