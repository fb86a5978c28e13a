//! A client and a server wired back to back in memory.
//!
//! Faults: [`Pair::set_faults`] gives the pipe seeded latency (order is always kept: it is
//! one byte stream each way); [`Pair::stall_server`] makes the server stop answering;
//! [`Pair::crash_server`] kills it with frames in flight.

use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::client::{self, Client, ClientConfig};
use crate::io::{Input, Output, Receive, StreamEvent, StreamId, Transmit};
use crate::jsonrpc::{ErrorObject, RawJson};
use crate::server::{self, Call, Registry, Server, ServerConfig};

use super::faults::{Dice, Faults, Link};
use super::VirtualClock;

/// One frame that crossed the wire, for transcripts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wire {
    /// Bytes the client wrote (a whole frame, newline included).
    ToServer(String),
    /// Bytes the server wrote.
    ToClient(String),
    /// The client closed its end.
    ClientClosed,
    /// The server closed its end.
    ServerClosed,
}

/// A client and a server joined by an in-memory stdio pipe, with a virtual clock.
#[derive(Debug)]
pub struct Pair<H> {
    /// The client machine.
    pub client: Client,
    /// The server machine.
    pub server: Server<H>,
    /// Virtual time.
    pub clock: VirtualClock,
    /// Client events not yet taken by the test.
    pub client_events: Vec<client::Event>,
    /// Server events not yet taken by the test.
    pub server_events: Vec<server::Event<H>>,
    /// Every frame that crossed, in order.
    pub wire: Vec<Wire>,
    to_server: Link<Transmit>,
    to_client: Link<Transmit>,
    dice: Dice,
    /// While set, nothing crosses: the server stopped answering.
    stalled: bool,
    /// The server crashed: it gets no input and what it writes is lost.
    crashed: bool,
}

impl<H: Clone> Pair<H> {
    /// A pair whose client has just queued `initialize` (nothing delivered yet).
    pub fn new(client: ClientConfig, server: ServerConfig, registry: Registry<H>) -> Self {
        let clock = VirtualClock::new();
        let now = clock.now();
        Self {
            client: Client::new(client, now),
            server: Server::new(server, registry, now),
            clock,
            client_events: Vec::new(),
            server_events: Vec::new(),
            wire: Vec::new(),
            to_server: Link::default(),
            to_client: Link::default(),
            dice: Dice::new(Faults::none()),
            stalled: false,
            crashed: false,
        }
    }

    /// From now on the pipe has these faults; only the latency applies to a pipe (it keeps
    /// order, and loses nothing unless the server crashes).
    pub fn set_faults(&mut self, faults: Faults) {
        self.dice = Dice::new(faults);
    }

    /// While `on`, the server stops answering: nothing crosses either way (what was written
    /// waits, and arrives once the stall ends). The client's timeouts still run.
    pub fn stall_server(&mut self, on: bool) {
        self.stalled = on;
        self.pump();
    }

    /// The server process dies: what it had written and the client had not read yet is lost
    /// (the client may read the first part of one frame), what the client wrote to it is
    /// lost, and the client sees its stream end. The server machine gets no input from then on.
    pub fn crash_server(&mut self) {
        self.pump();
        self.crashed = true;
        self.to_server.drain();
        let now = self.clock.now();
        let partial = self.to_client.drain().into_iter().find_map(|(_, t)| match t {
            Transmit::Write { bytes, .. } => Some(bytes),
            _ => None,
        });
        if let Some(bytes) = partial {
            let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
            let cut = self.dice.below(len) as usize;
            if cut > 0 {
                let stream = StreamId::STDIO;
                let part: Bytes = bytes.slice(..cut);
                self.wire.push(Wire::ToClient(String::from_utf8_lossy(&part).into_owned()));
                let event = StreamEvent::Data(&part);
                self.client.handle_input(Input::Receive(now, Receive { stream, event }));
                self.pump();
            }
        }
        self.wire.push(Wire::ServerClosed);
        let event = StreamEvent::End;
        self.client.handle_input(Input::Receive(now, Receive { stream: StreamId::STDIO, event }));
        self.pump();
    }

    /// True when nothing is in flight on the pipe.
    pub fn is_idle(&self) -> bool {
        self.to_server.is_empty() && self.to_client.is_empty()
    }

    /// Moves bytes both ways until neither side has anything to send. Like a real runtime, it
    /// drains a machine completely before feeding it the next input.
    pub fn pump(&mut self) {
        let stream = StreamId::STDIO;
        loop {
            let now = self.clock.now();
            while let Some(out) = self.client.poll_output() {
                match out {
                    Output::Transmit(_) if self.crashed => {}
                    Output::Transmit(t) => {
                        let latency = self.dice.latency();
                        self.to_server.send(now, latency, false, stream, t);
                    }
                    Output::Event(e) => self.client_events.push(e),
                }
            }
            while let Some(out) = self.server.poll_output() {
                match out {
                    Output::Transmit(_) if self.crashed => {}
                    Output::Transmit(t) => {
                        let latency = self.dice.latency();
                        self.to_client.send(now, latency, false, stream, t);
                    }
                    Output::Event(e) => self.server_events.push(e),
                }
            }
            if self.stalled {
                return;
            }
            let server_due = self.to_server.next_due().filter(|d| *d <= now);
            let client_due = self.to_client.next_due().filter(|d| *d <= now);
            let to_server = match (server_due, client_due) {
                (Some(s), Some(c)) => s <= c,
                (s, c) => s.is_some() || c.is_none(),
            };
            if to_server {
                let Some((_, t)) = self.to_server.pop_due(now) else { return };
                deliver(t, now, &mut self.wire, true, |input| self.server.handle_input(input));
            } else {
                let Some((_, t)) = self.to_client.pop_due(now) else { return };
                deliver(t, now, &mut self.wire, false, |input| self.client.handle_input(input));
            }
        }
    }

