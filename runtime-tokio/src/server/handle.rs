//! [`ServerHandle`]: what the app holds on a running server, from outside handlers or from a
//! handler's context ([`RequestContext::server`](zest_core::runtime::RequestContext::server)).

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::mpsc;
use zest_core::handler::typed::{AsyncCallable, IntoToolResult};
use zest_core::handler::AsyncHandler;
use zest_core::schema::LoggingLevel;
use zest_core::server::{Broadcast, ListKind};

use super::driver::Command;
use super::{Registry, RequestContext};
use crate::http_server::Hub;

/// The app's handle on a running server: a stdio (or in-memory) session, or every session
/// of an HTTP server. Cheap to clone, `Send + Sync`; from [`StdioServer::handle`],
/// [`HttpServer::handle`](crate::HttpServer::handle), `McpService::handle`,
/// [`InMemoryServer::handle`](crate::InMemoryServer::handle) or, inside a handler,
/// `ctx.server()`.
///
/// Each method returns at once; what it sends leaves in order with everything else the
/// session sends. Once the server has stopped, they do nothing.
///
/// [`StdioServer::handle`]: crate::StdioServer::handle
#[derive(Clone)]
pub struct ServerHandle(Target);

#[derive(Clone)]
enum Target {
    Http(Arc<Hub>),
    Stdio(mpsc::UnboundedSender<Command>),
}

impl ServerHandle {
    pub(crate) fn http(hub: Arc<Hub>) -> Self {
        Self(Target::Http(hub))
    }

    pub(super) fn stdio(commands: mpsc::UnboundedSender<Command>) -> Self {
        Self(Target::Stdio(commands))
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
        F: AsyncCallable<RequestContext, Args>,
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

    fn send(&self, command: Broadcast<AsyncHandler<RequestContext>>) {
        match &self.0 {
            Target::Http(hub) => hub.broadcast(Instant::now(), command),
            // Err once the session's loop is gone: there is nobody left to tell.
            Target::Stdio(commands) => drop(commands.send(Command::Broadcast(command))),
        }
    }
}

impl fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Target::Http(_) => f.write_str("ServerHandle(http)"),
            Target::Stdio(_) => f.write_str("ServerHandle(stdio)"),
        }
    }
}
