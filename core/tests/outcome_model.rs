//! Which outcome each request gets, checked against a model (quickcheck, virtual time).
//!
//! A client and a server exchange frames over a wire that holds them until the scenario
//! delivers them, so answers, cancellations, timeouts, progress and closes cross in every
//! order. Requests go both ways (the client's `tools/call`, the server's `roots/list`) and
//! are made at the start and in the middle of the session. A model of each side's request
//! table, fed the same commands and the frames actually delivered, predicts after every step
//! exactly which requests end and how (result, error, timed out, cancelled, closed); the
//! machines must report exactly that, once per request.

mod common;

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use common::*;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use serde_json::json;
use zest_core::client::{Event as ClientEvent, ServerRequest};
use zest_core::error::RequestError;
use zest_core::io::{Input, Output, Receive, StreamEvent, Transmit};
use zest_core::jsonrpc::{decode, ErrorObject, Frame, Message, RawJson, RequestId};
use zest_core::schema::methods::CallTool;
use zest_core::schema::ProgressParams;
use zest_core::server::Event as ServerEvent;
use zest_core::testkit::Pair;
use zest_core::RequestOptions;

/// How a request ended, as the model predicts and the machines report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Result,
    Error,
    TimedOut,
    Cancelled,
    Closed,
}

fn outcome_of(result: &Result<RawJson, RequestError>) -> Outcome {
    match result {
        Ok(_) => Outcome::Result,
        Err(RequestError::Remote(_)) => Outcome::Error,
        Err(RequestError::TimedOut) => Outcome::TimedOut,
        Err(RequestError::Cancelled) => Outcome::Cancelled,
        Err(RequestError::Closed(_)) => Outcome::Closed,
        Err(other) => panic!("an outcome no scenario can cause: {other:?}"),
    }
}

/// One pending request as the model sees it.
#[derive(Debug)]
struct Tracked {
    timeout: Duration,
    reset: bool,
    deadline: Instant,
    hard_deadline: Instant,
}

/// One side's table of its own requests: what must end, and how, after each step.
#[derive(Debug, Default)]
struct Model {
    pending: BTreeMap<RequestId, Tracked>,
    /// Outcomes predicted since the last check.
    due: Vec<(RequestId, Outcome)>,
}

/// Both configs' `max_request_timeout` default: progress never extends a request past it.
const MAX_TOTAL: Duration = Duration::from_secs(600);

impl Model {
    fn sent(&mut self, id: RequestId, now: Instant, timeout: Duration, reset: bool) {
        let hard_deadline = now + MAX_TOTAL;
        let deadline = (now + timeout).min(hard_deadline);
        self.pending.insert(id, Tracked { timeout, reset, deadline, hard_deadline });
    }

    fn end(&mut self, id: &RequestId, outcome: Outcome) {
        if self.pending.remove(id).is_some() {
            self.due.push((id.clone(), outcome));
        }
    }

    fn cancel(&mut self, id: &RequestId) {
        self.end(id, Outcome::Cancelled);
    }

