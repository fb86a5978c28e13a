//! [`StdioServer`]: a stdio session served with a [`ServerHandle`].

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use zest_core::error::CloseReason;
use zest_core::runtime::StdioLink;
use zest_core::server::ServerConfig;

use super::{driver, stdio, Registry, ServerHandle};

/// A stdio session served with a [`ServerHandle`]: the same loop as [`serve`](super::serve), in a task of
/// its own, with `listChanged` and resource `subscribe` declared
/// ([`ServerConfig::announce_changes`]), since the app can now use them.
///
/// ```no_run
/// # use zest_tokio::{Registry, ServerConfig, StdioServer};
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
    task: tokio::task::JoinHandle<CloseReason>,
}

impl StdioServer {
    /// Serves one session over `reader` and `writer`, as [`serve`](super::serve) does, in a task of its
    /// own. Must be called within a tokio runtime.
    pub fn start<R, W>(config: ServerConfig, registry: Registry, reader: R, writer: W) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let link = StdioLink::new();
        let handle = ServerHandle::new(Arc::new(link.clone()));
        let driver = driver::driver(announcing(config), registry, link);
        Self { handle, task: tokio::spawn(driver::run(driver, reader, writer)) }
    }

    /// Serves one session on this process's stdin and stdout, as [`serve_stdio`](super::serve_stdio) does, in a
    /// task of its own. Must be called within a tokio runtime.
    pub fn stdio(config: ServerConfig, registry: Registry) -> Self {
        let link = StdioLink::new();
        let handle = ServerHandle::new(Arc::new(link.clone()));
        let driver = driver::driver(announcing(config), registry, link);
        let task = tokio::spawn(async move {
            let (reader, writer, _restore) = stdio::open();
            driver::run(driver, reader, writer).await
        });
        Self { handle, task }
    }

    /// The handle on this server (clone it anywhere).
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// Waits for the session to end and returns why (the client closing shows as the end
    /// of its input). A panic in the session's loop is resumed here.
    pub async fn stopped(self) -> CloseReason {
        match self.task.await {
            Ok(reason) => reason,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => CloseReason::Local,
        }
    }

    /// True once the session has ended.
    pub fn is_stopped(&self) -> bool {
        self.task.is_finished()
    }
}

/// `config`, declaring what a server handle can change.
pub(crate) fn announcing(mut config: ServerConfig) -> ServerConfig {
    config.announce_changes = true;
    config
}
