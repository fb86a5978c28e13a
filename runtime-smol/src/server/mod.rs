//! The server: [`serve`] drives zest-core's server loop over any pair of byte streams,
//! [`serve_stdio`] over this process's stdin and stdout. Each call's handler is polled once
//! by the loop; one that does not finish then runs on as a task of a session-local
//! executor, dropped if the call is cancelled.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use smol::io::{AsyncRead, AsyncWrite};
use smol::{Executor, Task};
use zest_core::error::CloseReason;
use zest_core::handler::AsyncHandler;
use zest_core::runtime::http_server::HubSink;
use zest_core::runtime::{AsyncLink, ServerHost, ServerLoop, StdioLink};
use zest_core::server::ServerConfig;

use crate::http_server::{Hub, SmolHub};
use crate::stdio;
use crate::timer::Alarm;
use crate::writer::{self, Source};

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
        Box::pin(serve_stdio_on(config, registry, StdioLink::new()));
    session
}

/// [`serve_stdio`] on a given session link (whose handles may exist already).
pub(crate) async fn serve_stdio_on(
    config: ServerConfig,
    registry: Registry,
    link: StdioLink<Handler>,
) -> CloseReason {
    let (reader, writer, restore) = stdio::open();
    let reason = serve_on(config, registry, reader, writer, link).await;
    drop(restore);
    reason
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
    serve_on(config, registry, reader, writer, StdioLink::new()).await
}

/// [`serve`] on a given session link (whose handles may exist already).
pub(crate) async fn serve_on<R, W>(
    config: ServerConfig,
    registry: Registry,
    reader: R,
    writer: W,
    link: StdioLink<Handler>,
) -> CloseReason
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let executor = Executor::new();
    let host = Host { executor: &executor, alarm: Alarm::default() };
    let config = zest_net::with_request_state(config);
    let driver = ServerLoop::new(config, registry, link.clone(), AsyncLink::stdio(link), host);
    executor.run(driver.run(&mut Source(reader), writer::recycling(writer))).await
}

/// The session's timer and the executor its handlers run on.
struct Host<'e> {
    executor: &'e Executor<'static>,
    alarm: Alarm,
}

impl ServerHost for Host<'_> {
    type Task = Task<()>;

    fn poll_timer(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        // It may go off early (re-armed only for an earlier deadline): that is allowed here.
        self.alarm.arm(Some(at));
        self.alarm.poll_fired(cx)
    }

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn polls_first(&self) -> bool {
        // Most handlers finish in their first poll: answered in the same drain, no task.
        true
    }

    fn spawn(&mut self, work: Pin<Box<dyn Future<Output = ()> + Send>>) -> Task<()> {
        self.executor.spawn(work)
    }

    fn stop(&mut self, task: Task<()>) {
        drop(task);
    }
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
