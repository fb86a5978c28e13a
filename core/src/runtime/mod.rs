//! Support for runtime crates: the half of a runtime that is the same on every executor.
//!
//! Applications do not need this module. It is what zest-tokio, zest-smol and zest-blocking
//! (and an embedder writing a runtime of its own) build on, so that each keeps only its IO,
//! its one loop and its handles, and the three cannot drift apart:
//!
//! - [`WriteQueue`]: the bookkeeping of one outgoing byte stream. Frames go in as they are
//!   drained from a machine; [`WriteQueue::poll_step`] says what to do next (write these
//!   bytes, flush, close, nothing); the runtime performs the step on its sink and reports
//!   back. Closing after the queue is drained, and giving up at a drain deadline, are the
//!   queue's, not the runtime's. [`Writer`] performs those steps on any async sink a
//!   runtime wraps as a [`PollSink`], from the session's own loop.
//! - [`Calls`]: the table of a session's own requests in flight, from the machine's
//!   [`RequestId`](crate::jsonrpc::RequestId) to the runtime's reply sender (anything that is
//!   a [`ReplySlot`]), with progress callbacks, abandonment by a caller's [`CallKey`], and
//!   exactly one outcome per call.
//! - [`RequestContext`]: what a server handler gets, with the same methods on every runtime;
//!   the runtime supplies only the [`Link`] that carries a handler's [`Report`]s and
//!   [`PeerCall`]s to its session's loop.
//! - [`ClientDispatch`]: what a client session's loop does with each event of its machine,
//!   as [`ClientStep`]s (hand over an outcome, start or stop a client handler, queue a
//!   notification), every event matched once, here.
//! - [`SessionDispatch`]: the same for one server session on one stream (stdio, in
//!   memory): which handler runs for which call, and its requests to the client.
//! - [`ConnectError`]: why spawning a stdio server (or reaching an HTTP one) and shaking
//!   hands with it failed.
//! - [`http_server`]: one accepted HTTP/1.1 connection between a socket and the
//!   [`Router`](crate::http::server::Router) ([`http_server::ServerConn`], stream ids).
//! - [`http_client`]: where a URL connects ([`http_client::Target`]), one client connection
//!   between a socket and the client machine ([`http_client::ClientConn`]), and the
//!   keep-alive [`http_client::Pool`].
//!
//! - [`Exchanges`]: a client session's HTTP exchanges as futures its own task polls (no
//!   task per exchange), their events queued in an [`Inbox`].
//! - [`Inbox`]: a queue into a task's loop that wakes the task only while it waits (not
//!   when it sends to itself, nor while it is busy anyway).
//!
//! Nothing here does IO, reads a clock or needs an executor: deadlines are `Instant`
//! arguments, and a runtime's future types appear only as an associated type of [`Link`].

mod answering;
mod async_link;
mod authorizing;
mod calls;
mod client_api;
mod client_command;
mod client_dispatch;
mod client_loop;
mod connect;
mod context;
mod deadlines;
mod driven;
mod exchanges;
pub mod http_client;
pub mod http_server;
mod inbox;
mod oneshot;
mod owned;
mod server_loop;
mod session_dispatch;
mod stdio_outputs;
#[cfg(test)]
mod test_reply;
mod write;
mod writer;

/// How many unread server notifications a client session keeps (every runtime's
/// `Client::notifications`): one queue shared by all its readers, each notification read
/// once; while it is full, newer notifications are dropped rather than stall the session.
pub const NOTIFICATION_QUEUE: usize = 1024;

pub use answering::{answer_caught, panicked, Answer, Answering};
pub use async_link::{AsyncContext, AsyncLink};
pub use authorizing::{authorization, authorization_blocking};
pub use calls::{CallKey, CallKeys, Calls, Delivery, Outcome, ReplySlot};
pub use client_api::{call_raw, AsyncCommand, CommandSink};
pub use client_command::{ClientCommand, OutgoingCall, CALLER_STOPPED_WAITING};
pub use client_dispatch::{ClientDispatch, ClientStep};
pub use client_loop::{ClientHost, ClientLoop};
pub use connect::ConnectError;
pub use context::{CancelFlag, Keyed, Link, PeerCall, Report, RequestContext};
pub use deadlines::{
    accept_pause, ACCEPT_PAUSE, BACKLOG_STALL, DEFAULT_GRACE, DEFAULT_SHUTDOWN_GRACE,
    FINAL_FLUSH_LIMIT, HTTP_CLOSE_GRACE,
};
pub use driven::{Background, Driven, POLLS_PER_TURN};
pub use exchanges::{ExchangeEvents, Exchanges};
pub use inbox::{transmit_bytes, Inbox};
pub use oneshot::{oneshot, oneshot_then, outcome, OneshotReceiver, OneshotSender};
pub use owned::OwnedEvent;
pub use server_loop::{ServerCommand, ServerHost, ServerLoop, StdioLink};
pub use session_dispatch::{SessionDispatch, SessionStep};
pub use stdio_outputs::{StdioMachine, StdioOutput, StdioOutputs};
pub use write::{
    backlog_exceeds, not_reading, Backlog, BacklogWatch, WriteEnd, WriteQueue, WriteStep,
};
pub use writer::{PollRead, PollSink, Writer};
