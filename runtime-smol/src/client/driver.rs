//! A client session's task: zest-core's [`ClientLoop`] over stdio, streams or HTTP, with
//! what smol supplies to it (the command queue, the timer, handler tasks, the handles'
//! channels) in [`Host`], then the end: stdin closed and the child reaped, or the writer
//! closed, and the exit recorded for `close`.

use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use smol::channel::{Receiver, Sender};
use smol::io::{AsyncRead, AsyncWrite};
use smol::stream::Stream;
use smol::Task;
use zest_core::auth::Tokens;
use zest_core::client::{Negotiated, ServerNotification, ServerRequest};
use zest_core::error::ProtocolViolation;
use zest_core::handler::AsyncClientHandlers;
use zest_core::jsonrpc::RequestId;
use zest_core::runtime::{
    authorization, Answering, ClientHost, ClientLoop, ConnectError, OneshotSender, Outcome,
};

use super::connector::Connector;
use super::process::Spawned;
use super::Shared;
use crate::timer::{self, Alarm};
use crate::writer::{self, Source};

/// What handles (and the driver's handler tasks) ask of the driver.
pub(super) type Command = zest_core::runtime::AsyncCommand;

/// A session's loop, with smol's [`Host`].
pub(super) type Driver = ClientLoop<Host>;

/// What smol supplies to the session's loop.
pub(super) struct Host {
    /// Pinned: polled as a stream.
    pub(super) commands: Pin<Box<Receiver<Command>>>,
    /// For handler tasks to send their answers.
    pub(super) answers: Sender<Command>,
    pub(super) handlers: AsyncClientHandlers,
    pub(super) notifications: Sender<ServerNotification>,
    /// Taken on `Ready`; dropped unused if the session closes first.
    pub(super) ready: Option<Sender<Negotiated>>,
    pub(super) alarm: Alarm,
}

impl ClientHost for Host {
    type Reply = OneshotSender<Outcome>;
    type Task = Task<()>;

    fn poll_command(&mut self, cx: &mut Context<'_>) -> Poll<Command> {
        // The driver holds a sender, so the queue never ends; should it, that is a close.
        self.commands.as_mut().poll_next(cx).map(|c| c.unwrap_or(Command::Close))
    }

    fn try_command(&mut self) -> Option<Command> {
        self.commands.try_recv().ok()
    }

    fn poll_timer(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        // It may go off early (re-armed only for an earlier deadline): that is allowed here.
        self.alarm.arm(Some(at));
        self.alarm.poll_fired(cx)
    }

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn serve(&mut self, id: RequestId, request: ServerRequest) -> Task<()> {
        let answer = Answering::start(|| self.handlers.run(request));
        let answers = self.answers.clone();
        smol::spawn(async move {
            let result = answer.await;
            let _ = answers.try_send(Command::Respond { id, result });
        })
    }

    fn authorize(&mut self, url: String) -> Task<()> {
        let work = authorization(&self.handlers, url);
        let answers = self.answers.clone();
        smol::spawn(async move {
            let _ = answers.try_send(work.await);
        })
    }

    fn tokens_changed(&mut self, tokens: &Tokens) {
        self.handlers.tokens_changed(tokens);
    }

    fn load_tokens(&mut self) -> Option<Tokens> {
        self.handlers.load_tokens()
    }

    fn stop(&mut self, task: Task<()>) {
        drop(task);
    }

    fn connected(&mut self, outcome: Result<Negotiated, ConnectError>) {
        match outcome {
            Ok(negotiated) => {
                if let Some(ready) = self.ready.take() {
                    let _ = ready.try_send(negotiated);
                }
            }
            // Dropping `ready` tells the handle, which reads the reason recorded by the
            // dispatch and, for a child, waits for its exit status.
            Err(_) => self.ready = None,
        }
    }

    fn notify(&mut self, note: ServerNotification) {
        // A full queue means nobody reads notifications; dropping is documented.
        drop(self.notifications.try_send(note));
    }

    fn violation(&mut self, violation: &ProtocolViolation) {
        self.handlers.report_violation(violation);
    }

    fn close_queue(&mut self) {
        timer::close_queue(&self.commands);
    }
}

/// How a session's task ends: where it records the exit for `close()`.
pub(super) struct Ending {
    pub(super) shared: Arc<Shared>,
    /// Dropped last, when the child is reaped.
    pub(super) done: Sender<()>,
}

impl Ending {
    /// Stores how the session ended for `close()`, then wakes its waiters.
    fn record(self, exit: std::io::Result<ExitStatus>) {
        let exit = exit.map_err(|e| (e.kind(), e.to_string()));
        *self.shared.exit.lock().expect("no panics while holding the lock") = Some(exit);
        drop(self.done);
    }
}

/// Runs the session until the machine closes, then shuts the child down and reaps it: what
/// is queued is written and stdin closed within the first grace period (dropping the future
/// closes stdin).
pub(super) async fn run(mut driver: Driver, spawned: Spawned, ending: Ending) {
    let Spawned { supervisor, stdin, stdout } = spawned;
    let grace = supervisor.grace();
    let (mut stdout, mut writer) = (Source(stdout), writer::recycling(stdin));
    driver.run_stdio(&mut stdout, &mut writer, grace).await;
    let deadline = Instant::now() + grace;
    let exit =
        supervisor.shutdown(async move { writer::finish(&mut writer, deadline).await }).await;
    drop(stdout);
    ending.record(exit);
}

/// Runs the session over a reader and a writer of the caller's (no child) until the machine
/// closes, then writes what is queued and closes the writer (within `grace`), and records a
/// success.
pub(super) async fn run_streams<R, W>(
    mut driver: Driver,
    reader: R,
    writer: W,
    grace: Duration,
    ending: Ending,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (mut reader, mut writer) = (Source(reader), writer::recycling(writer));
    driver.run_stdio(&mut reader, &mut writer, grace).await;
    writer::finish(&mut writer, Instant::now() + grace).await;
    drop(reader);
    ending.record(Ok(ExitStatus::default()));
}

/// Runs the session over HTTP to its end (its DELETE included) and records a success.
pub(super) async fn run_http(mut driver: Driver, connector: Arc<Connector>, ending: Ending) {
    driver.run_http(&connector).await;
    ending.record(Ok(ExitStatus::default()));
}
