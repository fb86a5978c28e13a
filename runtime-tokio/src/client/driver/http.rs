//! The loop of an HTTP client session: the same commands, events and handlers as stdio, with
//! each HTTP exchange the machine asks for performed inside the session's own task (polled
//! beside the commands), so a call costs no task hand-off between its exchange and the
//! machine.

use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::future::{AbortHandle, Abortable};
use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::{mpsc, watch};
use zest_core::io::{Input, Output, StreamId, Transmit};
use zest_core::runtime::OwnedEvent;

use super::{Command, Driver, Exit};
use crate::client::connector::{self, Connector, Events};

/// How long the last exchanges of a closing session (its DELETE) may take.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// The exchanges under way, polled by the session's task; each can be cut by its stream.
/// Their events wait in `inbox`, which wakes the task only while it is parked.
#[derive(Default)]
struct Exchanges {
    running: FuturesUnordered<Abortable<Pin<Box<dyn Future<Output = ()> + Send>>>>,
    handles: HashMap<StreamId, AbortHandle>,
    inbox: Events,
}

impl Exchanges {
    fn start(&mut self, stream: StreamId, work: impl Future<Output = ()> + Send + 'static) {
        let (handle, registration) = AbortHandle::new_pair();
        self.running.push(Abortable::new(Box::pin(work), registration));
        self.handles.insert(stream, handle);
    }

    /// Cuts the exchange on `stream`: its future, and with it its connection, is dropped.
    fn abort(&mut self, stream: StreamId) {
        if let Some(handle) = self.handles.remove(&stream) {
            handle.abort();
        }
    }

    /// The next event reported, without waiting; forgets the handle of an exchange that
    /// reported its end.
    fn try_event(&mut self) -> Option<(StreamId, OwnedEvent)> {
        let (stream, event) = self.inbox.try_recv()?;
        if matches!(event, OwnedEvent::End | OwnedEvent::Failed(_)) {
            self.handles.remove(&stream);
        }
        Some((stream, event))
    }

    /// Polls the exchanges until each waits; ready once one of them has reported. Only
    /// the exchanges send to the inbox, and only while polled here, so the task never needs
    /// waking for it: their sockets wake it.
    fn poll_reported(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        while let Poll::Ready(Some(_)) = self.running.poll_next_unpin(cx) {}
        if self.inbox.is_empty() {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }

    /// Polls the exchanges until none is left.
    async fn finish(&mut self) {
        while self.running.next().await.is_some() {
            while self.inbox.try_recv().is_some() {}
        }
    }
}

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
        // What the machine sent last (the DELETE that ends the session) may finish; the rest
        // is dropped, connections with it.
        let _ = tokio::time::timeout(CLOSE_GRACE, exchanges.finish()).await;
        exchanges.inbox.close();
        drop(exchanges);
        connector.clear();
        exit.send_replace(Some(Ok(ExitStatus::default())));
    }

    /// Performs every pending output; true once the session is closed.
    fn drain_http(&mut self, connector: &Arc<Connector>, exchanges: &mut Exchanges) -> bool {
        let mut closed = false;
        while let Some(output) = self.core.poll_output() {
            match output {
                Output::Transmit(Transmit::Http { stream, request }) => {
                    let events = exchanges.inbox.clone();
                    let work = connector::exchange(connector.clone(), stream, *request, events);
                    exchanges.start(stream, work);
                }
                Output::Transmit(Transmit::Abort { stream }) => exchanges.abort(stream),
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
