//! zest-core's [`Hub`](zest_core::runtime::http_server::Hub) on tokio: what this runtime
//! supplies to the one router every connection feeds.
//!
//! A connection task feeds the hub itself: no task hop between a socket and the router.
//! Handlers the router asks for are then called and polled once by that same task,
//! unlocked: one that is done at once (most tools) is answered there and then, with no
//! spawn and no wake-up; the others continue in a task.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use tokio::sync::Notify;
use tokio::task::AbortHandle;
use zest_core::api::CallError;
use zest_core::error::UsageError;
use zest_core::handler::AsyncHandler;
use zest_core::http::server::SessionId;
use zest_core::io::Transmit;
use zest_core::jsonrpc::RawJson;
use zest_core::runtime::http_server::{self, panicked, HubHost, Start};
use zest_core::runtime::{Inbox, PeerCall, Report};

use crate::calls::{self, CatchUnwind, Reply};
use crate::server::{http_handle, RequestContext, SessionLink};

/// The router's handler type.
type Handler = AsyncHandler<RequestContext>;

/// The shared server state.
pub(crate) type Hub = http_server::Hub<Tokio>;

/// The hub's host on tokio.
#[derive(Default)]
pub(crate) struct Tokio {
    /// Woken when the router's deadline may have moved.
    pub(super) timer: Notify,
    /// Woken when the last running handler finished.
    pub(super) idle: Notify,
}

impl HubHost for Tokio {
    type Handler = Handler;
    type Conn = Inbox<Transmit>;
    type Task = AbortHandle;
    type Reply = Reply;
    const POLLS_ONCE: bool = true;

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn rearm(&self, _next: Option<Instant>) {
        self.timer.notify_one();
    }

    fn start(hub: &Arc<Hub>, starts: Vec<Start<Handler>>) {
        for start in starts {
            start_one(hub, start);
        }
    }

    fn stop(&self, tasks: Vec<AbortHandle>) {
        tasks.iter().for_each(AbortHandle::abort);
    }

    fn idle(&self) {
        self.idle.notify_waiters();
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
        Ok(work) => CatchUnwind(work),
        Err(_) => return hub.answer(session, id, Err(panicked())),
    };
    let mut cx = Context::from_waker(Waker::noop());
    if let Poll::Ready(result) = Pin::new(&mut work).poll(&mut cx) {
        return hub.answer(session, id, result);
    }
    let (task_hub, s, answer_id) = (hub.clone(), session.clone(), id.clone());
    let task = tokio::spawn(async move {
        let result = work.await;
        task_hub.answer(s, answer_id, result);
    });
    if let Err(task) = hub.started(session, id, task.abort_handle()) {
        // Cancelled (or answered) while it was polled: it is not wanted any more.
        task.abort();
    }
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
        let (reply, rx) = calls::reply();
        self.hub.ask(&self.session, key, reply, call);
        calls::outcome(rx, || self.hub.stop_waiting(&self.session, key)).await
    }
}
