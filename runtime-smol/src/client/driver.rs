//! The client's driver: one task owning the core machine, the child's stdout and the child.
//!
//! ```text
//!  loop { drain poll_output ─▶ race { stdout read | command | poll_timeout } ─▶ feed one }
//!           (drain's frames: one write) ─▶ race { … | the rest of that write, if any }
//!  on Closed: drop the command queue (later calls fail at once), cancel handler tasks,
//!             finish writing and close stdin (within the grace period), shut the child down,
//!             reap it, wake close() waiters
//! ```

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use smol::channel::{Receiver, Sender};
use smol::future;
use smol::io::{AsyncRead, AsyncWrite};
use smol::Task;
use zest_core::client::{Client as CoreClient, Event, Negotiated, ServerNotification};
use zest_core::handler::AsyncClientHandlers;
use zest_core::io::{Input, Receive, StreamEvent, StreamId, TransportFailure};
use zest_core::runtime::{ClientCommand, ClientDispatch, ClientStep, StdioOutput, StdioOutputs};

mod http;

use super::Shared;
use crate::call::ReplyTx;
use crate::process::Spawned;
use crate::wire::{self, Alarm, ReadOutcome};
use crate::writer::{self, Writer};

/// What handles (and the driver's handler tasks) ask of the driver.
pub(super) type Command = ClientCommand<ReplyTx>;

/// The driver's fixed parts; see [`Driver::run`].
pub(super) struct Driver {
    pub(super) core: CoreClient,
    pub(super) handlers: AsyncClientHandlers,
    /// For handler tasks to report back.
    pub(super) commands: Sender<Command>,
    pub(super) notifications: Sender<ServerNotification>,
    /// Taken on `Ready`; dropped unused if the session closes first.
    pub(super) ready: Option<Sender<Negotiated>>,
    pub(super) shared: Arc<Shared>,
    /// How long output may still arrive after stdin broke (the shutdown grace).
    pub(super) grace: Duration,
    /// Dropped last, when the child is reaped.
    pub(super) done: Sender<()>,
}

/// The requests under way, both ways, and why the session ended; the same over stdio and
/// HTTP. A handler task is stopped by dropping it.
pub(super) type Book = ClientDispatch<ReplyTx, Task<()>>;

/// What changes while the stdio loop runs.
struct Session<W> {
    book: Book,
    /// The child's stdin (or the writer of [`Client::over`](super::Client::over)).
    writer: Writer<W>,
    /// Writing failed: why, and until when stdout may still deliver answers already written.
    stdin_broken: Option<(String, Instant)>,
}

enum Wake {
    Read(ReadOutcome),
    Command(Command),
    Written(std::io::Result<()>),
    Timeout,
}

impl Driver {
    /// Runs the session until the machine closes, then shuts the child down and reaps it.
    pub(super) async fn run(mut self, spawned: Spawned, commands: Receiver<Command>) {
        let Spawned { supervisor, stdin, mut stdout } = spawned;
        let mut session =
            Session { book: self.book(), writer: writer::recycling(stdin), stdin_broken: None };
        self.drive(&mut session, &mut stdout, &commands).await;
        // Calls queued or made from now on fail at once; handler tasks are cancelled; what is
        // queued is written and stdin closed (within the first grace period: dropping the
        // future closes stdin).
        wire::close_queue(&commands);
        let Session { mut writer, .. } = session;
        let deadline = Instant::now() + self.grace;
        let exit =
            supervisor.shutdown(async move { writer::finish(&mut writer, deadline).await }).await;
        drop(stdout);
        self.record_exit(exit);
    }

