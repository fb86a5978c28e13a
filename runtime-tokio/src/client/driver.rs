//! The one loop of a client session: drain the core's outputs, then wait for stdout bytes, a
//! command, a handler's answer or the core's deadline, and feed exactly one of them back.

use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::AbortHandle;
use zest_core::client::{self as core, Event, Negotiated, ServerNotification};
use zest_core::error::CloseReason;
use zest_core::handler::AsyncClientHandlers;
use zest_core::io::{Input, Receive, StreamEvent, StreamId, TransportFailure};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::runtime::{
    ClientCommand, ClientDispatch, ClientStep, ConnectError, StdioOutput, StdioOutputs,
};

mod http;

use super::process::{Child, Pipes};
use crate::calls::{CatchUnwind, Reply};
use crate::writer::{self, Writer};

/// How the child ended, as recorded for [`Client::close`](super::Client::close).
pub(super) type Exit = Result<ExitStatus, (io::ErrorKind, String)>;

/// What a [`Client`](super::Client) handle asks of its driver.
pub(super) type Command = ClientCommand<Reply>;

/// A client handler's answer to a server request.
type Answer = (RequestId, Result<RawJson, ErrorObject>);

/// The session state the loop owns besides the IO.
pub(super) struct Driver {
    core: core::Client,
    handlers: AsyncClientHandlers,
    /// Calls and handler tasks in flight; records why the session ended, for
    /// [`Client::close_reason`](super::Client::close_reason).
    dispatch: ClientDispatch<Reply, AbortHandle>,
    answers: mpsc::UnboundedSender<Answer>,
    answer_rx: Option<mpsc::UnboundedReceiver<Answer>>,
    notifications: async_channel::Sender<ServerNotification>,
    ready: Option<oneshot::Sender<Result<Negotiated, ConnectError>>>,
}

impl Driver {
    /// A driver for a machine made by the caller (stdio or HTTP).
    pub(super) fn with_core(
        core: core::Client,
        handlers: AsyncClientHandlers,
        notifications: async_channel::Sender<ServerNotification>,
        ready: oneshot::Sender<Result<Negotiated, ConnectError>>,
        closed: Arc<OnceLock<CloseReason>>,
    ) -> Self {
        let (answers, answer_rx) = mpsc::unbounded_channel();
        Self {
            core,
            handlers,
            dispatch: ClientDispatch::new(closed),
            answers,
            answer_rx: Some(answer_rx),
            notifications,
            ready: Some(ready),
        }
    }

    /// Runs the session to its end, then shuts the child down and records how it ended.
    pub(super) async fn run(
        mut self,
        mut child: Child,
        pipes: Pipes,
        mut commands: mpsc::UnboundedReceiver<Command>,
        grace: Duration,
        exit: watch::Sender<Option<Exit>>,
    ) {
        let Pipes { stdin, mut stdout } = pipes;
        let mut writer = writer::recycling(stdin);
        self.serve(&mut stdout, &mut writer, &mut commands, grace).await;
        Self::wind_down(&mut commands);
        // stdout stays open until the child is gone, so that its last writes cannot fail.
        let status =
            child.shutdown(grace, writer::finish(&mut writer, Instant::now() + grace)).await;
        drop(stdout);
        exit.send_replace(Some(status.map_err(|e| (e.kind(), e.to_string()))));
    }