    /// Runs the handshake and returns what the client saw. Panics if it fails.
    pub fn handshake(&mut self) -> client::Negotiated {
        self.pump();
        let ready = self.client_events.iter().find_map(|e| match e {
            client::Event::Ready(n) => Some((**n).clone()),
            _ => None,
        });
        ready.unwrap_or_else(|| panic!("no Ready; client events: {:?}", self.client_events))
    }

    /// Moves time forward by `d`, delivers timeouts to both sides and pumps.
    pub fn advance(&mut self, d: Duration) {
        let t = self.clock.now() + d;
        self.advance_to(t);
    }

    /// Moves time to `t`, delivers timeouts to both sides and pumps. Frames in flight arrive
    /// on the way, each at its instant, after the timeouts due by then.
    pub fn advance_to(&mut self, t: Instant) {
        self.pump();
        loop {
            let hops = [self.to_server.next_due(), self.to_client.next_due()];
            let next = hops.into_iter().flatten().min().filter(|d| *d < t && !self.stalled);
            let Some(due) = next else { break };
            self.tick(due);
        }
        self.tick(t);
    }

    /// Moves time to `t`, delivers timeouts to both sides and pumps.
    fn tick(&mut self, t: Instant) {
        let now = self.clock.advance_to(t);
        self.client.handle_input(Input::Timeout(now));
        self.pump();
        if !self.crashed {
            self.server.handle_input(Input::Timeout(now));
        }
        self.pump();
    }

    /// Takes the client events seen so far.
    pub fn take_client_events(&mut self) -> Vec<client::Event> {
        std::mem::take(&mut self.client_events)
    }

    /// Takes the server events seen so far.
    pub fn take_server_events(&mut self) -> Vec<server::Event<H>> {
        std::mem::take(&mut self.server_events)
    }

    /// Answers every pending `Event::Call` with `handler` and pumps; other server events stay.
    pub fn serve(&mut self, mut handler: impl FnMut(&H, &Call) -> Result<RawJson, ErrorObject>) {
        let now = self.clock.now();
        let events = std::mem::take(&mut self.server_events);
        for e in events {
            match e {
                server::Event::Call { id, handler: h, call, .. } => {
                    let result = handler(&h, &call);
                    // Invariant: the id came from this server and was not answered yet.
                    self.server.respond(now, id, result).expect("a fresh call id");
                }
                other => self.server_events.push(other),
            }
        }
        self.pump();
    }

    /// Writes raw bytes to the server as if the client had sent them, and pumps.
    pub fn inject_to_server(&mut self, bytes: &[u8]) {
        self.pump();
        let now = self.clock.now();
        let event = StreamEvent::Data(bytes);
        self.server.handle_input(Input::Receive(now, Receive { stream: StreamId::STDIO, event }));
        self.pump();
    }

    /// Writes raw bytes to the client as if the server had sent them, and pumps.
    pub fn inject_to_client(&mut self, bytes: &[u8]) {
        self.pump();
        let now = self.clock.now();
        let event = StreamEvent::Data(bytes);
        self.client.handle_input(Input::Receive(now, Receive { stream: StreamId::STDIO, event }));
        self.pump();
    }

    /// The methods of the frames that crossed, as `"c→s initialize"` lines (responses show as
    /// `"s→c result 0"` / `"s→c error 0"`), for transcripts.
    pub fn transcript(&self) -> Vec<String> {
        self.wire.iter().map(describe).collect()
    }
}

fn deliver(
    t: Transmit,
    now: Instant,
    wire: &mut Vec<Wire>,
    from_client: bool,
    mut to_peer: impl FnMut(Input<'_>),
) {
    match t {
        Transmit::Write { stream, bytes } => {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            wire.push(if from_client { Wire::ToServer(text) } else { Wire::ToClient(text) });
            to_peer(Input::Receive(now, Receive { stream, event: StreamEvent::Data(&bytes) }));
        }
        Transmit::Close { stream } => {
            wire.push(if from_client { Wire::ClientClosed } else { Wire::ServerClosed });
            to_peer(Input::Receive(now, Receive { stream, event: StreamEvent::End }));
        }
        // The stdio pair carries one byte stream; the HTTP transmits have their own testkit.
        t @ (Transmit::Abort { .. } | Transmit::Http { .. } | Transmit::Respond { .. }) => {
            panic!("a stdio machine emitted an http transmit: {t:?}")
        }
    }
}

fn describe(w: &Wire) -> String {
    let (arrow, text) = match w {
        Wire::ToServer(t) => ("c→s", t),
        Wire::ToClient(t) => ("s→c", t),
        Wire::ClientClosed => return "c→s close".into(),
        Wire::ServerClosed => return "s→c close".into(),
    };
    let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap_or_default();
    let what = if let Some(m) = v.get("method").and_then(|m| m.as_str()) {
        m.to_owned()
    } else if v.get("error").is_some() {
        format!("error {}", v["id"])
    } else if v.is_array() {
        "batch".to_owned()
    } else {
        format!("result {}", v["id"])
    };
    format!("{arrow} {what}")
}
