//! The [`Link`] of the async runtimes' handler contexts, written once: a handler's line to
//! its session, in an HTTP server's [`Hub`] or in a stdio session's [`ServerLoop`].

use std::fmt;

use super::http_server::{Hub, HubHost, HubLink, HubSink};
use super::{Link, OneshotSender, Outcome, PeerCall, Report, RequestContext, StdioLink};
use crate::api::CallError;
use crate::error::UsageError;
use crate::handler::{AsyncHandler, BoxFuture};
use crate::jsonrpc::RawJson;
use crate::server::ServerHandle;

#[cfg(doc)]
use super::ServerLoop;

/// What a context on an async runtime carries to its session: `H` is the runtime's HTTP
/// hub host (zest-tokio's and zest-smol's `SessionLink` is this with their host). Handlers
/// never need to name it.
pub struct AsyncLink<H: HubHost> {
    session: Session<H>,
    server: ServerHandle<H::Handler>,
}

enum Session<H: HubHost> {
    Http(HubLink<H>),
    Stdio(StdioLink<H::Handler>),
}

impl<H: HubHost> Clone for AsyncLink<H> {
    fn clone(&self) -> Self {
        let session = match &self.session {
            Session::Http(link) => Session::Http(link.clone()),
            Session::Stdio(link) => Session::Stdio(link.clone()),
        };
        Self { session, server: self.server.clone() }
    }
}

impl<H: HubHost> fmt::Debug for AsyncLink<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.session {
            Session::Http(_) => f.write_str("SessionLink(http)"),
            Session::Stdio(link) => f.debug_tuple("SessionLink").field(link).finish(),
        }
    }
}

impl<H> AsyncLink<H>
where
    H: HubHost,
    H::Handler: Send + Sync,
{
    /// The link of a handler in an HTTP server's session; its `ctx.server()` reaches every
    /// session of the server.
    pub fn http(link: HubLink<H>, hub: &std::sync::Arc<Hub<H>>) -> Self {
        let server = ServerHandle::new(std::sync::Arc::new(HubSink::new(hub)));
        Self { session: Session::Http(link), server }
    }

    /// The link of a handler in a stdio session; its `ctx.server()` reaches that session.
    pub fn stdio(link: StdioLink<H::Handler>) -> Self {
        let server = ServerHandle::new(std::sync::Arc::new(link.clone()));
        Self { session: Session::Stdio(link), server }
    }
}

impl<H, C> Link for AsyncLink<H>
where
    H: HubHost<Handler = AsyncHandler<C>, Reply = OneshotSender<Outcome>>,
    AsyncHandler<C>: Send + Sync,
    C: 'static,
{
    type Reply<'a, T: 'a> = BoxFuture<'a, T>;
    type Server = ServerHandle<H::Handler>;

    fn server(&self) -> &Self::Server {
        &self.server
    }

    fn report(&self, report: Report) -> BoxFuture<'_, Result<(), UsageError>> {
        match &self.session {
            Session::Http(link) => Box::pin(std::future::ready(link.report(report))),
            Session::Stdio(link) => Box::pin(link.report(report)),
        }
    }

    fn peer_request(&self, call: PeerCall) -> BoxFuture<'_, Result<RawJson, CallError>> {
        match &self.session {
            Session::Http(link) => Box::pin(link.peer_request(call)),
            Session::Stdio(link) => Box::pin(link.peer_request(call)),
        }
    }

    fn ready<'a, T: Send + 'a, U: 'a>(value: T, f: fn(T) -> U) -> BoxFuture<'a, U> {
        Box::pin(async move { f(value) })
    }

    fn map<'a, T: 'a, U: 'a>(reply: BoxFuture<'a, T>, f: fn(T) -> U) -> BoxFuture<'a, U> {
        Box::pin(async move { f(reply.await) })
    }
}

/// The context type of the async runtimes' handlers with hub host `H`.
pub type AsyncContext<H> = RequestContext<AsyncLink<H>>;
