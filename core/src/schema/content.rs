//! Content blocks carried by tool results, prompts and sampling messages, and resource contents.
//!
//! The block unions are tagged by `type`. A block whose `type` this crate does not know (or
//! that has no string `type`) decodes to an `Unknown` variant holding the JSON as sent, and
//! encodes back unchanged, so newer peers' content passes through intact. A block with a known
//! `type` but missing required fields is an error. The tag is not kept in a body's `extra`
//! map, and callers must not put `type` there either: it would be written twice.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::wire::{self, Tagged};
use super::{Annotations, Meta, Resource};

/// Text for or from a model (`type: "text"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Content metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TextContent {
    /// Plain text with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into(), ..Self::default() }
    }
}

/// A base64 image (`type: "image"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image bytes.
    pub data: String,
    /// The image's MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Content metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Base64 audio (`type: "audio"`, 2025-03-26+).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Base64-encoded audio bytes.
    pub data: String,
    /// The audio's MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Content metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource's contents embedded in a prompt or tool result (`type: "resource"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Hints for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Content metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One block of tool-result or prompt content.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `type: "text"`.
    Text(TextContent),
    /// `type: "image"`.
    Image(ImageContent),
    /// `type: "audio"` (2025-03-26+).
    Audio(AudioContent),
    /// `type: "resource_link"`: a pointer to a resource, not its contents (2025-06-18+). It need
    /// not appear in `resources/list`.
    ResourceLink(Resource),
    /// `type: "resource"`: embedded contents.
    Resource(EmbeddedResource),
    /// A block of a type this crate does not know, exactly as sent.
    Unknown(Value),
}

impl ContentBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(body) => Tagged { tag: "text", body }.serialize(s),
            Self::Image(body) => Tagged { tag: "image", body }.serialize(s),
            Self::Audio(body) => Tagged { tag: "audio", body }.serialize(s),
            Self::ResourceLink(body) => Tagged { tag: "resource_link", body }.serialize(s),
            Self::Resource(body) => Tagged { tag: "resource", body }.serialize(s),
            Self::Unknown(value) => value.serialize(s),
        }
    }
}

impl ContentBlock {
    /// The block a JSON object's members spell (see [`content_de`](super::content_de) for
    /// the text block read directly).
    pub(super) fn from_members<E: serde::de::Error>(
        members: Map<String, Value>,
    ) -> Result<Self, E> {
        // One copy of the decoding for every deserializer: only the error is mapped here.
        Self::from_json_members(members).map_err(E::custom)
    }

    #[inline(never)]
    fn from_json_members(members: Map<String, Value>) -> Result<Self, serde_json::Error> {
        let value = Value::Object(members);
        Ok(match wire::type_tag(&value) {
            Some("text") => Self::Text(wire::untagged_body(value)?),
            Some("image") => Self::Image(wire::untagged_body(value)?),
            Some("audio") => Self::Audio(wire::untagged_body(value)?),
            Some("resource_link") => Self::ResourceLink(wire::untagged_body(value)?),
            Some("resource") => Self::Resource(wire::untagged_body(value)?),
            _ => Self::Unknown(value),
        })
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        Self::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        Self::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        Self::Audio(c)
    }
}

impl From<Resource> for ContentBlock {
    /// A `resource_link` block.
    fn from(r: Resource) -> Self {
        Self::ResourceLink(r)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        Self::Resource(c)
    }
}

/// The contents of one resource: text or base64 bytes, told apart by which field is present.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Has `text`.
    Text(TextResourceContents),
    /// Has `blob`.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// The URI of the resource these contents belong to.
    pub fn uri(&self) -> &str {
        match self {
            Self::Text(c) => &c.uri,
            Self::Blob(c) => &c.uri,
        }
    }
}

/// Textual resource contents.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource (or sub-resource) URI.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text; set only when the item really is text.
    pub text: String,
    /// Contents metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Binary resource contents.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource (or sub-resource) URI.
    pub uri: String,
    /// The MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded bytes.
    pub blob: String,
    /// Contents metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A model's request to call a tool, in sampling content (`type: "tool_use"`, 2025-11-25+).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Unique id that the matching `tool_result` echoes as `toolUseId`.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, conforming to the tool's input schema.
    pub input: Map<String, Value>,
    /// Metadata; clients SHOULD keep it when replaying the tool use in a later request.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of a tool use, in sampling content (`type: "tool_result"`, 2025-11-25+).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `id` of the `tool_use` this answers; it MUST match one.
    pub tool_use_id: String,
    /// Unstructured result, shaped like `CallToolResult.content`.
    pub content: Vec<ContentBlock>,
    /// Structured result; SHOULD conform to the tool's output schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool use failed; absent means false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata; clients SHOULD keep it when replaying the result in a later request.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One block of a sampling message: text, image, audio and (2025-11-25+) tool use and results.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SamplingContent {
    /// `type: "text"`.
    Text(TextContent),
    /// `type: "image"`.
    Image(ImageContent),
    /// `type: "audio"` (2025-03-26+).
    Audio(AudioContent),
    /// `type: "tool_use"` (2025-11-25+).
    ToolUse(ToolUseContent),
    /// `type: "tool_result"` (2025-11-25+).
    ToolResult(ToolResultContent),
    /// A block of a type this crate does not know, exactly as sent.
    Unknown(Value),
}

impl SamplingContent {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl Serialize for SamplingContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(body) => Tagged { tag: "text", body }.serialize(s),
            Self::Image(body) => Tagged { tag: "image", body }.serialize(s),
            Self::Audio(body) => Tagged { tag: "audio", body }.serialize(s),
            Self::ToolUse(body) => Tagged { tag: "tool_use", body }.serialize(s),
            Self::ToolResult(body) => Tagged { tag: "tool_result", body }.serialize(s),
            Self::Unknown(value) => value.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Ok(match wire::type_tag(&value) {
            Some("text") => Self::Text(wire::untagged_body(value)?),
            Some("image") => Self::Image(wire::untagged_body(value)?),
            Some("audio") => Self::Audio(wire::untagged_body(value)?),
            Some("tool_use") => Self::ToolUse(wire::untagged_body(value)?),
            Some("tool_result") => Self::ToolResult(wire::untagged_body(value)?),
            _ => Self::Unknown(value),
        })
    }
}

/// The `content` of a sampling message: one block, or (2025-11-25+) an array of blocks. The
/// shape received is the shape sent back.
#[derive(Clone, Debug, PartialEq)]
pub enum SamplingContents {
    /// A single block (the only shape before 2025-11-25).
    Single(SamplingContent),
    /// An array of blocks (2025-11-25+).
    Multiple(Vec<SamplingContent>),
}

impl SamplingContents {
    /// The blocks, whichever the shape.
    pub fn as_slice(&self) -> &[SamplingContent] {
        match self {
            Self::Single(block) => std::slice::from_ref(block),
            Self::Multiple(blocks) => blocks,
        }
    }
}

impl From<SamplingContent> for SamplingContents {
    fn from(block: SamplingContent) -> Self {
        Self::Single(block)
    }
}

impl From<Vec<SamplingContent>> for SamplingContents {
    fn from(blocks: Vec<SamplingContent>) -> Self {
        Self::Multiple(blocks)
    }
}

impl Serialize for SamplingContents {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Single(block) => block.serialize(s),
            Self::Multiple(blocks) => blocks.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContents {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        if value.is_array() {
            wire::from_value(value).map(Self::Multiple)
        } else {
            wire::from_value(value).map(Self::Single)
        }
    }
}