    fn time_passed(&mut self, now: Instant) {
        let late: Vec<_> = self
            .pending
            .iter()
            .filter(|(_, t)| t.deadline <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in late {
            self.end(&id, Outcome::TimedOut);
        }
    }

    fn close(&mut self) {
        let all: Vec<_> = self.pending.keys().cloned().collect();
        for id in all {
            self.end(&id, Outcome::Closed);
        }
    }

    /// A frame from the peer arrived: responses end requests, progress may restart a clock.
    fn received(&mut self, line: &[u8], now: Instant) {
        let Ok(Frame::Single(message)) = decode(line) else { panic!("a single message") };
        match message {
            Message::Response(r) => {
                let outcome = if r.outcome.is_ok() { Outcome::Result } else { Outcome::Error };
                self.end(&r.id.expect("responses carry ids"), outcome);
            }
            Message::Notification(n) if n.method == "notifications/progress" => {
                let p: ProgressParams = n.params.unwrap().parse().unwrap();
                if let Some(t) = self.pending.get_mut(&p.progress_token) {
                    if t.reset {
                        t.deadline = (now + t.timeout).min(t.hard_deadline);
                    }
                }
            }
            _ => {}
        }
    }

    /// The outcomes predicted since the last check, against the ones reported.
    fn check(&mut self, side: &str, reported: Vec<(RequestId, Outcome)>, step: &str) {
        let mut want = std::mem::take(&mut self.due);
        let mut got = reported;
        want.sort_by(|a, b| a.0.cmp(&b.0));
        got.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(got, want, "{side} outcomes after {step}");
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// The client calls a tool (idle timeout in seconds 1..=30, whether progress restarts it).
    ClientRequest(u8, bool),
    /// The server asks the client for its roots (timeout in seconds 1..=30).
    ServerRequest(u8),
    /// The server app answers its k-th call (a result, or an error).
    Answer(u8, bool),
    /// The client app answers the k-th server request it has seen.
    ClientAnswer(u8),
    ClientCancel(u8),
    ServerCancel(u8),
    /// The server reports progress on its k-th call.
    Progress(u8),
    /// Virtual time passes (milliseconds); both sides see a timeout input.
    Advance(u16),
    DeliverToServer,
    DeliverToClient,
    ClientClose,
    ServerClose,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        let k = u8::arbitrary(g);
        let secs = 1 + u8::arbitrary(g) % 30;
        match u8::arbitrary(g) % 64 {
            0..=5 => Self::ClientRequest(secs, bool::arbitrary(g)),
            6..=8 => Self::ServerRequest(secs),
            9..=18 => Self::Answer(k, u8::arbitrary(g) % 5 != 0),
            19..=22 => Self::ClientAnswer(k),
            23..=27 => Self::ClientCancel(k),
            28..=29 => Self::ServerCancel(k),
            30..=35 => Self::Progress(k),
            36..=42 => Self::Advance(u16::arbitrary(g) % 20_000),
            43..=52 => Self::DeliverToServer,
            53..=61 => Self::DeliverToClient,
            62 => Self::ClientClose,
            _ => Self::ServerClose,
        }
    }
}

#[derive(Clone, Debug)]
struct Scenario(Vec<Op>);

impl Arbitrary for Scenario {
    fn arbitrary(g: &mut Gen) -> Self {
        // A few requests up front, so most scenarios start with calls to race.
        let mut ops: Vec<Op> = (0..3).map(|_| Op::ClientRequest(10, true)).collect();
        ops.extend(Vec::<Op>::arbitrary(g));
        Self(ops)
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(self.0.shrink().map(Self))
    }
}

struct World {
    pair: Pair<Handler>,
    to_server: VecDeque<Transmit>,
    to_client: VecDeque<Transmit>,
    client_model: Model,
    server_model: Model,
    /// The client's calls and the server's requests, in the order they were made.
    client_ids: Vec<RequestId>,
    server_ids: Vec<RequestId>,
    /// What each app has seen of the other's requests, to answer.
    calls_seen: Vec<RequestId>,
    asks_seen: Vec<RequestId>,
    progress: f64,
}

impl World {
    fn new() -> Self {
        let mut config = client_config();
        config.capabilities = serde_json::from_value(json!({"roots": {}})).unwrap();
        let mut pair = Pair::new(config, server_config(), registry());
        pair.handshake();
        pair.take_client_events();
        pair.take_server_events();
        Self {
            pair,
            to_server: VecDeque::new(),
            to_client: VecDeque::new(),
            client_model: Model::default(),
            server_model: Model::default(),
            client_ids: Vec::new(),
            server_ids: Vec::new(),
            calls_seen: Vec::new(),
            asks_seen: Vec::new(),
            progress: 0.0,
        }
    }

    fn now(&self) -> Instant {
        self.pair.clock.now()
    }

    /// Drains both machines, then checks each side's outcomes against its model.
    fn settle(&mut self, step: &str) {
        let mut client_out = Vec::new();
        while let Some(out) = self.pair.client.poll_output() {
            match out {
                Output::Transmit(t) => self.to_server.push_back(t),
                Output::Event(ClientEvent::Response { id, result }) => {
                    client_out.push((id, outcome_of(&result)));
                }
                Output::Event(ClientEvent::Request {
                    id,
                    request: ServerRequest::ListRoots(_),
                }) => {
                    self.asks_seen.push(id);
                }
                Output::Event(ClientEvent::Violation(v)) => panic!("client violation {v:?}"),
                Output::Event(_) => {}
            }
        }
        let mut server_out = Vec::new();
        while let Some(out) = self.pair.server.poll_output() {
            match out {
                Output::Transmit(t) => self.to_client.push_back(t),
                Output::Event(ServerEvent::Response { id, result }) => {
                    server_out.push((id, outcome_of(&result)));
                }
                Output::Event(ServerEvent::Call { id, .. }) => self.calls_seen.push(id),
                Output::Event(ServerEvent::Violation(v)) => panic!("server violation {v:?}"),
                Output::Event(_) => {}
            }
        }
        self.client_model.check("client", client_out, step);
        self.server_model.check("server", server_out, step);
    }

