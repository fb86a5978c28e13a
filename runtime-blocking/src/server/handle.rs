//! [`ServerHandle`]: what the app holds on a running server, from outside handlers or from a
//! handler's context ([`RequestContext::server`](zest_core::runtime::RequestContext::server)),
//! and [`StdioServer`], a stdio session served with one.

use std::fmt;
use std::io::{self, Read, Write};
use std::panic;
use std::sync::{Arc, Weak};
use std::thread::{self, JoinHandle};

use serde_json::Value;
use zest_core::error::CloseReason;
use zest_core::handler::typed::{IntoToolResult, SyncCallable};
use zest_core::handler::SyncHandler;
use zest_core::io::TransportFailure;
use zest_core::schema::LoggingLevel;
use zest_core::server::{Broadcast, ListKind, ServerConfig};

use super::{session, supervise, Registry, RequestContext};

/// What a server handle's commands are applied to: a stdio session, or the HTTP hub.
pub(crate) trait Broadcaster: Send + Sync {
    /// Applies `command` to every session held, and has what it sends written.
    fn broadcast(self: Arc<Self>, command: Broadcast<SyncHandler<RequestContext>>);
}

/// The app's handle on a running server: a stdio (or in-memory) session, or every session
/// of an HTTP server. Cheap to clone, `Send + Sync`; from [`StdioServer::handle`],
/// [`HttpServer::handle`](crate::HttpServer::handle),
/// [`InMemoryServer::handle`](crate::InMemoryServer::handle) or, inside a handler,
/// `ctx.server()`.
///
/// Each method returns at once (it never waits on the client): what it sends leaves in
/// order with everything else the session sends. Once the server has stopped, they do
/// nothing.
#[derive(Clone)]
pub struct ServerHandle(Weak<dyn Broadcaster>);

impl ServerHandle {
    pub(crate) fn new(target: Weak<dyn Broadcaster>) -> Self {
        Self(target)
    }

    /// Changes the registry every session shares, then tells each session's client that the
    /// lists named in `changed` changed (`notifications/tools/list_changed` …). A client
    /// that lists again after that notification sees the change. A change that panics is
    /// dropped: the registry stays as it was and nothing is sent.
    pub fn change_registry(
        &self,
        changed: &[ListKind],
        change: impl FnOnce(&mut Registry) + Send + 'static,
    ) {
        let changed = changed.to_vec();
        self.send(Broadcast::ChangeRegistry { changed, change: Box::new(change) });
    }

    /// Adds a typed tool (as [`Registry::tool`](zest_core::server::Registry) does, with the
    /// registry's state), or replaces the one of that name, and announces it.
    pub fn add_tool<F, Args>(&self, name: &str, description: &str, f: F)
    where
        F: SyncCallable<RequestContext, Args>,
        F::Output: IntoToolResult,
        Args: 'static,
    {
        let (name, description) = (name.to_owned(), description.to_owned());
        self.change_registry(&[ListKind::Tools], move |r| {
            *r = r.clone().tool(&name, &description, f);
        });
    }

    /// Removes a tool by name and announces it (also when there was none of that name).
    pub fn remove_tool(&self, name: &str) {
        let name = name.to_owned();
        self.change_registry(&[ListKind::Tools], move |r| {
            r.remove_tool(&name);
        });
    }

    /// Tells the sessions subscribed to `uri` (`resources/subscribe`) that it changed
    /// (`notifications/resources/updated`); the others hear nothing.
    pub fn resource_updated(&self, uri: &str) {
        self.send(Broadcast::ResourceUpdated { uri: uri.to_owned() });
    }

    /// Sends a log record (`notifications/message`), related to no request, to every session
    /// whose client admits `level` (`logging/setLevel`; every level when it set none).
    pub fn log(&self, level: LoggingLevel, data: Value) {
        self.send(Broadcast::Log { level, logger: None, data });
    }

    /// [`log`](Self::log), naming the logger the record comes from.
    pub fn log_as(&self, logger: &str, level: LoggingLevel, data: Value) {
        self.send(Broadcast::Log { level, logger: Some(logger.to_owned()), data });
    }

    fn send(&self, command: Broadcast<SyncHandler<RequestContext>>) {
        // None once the server is gone: there is nobody left to tell.
        if let Some(target) = self.0.upgrade() {
            target.broadcast(command);
        }
    }
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerHandle")
    }
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
        let handle = ServerHandle::new(me);
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