    /// Runs the session over a reader and a writer of the caller's (no child) until the
    /// machine closes, then writes what is queued and closes the writer (within the grace
    /// period), and records a success.
    pub(super) async fn run_streams<R, W>(
        mut self,
        mut reader: R,
        writer: W,
        commands: Receiver<Command>,
    ) where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut session =
            Session { book: self.book(), writer: writer::recycling(writer), stdin_broken: None };
        self.drive(&mut session, &mut reader, &commands).await;
        wire::close_queue(&commands);
        let Session { mut writer, .. } = session;
        writer::finish(&mut writer, Instant::now() + self.grace).await;
        drop(reader);
        self.record_exit(Ok(ExitStatus::default()));
    }

    /// The session's bookkeeping, recording its close reason where the handles read it.
    pub(super) fn book(&self) -> Book {
        ClientDispatch::new(self.shared.closed.clone())
    }

    /// Stores how the session ended for `close()`, then wakes its waiters.
    fn record_exit(self, exit: std::io::Result<ExitStatus>) {
        let exit = exit.map_err(|e| (e.kind(), e.to_string()));
        *self.shared.exit.lock().expect("no panics while holding the lock") = Some(exit);
        drop(self.done);
    }

    async fn drive<R, W>(
        &mut self,
        s: &mut Session<W>,
        stdout: &mut R,
        commands: &Receiver<Command>,
    ) where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut buf = vec![0u8; 64 * 1024];
        let mut alarm = Alarm::default();
        loop {
            // The last written frame's buffer goes back to the machine for the next large one.
            if let Some(spare) = s.writer.take_spare() {
                self.core.recycle(spare);
            }
            if self.drain(s) {
                return;
            }
            s.writer.try_progress();
            alarm.arm(self.core.poll_timeout());
            alarm.arm(s.stdin_broken.as_ref().map(|(_, until)| *until));
            let writing = s.writer.busy();
            let writer = &mut s.writer;
            let wake = future::race(
                async { Wake::Read(wire::read_some(stdout, &mut buf).await) },
                future::race(
                    async {
                        if writing {
                            Wake::Written(writer.progress().await)
                        } else {
                            future::pending().await
                        }
                    },
                    future::race(
                        async {
                            match commands.recv().await {
                                Ok(command) => Wake::Command(command),
                                // Unreachable while we hold a sender; treat as a close anyway.
                                Err(_) => Wake::Command(Command::Close),
                            }
                        },
                        async {
                            alarm.fired().await;
                            Wake::Timeout
                        },
                    ),
                ),
            )
            .await;
            let now = Instant::now();
            match wake {
                Wake::Read(outcome) => self.core.handle_input(outcome.input(now, &buf)),
                Wake::Command(command) => {
                    // Commands already queued go in the same turn, so that their frames
                    // leave in one write.
                    self.apply(&mut s.book, now, command);
                    while let Ok(command) = commands.try_recv() {
                        self.apply(&mut s.book, now, command);
                    }
                }
                // The child may have written answers before it stopped reading: keep reading
                // stdout (EOF ends the session as usual) and fail the transport only if it is
                // still open after the grace period.
                Wake::Written(Err(e)) => {
                    if s.stdin_broken.is_none() {
                        s.stdin_broken = Some((format!("write failed: {e}"), now + self.grace));
                    }
                }
                Wake::Written(Ok(())) => {}
                Wake::Timeout => match s.stdin_broken.take() {
                    Some((why, until)) if now >= until => {
                        let event = StreamEvent::Failed(TransportFailure::Reset(why));
                        let input = Input::Receive(now, Receive { stream: StreamId::STDIO, event });
                        self.core.handle_input(input);
                    }
                    broken => {
                        s.stdin_broken = broken;
                        self.core.handle_input(Input::Timeout(now));
                    }
                },
            }
        }
    }

    pub(super) fn apply(&mut self, s: &mut Book, now: Instant, command: Command) {
        s.apply(&mut self.core, now, command);
    }

    /// Drains the machine's outputs; true once the session has closed.
    fn drain<W: AsyncWrite + Unpin>(&mut self, s: &mut Session<W>) -> bool {
        let mut closed = false;
        let mut outputs = StdioOutputs::new();
        while let Some(output) = outputs.next(&mut self.core, Instant::now()) {
            match output {
                StdioOutput::Write(bytes) => s.writer.send(bytes),
                StdioOutput::Close => s.writer.close(),
                StdioOutput::Event(event) => closed |= self.handle_event(&mut s.book, event),
            }
        }
        closed
    }

    /// Routes one event and performs its steps; true once the session is closed.
    pub(super) fn handle_event(&mut self, s: &mut Book, event: Event) -> bool {
        s.route(event);
        let mut closed = false;
        while let Some(step) = s.poll_step() {
            match step {
                ClientStep::Connected(Ok(negotiated)) => {
                    if let Some(ready) = self.ready.take() {
                        let _ = ready.try_send(*negotiated);
                    }
                }
                // Dropping `ready` tells the handle, which reads the reason recorded here
                // and, for a child, waits for its exit status.
                ClientStep::Connected(Err(_)) => self.ready = None,
                ClientStep::Deliver(delivery) => delivery.deliver(),
                ClientStep::Serve { id, request } => {
                    let answer = self.handlers.run(request);
                    let commands = self.commands.clone();
                    let task_id = id.clone();
                    let task = smol::spawn(async move {
                        let result = wire::answer(answer).await;
                        let _ = commands.try_send(Command::Respond { id: task_id, result });
                    });
                    s.serving(id, task);
                }
                ClientStep::Stop(task) => drop(task),
                // A full queue means nobody reads notifications; dropping is documented.
                ClientStep::Notify(n) => drop(self.notifications.try_send(n)),
                ClientStep::Violation(v) => self.handlers.report_violation(&v),
                ClientStep::Closed(_) => closed = true,
            }
        }
        closed
    }
}
