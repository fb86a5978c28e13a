//! The client's one driver thread: owns the core machine and the child's stdin.
//!
//! loop { drain `poll_output` (write transmits, route events); wait for one input (stdout
//! bytes, EOF, a command) until `poll_timeout`; feed it }.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ChildStdin;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender};
use std::time::Instant;

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
    write_failed: Option<String>,
    workers: Workers,
}

impl Driver {
    pub(crate) fn new(
        machine: client::Client,
        stdin: ChildStdin,
        inputs: Receiver<DriverInput>,
        to_self: Sender<DriverInput>,
        handlers: SyncClientHandlers,
        notifications: SyncSender<ServerNotification>,
        ready: Sender<Result<Negotiated, ConnectError>>,
    ) -> Self {
        Self {
            machine,
            stdin: Some(BufWriter::with_capacity(64 * 1024, stdin)),
            inputs,
            to_self,
            handlers,
            notifications,
            ready: Some(ready),
            waiters: HashMap::new(),
            write_failed: None,
            workers: Workers::new("zest-client-handler"),
        }
    }

    /// Runs until the session closes; returns why. Every caller has had its outcome by then.
    pub(crate) fn run(&mut self) -> CloseReason {
        loop {
            if let Some(reason) = self.drain() {
                return reason;
            }
            let input = match self.machine.poll_timeout() {
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
                None => self.machine.handle_input(Input::Timeout(now)),
                Some(input) => self.feed(now, input),
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

    /// Drains the machine; `Some` once it has closed. Feeds a write failure back in.
    fn drain(&mut self) -> Option<CloseReason> {
        loop {
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
            let why = self.write_failed.take()?;
            let event = StreamEvent::Failed(&why);
            let receive = Receive { stream: StreamId::STDIO, event };
            self.machine.handle_input(Input::Receive(Instant::now(), receive));
        }
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
            self.write_failed = Some(format!("writing to the child's stdin: {e}"));
            self.stdin = None;
        }
    }

    fn flush(&mut self) {
        let Some(stdin) = self.stdin.as_mut() else { return };
        if let Err(e) = stdin.flush() {
            self.write_failed = Some(format!("writing to the child's stdin: {e}"));
            self.stdin = None;
        }
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
