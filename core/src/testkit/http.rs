//! A client over HTTP and a router, joined by a simulated HTTP link in virtual time.
//!
//! Each exchange the client opens ([`Transmit::Http`]) reaches the router as an accepted
//! exchange with the same stream id (a head, the body, its end); the router's answer (head,
//! body writes, close) reaches the client as a response head, data and end.
//!
//! Faults: [`HttpPair::cut`] breaks an exchange on both sides, as a dropped connection;
//! [`HttpPair::set_faults`] adds seeded latency, reordering of independent streams, loss of
//! exchanges and disconnects in the middle of an SSE event (see [`Faults`]);
//! [`HttpPair::stall`] makes the server stop answering; [`HttpPair::expire_sessions`] makes
//! the router forget its sessions; [`HttpPair::disconnect_client`] makes the client vanish.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::HOST;
use http::HeaderValue;

use super::faults::{Dice, Faults, Link};
use super::VirtualClock;
use crate::client::{self, Client, ClientConfig};
use crate::http::client::HttpClientConfig;
use crate::http::server::{Router, RouterConfig, RouterEvent};
use crate::io::{
    Input, Output, Receive, RequestHead, ResponseHead, StreamEvent, StreamId, Transmit,
    TransportFailure,
};
use crate::jsonrpc::{ErrorObject, RawJson};
use crate::server::{Call, Event, Registry, ServerConfig};

/// What travels on the link, owned until delivered.
#[derive(Debug)]
enum Hop {
    Accept(Box<RequestHead>),
    Head(Box<ResponseHead>),
    Data(Bytes),
    End,
    Failed,
    /// The link breaks here: the exchange is cut when this hop comes due.
    Cut,
}

/// A client machine speaking HTTP to a router, in memory.
#[derive(Debug)]
pub struct HttpPair<H> {
    /// The client machine.
    pub client: Client,
    /// The server side.
    pub router: Router<H>,
    /// Virtual time shared by both.
    pub clock: VirtualClock,
    client_events: Vec<client::Event>,
    router_events: Vec<RouterEvent<H>>,
    to_router: Link<Hop>,
    to_client: Link<Hop>,
    /// Exchanges opened and not yet ended or cut.
    open: BTreeSet<StreamId>,
    dice: Dice,
    /// Lost exchanges: how many more hops each delivers before it is cut.
    doomed: HashMap<StreamId, u32>,
    /// Response body chunks written so far, per open exchange.
    chunks: HashMap<StreamId, u32>,
    /// While set, nothing is delivered either way: the server stopped answering.
    stalled: bool,
    /// The client went away without a word: it sends and receives nothing any more.
    client_gone: bool,
    /// One line per exchange, `"POST /mcp → 200"`, for transcripts.
    transcript: Vec<String>,
    /// Each exchange's line in `transcript`, until its head is answered.
    unanswered: HashMap<StreamId, usize>,
}

impl<H: Clone> HttpPair<H> {
    /// A client for `url` (e.g. `http://127.0.0.1/mcp`) and a router serving `registry`.
    pub fn new(
        client: ClientConfig,
        http: HttpClientConfig,
        server: ServerConfig,
        router: RouterConfig,
        registry: Registry<H>,
    ) -> Self {
        let clock = VirtualClock::new();
        let client = Client::new_http(client, http, clock.now()).expect("a valid HTTP config");
        let mut pair = Self {
            client,
            router: Router::new(server, router, registry),
            clock,
            client_events: Vec::new(),
            router_events: Vec::new(),
            to_router: Link::default(),
            to_client: Link::default(),
            open: BTreeSet::new(),
            dice: Dice::new(Faults::none()),
            doomed: HashMap::new(),
            chunks: HashMap::new(),
            stalled: false,
            client_gone: false,
            transcript: Vec::new(),
            unanswered: HashMap::new(),
        };
        pair.pump();
        pair
    }

    /// From now on, the link has these faults (the dice are reseeded from `faults.seed`).
    /// Hops in flight keep their due instants; losses already drawn for open exchanges and
    /// not yet happened are called off.
    pub fn set_faults(&mut self, faults: Faults) {
        self.dice = Dice::new(faults);
        self.doomed.clear();
    }

