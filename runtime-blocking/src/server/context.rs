//! What a handler gets: its request's id, cancellation flag, and a link to the session for
//! progress, logging and requests to the client (fed to the machine on the handler's thread).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::Value;
use zest_core::api::{CallError, PeerApi};
use zest_core::error::{RequestError, UsageError};
use zest_core::jsonrpc::{RawJson, RequestId};
use zest_core::schema::methods::Method;
use zest_core::schema::LoggingLevel;

use super::driver::Link;

/// The context of one client request, passed to its handler (which runs on its own thread).
///
/// Asking the client (`create_message`, `elicit`, `list_roots`, through [`PeerApi`]) blocks
/// this thread until the client answers.
pub struct RequestContext {
    id: RequestId,
    cancelled: Arc<AtomicBool>,
    link: Arc<dyn Link>,
}

impl RequestContext {
    pub(super) fn new(id: RequestId, cancelled: Arc<AtomicBool>, link: Arc<dyn Link>) -> Self {
        Self { id, cancelled, link }
    }

    /// The client's id for this request.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// True once the client cancelled this request (or the session ended). The handler
    /// SHOULD stop soon; its answer will not be sent.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Reports progress, if the client asked for it (otherwise nothing is sent). `progress`
    /// MUST increase from one report to the next. Reports and the answer leave in the order
    /// they were made.
    pub fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        self.link.progress(&self.id, progress, total, message)
    }

    /// Sends a log record (`notifications/message`) if `level` is at or above the level the
    /// client set.
    pub fn log(&self, level: LoggingLevel, data: Value) -> Result<(), UsageError> {
        self.link.log(&self.id, level, data)
    }
}

impl PeerApi for RequestContext {
    type Call<'a, T: 'a>
        = Result<T, CallError>
    where
        Self: 'a;

    fn peer_request<M: Method>(&self, params: M::Params) -> Result<M::Result, CallError>
    where
        M::Result: 'static,
    {
        let raw = self.link.peer(&self.id, M::NAME, RawJson::from_serialize(&params))?;
        raw.parse().map_err(|e| CallError::Request(RequestError::InvalidResult(e)))
    }
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}
