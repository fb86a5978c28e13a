//! A client over HTTP and a router, joined by a simulated HTTP link in virtual time.
//!
//! Each exchange the client opens ([`Transmit::Http`]) reaches the router as an accepted
//! exchange with the same stream id (a head, the body, its end); the router's answer (head,
//! body writes, close) reaches the client as a response head, data and end. Faults are
//! commands: [`HttpPair::cut`] breaks an exchange on both sides, as a dropped connection.

use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::HOST;
use http::HeaderValue;

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
    to_router: VecDeque<(StreamId, Hop)>,
    to_client: VecDeque<(StreamId, Hop)>,
    /// Exchanges opened and not yet ended or cut.
    open: BTreeSet<StreamId>,
    /// One line per exchange, `"POST /mcp → 200"`, for transcripts.
    transcript: Vec<String>,
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
            to_router: VecDeque::new(),
            to_client: VecDeque::new(),
            open: BTreeSet::new(),
            transcript: Vec::new(),
        };
        pair.pump();
        pair
    }

    /// Moves everything both sides have to say until neither has anything left.
    pub fn pump(&mut self) {
        let now = self.clock.now();
        loop {
            self.drain_client();
            self.drain_router();
            if let Some((stream, hop)) = self.to_router.pop_front() {
                self.deliver_to_router(now, stream, hop);
            } else if let Some((stream, hop)) = self.to_client.pop_front() {
                self.deliver_to_client(now, stream, hop);
            } else {
                return;
            }
        }
    }

    /// Lets time pass to `t`, firing every deadline on the way in order.
    pub fn advance_to(&mut self, t: Instant) {
        loop {
            let next = [self.client.poll_timeout(), self.router.poll_timeout()]
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
        if !self.open.remove(&stream) {
            return;
        }
        self.to_client.retain(|(s, _)| *s != stream);
        self.to_router.retain(|(s, _)| *s != stream);
        let now = self.clock.now();
        let failed = || StreamEvent::Failed(TransportFailure::Reset("cut".into()));
        self.router.handle_input(Input::Receive(now, Receive { stream, event: failed() }));
        self.client.handle_input(Input::Receive(now, Receive { stream, event: failed() }));
        self.pump();
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
                Output::Transmit(Transmit::Http { stream, request }) => {
                    let mut headers = request.headers;
                    if let Some(host) = request.uri.authority() {
                        if let Ok(value) = HeaderValue::from_str(host.as_str()) {
                            headers.insert(HOST, value);
                        }
                    }
                    let line = format!("{} {}", request.method, request.uri.path());
                    self.transcript.push(line);
                    let head = RequestHead { method: request.method, uri: request.uri, headers };
                    self.open.insert(stream);
                    self.to_router.push_back((stream, Hop::Accept(Box::new(head))));
                    if !request.body.is_empty() {
                        self.to_router.push_back((stream, Hop::Data(request.body)));
                    }
                    self.to_router.push_back((stream, Hop::End));
                }
                Output::Transmit(Transmit::Abort { stream }) => {
                    if self.open.remove(&stream) {
                        self.to_client.retain(|(s, _)| *s != stream);
                        self.to_router.push_back((stream, Hop::Failed));
                    }
                }
                Output::Transmit(t) => panic!("an HTTP client emitted {t:?}"),
                Output::Event(e) => self.client_events.push(e),
            }
        }
    }

    fn drain_router(&mut self) {
        while let Some(out) = self.router.poll_output() {
            match out {
                Output::Transmit(Transmit::Respond { stream, head }) => {
                    if let Some(line) = self.transcript.iter_mut().rev().find(|l| !l.contains('→'))
                    {
                        line.push_str(&format!(" → {}", head.status.as_u16()));
                    }
                    self.to_client.push_back((stream, Hop::Head(head)));
                }
                Output::Transmit(Transmit::Write { stream, bytes }) => {
                    if self.open.contains(&stream) {
                        self.to_client.push_back((stream, Hop::Data(bytes)));
                    }
                }
                Output::Transmit(Transmit::Close { stream }) => {
                    if self.open.remove(&stream) {
                        self.to_client.push_back((stream, Hop::End));
                    }
                }
                Output::Transmit(t) => panic!("a router emitted {t:?}"),
                Output::Event(e) => self.router_events.push(e),
            }
        }
    }

    fn deliver_to_router(&mut self, now: Instant, stream: StreamId, hop: Hop) {
        let event = match hop {
            Hop::Accept(head) => StreamEvent::Accept(head),
            Hop::Data(ref bytes) => {
                return self.router.handle_input(crate::io::data(now, stream, bytes));
            }
            Hop::End => StreamEvent::End,
            Hop::Failed => StreamEvent::Failed(TransportFailure::Reset("aborted".into())),
            Hop::Head(_) => return,
        };
        self.router.handle_input(Input::Receive(now, Receive { stream, event }));
    }

    fn deliver_to_client(&mut self, now: Instant, stream: StreamId, hop: Hop) {
        let event = match hop {
            Hop::Head(head) => StreamEvent::Head(head),
            Hop::Data(ref bytes) => {
                return self.client.handle_input(crate::io::data(now, stream, bytes));
            }
            Hop::End => StreamEvent::End,
            Hop::Failed => StreamEvent::Failed(TransportFailure::Reset("cut".into())),
            Hop::Accept(_) => return,
        };
        self.client.handle_input(Input::Receive(now, Receive { stream, event }));
    }
}
