//! [`StdioServer`]: a stdio session served with a [`ServerHandle`].

use std::sync::Arc;

use smol::io::{AsyncRead, AsyncWrite};
use smol::Task;
use zest_core::error::CloseReason;
use zest_core::runtime::StdioLink;
use zest_core::server::ServerConfig;

use super::driver::{serve_on, serve_stdio_on};
use super::{Registry, ServerHandle};

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
        let link = StdioLink::new();
        let handle = ServerHandle::new(Arc::new(link.clone()));
        let task = smol::spawn(serve_on(announcing(config), registry, reader, writer, link));
        Self { handle, task: Some(task) }
    }

    /// Serves one session on this process's stdin and stdout, as
    /// [`serve_stdio`](crate::serve_stdio) does.
    pub fn stdio(config: ServerConfig, registry: Registry) -> Self {
        let link = StdioLink::new();
        let handle = ServerHandle::new(Arc::new(link.clone()));
        let task = smol::spawn(serve_stdio_on(announcing(config), registry, link));
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
