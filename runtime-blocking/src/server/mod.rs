//! The stdio server: a reader thread that also runs the calls it reads (see [`reader`]),
//! handler threads for the calls that must not wait for it (idle ones reused) and the calling
//! thread as supervisor; each feeds the core server machine under a lock (see [`driver`]).

mod context;
mod driver;
mod handle;
mod reader;

use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::Instant;

use zest_core::error::CloseReason;
use zest_core::handler::SyncHandler;
use zest_core::io::TransportFailure;
use zest_core::server::{Server, ServerConfig};

use crate::link;
pub(crate) use context::Feed;
pub use context::{RequestContext, SessionLink};
use driver::ServerSession;
pub(crate) use handle::{announcing, handle_on, Broadcaster};
pub use handle::{ServerHandle, StdioServer};

/// What a blocking server serves: typed tools and prompts, plain functions whose parameters
/// are the arguments (a `Deserialize + JsonSchema` type), a [`RequestContext`] (owned) and
/// `State<S>` in any order (see [`zest_core::handler::typed`]); resources, templates,
/// completion and `raw_tool` closures take `&RequestContext`.
pub type Registry = zest_core::server::Registry<SyncHandler<RequestContext>>;

/// Serves one session on this process's stdin and stdout until stdin ends; returns why the
/// session closed. Stdout carries only protocol frames (handlers MUST NOT print to it); frames
/// are written in order, the answers of the calls of one read together by the reader after
/// it ran them, others by the thread that produced them. Log to stderr.
///
/// The lists are fixed and subscriptions not offered, unless the config says otherwise
/// ([`ServerConfig::announce_changes`]); [`StdioServer::stdio`] serves with a
/// [`ServerHandle`] to change them.
pub fn serve_stdio(config: ServerConfig, registry: Registry) -> CloseReason {
    zest_net::widen_stdio();
    serve(config, registry, io::stdin(), io::stdout())
}

/// Serves one session over any byte streams until `reader` ends (or a write fails); returns
/// why the session closed. `reader` is read on a thread of its own, which may outlive this
/// call if the session ends before `reader` does; `writer` is written by whichever thread
/// produced the frames (hence `'static`). The calling thread sleeps until the machine's next
/// deadline and returns once the session has closed and its last frames are written, or 5 s
/// after it closed if the client stopped reading (a thread blocked writing to it is left
/// behind, and so is the writer).
pub fn serve<R, W>(config: ServerConfig, registry: Registry, reader: R, writer: W) -> CloseReason
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    supervise(session(config, registry, writer), reader)
}

/// A session waiting for its client.
fn session<W: Write + Send + 'static>(
    config: ServerConfig,
    registry: Registry,
    writer: W,
) -> Arc<ServerSession<W>> {
    let backlog_limit = config.max_backlog_bytes;
    let config = zest_net::with_request_state(config);
    ServerSession::new(Server::new(config, registry, Instant::now()), writer, backlog_limit)
}

/// Reads `reader` on a thread of its own into `session`, and supervises the session on this
/// thread until it ends.
fn supervise<R, W>(session: Arc<ServerSession<W>>, reader: R) -> CloseReason
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    if let Err(e) = session.start_reading(reader::Reading::new(reader)) {
        let why = format!("cannot start the reader thread: {e}");
        return CloseReason::TransportFailed(TransportFailure::Other(why));
    }
    link::no_join(|| session.supervise())
}
