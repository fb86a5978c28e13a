//! zest-core's [`Hub`](zest_core::runtime::http_server::Hub) on smol: what this runtime
//! supplies to the one router every connection feeds.
//!
//! A connection task feeds the hub itself: no task hop between a socket and the router.
//! Handlers the router asks for are then called and polled once by that same task,
//! unlocked: one that is done at once (most tools) is answered there and then, with no
//! spawn and no wake-up; the others continue in a task of smol's global executor.

use std::sync::Arc;
use std::time::Instant;

use smol::channel::{self, Receiver, Sender};
use smol::Task;
use zest_core::io::Transmit;
use zest_core::runtime::http_server::{self, HubHost, Start};
use zest_core::runtime::{Inbox, OneshotSender, Outcome};

use crate::server::Handler;

/// The shared server state.
pub(crate) type Hub = http_server::Hub<SmolHub>;

/// What zest-smol supplies to an HTTP server's hub (public only because `SessionLink`
/// names it).
#[derive(Debug)]
pub struct SmolHub {
    /// Holds a permit when the router's deadline may have moved.
    timer: (Sender<()>, Receiver<()>),
    /// Holds a permit when the last running handler finished.
    idle: (Sender<()>, Receiver<()>),
}

impl SmolHub {
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

impl HubHost for SmolHub {
    type Handler = Handler;
    type Conn = Inbox<Transmit>;
    type Task = Task<()>;
    type Reply = OneshotSender<Outcome>;
    const POLLS_ONCE: bool = true;

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn rearm(&self, _next: Option<Instant>) {
        let _ = self.timer.0.try_send(());
    }

    fn start(hub: &Arc<Hub>, starts: Vec<Start<Handler>>) {
        hub.start_all_async(starts, smol::spawn);
    }

    fn stop(&self, tasks: Vec<Task<()>>) {
        // Dropping a task cancels it; done unlocked, since its future's drop may call back.
        drop(tasks);
    }

    fn idle(&self) {
        let _ = self.idle.0.try_send(());
    }
}
