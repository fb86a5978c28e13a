//! [`ServerHandle`]: what the app holds on a running server, from outside handlers or from a
//! handler's context ([`RequestContext::server`](zest_core::runtime::RequestContext::server)).
//! The handle is core's; this runtime supplies where its commands go.

use std::sync::{Arc, Weak};

use tokio::sync::mpsc;
use zest_core::handler::AsyncHandler;
use zest_core::server::{Broadcast, BroadcastBudget, BroadcastSink};

use super::driver::Command;
use super::RequestContext;
use crate::http_server::Hub;

/// The app's handle on a running server: a stdio (or in-memory) session, or every session
/// of an HTTP server (see [`zest_core::server::ServerHandle`] for what it does). From
/// [`StdioServer::handle`](crate::StdioServer::handle),
/// [`HttpServer::handle`](crate::HttpServer::handle), `McpService::handle`,
/// [`InMemoryServer::handle`](crate::InMemoryServer::handle) or, inside a handler,
/// `ctx.server()`.
pub type ServerHandle = zest_core::server::ServerHandle<AsyncHandler<RequestContext>>;

/// Where a handle's commands go.
enum Target {
    /// Weak: a handle the app keeps does not keep a stopped server's router alive (nor
    /// does a handler's own context make a cycle through the hub's tasks).
    Http(Weak<Hub>),
    /// The session's commands, and its budget for logs and updates ([`BROADCAST_QUEUE`](zest_core::server::BROADCAST_QUEUE)).
    Stdio(mpsc::UnboundedSender<Command>, BroadcastBudget),
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
                    drop(commands.send(Command::Broadcast(command)));
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
pub(super) fn stdio_handle(
    commands: mpsc::UnboundedSender<Command>,
    budget: BroadcastBudget,
) -> ServerHandle {
    ServerHandle::new(Arc::new(Target::Stdio(commands, budget)))
}
