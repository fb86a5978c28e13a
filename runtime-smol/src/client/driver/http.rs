//! The loop of an HTTP client session: the same commands, events and handlers as stdio, with
//! each HTTP exchange the machine asks for performed inside the session's own task (polled
//! beside the commands), so a call costs no task hand-off between its exchange and the
//! machine.
//!
//! ```text
//!  loop { drain poll_output ─▶ feed one reported event, or
//!         race { exchanges report | command | poll_timeout } ─▶ feed one }
//!           (Transmit::Http: start an exchange; Transmit::Abort: drop it)
//!  on Closed: later calls fail at once, handler tasks are cancelled, the last exchanges
//!             (the DELETE) get HTTP_CLOSE_GRACE, then close() waiters wake
//! ```

use std::future::poll_fn;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Instant;

use smol::channel::Receiver;
use smol::future::FutureExt as _;
use smol::Timer;
use zest_core::io::Input;
use zest_core::runtime::http_client::{HttpClientOutput, HttpClientOutputs};
use zest_core::runtime::{Exchanges, HTTP_CLOSE_GRACE};

use super::{Book, Command, Driver};
use zest_core::runtime::http_client::exchange;

use crate::client::connector::Connector;
use crate::wire::{self, Alarm};

enum Wake {
    Reported,
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
        let mut book = self.book();
        let mut exchanges = Exchanges::default();
        let mut alarm = Alarm::default();
        loop {
            if self.drain_http(&mut book, &connector, &mut exchanges) {
                break;
            }
            // What the exchanges reported, one event per drain.
            if let Some((stream, event)) = exchanges.try_event() {
                self.core.handle_input(event.input(Instant::now(), stream));
                continue;
            }
            alarm.arm(self.core.poll_timeout());
            let exchanges = &mut exchanges;
            let wake = async {
                poll_fn(|cx| exchanges.poll_reported(cx)).await;
                Wake::Reported
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
                // Fed at the top of the loop.
                Wake::Reported => {}
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
        // What the machine sent last (the DELETE that ends the session) may finish; past the
        // deadline the rest is dropped, connections with it.
        poll_fn(|cx| exchanges.poll_finished(cx))
            .or(async {
                Timer::after(HTTP_CLOSE_GRACE).await;
            })
            .await;
        exchanges.close();
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
        exchanges: &mut Exchanges,
    ) -> bool {
        let mut closed = false;
        let mut outputs = HttpClientOutputs::new();
        while let Some(output) = outputs.next(&mut self.core, Instant::now()) {
            match output {
                HttpClientOutput::Open { stream, request } => {
                    let events = exchanges.events();
                    let work = exchange(connector.clone(), stream, *request, events);
                    exchanges.start(stream, work);
                }
                HttpClientOutput::Abort { stream } => exchanges.abort(stream),
                HttpClientOutput::Event(event) => closed |= self.handle_event(book, event),
            }
        }
        closed
    }
}