    /// The link's faults.
    pub fn faults(&self) -> &Faults {
        &self.dice.faults
    }

    /// While `on`, the server stops answering: nothing crosses the link either way (what was
    /// sent waits, and arrives once the stall ends). The client's timeouts still run.
    pub fn stall(&mut self, on: bool) {
        self.stalled = on;
        self.pump();
    }

    /// The client goes away without a word (its process died, its network is gone): every
    /// exchange breaks (the router sees each fail), nothing in flight arrives, and from now on
    /// what the client sends is lost and nothing reaches it. The client machine stays for the
    /// test to inspect (and close).
    pub fn disconnect_client(&mut self) {
        self.pump();
        self.client_gone = true;
        for stream in self.open_streams() {
            self.break_stream(stream);
        }
        for (stream, _) in self.to_router.drain().into_iter().chain(self.to_client.drain()) {
            self.break_stream(stream);
        }
        self.pump();
    }

    /// The router forgets every session it holds (as when it restarts or expires them): their
    /// streams close and their ids get 404 from now on.
    pub fn expire_sessions(&mut self) {
        let now = self.clock.now();
        let ids: Vec<_> = self.router.sessions().cloned().collect();
        for id in ids {
            self.router.close_session(now, &id);
        }
        self.pump();
    }

    /// True when nothing is in flight on the link.
    pub fn is_idle(&self) -> bool {
        self.to_router.is_empty() && self.to_client.is_empty()
    }

    /// Moves everything both sides have to say until neither has anything left that is due.
    pub fn pump(&mut self) {
        loop {
            self.drain_client();
            self.drain_router();
            let now = self.clock.now();
            if self.stalled {
                return;
            }
            // Toward the router first when both are due at the same instant.
            let router_due = self.to_router.next_due().filter(|d| *d <= now);
            let client_due = self.to_client.next_due().filter(|d| *d <= now);
            let to_router = match (router_due, client_due) {
                (Some(r), Some(c)) => r <= c,
                (r, c) => r.is_some() || c.is_none(),
            };
            let link = if to_router { &mut self.to_router } else { &mut self.to_client };
            let Some((stream, hop)) = link.pop_due(now) else { return };
            if self.doomed_now(stream) || matches!(hop, Hop::Cut) {
                // The hop was in flight, so the exchange is live even if the router is done.
                self.break_stream(stream);
            } else if to_router {
                self.deliver_to_router(now, stream, hop);
            } else {
                self.deliver_to_client(now, stream, hop);
            }
        }
    }

    /// Lets time pass to `t`, firing every deadline and delivering every hop on the way, in
    /// time order.
    pub fn advance_to(&mut self, t: Instant) {
        // What the commands since the last pump produced leaves now, not at the first deadline.
        self.pump();
        loop {
            let hops = (!self.stalled).then(|| {
                [self.to_router.next_due(), self.to_client.next_due()].into_iter().flatten().min()
            });
            let next = [self.client.poll_timeout(), self.router.poll_timeout(), hops.flatten()]
                .into_iter()
                .flatten()
                .filter(|d| *d <= t)
                .min();
            let Some(due) = next else { break };
            self.clock.advance_to(due.max(self.clock.now()));
            let now = self.clock.now();
            self.client.handle_input(Input::Timeout(now));
            self.router.handle_input(Input::Timeout(now));
            self.pump();
        }
        self.clock.advance_to(t.max(self.clock.now()));
        self.pump();
    }

    /// Lets `d` pass.
    pub fn advance(&mut self, d: Duration) {
        let t = self.clock.now() + d;
        self.advance_to(t);
    }

    /// Breaks exchange `stream` on both sides, as a dropped connection; what was in flight
    /// on it is lost.
    pub fn cut(&mut self, stream: StreamId) {
        self.cut_now(stream);
        self.pump();
    }

