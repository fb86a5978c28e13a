//! 2026-07-28 "multi round-trip requests" (MRTR): instead of sending the client a request, a
//! server that needs sampling, elicitation or roots ends `tools/call`, `prompts/get` or
//! `resources/read` with an [`InputRequiredResult`]; the client answers each input request
//! and retries the original request with [`InputResponses`] and the opaque `requestState`.
//!
//! These are the wire types. The server machine writes input-required results itself from a
//! handler's asks; see [`server::Round`](crate::server::Round).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{CreateMessageParams, ElicitParams};

/// One request embedded in an [`InputRequiredResult`]: a method and its params, with no
/// `jsonrpc` and no `id`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "params")]
#[non_exhaustive]
pub enum InputRequest {
    /// `elicitation/create`: ask the user (form or URL mode).
    #[serde(rename = "elicitation/create")]
    Elicit(Box<ElicitParams>),
    /// `sampling/createMessage` (deprecated in 2026-07-28).
    #[serde(rename = "sampling/createMessage")]
    CreateMessage(Box<CreateMessageParams>),
    /// `roots/list` (deprecated in 2026-07-28).
    #[serde(rename = "roots/list")]
    ListRoots(#[serde(default)] Map<String, Value>),
}

/// The result that asks the client for input before the request can complete. At least one
/// of `input_requests` and `request_state` is present.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// Always `"input_required"`.
    pub result_type: String,
    /// What to ask, by keys unique within this result.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_requests: BTreeMap<String, InputRequest>,
    /// Opaque state the client echoes byte for byte on the retry. The server MUST treat it
    /// as attacker-controlled (protect it with a MAC if it matters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Unknown fields, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InputRequiredResult {
    /// A result asking for `requests`, with `state` to be echoed on the retry.
    pub fn new(requests: BTreeMap<String, InputRequest>, state: Option<String>) -> Self {
        Self {
            result_type: "input_required".into(),
            input_requests: requests,
            request_state: state,
            extra: Map::new(),
        }
    }
}

/// The answers a retry carries in its params (`inputResponses`), by the keys of the
/// [`InputRequiredResult`] it answers: an `ElicitResult`, `CreateMessageResult` or
/// `ListRootsResult` each, kept raw until the handler reads the one it asked for.
pub type InputResponses = BTreeMap<String, Value>;
