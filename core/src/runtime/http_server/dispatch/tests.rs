use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HOST};
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use serde_json::json;

use super::*;
use crate::http::server::{Router, RouterConfig};
use crate::io::RequestHead;
use crate::runtime::{CallKeys, Outcome};
use crate::schema::Tool;
use crate::server::{Registry, ServerConfig};
use crate::testkit::VirtualClock;

/// Records the one outcome it is given.
#[derive(Clone, Default)]
struct Slot(Arc<Mutex<Vec<Outcome>>>);

impl ReplySlot for Slot {
    fn deliver(self, outcome: Outcome) {
        self.0.lock().unwrap().push(outcome);
    }
}

type D = Dispatch<&'static str, u32, Slot>;

struct Rig {
    router: Router<&'static str>,
    dispatch: D,
    clock: VirtualClock,
    next_stream: u64,
    session: Option<String>,
}

impl Rig {
    fn new() -> Self {
        let mut registry = Registry::default();
        registry.add_tool(Tool::new("echo", "Echoes", json!({"type": "object"})), "echo");
        let router = Router::new(ServerConfig::new("s", "1"), RouterConfig::new([3; 32]), registry);
        let mut rig = Self {
            router,
            dispatch: D::new(),
            clock: VirtualClock::new(),
            next_stream: 1,
            session: None,
        };
        let steps = rig.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"roots": {}}, "clientInfo": {"name": "c", "version": "1"}}}));
        let Some(Step::Send { transmit: Transmit::Respond { head, .. }, conn: "A" }) =
            steps.first()
        else {
            panic!("{steps:?}")
        };
        rig.session = Some(head.headers["mcp-session-id"].to_str().unwrap().to_owned());
        let steps = rig.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert!(
            matches!(&steps[0], Step::Send { transmit: Transmit::Respond { head, .. }, .. } if head.status == StatusCode::ACCEPTED)
        );
        rig
    }

    /// POSTs `body` on a new exchange carried by connection "A"; the steps it caused.
    fn post(&mut self, body: &serde_json::Value) -> Vec<Step<&'static str, &'static str, u32>> {
        let stream = StreamId(self.next_stream);
        self.next_stream += 1;
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_static("127.0.0.1"));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        if let Some(id) = &self.session {
            headers.insert("mcp-session-id", HeaderValue::from_str(id).unwrap());
        }
        let head = RequestHead { method: Method::POST, uri: "/mcp".parse().unwrap(), headers };
        let now = self.clock.now();
        for event in [
            OwnedEvent::Accept(Box::new(head)),
            OwnedEvent::Data(Bytes::from(serde_json::to_vec(body).unwrap())),
            OwnedEvent::End,
        ] {
            let input = Inbound { stream, event };
            self.dispatch.track(&input, &"A");
            input.feed(now, &mut self.router);
        }
        self.drain()
    }

    /// Drains the router like a runtime whose handlers run in tasks: answers are decided
    /// once the handlers asked for are started.
    fn drain(&mut self) -> Vec<Step<&'static str, &'static str, u32>> {
        let mut steps = Vec::new();
        for decided in [false, true] {
            if decided {
                self.router.decide_answers();
            }
            while let Some(out) = self.router.poll_output() {
                match self.dispatch.route(out) {
                    Step::Nothing => {}
                    step => steps.push(step),
                }
            }
        }
        steps
    }

    fn session(&self) -> SessionId {
        self.router.sessions().next().unwrap().clone()
    }

    fn call(&mut self, id: u64) -> (RequestId, CancelFlag) {
        let steps = self.post(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {}}}));
        let run = steps.into_iter().find_map(|s| match s {
            Step::Run { id, handler: "echo", cancelled, .. } => Some((id, cancelled)),
            _ => None,
        });
        run.expect("the call asks for its handler")
    }
}

#[test]
fn transmits_go_to_the_connection_that_carries_their_stream_until_it_closes() {
    let mut rig = Rig::new();
    assert_eq!(rig.dispatch.carried(), 0, "every answer so far closed its exchange");
    let (id, _) = rig.call(2);
    assert_eq!(rig.dispatch.carried(), 1, "the call's POST waits for its answer");
    rig.dispatch.started(rig.session(), id.clone(), 7).unwrap();
    assert!(rig.dispatch.finished(&rig.session(), &id));
    let now = rig.clock.now();
    let session = rig.session();
    let machine = rig.router.session_mut(&session).unwrap();
    machine.respond(now, id, Ok(RawJson::from(json!({"content": []})))).unwrap();
    let steps = rig.drain();
    assert!(steps.iter().all(|s| matches!(s, Step::Send { conn: "A", .. })), "{steps:?}");
    assert!(matches!(steps.last(), Some(Step::Send { transmit: Transmit::Close { .. }, .. })));
    assert_eq!(rig.dispatch.carried(), 0);
}

#[test]
fn a_cancelled_call_stops_its_task_and_drops_its_answer() {
    let mut rig = Rig::new();
    let (id, cancelled) = rig.call(2);
    rig.dispatch.started(rig.session(), id.clone(), 7).unwrap();
    assert_eq!(rig.dispatch.running(), 1);
    let steps = rig.post(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2}}));
    assert!(steps.iter().any(|s| matches!(s, Step::Stop(tasks) if tasks == &[7])), "{steps:?}");
    assert!(cancelled.is_cancelled());
    assert!(!rig.dispatch.finished(&rig.session(), &id), "its answer is dropped");
    assert_eq!(rig.dispatch.running(), 0);
}

