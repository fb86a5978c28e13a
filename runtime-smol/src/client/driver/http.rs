//! The loop of an HTTP client session: the same commands, events and handlers as stdio, with
//! each HTTP exchange the machine asks for performed by a task of its own.
//!
//! ```text
//!  loop { drain poll_output ─▶ race { exchange event | command | poll_timeout } ─▶ feed one }
//!           (Transmit::Http: spawn an exchange task; Transmit::Abort: drop it)
//!  on Closed: later calls fail at once, handler tasks are cancelled, the last exchanges
//!             (the DELETE) get CLOSE_GRACE, then close() waiters wake
//! ```

use std::collections::HashMap;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use smol::channel::{self, Receiver};
use smol::future::{self, FutureExt as _};
use smol::{Task, Timer};
use zest_core::io::{Input, Output, StreamId, Transmit};
use zest_core::runtime::OwnedEvent;

use super::{Book, Command, Driver};
use crate::client::connector::{self, Connector, Events};
use crate::wire::{self, Alarm};

/// How long the last exchanges of a closing session (its DELETE) may take.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

enum Wake {
    Event(StreamId, OwnedEvent),
    Command(Command),
    Timeout,
}

impl Driver {
    /// Runs the session to its end, lets its DELETE go out, and records the end.
    pub(in crate::client) async fn run_http(
        mut self,
        connector: Arc<Connector>,
        commands: Receiver<Command>,
    ) {
        let (events_tx, events) = channel::unbounded();
        let mut book = Book::default();
        let mut exchanges: HashMap<StreamId, Task<()>> = HashMap::new();
        let mut alarm = Alarm::default();
        loop {
            if self.drain_http(&mut book, &connector, &events_tx, &mut exchanges) {
                break;
            }
            alarm.arm(self.core.poll_timeout());
            let wake = async {
                match events.recv().await {
                    Ok((stream, event)) => Wake::Event(stream, event),
                    // Unreachable: this loop holds a sender.
                    Err(_) => future::pending().await,
                }
            }
            .or(async {
                match commands.recv().await {
                    Ok(command) => Wake::Command(command),
                    // Unreachable while we hold a sender; treat as a close anyway.
                    Err(_) => Wake::Command(Command::Close),
                }
            })
            .or(async {
                alarm.fired().await;
                Wake::Timeout
            })
            .await;
            let now = Instant::now();
            match wake {
                Wake::Event(stream, event) => {
                    if matches!(event, OwnedEvent::End | OwnedEvent::Failed(_)) {
                        // The task is finishing (it may still return its connection to the
                        // pool): let it, rather than cancel it by dropping its handle.
                        if let Some(task) = exchanges.remove(&stream) {
                            task.detach();
                        }
                    }
                    self.core.handle_input(event.input(now, stream));
                }
                Wake::Command(command) => {
                    self.apply(&mut book, now, command);
                    while let Ok(command) = commands.try_recv() {
                        self.apply(&mut book, now, command);
                    }
                }
                // Early alarms are harmless: the machine ignores a timeout before its deadline.
                Wake::Timeout => self.core.handle_input(Input::Timeout(now)),
            }
        }
        // Calls queued or made from now on fail at once; handler tasks are cancelled.
        wire::close_queue(&commands);
        drop(book);
        // What the machine sent last (the DELETE that ends the session) may finish.
        let deadline = Instant::now() + CLOSE_GRACE;
        for (_, task) in exchanges.drain() {
            // Past the deadline the task is dropped, which cuts its exchange.
            task.or(async {
                Timer::at(deadline).await;
            })
            .await;
        }
        connector.clear();
        *self.shared.exit.lock().expect("no panics while holding the lock") =
            Some(Ok(ExitStatus::default()));
        drop(self.done);
    }

    /// Performs every pending output; true once the session is closed.
    fn drain_http(
        &mut self,
        book: &mut Book,
        connector: &Arc<Connector>,
        events: &Events,
        exchanges: &mut HashMap<StreamId, Task<()>>,
    ) -> bool {
        let mut closed = false;
        while let Some(output) = self.core.poll_output() {
            match output {
                Output::Transmit(Transmit::Http { stream, request }) => {
                    let work =
                        connector::exchange(connector.clone(), stream, *request, events.clone());
                    exchanges.insert(stream, smol::spawn(work));
                }
                Output::Transmit(Transmit::Abort { stream }) => {
                    // Dropping the task drops its connection: the exchange is cut.
                    drop(exchanges.remove(&stream));
                }
                // A client over HTTP only opens and aborts exchanges; writes, closes and
                // responses belong to pipes and servers.
                Output::Transmit(
                    Transmit::Write { .. } | Transmit::Close { .. } | Transmit::Respond { .. },
                ) => {}
                Output::Event(event) => closed |= self.handle_event(book, event),
            }
        }
        closed
    }
}