    /// Breaks `stream` if it is still open or has hops in flight (an exchange the router
    /// closed may still be on its way to the client).
    fn cut_now(&mut self, stream: StreamId) {
        let was_open = self.open.contains(&stream);
        let to_client = self.to_client.drop_stream(stream);
        let to_router = self.to_router.drop_stream(stream);
        if was_open || to_client || to_router {
            self.break_stream(stream);
        }
    }

    /// Breaks `stream`: what is in flight on it is lost and both sides see it fail.
    fn break_stream(&mut self, stream: StreamId) {
        self.open.remove(&stream);
        self.to_client.drop_stream(stream);
        self.to_router.drop_stream(stream);
        self.doomed.remove(&stream);
        self.chunks.remove(&stream);
        let now = self.clock.now();
        let failed = || StreamEvent::Failed(TransportFailure::Reset("cut".into()));
        self.router.handle_input(Input::Receive(now, Receive { stream, event: failed() }));
        self.drain_router();
        if !self.client_gone {
            self.client.handle_input(Input::Receive(now, Receive { stream, event: failed() }));
        }
    }

    /// Counts one hop of a lost exchange: true when it is the one where the link breaks.
    fn doomed_now(&mut self, stream: StreamId) -> bool {
        let Some(left) = self.doomed.get_mut(&stream) else { return false };
        if *left == 0 {
            return true;
        }
        *left -= 1;
        false
    }

    /// Queues one hop toward the router, after a drawn latency.
    fn send_to_router(&mut self, stream: StreamId, hop: Hop) {
        let latency = self.dice.latency();
        let now = self.clock.now();
        self.to_router.send(now, latency, self.dice.faults.reorder, stream, hop);
    }

    /// Queues one hop toward the client, after a drawn latency.
    fn send_to_client(&mut self, stream: StreamId, hop: Hop) {
        let latency = self.dice.latency();
        let now = self.clock.now();
        self.to_client.send(now, latency, self.dice.faults.reorder, stream, hop);
    }

    /// The exchanges open now, oldest first.
    pub fn open_streams(&self) -> Vec<StreamId> {
        self.open.iter().copied().collect()
    }

    /// Answers every call the router reported with `handler`.
    pub fn serve(&mut self, mut handler: impl FnMut(&H, &Call) -> Result<RawJson, ErrorObject>) {
        let now = self.clock.now();
        for e in self.take_router_events() {
            if let Event::Call { id, handler: h, call, .. } = e.event {
                if let Some(session) = self.router.session_mut(&e.session) {
                    // The call may have been cancelled meanwhile; then nothing is sent.
                    let _ = session.respond(now, id, handler(&h, &call));
                }
            } else {
                self.router_events.push(e);
            }
        }
        self.pump();
    }

    /// The client's events so far, taken.
    pub fn take_client_events(&mut self) -> Vec<client::Event> {
        std::mem::take(&mut self.client_events)
    }

    /// The router's events so far, taken.
    pub fn take_router_events(&mut self) -> Vec<RouterEvent<H>> {
        std::mem::take(&mut self.router_events)
    }

    /// The exchanges so far, as `"POST /mcp → 200"` lines.
    pub fn transcript(&self) -> &[String] {
        &self.transcript
    }

    fn drain_client(&mut self) {
        while let Some(out) = self.client.poll_output() {
            match out {
                Output::Transmit(_) if self.client_gone => {}
                Output::Transmit(Transmit::Http { stream, request }) => {
                    let mut headers = request.headers;
                    if let Some(host) = request.uri.authority() {
                        if let Ok(value) = HeaderValue::from_str(host.as_str()) {
                            headers.insert(HOST, value);
                        }
                    }
                    let line = format!("{} {}", request.method, request.uri.path());
                    self.unanswered.insert(stream, self.transcript.len());
                    self.transcript.push(line);
                    let head = RequestHead { method: request.method, uri: request.uri, headers };
                    self.open.insert(stream);
                    if self.dice.chance(self.dice.faults.loss_per_mille) {
                        let after = self.dice.below(6);
                        self.doomed.insert(stream, after);
                    }
                    self.send_to_router(stream, Hop::Accept(Box::new(head)));
                    if !request.body.is_empty() {
                        self.send_to_router(stream, Hop::Data(request.body));
                    }
                    self.send_to_router(stream, Hop::End);
                }
                Output::Transmit(Transmit::Abort { stream }) => {
                    if self.open.remove(&stream) {
                        self.to_client.drop_stream(stream);
                        self.doomed.remove(&stream);
                        self.chunks.remove(&stream);
                        self.send_to_router(stream, Hop::Failed);
                    }
                }
                Output::Transmit(t) => panic!("an HTTP client emitted {t:?}"),
                Output::Event(e) => self.client_events.push(e),
            }
        }
    }

