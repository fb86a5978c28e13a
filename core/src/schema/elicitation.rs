//! Elicitation: `elicitation/create` (2025-06-18+) and `notifications/elicitation/complete`
//! (2025-11-25).

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::{wire, Meta};

/// Params of `elicitation/create`, told apart by `mode`. A request with no `mode` is form mode
/// (clients MUST read it so); any other unknown mode is an error.
///
/// The server MUST NOT use a mode the client did not declare; the client answers that with
/// -32602.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElicitParams {
    /// Ask the user to fill in a form. MUST NOT ask for secrets (passwords, keys, payment data).
    Form(ElicitFormParams),
    /// Send the user to a URL, out of band (2025-11-25+).
    Url(ElicitUrlParams),
}

impl ElicitParams {
    /// The message to show the user.
    pub fn message(&self) -> &str {
        match self {
            Self::Form(p) => &p.message,
            Self::Url(p) => &p.message,
        }
    }

    /// The request's `_meta`.
    pub fn meta(&self) -> Option<&Meta> {
        match self {
            Self::Form(p) => p.meta.as_ref(),
            Self::Url(p) => p.meta.as_ref(),
        }
    }
}

impl Serialize for ElicitParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Form(p) => p.serialize(s),
            Self::Url(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        match value.get("mode") {
            None | Some(Value::Null) => wire::from_value(value).map(Self::Form),
            Some(Value::String(m)) if m == "form" => wire::from_value(value).map(Self::Form),
            Some(Value::String(m)) if m == "url" => wire::from_value(value).map(Self::Url),
            Some(other) => Err(D::Error::custom(format!("unknown elicitation mode {other}"))),
        }
    }
}

impl From<ElicitFormParams> for ElicitParams {
    fn from(p: ElicitFormParams) -> Self {
        Self::Form(p)
    }
}

impl From<ElicitUrlParams> for ElicitParams {
    fn from(p: ElicitUrlParams) -> Self {
        Self::Url(p)
    }
}

/// The `mode` value of a form request. It is optional on the wire: `None` in
/// [`ElicitFormParams::mode`] sends no `mode`, which 2025-06-18 clients expect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FormMode {
    /// `"form"`.
    #[default]
    #[serde(rename = "form")]
    Form,
}

/// The `mode` value of a URL request, always sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UrlMode {
    /// `"url"`.
    #[default]
    #[serde(rename = "url")]
    Url,
}

/// Form-mode elicitation: a message and a flat schema of primitive fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitFormParams {
    /// `Some` if the sender wrote `mode: "form"` (2025-11-25 allows it); kept as received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What is being asked, for the user.
    pub message: String,
    /// The fields to fill in.
    pub requested_schema: ElicitSchema,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know (e.g. 2025-11-25 `task`), kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// URL-mode elicitation (2025-11-25+).
///
/// The client MUST show the full URL and get consent before opening it, and MUST NOT pre-fetch
/// it. The URL MUST NOT carry credentials or personal data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitUrlParams {
    /// Always `"url"`.
    pub mode: UrlMode,
    /// Why the interaction is needed, for the user.
    pub message: String,
    /// Opaque id, unique within the server; echoed by `notifications/elicitation/complete`.
    pub elicitation_id: String,
    /// Where to send the user.
    pub url: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know (e.g. 2025-11-25 `task`), kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The restricted JSON Schema of a form: an object whose properties are primitives, with no
/// nesting. `Default` is an object with no properties.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitSchema {
    /// The dialect; absent means JSON Schema 2020-12.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The fields, by name. Sorted by name: the sender's key order (which a client might use
    /// to lay out the form) is not kept.
    pub properties: BTreeMap<String, PrimitiveSchema>,
    /// Names of fields that must be filled in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// Other keywords, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for ElicitSchema {
    fn default() -> Self {
        Self {
            schema: None,
            kind: "object".to_owned(),
            properties: BTreeMap::new(),
            required: None,
            extra: Map::new(),
        }
    }
}

/// The schema of one form field: string, number or integer, boolean, or an enum.
///
/// One lenient struct covers every variant the revisions define (including 2025-11-25 titled
/// and multi-select enums and legacy `enumNames`); which keywords apply depends on `kind`.
/// Anything else stays in `extra`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PrimitiveSchema {
    /// `string`, `number`, `integer`, `boolean`, or (multi-select enums) `array`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Strings: minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Strings: maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Strings: `email`, `uri`, `date` or `date-time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Numbers: inclusive minimum.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "wire::opt_f64_js")]
    pub minimum: Option<f64>,
    /// Numbers: inclusive maximum.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "wire::opt_f64_js")]
    pub maximum: Option<f64>,
    /// Untitled single-select and legacy enums: the allowed values.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<String>>,
    /// Legacy enums: display names parallel to `enum_values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Titled single-select enums: the options (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<EnumOption>>,
    /// Multi-select enums: the item options (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<EnumItems>,
    /// Multi-select enums: fewest selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Multi-select enums: most selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The pre-filled value (all primitive types from 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Other keywords, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl PrimitiveSchema {
    /// A field of JSON Schema type `kind` with no constraints.
    pub fn of_type(kind: impl Into<String>) -> Self {
        Self { kind: kind.into(), ..Self::default() }
    }

    /// An untitled single-select enum over `values`.
    pub fn enumeration<I: IntoIterator<Item = S>, S: Into<String>>(values: I) -> Self {
        Self {
            enum_values: Some(values.into_iter().map(Into::into).collect()),
            ..Self::of_type("string")
        }
    }
}

/// One option of a titled enum: a value and its label.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnumOption {
    /// The value submitted.
    #[serde(rename = "const")]
    pub value: String,
    /// The label shown.
    pub title: String,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `items` of a multi-select enum: untitled (`enum`) or titled (`anyOf`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnumItems {
    /// `"string"` for untitled items.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Untitled items: the allowed values.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<String>>,
    /// Titled items: the options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any_of: Option<Vec<EnumOption>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Result of `elicitation/create`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// Form answers, only on `accept` in form mode: each a string, number, boolean or (from
    /// 2025-11-25) array of strings, matching the requested schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ElicitResult {
    /// A result with `action` and no content.
    pub fn new(action: ElicitAction) -> Self {
        Self { action, content: None, meta: None, extra: Map::new() }
    }

    /// An `accept` carrying form answers.
    pub fn accept(content: Map<String, Value>) -> Self {
        Self { content: Some(content), ..Self::new(ElicitAction::Accept) }
    }
}

/// The user's response to an elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ElicitAction {
    /// Submitted the form, or agreed to open the URL.
    Accept,
    /// Dismissed without an explicit choice.
    Cancel,
    /// Explicitly refused.
    Decline,
}

/// Params of `notifications/elicitation/complete` (2025-11-25 only): a URL-mode elicitation
/// finished out of band.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteParams {
    /// The `elicitationId` of the finished request.
    pub elicitation_id: String,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
