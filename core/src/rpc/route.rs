//! Outgoing messages and the routes that say which stream they belong on.

use crate::io::StreamId;
use crate::jsonrpc::RequestId;

/// Where an outgoing message belongs. Transport adapters turn routes into bytes on streams:
/// stdio writes everything to its one stream; Streamable HTTP puts a reply and everything
/// related to a request on that request's own response stream, and standalone messages on
/// the GET stream (or a new POST, client side).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Route {
    /// Sent while serving the peer's request `id` (progress, a log line, a request back to
    /// the peer), which arrived on `stream` and is still unanswered.
    Related {
        /// The peer's request.
        id: RequestId,
        /// The stream that request arrived on.
        stream: StreamId,
    },
    /// Answers what arrived on `stream`: the reply to the peer's request `id`, a batch's reply
    /// array (`id` is then the batch's first request), or the error for a message that could
    /// not be read (`id` is then whatever could be read of it, often nothing).
    Reply {
        /// The request answered, when there is one.
        id: Option<RequestId>,
        /// The stream it arrived on.
        stream: StreamId,
    },
    /// Tied to no request of the peer: our own requests, list changes, a log line made
    /// outside any request.
    Standalone,
}

/// One outgoing JSON-RPC message (or batch array) and its route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// Where it belongs.
    pub route: Route,
    /// Compact JSON, no trailing newline. Has room for one more byte, so a stdio adapter can
    /// append its `\n` without copying.
    pub json: Vec<u8>,
    /// What the message is, for adapters that treat kinds differently (over HTTP a request
    /// waits for its answer on its POST; a notification or reply gets a bare 202).
    pub kind: OutgoingKind,
}

/// What an [`Outgoing`] message is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutgoingKind {
    /// A notification.
    Notification {
        /// Its method.
        method: String,
    },
    /// A response, an error, or a batch of them.
    Reply,
    /// A request whose outcome the machine awaits.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: String,
    },
}
