//! The stdio server: one driver loop per session, each request's handler in a task of its
//! own, and a [`RequestContext`] through which handlers report progress, log and ask the
//! client (sampling, elicitation, roots).

mod driver;
mod handle;
mod stdio;

pub(crate) use handle::announcing;
pub use handle::StdioServer;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use zest_core::error::CloseReason;
use zest_core::handler::AsyncHandler;
use zest_core::runtime::http_server::HubSink;
use zest_core::runtime::{AsyncLink, StdioLink};
use zest_core::server::ServerConfig;

use crate::http_server::{Hub, TokioHub};

/// What a server offers: `Registry::new().tool("echo", "Echoes", |Echo { text }| async move {
/// text })`, typed async handlers whose parameters are the arguments (a `Deserialize +
/// JsonSchema` type), a [`RequestContext`] and `State<S>` in any order (see
/// [`zest_core::handler::typed`]).
pub type Registry = zest_core::server::Registry<AsyncHandler<RequestContext>>;

/// Serves one MCP session on this process's stdin and stdout until stdin ends; returns why
/// the session ended. Nothing but protocol frames is written to stdout.
///
/// When stdin and stdout are pipes (as when a client spawned this process) they are switched
/// to non-blocking mode and driven by tokio's reactor for the session, then switched back.
///
/// On a multi-thread runtime the session runs as a task of its own, on the workers that
/// drive its input (awaited from `block_on`, every read would wake the blocked thread).
///
/// The lists are fixed and subscriptions not offered, unless the config says otherwise
/// ([`ServerConfig::announce_changes`]); [`StdioServer::stdio`] serves with a
/// [`ServerHandle`] to change them.
pub fn serve_stdio(config: ServerConfig, registry: Registry) -> impl Future<Output = CloseReason> {
    // Boxed, so that the session's loop is compiled here, once, and not again into each
    // program that awaits it (an async fn's body is compiled where it is awaited).
    let session: Pin<Box<dyn Future<Output = CloseReason> + Send>> = Box::pin(async move {
        let (reader, writer, _restore) = stdio::open();
        serve(config, registry, reader, writer).await
    });
    Box::pin(on_a_worker(session))
}

/// On a multi-thread runtime, runs `session` as a task: the worker that sees its input ready
/// then runs it, and the handlers it starts, itself (polled by `block_on` instead, every read
/// would wake the blocked thread from a worker). Dropping this future aborts the task.
async fn on_a_worker(session: Pin<Box<dyn Future<Output = CloseReason> + Send>>) -> CloseReason {
    let multi_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if !multi_thread {
        return session.await;
    }
    struct AbortOnDrop(tokio::task::AbortHandle);
    impl Drop for AbortOnDrop {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let task = tokio::spawn(session);
    let _abort = AbortOnDrop(task.abort_handle());
    match task.await {
        Ok(reason) => reason,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => CloseReason::Local,
    }
}

/// Serves one MCP session over any byte streams (newline-delimited JSON-RPC) until `reader`
/// ends or fails; returns why the session ended. Every frame is flushed as it is written.
///
/// Handlers run concurrently, each in a task of its own; a request the client cancels has
/// its task aborted. On a current-thread runtime a handler is first polled once in the
/// session's loop, and one that is done then is answered without a task (it could not have
/// run beside the loop anyway); on a multi-thread runtime every handler gets its task at
/// once. Must be called within a tokio runtime (either flavour).
pub async fn serve<R, W>(
    config: ServerConfig,
    registry: Registry,
    reader: R,
    writer: W,
) -> CloseReason
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    driver::run(driver::driver(config, registry, StdioLink::new()), reader, writer).await
}

/// What a handler gets with its request: which request it is, whether it was cancelled, and
/// a line to the session for progress, logging and requests to the client (zest-core's
/// [`RequestContext`](zest_core::runtime::RequestContext), the same on every runtime).
///
/// Its methods return futures: `ctx.progress(1.0, None, None).await`. A cancelled request's
/// task is aborted at its next `.await`; `is_cancelled()` is for work between awaits or in
/// tasks the handler spawned. A request to the client is cancelled when its future is dropped.
pub type RequestContext = zest_core::runtime::RequestContext<SessionLink>;

/// The session end of this runtime's [`RequestContext`]: carries a handler's reports and
/// requests to the client to its stdio session's loop or to its session in the HTTP router
/// (zest-core's [`AsyncLink`]). Handlers never need to name it.
pub type SessionLink = AsyncLink<TokioHub>;

/// The registry's handler type.
pub(crate) type Handler = AsyncHandler<RequestContext>;

/// The app's handle on a running server: a stdio (or in-memory) session, or every session
/// of an HTTP server (see [`zest_core::server::ServerHandle`] for what it does). From
/// [`StdioServer::handle`], [`HttpServer::handle`](crate::HttpServer::handle), `McpService::handle`,
/// [`InMemoryServer::handle`](crate::InMemoryServer::handle) or, inside a handler,
/// `ctx.server()`.
pub type ServerHandle = zest_core::server::ServerHandle<Handler>;

/// The handle on every session of an HTTP server.
pub(crate) fn http_handle(hub: &Arc<Hub>) -> ServerHandle {
    ServerHandle::new(Arc::new(HubSink::new(hub)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session_on_thread(name: &'static str) -> Pin<Box<dyn Future<Output = CloseReason> + Send>> {
        Box::pin(async move {
            let here = std::thread::current().name().map(str::to_owned);
            assert_eq!(here.as_deref(), Some(name), "where the session runs");
            CloseReason::Local
        })
    }

    #[test]
    fn on_a_multi_thread_runtime_the_session_runs_on_a_worker() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("worker")
            .build()
            .unwrap();
        let reason = runtime.block_on(on_a_worker(session_on_thread("worker")));
        assert_eq!(reason, CloseReason::Local);
        let current = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let this = std::thread::current().name().expect("a test thread has a name").to_owned();
        let here: &'static str = Box::leak(this.into_boxed_str());
        assert_eq!(current.block_on(on_a_worker(session_on_thread(here))), CloseReason::Local);
    }

    #[test]
    fn dropping_the_future_stops_the_session_task() {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(1).build().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        runtime.block_on(async {
            let session: Pin<Box<dyn Future<Output = CloseReason> + Send>> = Box::pin(async move {
                let _dropped_with_the_task = tx;
                std::future::pending::<CloseReason>().await
            });
            let mut serving = Box::pin(on_a_worker(session));
            assert!(futures::poll!(serving.as_mut()).is_pending());
            drop(serving);
        });
        let gone = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(
            gone,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected),
            "the session task was aborted, dropping its sender"
        );
    }
}