    /// Runs the session over a reader and a writer of the caller's (no child), then writes
    /// what is queued and closes the writer (within `grace`), and records a success.
    pub(super) async fn run_streams<R, W>(
        mut self,
        mut reader: R,
        writer: W,
        mut commands: mpsc::UnboundedReceiver<Command>,
        grace: Duration,
        exit: watch::Sender<Option<Exit>>,
    ) where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut writer = writer::recycling(writer);
        self.serve(&mut reader, &mut writer, &mut commands, grace).await;
        Self::wind_down(&mut commands);
        writer::finish(&mut writer, Instant::now() + grace).await;
        drop(reader);
        exit.send_replace(Some(Ok(ExitStatus::default())));
    }

    /// The loop proper; returns once the core has reported `Closed`.
    ///
    /// When writing to the child's stdin (or the writer) fails, answers it wrote before may
    /// still be in its stdout: reading goes on until stdout ends (the usual case: the child
    /// exited), or for `grace` at most, before the session is failed.
    async fn serve<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
        &mut self,
        stdout: &mut R,
        writer: &mut Writer<W>,
        commands: &mut mpsc::UnboundedReceiver<Command>,
        grace: Duration,
    ) {
        let mut answers = self.answer_rx.take().expect("serve runs once per driver");
        let mut buf = vec![0u8; 64 * 1024];
        let sleep = tokio::time::sleep(Duration::from_secs(3600));
        tokio::pin!(sleep);
        let mut handles_alive = true;
        let mut broken_stdin: Option<(tokio::time::Instant, String)> = None;
        loop {
            // The last written frame's buffer goes back to the machine for the next large one.
            if let Some(spare) = writer.take_spare() {
                self.core.recycle(spare);
            }
            if self.drain(writer) {
                return;
            }
            writer.try_progress();
            if let Some(at) = self.core.poll_timeout().map(tokio::time::Instant::from_std) {
                // Re-arming the timer costs a trip to the timer wheel; skip it when unchanged.
                if sleep.deadline() != at {
                    sleep.as_mut().reset(at);
                }
            }
            tokio::select! {
                read = stdout.read(&mut buf) => {
                    let now = Instant::now();
                    let event = match &read {
                        Ok(0) => StreamEvent::End,
                        Ok(n) => StreamEvent::Data(&buf[..*n]),
                        Err(e) => {
                            let why = format!("reading the server's stdout failed: {e}");
                            self.feed(now, StreamEvent::Failed(TransportFailure::Reset(why)));
                            continue;
                        }
                    };
                    self.feed(now, event);
                }
                command = commands.recv(), if handles_alive => match command {
                    Some(command) => {
                        // Commands already queued go in the same turn, so that their frames
                        // leave in one write.
                        self.apply(command);
                        while let Ok(command) = commands.try_recv() {
                            self.apply(command);
                        }
                    }
                    None => {
                        // The last handle is gone: end the session.
                        handles_alive = false;
                        self.core.close(Instant::now());
                    }
                },
                Some((id, result)) = answers.recv() => {
                    self.apply(Command::Respond { id, result });
                }
                written = writer.progress(), if writer.busy() => {
                    if let Err(failure) = written {
                        let why = format!("writing to the server's stdin failed: {failure}");
                        broken_stdin = Some((tokio::time::Instant::now() + grace, why));
                    }
                }
                () = sleep_until_broken(&broken_stdin), if broken_stdin.is_some() => {
                    let why = broken_stdin.take().map(|(_, why)| why).unwrap_or_default();
                    self.feed(Instant::now(), StreamEvent::Failed(TransportFailure::Reset(why)));
                }
                () = &mut sleep, if self.core.poll_timeout().is_some() => {
                    self.core.handle_input(Input::Timeout(Instant::now()));
                }
            }
        }
    }

    /// After the loop (the handler tasks were stopped on `Closed`): calls made from now on
    /// fail at once, and queued ones fail as their replies drop.
    fn wind_down(commands: &mut mpsc::UnboundedReceiver<Command>) {
        commands.close();
        while commands.try_recv().is_ok() {}
    }

    fn feed(&mut self, now: Instant, event: StreamEvent<'_>) {
        let receive = Receive { stream: StreamId::STDIO, event };
        self.core.handle_input(Input::Receive(now, receive));
    }

    fn apply(&mut self, command: Command) {
        self.dispatch.apply(&mut self.core, Instant::now(), command);
    }

    /// Performs every pending output; true once the session is closed.
    fn drain<W: AsyncWrite + Unpin>(&mut self, writer: &mut Writer<W>) -> bool {
        let mut closed = false;
        let mut outputs = StdioOutputs::new();
        while let Some(output) = outputs.next(&mut self.core, Instant::now()) {
            match output {
                StdioOutput::Write(bytes) => writer.send(bytes),
                StdioOutput::Close => writer.close(),
                StdioOutput::Event(event) => closed |= self.dispatch(event),
            }
        }
        closed
    }

    /// Routes one event and performs its steps; true once the session is closed.
    fn dispatch(&mut self, event: Event) -> bool {
        self.dispatch.route(event);
        let mut closed = false;
        while let Some(step) = self.dispatch.poll_step() {
            match step {
                ClientStep::Connected(result) => {
                    if let Some(ready) = self.ready.take() {
                        // If `spawn` was abandoned, dropping the handle side ends the session.
                        let _ = ready.send(result.map(|negotiated| *negotiated));
                    }
                }
                ClientStep::Deliver(delivery) => delivery.deliver(),
                ClientStep::Serve { id, request } => {
                    let answers = self.answers.clone();
                    let work = CatchUnwind(self.handlers.run(request));
                    let key = id.clone();
                    let task = tokio::spawn(async move {
                        // The driver may be gone; then the answer has nowhere to go.
                        let _ = answers.send((key, work.await));
                    });
                    self.dispatch.serving(id, task.abort_handle());
                }
                ClientStep::Stop(task) => task.abort(),
                // Full: nobody keeps up, and the newest is dropped (documented on
                // `Client::notifications`); the session never waits for a reader.
                ClientStep::Notify(note) => drop(self.notifications.try_send(note)),
                ClientStep::Violation(v) => self.handlers.report_violation(&v),
                ClientStep::Closed(_) => closed = true,
            }
        }
        closed
    }
}

/// Sleeps until the deadline for stdout to end after stdin broke (pends without one).
async fn sleep_until_broken(broken: &Option<(tokio::time::Instant, String)>) {
    match broken {
        Some((deadline, _)) => tokio::time::sleep_until(*deadline).await,
        None => std::future::pending().await,
    }
}
