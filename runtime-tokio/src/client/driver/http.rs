//! The loop of an HTTP client session: the same commands, events and handlers as stdio, with
//! each HTTP exchange the machine asks for performed inside the session's own task (polled
//! beside the commands), so a call costs no task hand-off between its exchange and the
//! machine.

use std::future::poll_fn;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use zest_core::io::Input;
use zest_core::runtime::http_client::{HttpClientOutput, HttpClientOutputs};
use zest_core::runtime::{Exchanges, HTTP_CLOSE_GRACE};

use super::{Command, Driver, Exit};
use zest_core::runtime::http_client::exchange;

use crate::client::connector::Connector;

impl Driver {
    /// Runs the session to its end, lets its DELETE go out, and records the end.
    pub(in crate::client) async fn run_http(
        mut self,
        connector: Arc<Connector>,
        mut commands: mpsc::UnboundedReceiver<Command>,
        exit: watch::Sender<Option<Exit>>,
    ) {
        let mut answers = self.answer_rx.take().expect("run_http runs once per driver");
        let mut exchanges = Exchanges::default();
        let sleep = tokio::time::sleep(Duration::from_secs(3600));
        tokio::pin!(sleep);
        let mut handles_alive = true;
        loop {
            if self.drain_http(&connector, &mut exchanges) {
                break;
            }
            // What the exchanges reported, one event per drain.
            if let Some((stream, event)) = exchanges.try_event() {
                self.core.handle_input(event.input(Instant::now(), stream));
                continue;
            }
            if let Some(at) = self.core.poll_timeout().map(tokio::time::Instant::from_std) {
                if sleep.deadline() != at {
                    sleep.as_mut().reset(at);
                }
            }
            tokio::select! {
                // What the exchanges reported is fed at the top of the loop.
                () = poll_fn(|cx| exchanges.poll_reported(cx)) => {}
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
                    self.apply(Command::Respond { id, result });
                }
                () = &mut sleep, if self.core.poll_timeout().is_some() => {
                    self.core.handle_input(Input::Timeout(Instant::now()));
                }
            }
        }
        Self::wind_down(&mut commands);
        // What the machine sent last (the DELETE that ends the session) may finish; the rest
        // is dropped, connections with it.
        let finished = poll_fn(|cx| exchanges.poll_finished(cx));
        let _ = tokio::time::timeout(HTTP_CLOSE_GRACE, finished).await;
        exchanges.close();
        connector.clear();
        exit.send_replace(Some(Ok(ExitStatus::default())));
    }

    /// Performs every pending output; true once the session is closed.
    fn drain_http(&mut self, connector: &Arc<Connector>, exchanges: &mut Exchanges) -> bool {
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
                HttpClientOutput::Event(event) => closed |= self.dispatch(event),
            }
        }
        closed
    }
}
