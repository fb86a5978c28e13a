//! What tokio supplies to a stdio session's loop (zest-core's [`ServerLoop`]): the timer
//! and the handler tasks.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::task::AbortHandle;
use zest_core::error::CloseReason;
use zest_core::runtime::{AsyncLink, ServerHost, ServerLoop, StdioLink};
use zest_core::server::ServerConfig;

use super::{Handler, Registry, SessionLink};
use crate::timer::Timer;
use crate::writer::{self, Source};

/// A stdio session's loop on tokio.
pub(super) type Driver = ServerLoop<SessionLink, Host>;

/// The session's timer and how its handlers run.
pub(super) struct Host {
    timer: Timer,
    /// True on a current-thread runtime: handlers get their first poll in the loop.
    polls_first: bool,
}

impl ServerHost for Host {
    type Task = AbortHandle;

    fn poll_timer(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        self.timer.poll_at(cx, at)
    }

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn polls_first(&self) -> bool {
        self.polls_first
    }

    fn spawn(&mut self, work: Pin<Box<dyn Future<Output = ()> + Send>>) -> AbortHandle {
        tokio::spawn(work).abort_handle()
    }

    fn stop(&mut self, task: AbortHandle) {
        task.abort();
    }
}

/// A session serving `registry`, reached through `link` (its handles may exist already).
pub(super) fn driver(config: ServerConfig, registry: Registry, link: StdioLink<Handler>) -> Driver {
    let polls_first =
        Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::CurrentThread);
    let host = Host { timer: Timer::default(), polls_first };
    let config = zest_net::with_request_state(config);
    ServerLoop::new(config, registry, link.clone(), AsyncLink::stdio(link), host)
}

/// Serves until the session closes, then flushes what is left; returns why it closed.
pub(super) async fn run<R, W>(driver: Driver, reader: R, writer: W) -> CloseReason
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    driver.run(&mut Source(reader), writer::recycling(writer)).await
}
