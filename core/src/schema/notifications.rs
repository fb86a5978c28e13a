//! Notifications either side may send: progress and cancellation.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{wire, Meta, ProgressToken};
use crate::jsonrpc::RequestId;

/// Params of `notifications/progress`.
///
/// `progress` MUST increase with every notification for a token, even without a `total`; both
/// may be fractional. Notifications MUST stop once the request completes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far. Integral values are written without a fraction.
    #[serde(serialize_with = "wire::f64_js")]
    pub progress: f64,
    /// The total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "wire::opt_f64_js")]
    pub total: Option<f64>,
    /// A human-readable status (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ProgressParams {
    /// Progress with no total or message.
    pub fn new(progress_token: ProgressToken, progress: f64) -> Self {
        Self { progress_token, progress, total: None, message: None, meta: None, extra: Map::new() }
    }
}

/// Params of `notifications/cancelled`.
///
/// `request_id` names a request issued earlier in the same direction; it was required before
/// 2025-11-25 and MUST still be present to cancel a non-task request. A client MUST NOT cancel
/// `initialize`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledParams {
    /// The request to cancel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs or the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Fields this crate does not know, kept for a lossless round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CancelledParams {
    /// Cancels `request_id`, with an optional reason.
    pub fn new(request_id: RequestId, reason: Option<String>) -> Self {
        Self { request_id: Some(request_id), reason, meta: None, extra: Map::new() }
    }
}
