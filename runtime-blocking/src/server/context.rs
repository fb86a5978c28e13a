//! What a handler gets: zest-core's [`RequestContext`](zest_core::runtime::RequestContext)
//! with this runtime's [`SessionLink`], which feeds progress, logs and requests to the client
//! to the machine on the handler's own thread.

use std::fmt;
use std::sync::Arc;

use zest_core::api::CallError;
use zest_core::error::UsageError;
use zest_core::jsonrpc::RawJson;
use zest_core::runtime::{Link, PeerCall, Report};

use super::ServerHandle;

/// The context of one client request, passed to its handler (which runs on a thread of its
/// own, or first on the stdio server's reader):
/// `request_id()`, `is_cancelled()`, `progress(..)`, `log(..)`, `log_as(..)` and the client
/// requests of [`PeerApi`](crate::PeerApi), the same methods as on every runtime.
///
/// Every method returns its result at once: asking the client (`create_message`, `elicit`,
/// `list_roots`) blocks this thread until the client answers. A cancelled request's handler
/// sees `is_cancelled()` and SHOULD stop soon; its answer will not be sent.
pub type RequestContext = zest_core::runtime::RequestContext<SessionLink>;

/// The session end of this runtime's [`RequestContext`]: feeds a handler's reports and
/// requests to the client to the session's machine. Handlers never need to name it.
#[derive(Clone)]
pub struct SessionLink {
    feed: Arc<dyn Feed>,
    server: ServerHandle,
}

impl SessionLink {
    pub(crate) fn new(feed: Arc<dyn Feed>, server: ServerHandle) -> Self {
        Self { feed, server }
    }
}

/// What a handler's context asks of the session (implemented by the session itself).
pub(crate) trait Feed: Send + Sync {
    /// Applies a progress report or a log record to the machine.
    fn report(&self, report: Report) -> Result<(), UsageError>;
    /// Sends a request to the client and blocks until its outcome.
    fn peer_request(&self, call: PeerCall) -> Result<RawJson, CallError>;
}

impl Link for SessionLink {
    type Reply<'a, T: 'a> = T;
    type Server = ServerHandle;

    fn server(&self) -> &ServerHandle {
        &self.server
    }

    fn report(&self, report: Report) -> Result<(), UsageError> {
        self.feed.report(report)
    }

    fn peer_request(&self, call: PeerCall) -> Result<RawJson, CallError> {
        self.feed.peer_request(call)
    }

    fn ready<'a, T: Send + 'a, U: 'a>(value: T, f: fn(T) -> U) -> U {
        f(value)
    }

    fn map<'a, T: 'a, U: 'a>(reply: T, f: fn(T) -> U) -> U {
        f(reply)
    }
}

impl fmt::Debug for SessionLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionLink")
    }
}
