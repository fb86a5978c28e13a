//! The server: [`serve`] drives zest-core's server loop over any pair of byte streams,
//! [`serve_stdio`] over this process's stdin and stdout. Each call's handler is polled once
//! by the loop; one that does not finish then runs on as a task of a session-local
//! executor, dropped if the call is cancelled.

mod driver;
mod handle;
mod stdio;

pub(crate) use handle::announcing;
pub use handle::StdioServer;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use smol::io::{AsyncRead, AsyncWrite};
use zest_core::error::CloseReason;
use zest_core::handler::AsyncHandler;
use zest_core::runtime::http_server::HubSink;
use zest_core::runtime::{AsyncLink, StdioLink};
use zest_core::server::ServerConfig;

use crate::http_server::{Hub, SmolHub};

/// What a server offers: typed async handlers whose parameters are the arguments (a
/// `Deserialize + JsonSchema` type), a [`RequestContext`] and `State<S>` in any order (see
/// [`zest_core::handler::typed`]).
pub type Registry = zest_core::server::Registry<AsyncHandler<RequestContext>>;

/// Serves one MCP session on this process's stdin and stdout until stdin ends; returns why
/// the session ended. Stdout carries only protocol frames; log to stderr.
///
/// When stdin and stdout are pipes (as when an MCP client spawned us), they are driven by
/// async-io's reactor in non-blocking mode for the session's duration and put back in
/// blocking mode afterwards; a terminal, a file or a stdout shared with stderr is read and
/// written by threads of smol's blocking pool instead.
///
/// The lists are fixed and subscriptions not offered, unless the config says otherwise
/// ([`ServerConfig::announce_changes`]); [`StdioServer::stdio`](crate::StdioServer::stdio)
/// serves with a [`ServerHandle`] to change them.
pub fn serve_stdio(config: ServerConfig, registry: Registry) -> impl Future<Output = CloseReason> {
    // Boxed, so that the session's loop is compiled here, once, and not again into each
    // program that awaits it (an async fn's body is compiled where it is awaited).
    let session: Pin<Box<dyn Future<Output = CloseReason> + Send>> =
        Box::pin(driver::serve_stdio_on(config, registry, StdioLink::new()));
    session
}

/// Serves one MCP session over `reader` and `writer` until `reader` ends or a write fails;
/// returns why the session ended. Frames are flushed as soon as they are written.
///
/// Everything runs inside the returned future, on the caller's executor: the driver (which
/// also writes) polls each call's handler once, answering at once if it is done; a handler
/// that is not goes on as a task of a session-local executor (so handlers run concurrently
/// with each other and with the driver, on the thread polling this future).
pub async fn serve<R, W>(
    config: ServerConfig,
    registry: Registry,
    reader: R,
    writer: W,
) -> CloseReason
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    driver::serve_on(config, registry, reader, writer, StdioLink::new()).await
}

/// What a handler gets: its request's id, cancellation, progress, logging, and requests to
/// the client ([`PeerApi`](crate::PeerApi): sampling, elicitation, roots); zest-core's
/// [`RequestContext`](zest_core::runtime::RequestContext), the same on every runtime.
///
/// Its methods return futures: `ctx.progress(1.0, None, None).await`. A cancelled request's
/// task is dropped at its next await; `is_cancelled()` is for work handed elsewhere, such as
/// a blocking thread. A request to the client is cancelled when its future is dropped.
pub type RequestContext = zest_core::runtime::RequestContext<SessionLink>;

/// The session end of this runtime's [`RequestContext`]: carries a handler's reports and
/// requests to the client to its stdio session's loop or to its session in the HTTP router
/// (zest-core's [`AsyncLink`]). Handlers never need to name it.
pub type SessionLink = AsyncLink<SmolHub>;

/// The registry's handler type.
pub(crate) type Handler = AsyncHandler<RequestContext>;

/// The app's handle on a running server: a stdio (or in-memory) session, or every session
/// of an HTTP server (see [`zest_core::server::ServerHandle`] for what it does). From
/// [`StdioServer::handle`](crate::StdioServer::handle),
/// [`HttpServer::handle`](crate::HttpServer::handle),
/// [`InMemoryServer::handle`](crate::InMemoryServer::handle) or, inside a handler,
/// `ctx.server()`.
pub type ServerHandle = zest_core::server::ServerHandle<Handler>;

/// The handle on every session of an HTTP server.
pub(crate) fn http_handle(hub: &Arc<Hub>) -> ServerHandle {
    ServerHandle::new(Arc::new(HubSink::new(hub)))
}
