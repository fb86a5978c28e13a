//! What smol supplies to a stdio session's loop (zest-core's [`ServerLoop`]): the timer and
//! a session-local executor for the handlers that do not finish in their first poll.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use smol::io::{AsyncRead, AsyncWrite};
use smol::{Executor, Task};
use zest_core::error::CloseReason;
use zest_core::runtime::{AsyncLink, ServerHost, ServerLoop, StdioLink};
use zest_core::server::ServerConfig;

use super::{stdio, Handler, Registry};
use crate::timer::Alarm;
use crate::writer::{self, Source};

/// [`serve_stdio`](super::serve_stdio) on a given session link (whose handles may exist already).
pub(crate) async fn serve_stdio_on(
    config: ServerConfig,
    registry: Registry,
    link: StdioLink<Handler>,
) -> CloseReason {
    let (reader, writer, restore) = stdio::open();
    let reason = serve_on(config, registry, reader, writer, link).await;
    drop(restore);
    reason
}

/// [`serve`](super::serve) on a given session link (whose handles may exist already).
pub(crate) async fn serve_on<R, W>(
    config: ServerConfig,
    registry: Registry,
    reader: R,
    writer: W,
    link: StdioLink<Handler>,
) -> CloseReason
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let executor = Executor::new();
    let host = Host { executor: &executor, alarm: Alarm::default() };
    let config = zest_net::with_request_state(config);
    let driver = ServerLoop::new(config, registry, link.clone(), AsyncLink::stdio(link), host);
    executor.run(driver.run(&mut Source(reader), writer::recycling(writer))).await
}

/// The session's timer and the executor its handlers run on.
struct Host<'e> {
    executor: &'e Executor<'static>,
    alarm: Alarm,
}

impl ServerHost for Host<'_> {
    type Task = Task<()>;

    fn poll_timer(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        // It may go off early (re-armed only for an earlier deadline): that is allowed here.
        self.alarm.arm(Some(at));
        self.alarm.poll_fired(cx)
    }

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn polls_first(&self) -> bool {
        // Most handlers finish in their first poll: answered in the same drain, no task.
        true
    }

    fn spawn(&mut self, work: Pin<Box<dyn Future<Output = ()> + Send>>) -> Task<()> {
        self.executor.spawn(work)
    }

    fn stop(&mut self, task: Task<()>) {
        drop(task);
    }
}