#[test]
fn a_closed_session_stops_its_handlers_and_fails_its_requests_to_the_client_once() {
    let mut rig = Rig::new();
    let (first, flag) = rig.call(2);
    let (second, _) = rig.call(3);
    let session = rig.session();
    rig.dispatch.started(session.clone(), first, 1).unwrap();
    // `second` is still starting when the session ends: its flag is set all the same.
    let _ = second;
    let slot = Slot::default();
    let keys = CallKeys::new();
    let now = rig.clock.now();
    let machine = rig.router.session_mut(&session).unwrap();
    let related = RequestId::Number(2);
    rig.dispatch.peer_request(&session, keys.next(), slot.clone(), || {
        machine.request(now, Some(&related), "roots/list", None, crate::RequestOptions::default())
    });
    rig.drain();
    assert!(slot.0.lock().unwrap().is_empty(), "the request went out and waits");
    rig.router.close_session(now, &session);
    let steps = rig.drain();
    assert!(steps.iter().any(|s| matches!(s, Step::Stop(tasks) if tasks == &[1])), "{steps:?}");
    assert!(flag.is_cancelled());
    assert_eq!(rig.dispatch.running(), 0);
    let outcomes = slot.0.lock().unwrap().clone();
    assert_eq!(outcomes.len(), 1, "exactly one outcome: {outcomes:?}");
    assert!(outcomes[0].is_err());
}

#[test]
fn an_abandoned_request_to_the_client_names_its_id_once() {
    let mut rig = Rig::new();
    let _ = rig.call(2);
    let session = rig.session();
    let slot = Slot::default();
    let key = CallKeys::new().next();
    let now = rig.clock.now();
    let machine = rig.router.session_mut(&session).unwrap();
    let related = RequestId::Number(2);
    rig.dispatch.peer_request(&session, key, slot.clone(), || {
        machine.request(now, Some(&related), "roots/list", None, crate::RequestOptions::default())
    });
    assert!(rig.dispatch.abandon(&session, key).is_some());
    assert_eq!(rig.dispatch.abandon(&session, key), None);
    assert!(slot.0.lock().unwrap().is_empty(), "an abandoned call is not answered");
}

#[test]
fn a_call_answered_before_it_needed_a_task_or_cancelled_before_its_task_was_filed() {
    let mut rig = Rig::new();
    let (id, _) = rig.call(2);
    assert!(rig.dispatch.finished(&rig.session(), &id), "answered at once");
    assert_eq!(rig.dispatch.running(), 0);
    let (id, cancelled) = rig.call(3);
    let _ = rig.post(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 3}}));
    assert!(cancelled.is_cancelled());
    assert_eq!(rig.dispatch.started(rig.session(), id.clone(), 9), Err(9), "stop the late task");
    assert!(!rig.dispatch.finished(&rig.session(), &id));
}

#[test]
fn answers_reports_and_requests_to_the_client_reach_their_session_or_fail_closed() {
    use crate::runtime::PeerCall;
    let mut rig = Rig::new();
    let (id, _) = rig.call(2);
    let session = rig.session();
    let now = rig.clock.now();
    let Rig { router, dispatch, .. } = &mut rig;
    // A log record while the call runs goes to the session.
    let log = Report::Log {
        related: id.clone(),
        level: crate::schema::LoggingLevel::Error,
        logger: None,
        data: json!("on the way"),
    };
    assert_eq!(dispatch.report(router, now, &session, log), Ok(()));
    // A request to the client, then the handler stops waiting: cancelled once, never answered.
    let slot = Slot::default();
    let key = CallKeys::new().next();
    let call =
        PeerCall { related: id.clone(), method: "roots/list", params: RawJson::from(json!({})) };
    dispatch.ask(router, now, &session, key, slot.clone(), call);
    dispatch.stop_waiting(router, now, &session, key);
    assert_eq!(dispatch.abandon(&session, key), None, "already given up");
    // The answer goes out and closes the call's exchange.
    dispatch.answer(router, now, &session, id, Ok(RawJson::from(json!({"content": []}))));
    let steps = rig.drain();
    let sent: Vec<String> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Send { transmit: Transmit::Write { bytes, .. }, .. } => {
                Some(String::from_utf8_lossy(bytes).into_owned())
            }
            _ => None,
        })
        .collect();
    let all = sent.concat();
    assert!(all.contains("on the way"), "{all}");
    assert!(all.contains("roots/list"), "{all}");
    assert!(all.contains(r#""id":2"#), "{all}");
    assert!(slot.0.lock().unwrap().is_empty(), "a request given up on gets no outcome");
    // Once the session is gone: reports fail, requests fail at once with Closed.
    rig.router.close_session(now, &session);
    rig.drain();
    let Rig { router, dispatch, .. } = &mut rig;
    let late = Report::Log {
        related: RequestId::Number(2),
        level: crate::schema::LoggingLevel::Error,
        logger: None,
        data: json!("too late"),
    };
    assert_eq!(dispatch.report(router, now, &session, late), Err(UsageError::Closed));
    let slot = Slot::default();
    let call = PeerCall {
        related: RequestId::Number(2),
        method: "roots/list",
        params: RawJson::from(json!({})),
    };
    dispatch.ask(router, now, &session, CallKeys::new().next(), slot.clone(), call);
    let outcomes = slot.0.lock().unwrap().clone();
    assert!(matches!(outcomes[..], [Err(CallError::Usage(UsageError::Closed))]), "{outcomes:?}");
}
