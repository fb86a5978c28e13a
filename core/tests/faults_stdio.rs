//! stdio under faults (quickcheck, virtual time): a client and a server over a pipe with
//! seeded latency, a server that stops answering for a while (or for good), and a server that
//! crashes with frames in flight.
//!
//! Random scenarios make calls (with progress and log lines), ask the client for its roots
//! from inside them, answer, cancel, stall, crash and let time pass; a final drain answers
//! what is left, lets every timer run out and closes the client. Then:
//! - every request of either side got exactly one outcome, consistent with what happened: a
//!   result is the one the server gave for that call; a timeout only after the deadline, and
//!   never for an answer given in time on a pipe that neither stalled nor crashed; a crash
//!   ends everything in flight at once with `Closed(TransportEnded)`;
//! - each side closed exactly once (a crashed server is gone and is not asked);
//! - nothing leaks: no request in flight on either side, no call in progress, nothing in the
//!   pipe; no side reports the other for a protocol violation (unless a crash cut a frame).

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::*;
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use serde_json::json;
use zest_core::client::{Event as ClientEvent, ServerRequest};
use zest_core::error::{CloseReason, RequestError};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::schema::methods::CallTool;
use zest_core::schema::LoggingLevel;
use zest_core::server::{Call, Event};
use zest_core::testkit::{Faults, Pair};
use zest_core::RequestOptions;

/// Longer than any request may live (the configs' 600 s cap), so the drain ends them all.
const EVERYTHING_TIMES_OUT: Duration = Duration::from_secs(11 * 60);

#[derive(Clone, Debug)]
enum Op {
    /// The client calls `echo` (timeout in seconds 1..=40, with a progress token or not).
    Call(u8, bool),
    /// The server app answers its k-th open call (a result, or an error).
    Answer(u8, bool),
    Progress(u8),
    Log(u8),
    /// The server asks the client for its roots from inside its k-th open call.
    Ask(u8),
    /// The client app answers the k-th roots request it has seen.
    ClientAnswer(u8),
    Cancel(u8),
    /// Virtual time passes (milliseconds).
    Advance(u16),
    /// The server stops answering, or starts again.
    Stall(bool),
    Crash,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        let k = u8::arbitrary(g);
        match u8::arbitrary(g) % 64 {
            0..=9 => Self::Call(1 + u8::arbitrary(g) % 40, bool::arbitrary(g)),
            10..=22 => Self::Answer(k, u8::arbitrary(g) % 5 != 0),
            23..=27 => Self::Progress(k),
            28..=30 => Self::Log(k),
            31..=34 => Self::Ask(k),
            35..=38 => Self::ClientAnswer(k),
            39..=42 => Self::Cancel(k),
            43..=57 => Self::Advance(u16::arbitrary(g) % 5_000),
            58..=59 => Self::Stall(true),
            60..=62 => Self::Stall(false),
            // Rarer than the rest, so that most scenarios run to the end with a live server.
            _ if u8::arbitrary(g) % 4 == 0 => Self::Crash,
            _ => Self::Advance(u16::arbitrary(g) % 5_000),
        }
    }
}

/// How a scenario ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// Everything is answered and every timer runs out, then the client closes.
    Drain,
    /// The client closes at once, with requests of both sides in flight.
    ClientCloses,
    /// The server closes at once, with requests of both sides in flight.
    ServerCloses,
}

#[derive(Clone, Debug)]
struct Scenario {
    seed: u64,
    max_latency_ms: u16,
    ops: Vec<Op>,
    ending: Ending,
}

impl Arbitrary for Scenario {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut ops: Vec<Op> = (0..3).map(|_| Op::Call(30, true)).collect();
        ops.extend(Vec::<Op>::arbitrary(g));
        let ending =
            *g.choose(&[Ending::Drain, Ending::ClientCloses, Ending::ServerCloses]).unwrap();
        Self { seed: u64::arbitrary(g), max_latency_ms: u16::arbitrary(g) % 400, ops, ending }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        let (seed, latency, ending) = (self.seed, self.max_latency_ms, self.ending);
        let fewer =
            self.ops.shrink().map(move |ops| Self { seed, max_latency_ms: latency, ops, ending });
        let calmer = (latency > 0).then(|| Self { max_latency_ms: 0, ..self.clone() });
        Box::new(calmer.into_iter().chain(fewer))
    }
}

