//! The `initialize` exchange.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ClientCapabilities, Implementation, Meta, ProtocolVersion, ServerCapabilities};

/// Params of `initialize`, the client's first request.
///
/// `protocol_version` stays a string: a peer may name a revision this crate does not know, and
/// the server must still answer with one it supports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The newest revision the client supports (it MAY support older ones too).
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// The client's name and version.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InitializeParams {
    /// Params offering `version`.
    pub fn new(
        version: ProtocolVersion,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        Self {
            protocol_version: version.as_str().to_owned(),
            capabilities,
            client_info,
            ..Self::default()
        }
    }

    /// The offered revision, if this crate knows it.
    pub fn known_version(&self) -> Option<ProtocolVersion> {
        ProtocolVersion::parse(&self.protocol_version)
    }
}

/// Result of `initialize`.
///
/// If the client does not support `protocol_version` it MUST disconnect.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the server chose: the client's if supported, else the server's newest.
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// The server's name and version.
    pub server_info: Implementation,
    /// How to use the server; a hint a client MAY add to the model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InitializeResult {
    /// A result choosing `version`.
    pub fn new(
        version: ProtocolVersion,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        Self {
            protocol_version: version.as_str().to_owned(),
            capabilities,
            server_info,
            ..Self::default()
        }
    }

    /// The chosen revision, if this crate knows it.
    pub fn known_version(&self) -> Option<ProtocolVersion> {
        ProtocolVersion::parse(&self.protocol_version)
    }
}
