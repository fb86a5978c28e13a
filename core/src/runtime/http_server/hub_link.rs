//! What the async runtimes' HTTP servers share around the [`Hub`]: a handler's line to its
//! session ([`HubLink`]), a server handle's line to every session ([`HubSink`]), and how a
//! handler is started (polled once where it is asked for, then a task if it needs one).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::Poll;

use super::{Hub, HubHost, Start};
use crate::api::CallError;
use crate::error::UsageError;
use crate::handler::AsyncHandler;
use crate::http::server::SessionId;
use crate::jsonrpc::RawJson;
use crate::runtime::answering::Answering;
use crate::runtime::oneshot::{oneshot, outcome, OneshotSender};
use crate::runtime::{CancelFlag, Outcome, PeerCall, Report};
use crate::server::{Broadcast, BroadcastSink, CallContext};

/// A handler's line to its session in the hub (the HTTP half of a runtime's `SessionLink`).
pub struct HubLink<H: HubHost> {
    hub: Arc<Hub<H>>,
    session: SessionId,
}

impl<H: HubHost> Clone for HubLink<H> {
    fn clone(&self) -> Self {
        Self { hub: self.hub.clone(), session: self.session.clone() }
    }
}

impl<H: HubHost<Reply = OneshotSender<Outcome>>> HubLink<H> {
    /// A progress report or log record, applied to the session at once.
    pub fn report(&self, report: Report) -> Result<(), UsageError> {
        self.hub.report(&self.session, report)
    }

    /// A request to the client; its raw outcome. Dropping the future cancels the request.
    pub async fn peer_request(&self, call: PeerCall) -> Result<RawJson, CallError> {
        let key = self.hub.next_key();
        let (reply, rx) = oneshot();
        self.hub.ask(&self.session, key, reply, call);
        outcome(rx, || self.hub.stop_waiting(&self.session, key)).await
    }
}

/// A server handle's line to every session of the hub. Weak: a handle the app keeps does not
/// keep a stopped server's router alive (nor does a handler's own context make a cycle
/// through the hub's tasks); once the server is gone there is nobody left to tell.
pub struct HubSink<H: HubHost>(Weak<Hub<H>>);

impl<H: HubHost> HubSink<H> {
    /// The sink of `hub`.
    pub fn new(hub: &Arc<Hub<H>>) -> Self {
        Self(Arc::downgrade(hub))
    }
}

impl<H: HubHost> BroadcastSink<H::Handler> for HubSink<H>
where
    H::Handler: Send + Sync,
{
    fn send(&self, command: Broadcast<H::Handler>) {
        if let Some(hub) = self.0.upgrade() {
            hub.broadcast(command);
        }
    }
}

/// What a context is made of: the request, its cancellation flag, the session as the handler
/// sees it, and the line to the session.
pub type ContextParts<H> = (crate::jsonrpc::RequestId, CancelFlag, CallContext, HubLink<H>);

impl<C, H> Hub<H>
where
    C: Send + 'static,
    H: HubHost<Handler = AsyncHandler<C>>,
{
    /// Starts an async handler the router asked for: calls it with the context `make` builds
    /// and polls it once, here, unlocked. One that is done at once (most tools) is answered
    /// without a task (no spawn, no wake-up); one that is not moves into a task made by
    /// `spawn`. A handler that panics is answered with an internal error.
    pub fn start_async(
        self: &Arc<Self>,
        start: Start<AsyncHandler<C>>,
        make: impl FnOnce(ContextParts<H>) -> C,
        spawn: impl FnOnce(Pin<Box<dyn Future<Output = ()> + Send>>) -> H::Task,
    ) {
        let Start { session, id, handler, call, cancelled, context } = start;
        let link = HubLink { hub: self.clone(), session: session.clone() };
        let ctx = make((id.clone(), cancelled, context, link));
        let mut work = Answering::start(|| handler.run(ctx, *call));
        if let Poll::Ready(result) = work.poll_once() {
            return self.answer(session, id, result);
        }
        let (hub, s, answer_id) = (self.clone(), session.clone(), id.clone());
        let task = spawn(Box::pin(async move {
            let result = work.await;
            hub.answer(s, answer_id, result);
        }));
        if let Err(task) = self.started(session, id, task) {
            // Cancelled (or answered) while it was polled: it is not wanted any more.
            self.host().stop(vec![task]);
        }
    }
}
