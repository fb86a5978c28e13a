//! 2026-07-28: `server/discover` and the protocol data every request carries in its `_meta`
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/lifecycle>).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Meta, ServerCapabilities};

/// `_meta` key of a 2026-07-28 request: the revision it speaks (required).
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of a 2026-07-28 request: the client's capabilities (required; `{}` for none).
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of a 2026-07-28 request: the client's name and version (SHOULD).
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of a 2026-07-28 request: the least severe log level the client wants for this
/// request (none: no `notifications/message` for it).
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// `_meta` key of a 2026-07-28 result: the server's name and version (SHOULD).
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// `resultType` of a result that answers its request (absent means the same).
pub const RESULT_COMPLETE: &str = "complete";

/// `_meta` key of a notification on a `subscriptions/listen` stream: the listen request's
/// JSON-RPC id.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// The `resultType` of a result that asks the client for input first.
pub const RESULT_INPUT_REQUIRED: &str = "input_required";

/// Who may reuse a cached result: anyone (`public`) or only the client that asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any client may be served this result.
    Public,
    /// Only the client that asked (the safe default).
    #[default]
    Private,
}

/// The result of `server/discover`: what a 2026-07-28 server speaks and offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Always `"complete"`.
    pub result_type: String,
    /// Every revision the server answers.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// How to use the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the client may reuse this result, in milliseconds.
    pub ttl_ms: u64,
    /// Who may reuse it.
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
