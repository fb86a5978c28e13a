//! Property: under any interleaving of POST SSE answers that drop, end early, resume and
//! replay, every request ends exactly once, no duplicate or unknown response reaches the
//! application, and a server that loses nothing loses no request.

use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use serde_json::json;

use super::*;
use crate::error::RequestError;

/// How the server treats one request's answer.
#[derive(Clone, Debug)]
struct Answer {
    /// Answer with JSON rather than SSE.
    json: bool,
    /// Put ids on the SSE events, so the stream can be resumed.
    ids: bool,
    /// On resumption, replay from the last event the client saw rather than after it.
    overlap: bool,
    /// Send the response a second time, right after the first.
    twice: bool,
    /// One entry per connection, in order: deliver that many events (0 to 3), then break the
    /// connection (`true`) or end it cleanly (`false`). Connections after the last entry
    /// deliver everything.
    cuts: Vec<(u8, bool)>,
}

#[derive(Clone, Debug)]
struct Plan {
    answers: Vec<Answer>,
    /// Which open connection moves next, cycled.
    order: Vec<u8>,
}

impl Arbitrary for Answer {
    fn arbitrary(g: &mut Gen) -> Self {
        let cuts = (0..usize::arbitrary(g) % 5)
            .map(|_| (u8::arbitrary(g) % 4, bool::arbitrary(g)))
            .collect();
        Self {
            json: u8::arbitrary(g) % 5 == 0,
            ids: u8::arbitrary(g) % 4 != 0,
            overlap: bool::arbitrary(g),
            twice: bool::arbitrary(g),
            cuts,
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        let me = self.clone();
        Box::new(self.cuts.shrink().map(move |cuts| Self { cuts, ..me.clone() }))
    }
}

impl Arbitrary for Plan {
    fn arbitrary(g: &mut Gen) -> Self {
        let answers = (0..1 + usize::arbitrary(g) % 4).map(|_| Answer::arbitrary(g)).collect();
        let mut order: Vec<u8> = Vec::arbitrary(g);
        order.push(0);
        Self { answers, order }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        let order = self.order.clone();
        Box::new(
            (self.answers.shrink())
                .filter(|a| !a.is_empty())
                .map(move |answers| Self { answers, order: order.clone() }),
        )
    }
}

/// One connection the scripted server is answering.
struct Conn {
    stream: StreamId,
    req: usize,
    /// The next event to send.
    next: usize,
    /// How many events this connection may still send, and how it finishes; `None`: all,
    /// then a clean end.
    budget: Option<(u8, bool)>,
    head_sent: bool,
}

/// The server's events for request `req`: a priming event, a log line, the response, and
/// perhaps the response again.
fn events(req: usize, id: &RequestId, answer: &Answer) -> Vec<String> {
    let ids = answer.ids;
    let tag = |k: usize| ids.then(|| format!("r{req}-{k}"));
    let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": format!("working on {req}")}});
    let priming = match tag(0) {
        Some(t) => format!("id: {t}\nretry: 10\ndata:\n\n"),
        None => "retry: 10\ndata:\n\n".to_owned(),
    };
    let response = result(id, json!({"content": [], "req": req}));
    let mut script = vec![
        priming,
        event(tag(1).as_deref(), &log.to_string()),
        event(tag(2).as_deref(), &response),
    ];
    if answer.twice {
        script.push(event(tag(3).as_deref(), &response));
    }
    script
}

fn run(plan: &Plan) -> TestResult {
    let mut http = config(HttpMode::StreamableHttp);
    http.open_get_stream = false;
    http.max_resume_attempts = 3;
    let mut f = Fake::new(http);
    f.ready("s");
    let ids: Vec<RequestId> = plan.answers.iter().map(|_| f.request("tools/call")).collect();
    let mut used_cuts = vec![0usize; ids.len()];
    let mut conns: Vec<Conn> = Vec::new();
    let mut step = 0usize;
    loop {
        step += 1;
        if step > 10_000 {
            return TestResult::error(format!("no quiescence: {:?}", f.events));
        }
        for (stream, request) in f.take() {
            let (req, next) = if request.method == Method::GET {
                let Some(last) = header(&request, "last-event-id") else {
                    return TestResult::error("a GET without Last-Event-ID");
                };
                let (req, k) = last[1..].split_once('-').expect("our ids");
                let (req, k): (usize, usize) = (req.parse().unwrap(), k.parse().unwrap());
                (req, if plan.answers[req].overlap { k } else { k + 1 })
            } else if rpc_method(&request) == "tools/call" {
                let id: RequestId = serde_json::from_value(body(&request)["id"].clone()).unwrap();
                (ids.iter().position(|i| *i == id).expect("one of ours"), 0)
            } else {
                f.accept(stream); // notifications/cancelled
                continue;
            };
            let budget = plan.answers[req].cuts.get(used_cuts[req]).copied();
            used_cuts[req] += 1;
            conns.push(Conn { stream, req, next, budget, head_sent: false });
        }
        if conns.is_empty() {
            match f.client.poll_timeout() {
                Some(t) if f.client.in_flight() > 0 => f.advance(t - f.clock.now()),
                _ => break,
            }
            continue;
        }
        let pick = plan.order[step % plan.order.len()] as usize % conns.len();
        let conn = &mut conns[pick];
        let answer = &plan.answers[conn.req];
        let script = events(conn.req, &ids[conn.req], answer);
        if answer.json && conn.next == 0 && !conn.head_sent {
            let conn = conns.remove(pick);
            let body = result(&ids[conn.req], json!({"content": []}));
            f.head(conn.stream, 200, &[("content-type", "application/json")]);
            match conn.budget {
                // A JSON body cut short can only break (ending it would be a malformed body).
                Some(_) => {
                    f.data(conn.stream, &body[..body.len() / 2]);
                    f.fail(conn.stream);
                }
                None => {
                    f.data(conn.stream, &body);
                    f.end(conn.stream);
                }
            }
        } else if !conn.head_sent {
            conn.head_sent = true;
            let stream = conn.stream;
            f.open_sse(stream, &[]);
        } else if conn.next < script.len() && conn.budget.is_none_or(|(n, _)| n > 0) {
            if let Some((n, _)) = &mut conn.budget {
                *n -= 1;
            }
            conn.next += 1;
            let (stream, text) = (conn.stream, script[conn.next - 1].clone());
            f.data(stream, &text);
        } else {
            let conn = conns.remove(pick);
            if conn.budget.is_some_and(|(_, broken)| broken) {
                f.fail(conn.stream);
            } else {
                f.end(conn.stream);
            }
        }
    }
    check(plan, &ids, &f.events)
}

fn check(plan: &Plan, ids: &[RequestId], events: &[Event]) -> TestResult {
    if let Some(v) = events.iter().find(|e| matches!(e, Event::Violation(_))) {
        return TestResult::error(format!("violation: {v:?}"));
    }
    for (req, id) in ids.iter().enumerate() {
        let outcomes: Vec<&Result<_, _>> = (events.iter())
            .filter_map(|e| match e {
                Event::Response { id: got, result } if got == id => Some(result),
                _ => None,
            })
            .collect();
        let [outcome] = outcomes[..] else {
            return TestResult::error(format!("request {req}: {} outcomes", outcomes.len()));
        };
        let answer = &plan.answers[req];
        let lossless = answer.cuts.is_empty()
            || (!answer.json
                && answer.ids
                && !answer.overlap
                && answer.cuts.iter().all(|(n, _)| *n > 0));
        match outcome {
            Ok(_) => {}
            Err(RequestError::StreamLost | RequestError::Transport(_)) if !lossless => {}
            Err(e) => return TestResult::error(format!("request {req} failed: {e}")),
        }
    }
    TestResult::passed()
}

#[test]
fn every_request_ends_exactly_once_under_drops_and_resumes() {
    fn prop(plan: Plan) -> TestResult {
        run(&plan)
    }
    QuickCheck::new().tests(500).quickcheck(prop as fn(Plan) -> TestResult);
}
