//! zest-core's [`Hub`](zest_core::runtime::http_server::Hub) on tokio: what this runtime
//! supplies to the one router every connection feeds.
//!
//! A connection task feeds the hub itself: no task hop between a socket and the router.
//! Handlers the router asks for are then called and polled once by that same task,
//! unlocked ([`Hub::start_async`](zest_core::runtime::http_server::Hub::start_async)): one
//! that is done at once (most tools) is answered there and then, with no spawn and no
//! wake-up; the others continue in a task.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Notify;
use tokio::task::AbortHandle;
use zest_core::io::Transmit;
use zest_core::runtime::http_server::{self, HubHost, Start};
use zest_core::runtime::{Inbox, OneshotSender, Outcome};

use crate::server::Handler;

/// The shared server state.
pub(crate) type Hub = http_server::Hub<TokioHub>;

/// What zest-tokio supplies to an HTTP server's hub (public only because `SessionLink`
/// names it).
#[derive(Debug, Default)]
pub struct TokioHub {
    /// Woken when the router's deadline may have moved.
    pub(super) timer: Notify,
    /// Woken when the last running handler finished.
    pub(super) idle: Notify,
}

impl HubHost for TokioHub {
    type Handler = Handler;
    type Conn = Inbox<Transmit>;
    type Task = AbortHandle;
    type Reply = OneshotSender<Outcome>;
    const POLLS_ONCE: bool = true;

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn rearm(&self, _next: Option<Instant>) {
        self.timer.notify_one();
    }

    fn start(hub: &Arc<Hub>, starts: Vec<Start<Handler>>) {
        hub.start_all_async(starts, |work| tokio::spawn(work).abort_handle());
    }

    fn stop(&self, tasks: Vec<AbortHandle>) {
        tasks.iter().for_each(AbortHandle::abort);
    }

    fn idle(&self) {
        self.idle.notify_waiters();
    }
}
