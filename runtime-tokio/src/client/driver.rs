//! A client session's task: zest-core's [`ClientLoop`] over stdio, streams or HTTP, with
//! what tokio supplies to it (the command queue, the timer, handler tasks, the handles'
//! channels) in [`Host`], then the end: stdin closed and the child reaped, or the writer
//! closed, and the exit recorded for `close`.

use std::io;
use std::process::ExitStatus;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::AbortHandle;
use zest_core::auth::Tokens;
use zest_core::client::{Negotiated, ServerNotification, ServerRequest};
use zest_core::error::ProtocolViolation;
use zest_core::handler::AsyncClientHandlers;
use zest_core::jsonrpc::RequestId;
use zest_core::runtime::{
    authorization, Answering, ClientCommand, ClientHost, ClientLoop, ConnectError,
};
use zest_core::runtime::{OneshotSender, Outcome};

use super::connector::Connector;
use super::process::{Child, Pipes};
use crate::timer::Timer;
use crate::writer::{self, Source};

/// How the child ended, as recorded for [`Client::close`](super::Client::close).
pub(super) type Exit = Result<ExitStatus, (io::ErrorKind, String)>;

/// What a [`Client`](super::Client) handle (or a handler task) asks of its driver.
pub(super) type Command = ClientCommand<Reply>;

/// Where a call's outcome goes.
pub(super) type Reply = OneshotSender<Outcome>;

/// A session's loop, with tokio's [`Host`].
pub(super) type Driver = ClientLoop<Host>;

/// What tokio supplies to the session's loop.
pub(super) struct Host {
    commands: mpsc::UnboundedReceiver<Command>,
    /// For handler tasks to send their answers.
    answers: mpsc::UnboundedSender<Command>,
    handlers: AsyncClientHandlers,
    notifications: async_channel::Sender<ServerNotification>,
    ready: Option<oneshot::Sender<Result<Negotiated, ConnectError>>>,
    timer: Timer,
}

impl Host {
    /// The host of a session whose handles send on `answers`' channel.
    pub(super) fn new(
        commands: (mpsc::UnboundedSender<Command>, mpsc::UnboundedReceiver<Command>),
        handlers: AsyncClientHandlers,
        notifications: async_channel::Sender<ServerNotification>,
        ready: oneshot::Sender<Result<Negotiated, ConnectError>>,
    ) -> Self {
        let (answers, commands) = commands;
        let timer = Timer::default();
        Self { commands, answers, handlers, notifications, ready: Some(ready), timer }
    }
}

impl ClientHost for Host {
    type Reply = Reply;
    type Task = AbortHandle;

    fn poll_command(&mut self, cx: &mut Context<'_>) -> Poll<Command> {
        // The driver holds a sender, so the queue never ends; should it, that is a close.
        self.commands.poll_recv(cx).map(|c| c.unwrap_or(Command::Close))
    }

    fn try_command(&mut self) -> Option<Command> {
        self.commands.try_recv().ok()
    }

    fn poll_timer(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        self.timer.poll_at(cx, at)
    }

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn serve(&mut self, id: RequestId, request: ServerRequest) -> AbortHandle {
        let answers = self.answers.clone();
        let work = Answering::start(|| self.handlers.run(request));
        let task = tokio::spawn(async move {
            // The driver may be gone; then the answer has nowhere to go.
            let _ = answers.send(Command::Respond { id, result: work.await });
        });
        task.abort_handle()
    }

    fn authorize(&mut self, url: String) -> AbortHandle {
        let answers = self.answers.clone();
        let work = authorization(&self.handlers, url);
        let task = tokio::spawn(async move {
            let _ = answers.send(work.await);
        });
        task.abort_handle()
    }

    fn tokens_changed(&mut self, tokens: &Tokens) {
        self.handlers.tokens_changed(tokens);
    }

    fn load_tokens(&mut self) -> Option<Tokens> {
        self.handlers.load_tokens()
    }

    fn stop(&mut self, task: AbortHandle) {
        task.abort();
    }

    fn connected(&mut self, outcome: Result<Negotiated, ConnectError>) {
        if let Some(ready) = self.ready.take() {
            // If `spawn` was abandoned, dropping the handle side ends the session.
            let _ = ready.send(outcome);
        }
    }

    fn notify(&mut self, note: ServerNotification) {
        // Full: nobody keeps up, and the newest is dropped (documented on
        // `Client::notifications`); the session never waits for a reader.
        drop(self.notifications.try_send(note));
    }

    fn violation(&mut self, violation: &ProtocolViolation) {
        self.handlers.report_violation(violation);
    }

    fn close_queue(&mut self) {
        self.commands.close();
        while self.commands.try_recv().is_ok() {}
    }
}

/// Runs the session over the child's pipes to its end, then shuts the child down (close
/// stdin, wait, SIGTERM, wait, SIGKILL) and records how it ended.
pub(super) async fn run(
    mut driver: Driver,
    mut child: Child,
    pipes: Pipes,
    grace: Duration,
    exit: watch::Sender<Option<Exit>>,
) {
    let Pipes { stdin, stdout } = pipes;
    let (mut stdout, mut writer) = (Source(stdout), writer::recycling(stdin));
    driver.run_stdio(&mut stdout, &mut writer, grace).await;
    // stdout stays open until the child is gone, so that its last writes cannot fail.
    let status = child.shutdown(grace, writer::finish(&mut writer, Instant::now() + grace)).await;
    drop(stdout);
    exit.send_replace(Some(status.map_err(|e| (e.kind(), e.to_string()))));
}

/// Runs the session over a reader and a writer of the caller's (no child), then writes what
/// is queued and closes the writer (within `grace`), and records a success.
pub(super) async fn run_streams<R, W>(
    mut driver: Driver,
    reader: R,
    writer: W,
    grace: Duration,
    exit: watch::Sender<Option<Exit>>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (mut reader, mut writer) = (Source(reader), writer::recycling(writer));
    driver.run_stdio(&mut reader, &mut writer, grace).await;
    writer::finish(&mut writer, Instant::now() + grace).await;
    drop(reader);
    exit.send_replace(Some(Ok(ExitStatus::default())));
}

/// Runs the session over HTTP to its end (its DELETE included) and records a success.
pub(super) async fn run_http(
    mut driver: Driver,
    connector: Arc<Connector>,
    exit: watch::Sender<Option<Exit>>,
) {
    driver.run_http(&connector).await;
    exit.send_replace(Some(Ok(ExitStatus::default())));
}
