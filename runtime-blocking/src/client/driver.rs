//! The client's one driver thread: owns the core machine and the child's stdin.
//!
//! loop { drain `poll_output` (write transmits, route events); wait for one input (stdout
//! bytes, EOF, a command) until `poll_timeout`; feed it }.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ChildStdin;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender};
use std::time::{Duration, Instant};

use zest_core::api::{CallError, ProgressFn};
use zest_core::client::{self, Event, Negotiated, ServerNotification, ServerRequest};
use zest_core::error::{CloseReason, Rejection, RequestError};
use zest_core::handler::SyncClientHandlers;
use zest_core::io::{Input, Output, Receive, StreamEvent, StreamId, Transmit};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::RequestOptions;

use super::ConnectError;
use crate::child::Chunk;
use crate::workers::Workers;

/// Everything the driver waits for, on one channel.
pub(crate) enum DriverInput {
    Stdout(Chunk),
    Request(CallRequest),
    Cancel(RequestId),
    Respond { id: RequestId, result: Result<RawJson, ErrorObject> },
    Shutdown,
}

/// A request from a handle.
pub(crate) struct CallRequest {
    pub(crate) method: &'static str,
    pub(crate) params: RawJson,
    pub(crate) opts: RequestOptions,
    pub(crate) on_progress: Option<ProgressFn>,
    /// Send [`Reply::Started`] before the outcome (for cancellable calls).
    pub(crate) want_id: bool,
    pub(crate) reply: Sender<Reply>,
}

/// What the driver tells a caller.
pub(crate) enum Reply {
    Started(RequestId),
    Done(Result<RawJson, CallError>),
}

struct Waiter {
    reply: Sender<Reply>,
    on_progress: Option<ProgressFn>,
}

pub(crate) struct Driver {
    machine: client::Client,
    stdin: Option<BufWriter<ChildStdin>>,
    inputs: Receiver<DriverInput>,
    /// Given to handler threads so their answers come back as inputs.
    to_self: Sender<DriverInput>,
    handlers: SyncClientHandlers,
    notifications: SyncSender<ServerNotification>,
    ready: Option<Sender<Result<Negotiated, ConnectError>>>,
    waiters: HashMap<RequestId, Waiter>,
    /// Why writing to the child failed, and until when we wait for its stdout to end so the
    /// answers it wrote are not lost.
    broken: Option<(String, Instant)>,
    grace: Duration,
    workers: Workers,
}

/// The driver's channel ends.
pub(crate) struct Links {
    pub(crate) inputs: Receiver<DriverInput>,
    pub(crate) to_self: Sender<DriverInput>,
    pub(crate) notifications: SyncSender<ServerNotification>,
    pub(crate) ready: Sender<Result<Negotiated, ConnectError>>,
}

impl Driver {
    pub(crate) fn new(
        machine: client::Client,
        stdin: ChildStdin,
        handlers: SyncClientHandlers,
        links: Links,
        grace: Duration,
    ) -> Self {
        Self {
            machine,
            stdin: Some(BufWriter::with_capacity(64 * 1024, stdin)),
            inputs: links.inputs,
            to_self: links.to_self,
            handlers,
            notifications: links.notifications,
            ready: Some(links.ready),
            waiters: HashMap::new(),
            broken: None,
            grace,
            workers: Workers::new("zest-client-handler"),
        }
    }

