//! The [`Link`] of the async runtimes' handler contexts, written once: a handler's line to
//! its session, in an HTTP server's [`Hub`] or in a stdio session's [`ServerLoop`].

use std::fmt;
use std::sync::Arc;

use super::http_server::{Hub, HubHost, HubLink, HubSink, Start};
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
    session: Arc<dyn SessionEnd>,
    server: ServerHandle<H::Handler>,
}

/// A handler's end of its session (a hub's session over HTTP, a stdio session's loop),
/// reached through a vtable made where the link is: what a report or a request to the
/// client sets off (the hub's router, the loop's queue) is then compiled once, with the
/// runtime, not again into each program whose handlers call their context.
trait SessionEnd: Send + Sync {
    fn report(&self, report: Report) -> BoxFuture<'_, Result<(), UsageError>>;
    fn peer_request(&self, call: PeerCall) -> BoxFuture<'_, Result<RawJson, CallError>>;
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

impl<H> SessionEnd for HubLink<H>
where
    H: HubHost<Reply = OneshotSender<Outcome>>,
    H::Handler: Send + Sync,
{
    fn report(&self, report: Report) -> BoxFuture<'_, Result<(), UsageError>> {
        Box::pin(std::future::ready(Self::report(self, report)))
    }

    fn peer_request(&self, call: PeerCall) -> BoxFuture<'_, Result<RawJson, CallError>> {
        Box::pin(Self::peer_request(self, call))
    }

    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionLink(http)")
    }
}

impl<C: 'static> SessionEnd for StdioLink<AsyncHandler<C>>
where
    AsyncHandler<C>: Send + Sync,
{
    fn report(&self, report: Report) -> BoxFuture<'_, Result<(), UsageError>> {
        Box::pin(Self::report(self, report))
    }

    fn peer_request(&self, call: PeerCall) -> BoxFuture<'_, Result<RawJson, CallError>> {
        Box::pin(Self::peer_request(self, call))
    }

    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SessionLink").field(self).finish()
    }
}

impl<H: HubHost> Clone for AsyncLink<H> {
    fn clone(&self) -> Self {
        Self { session: self.session.clone(), server: self.server.clone() }
    }
}

impl<H: HubHost> fmt::Debug for AsyncLink<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.session.describe(f)
    }
}

impl<H, C> AsyncLink<H>
where
    H: HubHost<Handler = AsyncHandler<C>, Reply = OneshotSender<Outcome>>,
    AsyncHandler<C>: Send + Sync,
    C: 'static,
{
    /// The link of a handler in an HTTP server's session; its `ctx.server()` reaches every
    /// session of the server.
    pub fn http(link: HubLink<H>, hub: &Arc<Hub<H>>) -> Self {
        let server = ServerHandle::new(Arc::new(HubSink::new(hub)));
        Self { session: Arc::new(link), server }
    }

    /// The link of a handler in a stdio session; its `ctx.server()` reaches that session.
    pub fn stdio(link: StdioLink<H::Handler>) -> Self {
        let server = ServerHandle::new(Arc::new(link.clone()));
        Self { session: Arc::new(link), server }
    }
}

impl<H> Hub<H>
where
    H: HubHost<
        Handler = AsyncHandler<RequestContext<AsyncLink<H>>>,
        Reply = OneshotSender<Outcome>,
    >,
{
    /// [`Hub::start_async`] of every call the router asked for, each handler's context a
    /// [`RequestContext`] over an [`AsyncLink::http`] (the [`HubHost::start`] of every async
    /// runtime); `spawn` makes the task of a handler not done at once.
    pub fn start_all_async(
        self: &Arc<Self>,
        starts: Vec<Start<H::Handler>>,
        spawn: impl Fn(BoxFuture<'static, ()>) -> H::Task,
    ) {
        for start in starts {
            let make = |(id, cancelled, session, link)| {
                RequestContext::new(id, cancelled, AsyncLink::http(link, self))
                    .with_session(session)
            };
            self.start_async(start, make, &spawn);
        }
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
        self.session.report(report)
    }

    fn peer_request(&self, call: PeerCall) -> BoxFuture<'_, Result<RawJson, CallError>> {
        self.session.peer_request(call)
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