/// One outcome the client reported, and when.
type Outcome = (Instant, Result<RawJson, RequestError>);

#[derive(Debug)]
struct Sent {
    text: String,
    deadline: Instant,
    cancelled: bool,
}

#[derive(Debug)]
struct Answered {
    ok: bool,
    at: Instant,
}

struct World {
    pair: Pair<Handler>,
    max_latency: Duration,
    sent: BTreeMap<RequestId, Sent>,
    /// The server's calls still open: id, the text they carry.
    calls: Vec<(RequestId, String)>,
    answered: BTreeMap<String, Answered>,
    /// Roots requests the client app has seen and not answered.
    asks_seen: Vec<RequestId>,
    /// The server's roots requests and how many outcomes each got.
    asks: BTreeMap<RequestId, usize>,
    outcomes: BTreeMap<RequestId, Vec<Outcome>>,
    closed: [usize; 2],
    stalled_once: bool,
    crashed_at: Option<Instant>,
    /// When a side closed early (`Ending::ClientCloses` or `ServerCloses`).
    closed_early: Option<(Ending, Instant)>,
    violations: Vec<String>,
    ended_on_a_healthy_pipe: usize,
    next_text: usize,
    progress: f64,
}

impl World {
    fn new(scenario: &Scenario) -> Self {
        let mut config = client_config();
        config.capabilities = serde_json::from_value(json!({"roots": {}})).unwrap();
        let mut pair = Pair::new(config, server_config(), registry());
        pair.handshake();
        pair.take_client_events();
        pair.take_server_events();
        let max_latency = Duration::from_millis(scenario.max_latency_ms.into());
        pair.set_faults(Faults::seeded(scenario.seed).latency(Duration::ZERO, max_latency));
        Self {
            pair,
            max_latency,
            sent: BTreeMap::new(),
            calls: Vec::new(),
            answered: BTreeMap::new(),
            asks_seen: Vec::new(),
            asks: BTreeMap::new(),
            outcomes: BTreeMap::new(),
            closed: [0, 0],
            stalled_once: false,
            crashed_at: None,
            closed_early: None,
            violations: Vec::new(),
            ended_on_a_healthy_pipe: 0,
            next_text: 0,
            progress: 0.0,
        }
    }

    fn now(&self) -> Instant {
        self.pair.clock.now()
    }

    fn collect(&mut self) {
        let now = self.now();
        for e in self.pair.take_client_events() {
            match e {
                ClientEvent::Response { id, result } => {
                    self.outcomes.entry(id).or_default().push((now, result));
                }
                ClientEvent::Request { id, request: ServerRequest::ListRoots(_) } => {
                    self.asks_seen.push(id);
                }
                ClientEvent::Closed(_) => self.closed[0] += 1,
                ClientEvent::Violation(v) => self.violations.push(format!("client: {v:?}")),
                _ => {}
            }
        }
        for e in self.pair.take_server_events() {
            match e {
                Event::Call { id, call: Call::Tool(p), .. } => {
                    let text = p.arguments.as_ref().and_then(|a| a.get("text")).cloned();
                    self.calls
                        .push((id, text.and_then(|t| t.as_str().map(str::to_owned)).unwrap()));
                }
                Event::Cancelled { id } => self.calls.retain(|(i, _)| *i != id),
                Event::Response { id, .. } => *self.asks.entry(id).or_default() += 1,
                Event::Closed(_) => {
                    self.closed[1] += 1;
                    self.calls.clear();
                }
                Event::Violation(v) => self.violations.push(format!("server: {v:?}")),
                _ => {}
            }
        }
    }

    fn call_at(&self, k: u8) -> Option<(RequestId, String)> {
        (!self.calls.is_empty()).then(|| self.calls[usize::from(k) % self.calls.len()].clone())
    }

