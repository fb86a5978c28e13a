//! The loop of an HTTP client session: the same commands, events and handlers as stdio, with
//! each HTTP exchange the machine asks for performed by a task of its own.

use std::collections::HashMap;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use zest_core::io::{Input, Output, StreamId, Transmit};
use zest_core::runtime::OwnedEvent;

use super::{Command, Driver, Exit};
use crate::client::connector::{self, Connector, Events};

/// How long the last exchanges of a closing session (its DELETE) may take.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

impl Driver {
    /// Runs the session to its end, lets its DELETE go out, and records the end.
    pub(in crate::client) async fn run_http(
        mut self,
        connector: Arc<Connector>,
        mut commands: mpsc::UnboundedReceiver<Command>,
        exit: watch::Sender<Option<Exit>>,
    ) {
        let mut answers = self.answer_rx.take().expect("run_http runs once per driver");
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let mut exchanges: HashMap<StreamId, JoinHandle<()>> = HashMap::new();
        let sleep = tokio::time::sleep(Duration::from_secs(3600));
        tokio::pin!(sleep);
        let mut handles_alive = true;
        loop {
            if self.drain_http(&connector, &events_tx, &mut exchanges) {
                break;
            }
            if let Some(at) = self.core.poll_timeout().map(tokio::time::Instant::from_std) {
                if sleep.deadline() != at {
                    sleep.as_mut().reset(at);
                }
            }
            tokio::select! {
                Some((stream, event)) = events.recv() => {
                    if matches!(event, OwnedEvent::End | OwnedEvent::Failed(_)) {
                        exchanges.remove(&stream);
                    }
                    self.core.handle_input(event.input(Instant::now(), stream));
                }
                command = commands.recv(), if handles_alive => match command {
                    Some(command) => {
                        self.apply(command);
                        while let Ok(command) = commands.try_recv() {
                            self.apply(command);
                        }
                    }
                    None => {
                        handles_alive = false;
                        self.core.close(Instant::now());
                    }
                },
                Some((id, result)) = answers.recv() => {
                    self.serving.remove(&id);
                    // Err only if the session closed meanwhile; then nobody awaits the answer.
                    let _ = self.core.respond(Instant::now(), id, result);
                }
                () = &mut sleep, if self.core.poll_timeout().is_some() => {
                    self.core.handle_input(Input::Timeout(Instant::now()));
                }
            }
        }
        commands.close();
        while commands.try_recv().is_ok() {}
        for (_, task) in self.serving.drain() {
            task.abort();
        }
        // What the machine sent last (the DELETE that ends the session) may finish.
        let deadline = tokio::time::Instant::now() + CLOSE_GRACE;
        for (_, task) in exchanges.drain() {
            let abort = task.abort_handle();
            if tokio::time::timeout_at(deadline, task).await.is_err() {
                abort.abort();
            }
        }
        connector.clear();
        exit.send_replace(Some(Ok(ExitStatus::default())));
    }

    /// Performs every pending output; true once the session is closed.
    fn drain_http(
        &mut self,
        connector: &Arc<Connector>,
        events: &Events,
        exchanges: &mut HashMap<StreamId, JoinHandle<()>>,
    ) -> bool {
        let mut closed = false;
        while let Some(output) = self.core.poll_output() {
            match output {
                Output::Transmit(Transmit::Http { stream, request }) => {
                    let work =
                        connector::exchange(connector.clone(), stream, *request, events.clone());
                    exchanges.insert(stream, tokio::spawn(work));
                }
                Output::Transmit(Transmit::Abort { stream }) => {
                    if let Some(task) = exchanges.remove(&stream) {
                        // Dropping the task drops its connection: the exchange is cut.
                        task.abort();
                    }
                }
                // A client over HTTP only opens and aborts exchanges; writes, closes and
                // responses belong to pipes and servers.
                Output::Transmit(
                    Transmit::Write { .. } | Transmit::Close { .. } | Transmit::Respond { .. },
                ) => {}
                Output::Event(event) => closed |= self.dispatch(event),
            }
        }
        closed
    }
}
