//! [`ServerHandle`]: what the app holds on a running server, from outside handlers or from a
//! handler's context ([`RequestContext::server`](zest_core::runtime::RequestContext::server)),
//! and [`StdioServer`], a stdio session served with one.

use std::sync::{Arc, Weak};

use smol::channel::Sender;
use smol::io::{AsyncRead, AsyncWrite};
use smol::Task;
use zest_core::error::CloseReason;
use zest_core::handler::AsyncHandler;
use zest_core::server::{Broadcast, BroadcastBudget, BroadcastSink, ServerConfig};

use crate::http_server::Hub;
use crate::server::{serve_on, serve_stdio_on, Command, Commands, Registry, RequestContext};

/// The app's handle on a running server: a stdio (or in-memory) session, or every session
/// of an HTTP server (see [`zest_core::server::ServerHandle`] for what it does). From
/// [`StdioServer::handle`], [`HttpServer::handle`](crate::HttpServer::handle),
/// [`InMemoryServer::handle`](crate::InMemoryServer::handle) or, inside a handler,
/// `ctx.server()`.
pub type ServerHandle = zest_core::server::ServerHandle<AsyncHandler<RequestContext>>;

/// Where a handle's commands go.
enum Target {
    /// Weak: a handle the app keeps does not keep a stopped server's router alive (nor
    /// does a handler's own context make a cycle through the hub's tasks).
    Http(Weak<Hub>),
    /// The session's commands, and its budget for logs and updates.
    Stdio(Sender<Command>, BroadcastBudget),
}

impl BroadcastSink<AsyncHandler<RequestContext>> for Target {
    fn send(&self, command: Broadcast<AsyncHandler<RequestContext>>) {
        match self {
            Self::Http(hub) => {
                // Gone once the server is: there is nobody left to tell.
                if let Some(hub) = hub.upgrade() {
                    hub.broadcast(command);
                }
            }
            // Past the budget a log or an update is dropped; Err once the session's loop is
            // gone: there is nobody left to tell.
            Self::Stdio(commands, budget) => {
                if budget.admit(&command) {
                    drop(commands.try_send(Command::Broadcast(command)));
                }
            }
        }
    }
}

/// The handle on every session of an HTTP server.
pub(crate) fn http_handle(hub: &Arc<Hub>) -> ServerHandle {
    ServerHandle::new(Arc::new(Target::Http(Arc::downgrade(hub))))
}

/// The handle on one stdio (or in-memory) session.
pub(crate) fn stdio_handle(commands: Sender<Command>, budget: BroadcastBudget) -> ServerHandle {
    ServerHandle::new(Arc::new(Target::Stdio(commands, budget)))
}

/// A stdio session served with a [`ServerHandle`]: the same loop as [`serve`](crate::serve),
/// as a task on smol's global executor (so from any executor), with `listChanged` and
/// resource `subscribe` declared ([`ServerConfig::announce_changes`]), since the app can now
/// use them.
///
/// ```no_run
/// # use zest_smol::{Registry, ServerConfig, StdioServer};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Args { text: String }
/// # async fn run() {
/// let server = StdioServer::stdio(ServerConfig::new("demo", "1.0"), Registry::new());
/// let handle = server.handle();
/// handle.add_tool("echo", "Echoes", |Args { text }| async move { text });
/// handle.resource_updated("file:///notes.txt");
/// let reason = server.stopped().await;
/// # }
/// ```
#[derive(Debug)]
pub struct StdioServer {
    handle: ServerHandle,
    /// `Some` until [`stopped`](Self::stopped) or drop (which detaches it).
    task: Option<Task<CloseReason>>,
}

impl StdioServer {
    /// Serves one session over `reader` and `writer`, as [`serve`](crate::serve) does.
    pub fn start<R, W>(config: ServerConfig, registry: Registry, reader: R, writer: W) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let commands = Commands::new();
        let handle = commands.handle();
        let config = announcing(config);
        let task = smol::spawn(serve_on(config, registry, reader, writer, commands));
        Self { handle, task: Some(task) }
    }

    /// Serves one session on this process's stdin and stdout, as
    /// [`serve_stdio`](crate::serve_stdio) does.
    pub fn stdio(config: ServerConfig, registry: Registry) -> Self {
        let commands = Commands::new();
        let handle = commands.handle();
        let task = smol::spawn(serve_stdio_on(announcing(config), registry, commands));
        Self { handle, task: Some(task) }
    }

    /// The handle on this server (clone it anywhere).
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// Waits for the session to end and returns why (the client closing shows as the end
    /// of its input).
    pub async fn stopped(mut self) -> CloseReason {
        match self.task.take() {
            Some(task) => task.await,
            // Invariant: only `stopped` (which consumes self) and `drop` take the task.
            None => unreachable!("the task is taken only by stopped or drop"),
        }
    }

    /// True once the session has ended.
    pub fn is_stopped(&self) -> bool {
        self.task.as_ref().is_none_or(Task::is_finished)
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.detach();
        }
    }
}

/// `config`, declaring what a server handle can change.
pub(crate) fn announcing(mut config: ServerConfig) -> ServerConfig {
    config.announce_changes = true;
    config
}