    fn apply(&mut self, op: &Op) {
        let now = self.now();
        match *op {
            Op::Call(secs, progress) => {
                let text = format!("call-{}", self.next_text);
                self.next_text += 1;
                let timeout = Duration::from_secs(secs.into());
                let opts = if progress {
                    RequestOptions::with_progress()
                } else {
                    RequestOptions::default()
                };
                let params = serde_json::from_value(
                    json!({"name": "echo", "arguments": {"text": text.clone()}}),
                );
                let sent =
                    self.pair.client.send::<CallTool>(now, &params.unwrap(), opts.timeout(timeout));
                if let Ok(id) = sent {
                    let deadline = now + timeout;
                    self.sent.insert(id, Sent { text, deadline, cancelled: false });
                }
            }
            Op::Answer(k, ok) => {
                let Some((id, text)) = self.call_at(k) else { return };
                self.calls.retain(|(i, _)| *i != id);
                let result = if ok {
                    Ok(RawJson::from(json!({"content": [{"type": "text", "text": text.clone()}]})))
                } else {
                    Err(ErrorObject::new(-1, "no"))
                };
                if self.pair.server.respond(now, id, result).is_ok() {
                    self.answered.insert(text, Answered { ok, at: now });
                }
            }
            Op::Progress(k) => {
                let Some((id, _)) = self.call_at(k) else { return };
                self.progress += 1.0;
                let _ = self.pair.server.progress(now, &id, self.progress, None, None);
            }
            Op::Log(k) => {
                let Some((id, _)) = self.call_at(k) else { return };
                let _ = self.pair.server.log(now, Some(&id), LoggingLevel::Info, None, json!("hm"));
            }
            Op::Ask(k) => {
                let Some((id, _)) = self.call_at(k) else { return };
                let opts = RequestOptions::default().timeout(Duration::from_secs(20));
                if let Ok(asked) =
                    self.pair.server.request(now, Some(&id), "roots/list", None, opts)
                {
                    self.asks.insert(asked, 0);
                }
            }
            Op::ClientAnswer(k) => {
                if self.asks_seen.is_empty() {
                    return;
                }
                let id = self.asks_seen.remove(usize::from(k) % self.asks_seen.len());
                let _ = self.pair.client.respond(now, id, Ok(RawJson::from(json!({"roots": []}))));
            }
            Op::Cancel(k) => {
                if self.sent.is_empty() {
                    return;
                }
                let i = usize::from(k) % self.sent.len();
                let (id, sent) = self.sent.iter_mut().nth(i).unwrap();
                if self.pair.client.cancel(now, id, None).is_ok() {
                    sent.cancelled = true;
                }
            }
            Op::Advance(ms) => self.pair.advance(Duration::from_millis(ms.into())),
            Op::Stall(on) => {
                self.stalled_once |= on;
                self.pair.stall_server(on);
            }
            Op::Crash => {
                if self.crashed_at.is_none() {
                    self.crashed_at = Some(now);
                    self.pair.crash_server();
                }
            }
        }
        self.pair.pump();
    }

    fn end(&mut self, ending: Ending) {
        if ending == Ending::Drain {
            return self.drain();
        }
        self.pair.stall_server(false);
        self.collect();
        let now = self.now();
        self.closed_early = Some((ending, now));
        if ending == Ending::ClientCloses {
            self.pair.client.close(now);
        } else if self.crashed_at.is_none() {
            self.pair.server.close(now);
        }
        self.pair.pump();
        self.collect();
        self.pair.advance(EVERYTHING_TIMES_OUT);
        let now = self.now();
        self.pair.client.close(now);
        self.pair.pump();
        self.pair.advance(Duration::from_secs(1));
        self.collect();
    }

    fn drain(&mut self) {
        self.pair.stall_server(false);
        for _ in 0..4 {
            self.collect();
            while !self.calls.is_empty() {
                self.apply(&Op::Answer(0, true));
            }
            while !self.asks_seen.is_empty() {
                self.apply(&Op::ClientAnswer(0));
            }
            self.pair.advance(Duration::from_secs(1));
        }
        self.collect();
        self.ended_on_a_healthy_pipe = self.pair.client.in_flight();
        self.pair.advance(EVERYTHING_TIMES_OUT);
        let now = self.now();
        self.pair.client.close(now);
        self.pair.pump();
        self.pair.advance(Duration::from_secs(1));
        self.collect();
    }

