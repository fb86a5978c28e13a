//! Argument completion: `completion/complete`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Meta;

/// What is being completed: a prompt's argument or a resource template's variable, tagged by
/// `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Reference {
    /// `type: "ref/prompt"`: a prompt, by name.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
        /// Display name (2025-06-18+).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Fields this crate does not know, kept for a lossless round trip.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// `type: "ref/resource"`: a resource template, by URI or URI template.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The URI or URI template.
        uri: String,
        /// Fields this crate does not know, kept for a lossless round trip.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
}

impl Reference {
    /// A reference to the prompt `name`.
    pub fn prompt(name: impl Into<String>) -> Self {
        Self::Prompt { name: name.into(), title: None, extra: Map::new() }
    }

    /// A reference to the resource template `uri`.
    pub fn resource(uri: impl Into<String>) -> Self {
        Self::Resource { uri: uri.into(), extra: Map::new() }
    }
}

/// Params of `completion/complete`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteParams {
    /// The prompt or resource template the argument belongs to.
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument being completed.
    pub argument: CompletionArgument,
    /// Arguments already resolved (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The argument being completed and its partial value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionArgument {
    /// The argument's name.
    pub name: String,
    /// The value typed so far.
    pub value: String,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Extra context for a completion (2025-06-18+).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionContext {
    /// Variables or arguments already resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Result of `completion/complete`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Completion suggestions for one argument.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The suggested values; at most 100.
    pub values: Vec<String>,
    /// How many options exist in all, which may exceed `values.len()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// More options exist beyond `values`, even if `total` is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Completion {
    /// The largest number of values a completion may carry.
    pub const MAX_VALUES: usize = 100;
}