    /// Runs until the session closes; returns why. Every caller has had its outcome by then.
    pub(crate) fn run(&mut self) -> CloseReason {
        loop {
            if let Some(reason) = self.drain() {
                return reason;
            }
            let broken_deadline = self.broken.as_ref().map(|(_, at)| *at);
            let deadline = match (self.machine.poll_timeout(), broken_deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let input = match deadline {
                Some(deadline) => {
                    let wait = deadline.saturating_duration_since(Instant::now());
                    match self.inputs.recv_timeout(wait) {
                        Ok(input) => Some(input),
                        Err(RecvTimeoutError::Timeout) => None,
                        // Unreachable while `to_self` lives; treat it as a shutdown anyway.
                        Err(RecvTimeoutError::Disconnected) => Some(DriverInput::Shutdown),
                    }
                }
                None => Some(self.inputs.recv().unwrap_or(DriverInput::Shutdown)),
            };
            let now = Instant::now();
            match input {
                Some(input) => self.feed(now, input),
                None if broken_deadline.is_some_and(|at| at <= now) => {
                    // The child's stdout did not end in time after its stdin broke.
                    let why = self.broken.take().map(|(why, _)| why).unwrap_or_default();
                    let event = StreamEvent::Failed(&why);
                    let receive = Receive { stream: StreamId::STDIO, event };
                    self.machine.handle_input(Input::Receive(now, receive));
                }
                None => self.machine.handle_input(Input::Timeout(now)),
            }
        }
    }

    fn feed(&mut self, now: Instant, input: DriverInput) {
        match input {
            DriverInput::Stdout(out) => {
                let event = match &out {
                    Chunk::Data(bytes) => StreamEvent::Data(bytes),
                    Chunk::End => StreamEvent::End,
                    Chunk::Failed(why) => StreamEvent::Failed(why),
                };
                let receive = Receive { stream: StreamId::STDIO, event };
                self.machine.handle_input(Input::Receive(now, receive));
            }
            DriverInput::Request(call) => self.start(now, call),
            DriverInput::Cancel(id) => {
                // UnknownRequest: it already finished, which is fine.
                let _ = self.machine.cancel(now, &id, None);
            }
            DriverInput::Respond { id, result } => {
                // Err: the server cancelled it or the session closed; nothing to send.
                let _ = self.machine.respond(now, id, result);
            }
            DriverInput::Shutdown => self.machine.close(now),
        }
    }

    fn start(&mut self, now: Instant, call: CallRequest) {
        match self.machine.request(now, call.method, Some(call.params), call.opts) {
            Ok(id) => {
                if call.want_id {
                    let _ = call.reply.send(Reply::Started(id.clone()));
                }
                let waiter = Waiter { reply: call.reply, on_progress: call.on_progress };
                self.waiters.insert(id, waiter);
            }
            Err(e) => {
                let _ = call.reply.send(Reply::Done(Err(CallError::Usage(e))));
            }
        }
    }

    /// Drains the machine; `Some` once it has closed.
    fn drain(&mut self) -> Option<CloseReason> {
        while let Some(out) = self.machine.poll_output() {
            match out {
                Output::Transmit(Transmit::Write { bytes, .. }) => self.write(&bytes),
                Output::Transmit(Transmit::Close { .. }) => {
                    self.flush();
                    self.stdin = None;
                }
                Output::Transmit(_) => {}
                Output::Event(Event::Closed(reason)) => {
                    self.closed(&reason);
                    return Some(reason);
                }
                Output::Event(event) => self.event(event),
            }
        }
        self.flush();
        None
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Ready(negotiated) => {
                if let Some(ready) = self.ready.take() {
                    let _ = ready.send(Ok(*negotiated));
                }
            }
            Event::Response { id, result } => {
                if let Some(w) = self.waiters.remove(&id) {
                    let _ = w.reply.send(Reply::Done(result.map_err(CallError::Request)));
                }
            }
            Event::Progress { id, progress } => {
                let Some(waiter) = self.waiters.get_mut(&id) else { return };
                let Some(f) = waiter.on_progress.as_mut() else { return };
                // A callback that panics gets no more reports; the call goes on.
                if catch_unwind(AssertUnwindSafe(|| f(progress))).is_err() {
                    waiter.on_progress = None;
                }
            }
            Event::Request { id, request } => self.serve_request(id, request),
            Event::Notification(n) => {
                // A full queue means nobody reads notifications; dropping beats blocking.
                let _ = self.notifications.try_send(n);
            }
            _ => {}
        }
    }

    /// Runs the app's handler for a server request on its own thread.
    fn serve_request(&mut self, id: RequestId, request: ServerRequest) {
        let handlers = self.handlers.clone();
        let to_driver = self.to_self.clone();
        let reply_id = id.clone();
        let spawned = self.workers.run(move || {
            let result = catch_unwind(AssertUnwindSafe(|| handlers.run(request)))
                .unwrap_or_else(|_| Err(internal("the handler panicked")));
            let _ = to_driver.send(DriverInput::Respond { id: reply_id, result });
        });
        if let Err(e) = spawned {
            let result = Err(internal(&format!("cannot start a handler thread: {e}")));
            let _ = self.machine.respond(Instant::now(), id, result);
        }
    }

    fn closed(&mut self, reason: &CloseReason) {
        self.flush();
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(Err(ConnectError::from_close(reason.clone())));
        }
        // The machine has already answered every request; this only covers a broken promise.
        for (_, w) in self.waiters.drain() {
            let error = CallError::Request(RequestError::Closed(reason.clone()));
            let _ = w.reply.send(Reply::Done(Err(error)));
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let Some(stdin) = self.stdin.as_mut() else { return };
        if let Err(e) = stdin.write_all(bytes) {
            self.stdin_broke(&e);
        }
    }

    fn flush(&mut self) {
        let Some(stdin) = self.stdin.as_mut() else { return };
        if let Err(e) = stdin.flush() {
            self.stdin_broke(&e);
        }
    }

    /// Stops writing. The session fails once the child's stdout ends (usually at once: the
    /// child died), or after `grace` if it does not, so answers it wrote first still arrive.
    fn stdin_broke(&mut self, e: &std::io::Error) {
        self.stdin = None;
        let why = format!("writing to the child's stdin: {e}");
        self.broken.get_or_insert((why, Instant::now() + self.grace));
    }

    /// Hands the child's stdin back for shutdown (it is closed first).
    pub(crate) fn take_stdin(&mut self) -> Option<ChildStdin> {
        let mut stdin = self.stdin.take()?;
        let _ = stdin.flush();
        stdin.into_inner().ok()
    }
}

fn internal(detail: &str) -> ErrorObject {
    Rejection::Internal(detail.to_owned()).to_jsonrpc()
}