    fn consistent(
        &self,
        id: &RequestId,
        at: Instant,
        result: &Result<RawJson, RequestError>,
    ) -> Result<(), String> {
        let sent = &self.sent[id];
        let answered = self.answered.get(&sent.text);
        let why = match result {
            Ok(raw) => {
                let text = raw.to_value().unwrap()["content"][0]["text"].clone();
                if text == json!(sent.text) && answered.is_some_and(|a| a.ok) {
                    return Ok(());
                }
                format!("a result {text} the server did not give")
            }
            Err(RequestError::Remote(_)) if answered.is_some_and(|a| !a.ok) => return Ok(()),
            Err(RequestError::Cancelled) if sent.cancelled => return Ok(()),
            Err(RequestError::TimedOut) if at >= sent.deadline => {
                let in_time = answered.is_some_and(|a| a.at + self.max_latency < sent.deadline);
                if !in_time || self.stalled_once || self.crashed_at.is_some() {
                    return Ok(());
                }
                "timed out though its answer was given in time".to_owned()
            }
            Err(RequestError::Closed(CloseReason::TransportEnded))
                if Some(at) == self.crashed_at =>
            {
                return Ok(())
            }
            // Closing ends what is in flight: at once on the side that closes, when the end
            // of the stream arrives on the other.
            Err(RequestError::Closed(CloseReason::Local))
                if self.closed_early == Some((Ending::ClientCloses, at)) =>
            {
                return Ok(())
            }
            Err(RequestError::Closed(CloseReason::TransportEnded)) if matches!(self.closed_early, Some((Ending::ServerCloses, t)) if at >= t) => {
                return Ok(())
            }
            Err(e) => format!("{e:?} cannot happen here"),
        };
        Err(format!("{id} ({}): {why}", sent.text))
    }

    fn check(&self) -> Result<(), String> {
        for (id, outcomes) in &self.outcomes {
            if !self.sent.contains_key(id) {
                return Err(format!("an outcome for {id}, which was never sent: {outcomes:?}"));
            }
        }
        for id in self.sent.keys() {
            let outcomes = self.outcomes.get(id).map_or(&[][..], Vec::as_slice);
            let [(at, result)] = outcomes else {
                return Err(format!("{id}: {} outcomes: {outcomes:?}", outcomes.len()));
            };
            self.consistent(id, *at, result)?;
        }
        if self.ended_on_a_healthy_pipe != 0 {
            let n = self.ended_on_a_healthy_pipe;
            return Err(format!("{n} requests waited for their timeout on a healthy pipe"));
        }
        if self.closed[0] != 1 {
            return Err(format!("the client closed {} times", self.closed[0]));
        }
        let p = &self.pair;
        let mut leaks = vec![
            ("client requests in flight", p.client.in_flight()),
            ("frames in the pipe", usize::from(!p.is_idle())),
        ];
        if self.crashed_at.is_none() {
            if !self.violations.is_empty() {
                return Err(format!("violations: {:?}", self.violations));
            }
            if self.closed[1] != 1 {
                return Err(format!("the server closed {} times", self.closed[1]));
            }
            if let Some((id, n)) = self.asks.iter().find(|(_, n)| **n != 1) {
                return Err(format!("roots request {id}: {n} outcomes"));
            }
            leaks.push(("server requests in flight", p.server.in_flight()));
            leaks.push(("calls in progress", p.server.calls_in_progress()));
        }
        match leaks.iter().find(|(_, n)| *n != 0) {
            Some((what, n)) => Err(format!("leaked {n} {what}")),
            None => Ok(()),
        }
    }
}

#[test]
fn under_faults_every_request_ends_once_consistently_and_nothing_leaks() {
    fn property(scenario: Scenario) -> TestResult {
        let mut world = World::new(&scenario);
        for op in &scenario.ops {
            world.apply(op);
            world.collect();
        }
        world.end(scenario.ending);
        match world.check() {
            Ok(()) => TestResult::passed(),
            Err(why) => {
                TestResult::error(format!("{why}\ntranscript: {:?}", world.pair.transcript()))
            }
        }
    }
    QuickCheck::new().tests(300).quickcheck(property as fn(Scenario) -> TestResult);
}
