//! What each side declares it supports during `initialize`.
//!
//! A capability is present when its field is `Some`, even if the object is empty: `"logging":
//! {}` declares logging. Both sets are open; anything this crate does not know stays in `extra`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An empty-object capability flag such as `logging: {}` or `sampling.tools: {}`; its presence is
/// what counts, and any members are kept as sent.
pub type CapabilityFlag = Map<String, Value>;

/// Capabilities a client declares in `initialize`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Non-standard capabilities, keyed by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// Present if the client answers `roots/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Present if the client answers `sampling/createMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Present if the client answers `elicitation/create` (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Capabilities this crate does not model (e.g. 2025-11-25 `tasks`), kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The client's `roots` capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// The client sends `notifications/roots/list_changed` when its roots change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The client's `sampling` capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// The client honours `includeContext` other than `"none"` (2025-11-25+). Without it the
    /// server SHOULD send only `"none"` or omit the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CapabilityFlag>,
    /// The client accepts `tools` and `toolChoice` (2025-11-25+). Without it the server MUST NOT
    /// send them, and the client MUST answer with an error if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<CapabilityFlag>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The client's `elicitation` capability. An empty object means form mode only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Form mode (2025-11-25 spelling; 2025-06-18 sent `{}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<CapabilityFlag>,
    /// URL mode (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<CapabilityFlag>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ElicitationCapability {
    /// Form mode is supported: declared explicitly, or implied by declaring no mode at all.
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// URL mode is supported; only an explicit `url` member declares it.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

/// Capabilities a server declares in its `initialize` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Non-standard capabilities, keyed by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<Map<String, Value>>,
    /// Present if the server sends `notifications/message` and accepts `logging/setLevel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<CapabilityFlag>,
    /// Present if the server answers `completion/complete` (declared from 2025-03-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<CapabilityFlag>,
    /// Present if the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Present if the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present if the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Capabilities this crate does not model (e.g. 2025-11-25 `tasks`), kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `prompts` capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// The server sends `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `resources` capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// The server accepts `resources/subscribe` and `resources/unsubscribe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The server's `tools` capability.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// The server sends `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