    /// Drains the router like a runtime that runs handlers in tasks of their own: every
    /// answer is decided once the outputs asking for handlers are drained.
    fn drain_router(&mut self) {
        self.drain_router_outputs();
        self.router.decide_answers();
        self.drain_router_outputs();
    }

    fn drain_router_outputs(&mut self) {
        while let Some(out) = self.router.poll_output() {
            match out {
                Output::Transmit(Transmit::Respond { stream, head }) => {
                    if let Some(line) =
                        (self.unanswered.remove(&stream)).and_then(|at| self.transcript.get_mut(at))
                    {
                        line.push_str(&format!(" → {}", head.status.as_u16()));
                    }
                    self.send_to_client(stream, Hop::Head(head));
                }
                Output::Transmit(Transmit::Write { stream, bytes }) => {
                    if self.open.contains(&stream) {
                        self.write_to_client(stream, bytes);
                    }
                }
                Output::Transmit(Transmit::Close { stream }) => {
                    if self.open.remove(&stream) {
                        self.chunks.remove(&stream);
                        self.send_to_client(stream, Hop::End);
                    }
                }
                Output::Transmit(t) => panic!("a router emitted {t:?}"),
                Output::Event(e) => self.router_events.push(e),
            }
        }
    }

    /// One body chunk toward the client; maybe split inside and the exchange cut after the
    /// first part (a disconnect in the middle of an SSE event).
    fn write_to_client(&mut self, stream: StreamId, bytes: Bytes) {
        let chunk = self.chunks.entry(stream).or_default();
        *chunk += 1;
        let later = *chunk > 1;
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        if later && len >= 2 && self.dice.chance(self.dice.faults.split_per_mille) {
            let at = 1 + self.dice.below(len - 1);
            let first = bytes.slice(..at as usize);
            self.send_to_client(stream, Hop::Data(first));
            self.send_to_client(stream, Hop::Cut);
            // The router goes on writing into a connection that is already gone.
            self.open.remove(&stream);
            self.chunks.remove(&stream);
            return;
        }
        self.send_to_client(stream, Hop::Data(bytes));
    }

    fn deliver_to_router(&mut self, now: Instant, stream: StreamId, hop: Hop) {
        let event = match hop {
            Hop::Accept(head) => StreamEvent::Accept(head),
            Hop::Data(ref bytes) => {
                return self.router.handle_input(crate::io::data(now, stream, bytes));
            }
            Hop::End => StreamEvent::End,
            Hop::Failed => StreamEvent::Failed(TransportFailure::Reset("aborted".into())),
            Hop::Head(_) | Hop::Cut => return,
        };
        self.router.handle_input(Input::Receive(now, Receive { stream, event }));
    }

    fn deliver_to_client(&mut self, now: Instant, stream: StreamId, hop: Hop) {
        if self.client_gone {
            return;
        }
        let event = match hop {
            Hop::Head(head) => StreamEvent::Head(head),
            Hop::Data(ref bytes) => {
                return self.client.handle_input(crate::io::data(now, stream, bytes));
            }
            Hop::End => {
                self.doomed.remove(&stream);
                self.to_client.forget(stream);
                self.to_router.forget(stream);
                StreamEvent::End
            }
            Hop::Failed => StreamEvent::Failed(TransportFailure::Reset("cut".into())),
            Hop::Accept(_) | Hop::Cut => return,
        };
        self.client.handle_input(Input::Receive(now, Receive { stream, event }));
    }
}
