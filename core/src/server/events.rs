//! What a [`Server`](super::Server) reports.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::config::SessionInfo;
use crate::error::{CloseReason, ProtocolViolation, RequestError};
use crate::jsonrpc::{Notification, RawJson, RequestId};
use crate::schema::{
    CallToolParams, CompleteParams, GetPromptParams, LoggingLevel, ProgressParams, ProgressToken,
    ReadResourceParams,
};

/// Something that happened on a server session. `H` is the handler type the app registered.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event<H> {
    /// Run `handler` for `call`, then answer with [`Session::respond`](super::Session::respond).
    /// The request has been validated: the tool, prompt or resource exists and tool arguments
    /// match the tool's `inputSchema`.
    Call {
        /// The client's request id.
        id: RequestId,
        /// The handler registered for the item.
        handler: H,
        /// What to do.
        call: Call,
        /// Present when the client asked for progress; report with
        /// [`Session::progress`](super::Session::progress).
        progress_token: Option<ProgressToken>,
        /// What the handler may want to know about the session it serves.
        context: CallContext,
    },
    /// The client cancelled one of its requests: stop the handler; its answer is dropped.
    Cancelled {
        /// The client's request id.
        id: RequestId,
    },
    /// The session is over; emitted exactly once, last.
    Closed(CloseReason),
    /// We answered `initialize`.
    Initialized(Box<SessionInfo>),
    /// A notification from the client other than progress, cancellation and `initialized`.
    Notification(ClientNotification),
    /// Progress on one of our requests to the client.
    Progress {
        /// Our request.
        id: RequestId,
        /// What the client reported.
        progress: ProgressParams,
    },
    /// `notifications/initialized` arrived: the session is fully open.
    Ready,
    /// The one outcome of one of our requests to the client.
    Response {
        /// Our request.
        id: RequestId,
        /// The raw result, or why there is none.
        result: Result<RawJson, RequestError>,
    },
    /// The client broke a protocol rule; already answered if it needed an answer.
    Violation(ProtocolViolation),
}

/// The session a call belongs to, as its handler sees it: the negotiated revision, the
/// client's info and capabilities (what it can be asked), and the log level it set.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct CallContext {
    /// What the client said in `initialize` and the revision agreed; `None` only for a call
    /// that arrived before `initialize` finished (which lenient mode allows).
    pub session: Option<Arc<SessionInfo>>,
    /// The minimum level of log records the client wants; `None` when it set none.
    pub log_level: Option<LoggingLevel>,
    /// A 2026-07-28 `tools/call`, `prompts/get` or `resources/read`: where its handler's
    /// asks of the client are answered or recorded (see [`Round`](super::Round)).
    pub round: Option<Arc<super::Round>>,
    /// Who the request comes from, when an HTTP router checks OAuth tokens
    /// ([`ProtectedResource`](crate::auth::ProtectedResource)); `None` otherwise.
    pub principal: Option<Arc<crate::auth::Principal>>,
}

/// A request the app's handler serves.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Call {
    /// `completion/complete`.
    Complete(CompleteParams),
    /// `prompts/get`, with required arguments checked.
    GetPrompt(GetPromptParams),
    /// `resources/read`; `vars` holds the template variables when a template matched.
    ReadResource {
        /// The request.
        params: ReadResourceParams,
        /// Variables from the matching resource template (empty for a plain resource).
        vars: BTreeMap<String, String>,
    },
    /// `tools/call`, with arguments valid against the tool's `inputSchema`. Its `meta` is
    /// `None` for a tool registered with a typed handler (which never sees it); a tool added
    /// with `add_tool` or `raw_tool` gets the `_meta` as sent.
    Tool(CallToolParams),
}

/// A notification the client sends to the server.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ClientNotification {
    /// `notifications/roots/list_changed`.
    RootsListChanged,
    /// Any other notification, raw.
    Other(Notification),
}
