//! The server's driver loop: owns the core machine and the writer; handlers run on threads of
//! their own and talk back through [`ServerInput`]s.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use zest_core::api::CallError;
use zest_core::error::{CloseReason, Rejection, RequestError, UsageError};
use zest_core::handler::SyncHandler;
use zest_core::io::{Input, Output, Receive, StreamEvent, StreamId, Transmit};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::schema::LoggingLevel;
use zest_core::server::{Call, Event, Server};
use zest_core::RequestOptions;

use super::RequestContext;
use crate::child::Chunk;
use crate::workers::Workers;

/// Everything the server driver waits for.
pub(crate) enum ServerInput {
    Read(Chunk),
    Done {
        id: RequestId,
        result: Result<RawJson, ErrorObject>,
    },
    Progress {
        id: RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        reply: Sender<Result<(), UsageError>>,
    },
    Log {
        level: LoggingLevel,
        data: Value,
        reply: Sender<Result<(), UsageError>>,
    },
    Peer {
        method: &'static str,
        params: RawJson,
        reply: Sender<Result<RawJson, CallError>>,
    },
}

pub(crate) struct ServerDriver<W: Write> {
    machine: Server<SyncHandler<RequestContext>>,
    writer: Option<BufWriter<W>>,
    inputs: Receiver<ServerInput>,
    to_self: Sender<ServerInput>,
    /// The cancellation flag of each call whose handler is running.
    running: HashMap<RequestId, Arc<AtomicBool>>,
    /// Handler threads waiting for the client's answer to our requests.
    peer_waiters: HashMap<RequestId, Sender<Result<RawJson, CallError>>>,
    write_failed: Option<String>,
    workers: Workers,
}

impl<W: Write> ServerDriver<W> {
    pub(crate) fn new(
        machine: Server<SyncHandler<RequestContext>>,
        writer: W,
        inputs: Receiver<ServerInput>,
        to_self: Sender<ServerInput>,
    ) -> Self {
        Self {
            machine,
            writer: Some(BufWriter::with_capacity(64 * 1024, writer)),
            inputs,
            to_self,
            running: HashMap::new(),
            peer_waiters: HashMap::new(),
            write_failed: None,
            workers: Workers::new("zest-handler"),
        }
    }

    /// Serves until the session closes; returns why.
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
                        Err(RecvTimeoutError::Disconnected) => Some(ended()),
                    }
                }
                // `to_self` keeps the channel open, so this only errs if that invariant broke.
                None => Some(self.inputs.recv().unwrap_or_else(|_| ended())),
            };
            let now = Instant::now();
            match input {
                None => self.machine.handle_input(Input::Timeout(now)),
                Some(input) => self.feed(now, input),
            }
        }
    }

    fn feed(&mut self, now: Instant, input: ServerInput) {
        match input {
            ServerInput::Read(read) => {
                let event = match &read {
                    Chunk::Data(bytes) => StreamEvent::Data(bytes),
                    Chunk::End => StreamEvent::End,
                    Chunk::Failed(why) => StreamEvent::Failed(why),
                };
                let receive = Receive { stream: StreamId::STDIO, event };
                self.machine.handle_input(Input::Receive(now, receive));
            }
            ServerInput::Done { id, result } => {
                self.running.remove(&id);
                // Err: the client cancelled it or the session closed; nothing to send.
                let _ = self.machine.respond(now, id, result);
            }
            ServerInput::Progress { id, progress, total, message, reply } => {
                let _ = reply.send(self.machine.progress(now, &id, progress, total, message));
            }
            ServerInput::Log { level, data, reply } => {
                let _ = reply.send(self.machine.log(now, level, None, data));
            }
            ServerInput::Peer { method, params, reply } => {
                let opts = RequestOptions::default();
                match self.machine.request(now, method, Some(params), opts) {
                    Ok(id) => {
                        self.peer_waiters.insert(id, reply);
                    }
                    Err(e) => {
                        let _ = reply.send(Err(CallError::Usage(e)));
                    }
                }
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
                        self.writer = None;
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
            let receive = Receive { stream: StreamId::STDIO, event: StreamEvent::Failed(&why) };
            self.machine.handle_input(Input::Receive(Instant::now(), receive));
        }
    }

    fn event(&mut self, event: Event<SyncHandler<RequestContext>>) {
        match event {
            Event::Call { id, handler, call, .. } => self.run_handler(id, handler, call),
            Event::Cancelled { id } => {
                if let Some(flag) = self.running.remove(&id) {
                    flag.store(true, Ordering::Release);
                }
            }
            Event::Response { id, result } => {
                if let Some(reply) = self.peer_waiters.remove(&id) {
                    let _ = reply.send(result.map_err(CallError::Request));
                }
            }
            _ => {}
        }
    }

    fn run_handler(&mut self, id: RequestId, handler: SyncHandler<RequestContext>, call: Call) {
        let cancelled = Arc::new(AtomicBool::new(false));
        let ctx = RequestContext::new(id.clone(), cancelled.clone(), self.to_self.clone());
        let to_driver = self.to_self.clone();
        let done_id = id.clone();
        let spawned = self.workers.run(move || {
            let result = catch_unwind(AssertUnwindSafe(|| handler.run(&ctx, call)))
                .unwrap_or_else(|_| Err(internal("the handler panicked")));
            let _ = to_driver.send(ServerInput::Done { id: done_id, result });
        });
        match spawned {
            Ok(_) => {
                self.running.insert(id, cancelled);
            }
            Err(e) => {
                let result = Err(internal(&format!("cannot start a handler thread: {e}")));
                let _ = self.machine.respond(Instant::now(), id, result);
            }
        }
    }

    fn closed(&mut self, reason: &CloseReason) {
        self.flush();
        for (_, flag) in self.running.drain() {
            flag.store(true, Ordering::Release);
        }
        // The machine has already answered each of our requests; this covers a broken promise.
        for (_, reply) in self.peer_waiters.drain() {
            let _ = reply.send(Err(CallError::Request(RequestError::Closed(reason.clone()))));
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let Some(writer) = self.writer.as_mut() else { return };
        if let Err(e) = writer.write_all(bytes) {
            self.write_failed = Some(format!("writing: {e}"));
            self.writer = None;
        }
    }

    fn flush(&mut self) {
        let Some(writer) = self.writer.as_mut() else { return };
        if let Err(e) = writer.flush() {
            self.write_failed = Some(format!("writing: {e}"));
            self.writer = None;
        }
    }
}

fn ended() -> ServerInput {
    ServerInput::Read(Chunk::End)
}

fn internal(detail: &str) -> ErrorObject {
    Rejection::Internal(detail.to_owned()).to_jsonrpc()
}
