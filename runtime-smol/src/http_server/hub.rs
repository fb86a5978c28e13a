//! zest-core's [`Hub`](zest_core::runtime::http_server::Hub) on smol: what this runtime
//! supplies to the one router every connection feeds.
//!
//! A connection task feeds the hub itself: no task hop between a socket and the router.
//! Handlers the router asks for are then called and polled once by that same task,
//! unlocked: one that is done at once (most tools) is answered there and then, with no
//! spawn and no wake-up; the others continue in a task of smol's global executor.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use smol::channel::{self, Receiver, Sender};
use smol::Task;
use zest_core::api::CallError;
use zest_core::error::UsageError;
use zest_core::handler::AsyncHandler;
use zest_core::http::server::SessionId;
use zest_core::io::Transmit;
use zest_core::jsonrpc::RawJson;
use zest_core::runtime::http_server::{self, panicked, HubHost, Start};
use zest_core::runtime::{Inbox, PeerCall, Report};

use crate::call::{self, ReplyTx};
use crate::handle::http_handle;
use crate::server::{RequestContext, SessionLink};
use crate::wire;

/// The router's handler type.
type Handler = AsyncHandler<RequestContext>;

/// The shared server state.
pub(crate) type Hub = http_server::Hub<Smol>;

/// The hub's host on smol.
pub(crate) struct Smol {
    /// Holds a permit when the router's deadline may have moved.
    timer: (Sender<()>, Receiver<()>),
    /// Holds a permit when the last running handler finished.
    idle: (Sender<()>, Receiver<()>),
}

impl Smol {
    pub(super) fn new() -> Self {
        Self { timer: channel::bounded(1), idle: channel::bounded(1) }
    }

    /// Resolves when the router's deadline may have moved.
    pub(super) async fn rearmed(&self) {
        // The host holds a sender: `recv` fails only if it is gone, and then never again.
        if self.timer.1.recv().await.is_err() {
            smol::future::pending::<()>().await;
        }
    }

    /// Resolves when the last running handler may have finished (check `Hub::running`).
    pub(super) async fn idle(&self) {
        if self.idle.1.recv().await.is_err() {
            smol::future::pending::<()>().await;
        }
    }
}

impl HubHost for Smol {
    type Handler = Handler;
    type Conn = Inbox<Transmit>;
    type Task = Task<()>;
    type Reply = ReplyTx;
    const POLLS_ONCE: bool = true;

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn rearm(&self, _next: Option<Instant>) {
        let _ = self.timer.0.try_send(());
    }

    fn start(hub: &Arc<Hub>, starts: Vec<Start<Handler>>) {
        for start in starts {
            start_one(hub, start);
        }
    }

    fn stop(&self, tasks: Vec<Task<()>>) {
        // Dropping a task cancels it; done unlocked, since its future's drop may call back.
        drop(tasks);
    }

    fn idle(&self) {
        let _ = self.idle.0.try_send(());
    }
}

/// Calls a handler and polls it once, here, unlocked: one that is done at once is answered
/// without a task (no spawn, no wake-up); one that is not moves into a task of its own. A
/// handler that panics is answered with an internal error.
fn start_one(hub: &Arc<Hub>, start: Start<Handler>) {
    let Start { session, id, handler, call, cancelled, context } = start;
    let link = HttpLink { hub: hub.clone(), session: session.clone() };
    let link = SessionLink::http(link, http_handle(hub));
    let ctx = RequestContext::new(id.clone(), cancelled, link).with_session(context);
    let mut work = match catch_unwind(AssertUnwindSafe(|| handler.run(ctx, *call))) {
        Ok(work) => wire::answering(work),
        Err(_) => return hub.answer(session, id, Err(panicked())),
    };
    let mut cx = Context::from_waker(Waker::noop());
    if let Poll::Ready(outcome) = Pin::new(&mut work).poll(&mut cx) {
        return hub.answer(session, id, wire::answer_of(outcome));
    }
    let (task_hub, s, answer_id) = (hub.clone(), session.clone(), id.clone());
    let task = smol::spawn(async move {
        let result = wire::answer_of(work.await);
        task_hub.answer(s, answer_id, result);
    });
    // Cancelled while it was polled: it is not wanted any more (dropping cancels it).
    drop(hub.started(session, id, task).err());
}

/// The HTTP half of [`SessionLink`]: a handler's line to its session in the router.
#[derive(Clone)]
pub(crate) struct HttpLink {
    hub: Arc<Hub>,
    session: SessionId,
}

impl HttpLink {
    pub(crate) fn report(&self, report: Report) -> Result<(), UsageError> {
        self.hub.report(&self.session, report)
    }

    pub(crate) async fn peer_request(&self, call: PeerCall) -> Result<RawJson, CallError> {
        let key = self.hub.next_key();
        let (reply, rx) = call::reply();
        self.hub.ask(&self.session, key, reply, call);
        call::outcome(rx, || self.hub.stop_waiting(&self.session, key)).await
    }
}
