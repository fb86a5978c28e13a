//! Request correlation shared by both roles (STYLE rule 11): id allocation, the pending table,
//! deadlines with progress resets under a hard cap, cancellation, and the table of the peer's
//! requests awaiting our answer. Nothing here knows whether it is a client or a server.

mod endpoint;
mod inbound;
mod outstanding;
mod route;

use std::time::Duration;

pub(crate) use endpoint::{parse_params, Endpoint, Incoming, Limits, Routed};
pub(crate) use inbound::{InboundEntry, RoundEntry, StatelessEntry};
pub use route::{Outgoing, OutgoingKind, Route};

/// Per-request options. `Default` takes every value from the machine's config.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestOptions {
    /// Idle timeout: with `reset_on_progress`, restarted by each progress notification.
    /// `None` takes the config's `request_timeout`.
    pub timeout: Option<Duration>,
    /// Hard cap from the moment the request is sent; progress never extends past it.
    /// `None` takes the config's `max_request_timeout`.
    pub max_total: Option<Duration>,
    /// Restart the idle timeout whenever a progress notification arrives for this request.
    pub reset_on_progress: bool,
    /// Ask the peer for progress: puts a `progressToken` (equal to the request id) into
    /// `params._meta`, and progress arrives as `Event::Progress`.
    pub progress: bool,
}

impl RequestOptions {
    /// Options that ask for progress, with progress resetting the idle timeout.
    pub fn with_progress() -> Self {
        Self { progress: true, reset_on_progress: true, ..Self::default() }
    }

    /// Sets the idle timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the hard cap.
    pub fn max_total(mut self, max_total: Duration) -> Self {
        self.max_total = Some(max_total);
        self
    }
}