    fn deliver(&mut self, to_server: bool) {
        let queue = if to_server { &mut self.to_server } else { &mut self.to_client };
        let Some(t) = queue.pop_front() else { return };
        let now = self.now();
        let model = if to_server { &mut self.server_model } else { &mut self.client_model };
        let (stream, event) = match &t {
            Transmit::Write { stream, bytes } => {
                for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    model.received(line, now);
                }
                (*stream, StreamEvent::Data(bytes))
            }
            Transmit::Close { stream } => {
                model.close();
                (*stream, StreamEvent::End)
            }
            other => panic!("unexpected transmit {other:?}"),
        };
        let input = Input::Receive(now, Receive { stream, event });
        if to_server {
            self.pair.server.handle_input(input);
        } else {
            self.pair.client.handle_input(input);
        }
    }

    fn apply(&mut self, op: &Op) {
        let now = self.now();
        // Commands on requests that already ended, or on a closed machine, are refused and
        // change nothing; the models ignore them the same way.
        match *op {
            Op::ClientRequest(secs, reset) => {
                let timeout = Duration::from_secs(secs.into());
                let mut opts = RequestOptions::with_progress().timeout(timeout);
                opts.reset_on_progress = reset;
                let params =
                    serde_json::from_value(json!({"name": "echo", "arguments": {"text": "hi"}}));
                if let Ok(id) = self.pair.client.send::<CallTool>(now, &params.unwrap(), opts) {
                    self.client_model.sent(id.clone(), now, timeout, reset);
                    self.client_ids.push(id);
                }
            }
            Op::ServerRequest(secs) => {
                let timeout = Duration::from_secs(secs.into());
                let opts = RequestOptions::default().timeout(timeout);
                if let Ok(id) = self.pair.server.request(now, None, "roots/list", None, opts) {
                    self.server_model.sent(id.clone(), now, timeout, false);
                    self.server_ids.push(id);
                }
            }
            Op::Answer(k, ok) => {
                let Some(id) = pick(&self.calls_seen, k) else { return };
                let result = if ok {
                    Ok(RawJson::from(json!({"content": [{"type": "text", "text": "hi"}]})))
                } else {
                    Err(ErrorObject::new(-1, "no"))
                };
                let _ = self.pair.server.respond(now, id, result);
            }
            Op::ClientAnswer(k) => {
                let Some(id) = pick(&self.asks_seen, k) else { return };
                let _ = self.pair.client.respond(now, id, Ok(RawJson::from(json!({"roots": []}))));
            }
            Op::ClientCancel(k) => {
                let Some(id) = pick(&self.client_ids, k) else { return };
                if self.pair.client.cancel(now, &id, None).is_ok() {
                    self.client_model.cancel(&id);
                }
            }
            Op::ServerCancel(k) => {
                let Some(id) = pick(&self.server_ids, k) else { return };
                if self.pair.server.cancel(now, &id, None).is_ok() {
                    self.server_model.cancel(&id);
                }
            }
            Op::Progress(k) => {
                let Some(id) = pick(&self.calls_seen, k) else { return };
                self.progress += 1.0;
                let _ = self.pair.server.progress(now, &id, self.progress, None, None);
            }
            Op::Advance(ms) => {
                let now = self.pair.clock.advance(Duration::from_millis(ms.into()));
                if !self.pair.client.is_closed() {
                    self.client_model.time_passed(now);
                }
                self.pair.client.handle_input(Input::Timeout(now));
                self.settle("the client's timeout");
                if !self.pair.server.is_closed() {
                    self.server_model.time_passed(now);
                }
                self.pair.server.handle_input(Input::Timeout(now));
            }
            Op::DeliverToServer => self.deliver(true),
            Op::DeliverToClient => self.deliver(false),
            Op::ClientClose => {
                self.pair.client.close(now);
                self.client_model.close();
            }
            Op::ServerClose => {
                self.pair.server.close(now);
                self.server_model.close();
            }
        }
    }
}

fn pick(ids: &[RequestId], k: u8) -> Option<RequestId> {
    (!ids.is_empty()).then(|| ids[usize::from(k) % ids.len()].clone())
}

fn outcomes_follow_the_model(scenario: Scenario) -> bool {
    let mut world = World::new();
    for op in &scenario.0 {
        world.apply(op);
        world.settle(&format!("{op:?}"));
    }
    // Deliver everything, then close both sides: whatever is still pending ends Closed.
    while !world.to_server.is_empty() || !world.to_client.is_empty() {
        world.apply(&Op::DeliverToServer);
        world.settle("the final delivery to the server");
        world.apply(&Op::DeliverToClient);
        world.settle("the final delivery to the client");
    }
    world.apply(&Op::ClientClose);
    world.settle("the final client close");
    world.apply(&Op::ServerClose);
    world.settle("the final server close");
    assert!(world.client_model.pending.is_empty() && world.server_model.pending.is_empty());
    true
}

#[test]
fn every_request_ends_once_with_the_outcome_the_model_predicts() {
    QuickCheck::new().tests(300).quickcheck(outcomes_follow_the_model as fn(Scenario) -> bool);
}
