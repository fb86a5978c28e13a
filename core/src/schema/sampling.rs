//! Sampling: `sampling/createMessage`, the server asking the client's model for a completion.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::{wire, Meta, Role, SamplingContents, Tool};

/// Params of `sampling/createMessage`.
///
/// `tools` and `tool_choice` (2025-11-25+) MUST NOT be sent unless the client declared
/// `sampling.tools`; the client MUST answer with an error if they are.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// Advisory model preferences; the client MAY ignore them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the client MAY change or drop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which servers' context to attach; absent means `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "wire::opt_f64_js")]
    pub temperature: Option<f64>,
    /// Upper bound on tokens to sample; the client MAY sample fewer.
    pub max_tokens: u64,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata passed through to the model provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Tools the model may call (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use `tools` (2025-11-25+); absent means `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Request metadata, e.g. `progressToken`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know (e.g. 2025-11-25 `task`), kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One message of a sampling conversation.
///
/// In 2025-11-25, a user message containing `tool_result` MUST contain only tool results, and
/// every assistant `tool_use` MUST be answered by a matching `tool_result` in the next user
/// message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who the message is from.
    pub role: Role,
    /// One block, or an array of blocks (2025-11-25+).
    pub content: SamplingContents,
    /// Message metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SamplingMessage {
    /// A message of one content block.
    pub fn new(role: Role, content: impl Into<SamplingContents>) -> Self {
        Self { role, content: content.into(), meta: None, extra: Map::new() }
    }
}

/// Which MCP servers' context the client should attach to a sampling request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum IncludeContext {
    /// Every connected server's (soft-deprecated in 2025-11-25; needs `sampling.context`).
    AllServers,
    /// No context; the default.
    None,
    /// The requesting server's only (soft-deprecated in 2025-11-25; needs `sampling.context`).
    ThisServer,
}

/// The server's advisory preferences for model selection.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Name hints, which the client MUST evaluate in order (first match wins) and SHOULD rank
    /// above the numeric priorities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// Weight of cost, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "wire::opt_f64_js")]
    pub cost_priority: Option<f64>,
    /// Weight of latency, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "wire::opt_f64_js")]
    pub speed_priority: Option<f64>,
    /// Weight of capability, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "wire::opt_f64_js")]
    pub intelligence_priority: Option<f64>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A model-selection hint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// A substring of a model name (e.g. `sonnet`); the client MAY map it to a similar model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Other hint keys, which the spec leaves to the client to interpret.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// How the model may use the offered tools (2025-11-25+).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// The mode; absent means `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Tool-use modes for sampling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolChoiceMode {
    /// The model decides.
    Auto,
    /// The model MUST NOT use tools.
    None,
    /// The model MUST use at least one tool.
    Required,
}

/// Result of `sampling/createMessage`: the sampled message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Normally `assistant`.
    pub role: Role,
    /// One block, or an array of blocks (2025-11-25+).
    pub content: SamplingContents,
    /// The model that produced the message.
    pub model: String,
    /// Why sampling stopped, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Why sampling stopped: a standard reason, or any provider-specific string.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// `endTurn`: the turn ended naturally.
    EndTurn,
    /// `maxTokens`: the token limit was reached.
    MaxTokens,
    /// `stopSequence`: a stop sequence was produced.
    StopSequence,
    /// `toolUse`: the model wants to call tools (2025-11-25+).
    ToolUse,
    /// Any other reason, as sent.
    Other(String),
}

impl StopReason {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "endTurn",
            Self::MaxTokens => "maxTokens",
            Self::StopSequence => "stopSequence",
            Self::ToolUse => "toolUse",
            Self::Other(s) => s,
        }
    }
}

impl From<&str> for StopReason {
    fn from(s: &str) -> Self {
        match s {
            "endTurn" => Self::EndTurn,
            "maxTokens" => Self::MaxTokens,
            "stopSequence" => Self::StopSequence,
            "toolUse" => Self::ToolUse,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| Self::from(s.as_str()))
    }
}
