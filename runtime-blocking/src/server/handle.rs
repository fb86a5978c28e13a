//! [`ServerHandle`]: what the app holds on a running server, from outside handlers or from a
//! handler's context ([`RequestContext::server`](zest_core::runtime::RequestContext::server)),
//! and [`StdioServer`], a stdio session served with one.

use std::io::{self, Read, Write};
use std::panic;
use std::sync::{Arc, Weak};
use std::thread::{self, JoinHandle};

use zest_core::error::CloseReason;
use zest_core::handler::SyncHandler;
use zest_core::io::TransportFailure;
use zest_core::server::{Broadcast, BroadcastSink, ServerConfig};

use super::{session, supervise, Registry, RequestContext};

/// What a server handle's commands are applied to: a stdio session, or the HTTP hub.
pub(crate) trait Broadcaster: Send + Sync {
    /// Applies `command` to every session held, and has what it sends written.
    fn broadcast(self: Arc<Self>, command: Broadcast<SyncHandler<RequestContext>>);
}

/// The app's handle on a running server: a stdio (or in-memory) session, or every session
/// of an HTTP server (see [`zest_core::server::ServerHandle`] for what it does). From
/// [`StdioServer::handle`], [`HttpServer::handle`](crate::HttpServer::handle),
/// [`InMemoryServer::handle`](crate::InMemoryServer::handle) or, inside a handler,
/// `ctx.server()`.
pub type ServerHandle = zest_core::server::ServerHandle<SyncHandler<RequestContext>>;

/// A handle that does not keep its server alive.
struct Target(Weak<dyn Broadcaster>);

impl BroadcastSink<SyncHandler<RequestContext>> for Target {
    fn send(&self, command: Broadcast<SyncHandler<RequestContext>>) {
        // None once the server is gone: there is nobody left to tell.
        if let Some(target) = self.0.upgrade() {
            target.broadcast(command);
        }
    }
}

/// The handle whose commands `target` applies while it lives.
pub(crate) fn handle_on(target: Weak<dyn Broadcaster>) -> ServerHandle {
    ServerHandle::new(Arc::new(Target(target)))
}

/// A stdio session served with a [`ServerHandle`]: the same session as [`serve`](super::serve),
/// supervised by a thread of its own, with `listChanged` and resource `subscribe` declared
/// ([`ServerConfig::announce_changes`]), since the app can now use them.
///
/// ```no_run
/// # use zest_blocking::{Registry, ServerConfig, StdioServer};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Args { text: String }
/// let server = StdioServer::stdio(ServerConfig::new("demo", "1.0"), Registry::new());
/// let handle = server.handle();
/// handle.add_tool("echo", "Echoes", |Args { text }| text);
/// handle.resource_updated("file:///notes.txt");
/// let reason = server.stopped();
/// ```
#[derive(Debug)]
pub struct StdioServer {
    handle: ServerHandle,
    /// `Err` when the thread could not start: why, which [`stopped`](Self::stopped) returns.
    thread: Result<JoinHandle<CloseReason>, CloseReason>,
}

impl StdioServer {
    /// Serves one session over `reader` and `writer`, as [`serve`](super::serve) does, on a
    /// thread of its own.
    pub fn start<R, W>(config: ServerConfig, registry: Registry, reader: R, writer: W) -> Self
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        let session = session(announcing(config), registry, writer);
        let me: Weak<dyn Broadcaster> = Arc::downgrade(&session) as _;
        let handle = handle_on(me);
        let thread = thread::Builder::new()
            .name("zest-stdio-server".into())
            .spawn(move || supervise(session, reader))
            .map_err(|e| {
                let why = format!("cannot start the server thread: {e}");
                CloseReason::TransportFailed(TransportFailure::Other(why))
            });
        Self { handle, thread }
    }

    /// Serves one session on this process's stdin and stdout, as
    /// [`serve_stdio`](super::serve_stdio) does, on a thread of its own.
    pub fn stdio(config: ServerConfig, registry: Registry) -> Self {
        zest_net::widen_stdio();
        Self::start(config, registry, io::stdin(), io::stdout())
    }

    /// The handle on this server (clone it anywhere).
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// Blocks until the session ends and returns why (the client closing shows as the end
    /// of its input). A panic on the server's thread is resumed here.
    pub fn stopped(self) -> CloseReason {
        match self.thread {
            Ok(thread) => thread.join().unwrap_or_else(|panicked| panic::resume_unwind(panicked)),
            Err(why) => why,
        }
    }

    /// True once the session has ended.
    pub fn is_stopped(&self) -> bool {
        self.thread.as_ref().is_ok_and(JoinHandle::is_finished) || self.thread.is_err()
    }
}

/// `config`, declaring what a server handle can change.
pub(crate) fn announcing(mut config: ServerConfig) -> ServerConfig {
    config.announce_changes = true;
    config
}
