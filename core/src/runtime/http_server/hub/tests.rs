use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HOST};
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use serde_json::json;

use super::*;
use crate::http::server::RouterConfig;
use crate::io::RequestHead;
use crate::runtime::{Outcome, OwnedEvent};
use crate::schema::Tool;
use crate::server::ServerConfig;
use crate::testkit::VirtualClock;

/// A connection that records what the hub sends it, and refuses everything once `full`.
#[derive(Default)]
struct Wire {
    sent: Mutex<Vec<Transmit>>,
    full: Option<usize>,
}

impl HubConn for Wire {
    fn send(&self, transmit: Transmit) -> Result<(), Transmit> {
        if self.full.is_some() {
            return Err(transmit);
        }
        self.sent.lock().unwrap().push(transmit);
        Ok(())
    }

    fn passed_limit(&self) -> Option<usize> {
        self.full
    }
}

/// Records what it is given.
#[derive(Clone, Default)]
struct Slot(Arc<Mutex<Vec<Outcome>>>);

impl ReplySlot for Slot {
    fn deliver(self, outcome: Outcome) {
        self.0.lock().unwrap().push(outcome);
    }
}

/// A host on a virtual clock. `start` answers calls of "echo" at once (as a task-less
/// handler would) and files the others as tasks numbered from 1.
#[derive(Default)]
struct Host {
    clock: Mutex<VirtualClock>,
    rearmed: Mutex<Vec<Option<Instant>>>,
    stopped: Mutex<Vec<u32>>,
    idle: AtomicU32,
    tasks: AtomicU32,
    after: AtomicU32,
}

impl HubHost for Host {
    type Handler = &'static str;
    type Conn = Wire;
    type Task = u32;
    type Reply = Slot;
    const POLLS_ONCE: bool = true;

    fn now(&self) -> Instant {
        self.clock.lock().unwrap().now()
    }

    fn rearm(&self, next: Option<Instant>) {
        self.rearmed.lock().unwrap().push(next);
    }

    fn start(hub: &Arc<Hub<Self>>, starts: Vec<Start<&'static str>>) {
        for start in starts {
            if start.handler == "echo" {
                hub.answer(start.session, start.id, Ok(RawJson::from(json!({"content": []}))));
            } else {
                let task = hub.host().tasks.fetch_add(1, Ordering::Relaxed) + 1;
                assert!(hub.started(start.session, start.id, task).is_ok());
            }
        }
    }

    fn stop(&self, tasks: Vec<u32>) {
        self.stopped.lock().unwrap().extend(tasks);
    }

    fn idle(&self) {
        self.idle.fetch_add(1, Ordering::Relaxed);
    }

    fn after(&self) {
        self.after.fetch_add(1, Ordering::Relaxed);
    }
}

struct Rig {
    hub: Arc<Hub<Host>>,
    conn: Arc<Wire>,
    next_stream: u64,
    session: Option<String>,
}

impl Rig {
    fn new() -> Self {
        let mut registry = Registry::default();
        registry.add_tool(Tool::new("echo", "Echoes", json!({"type": "object"})), "echo");
        registry.add_tool(Tool::new("slow", "Waits", json!({"type": "object"})), "slow");
        let config = RouterConfig::new([5; 32]);
        let router = Router::new(ServerConfig::new("s", "1"), config, registry);
        let hub = Hub::new(router, Host::default());
        let mut rig = Self { hub, conn: Arc::default(), next_stream: 1, session: None };
        rig.post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}}));
        let sent = rig.take();
        let Some(Transmit::Respond { head, .. }) = sent.first() else { panic!("{sent:?}") };
        rig.session = Some(head.headers["mcp-session-id"].to_str().unwrap().to_owned());
        rig.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        rig.take();
        rig
    }

    /// POSTs `body` on a new exchange carried by the rig's connection; its stream.
    fn post(&mut self, body: &serde_json::Value) -> StreamId {
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
        let inputs: Vec<Inbound> = [
            OwnedEvent::Accept(Box::new(head)),
            OwnedEvent::Data(Bytes::from(serde_json::to_vec(body).unwrap())),
            OwnedEvent::End,
        ]
        .into_iter()
        .map(|event| Inbound { stream, event })
        .collect();
        self.hub.feed(&inputs, &self.conn);
        stream
    }

    fn call(&mut self, id: u64, tool: &str) -> StreamId {
        self.post(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {}}}))
    }

    fn take(&self) -> Vec<Transmit> {
        std::mem::take(&mut *self.conn.sent.lock().unwrap())
    }
}

fn body_of(sent: &[Transmit]) -> String {
    sent.iter()
        .filter_map(|t| match t {
            Transmit::Write { bytes, .. } => Some(String::from_utf8_lossy(bytes).into_owned()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_handler_done_at_its_start_is_answered_with_one_json_body() {
    let mut rig = Rig::new();
    let stream = rig.call(1, "echo");
    let sent = rig.take();
    let Some(Transmit::Respond { head, stream: s, .. }) = sent.first() else { panic!("{sent:?}") };
    assert_eq!((*s, head.status), (stream, StatusCode::OK));
    assert_eq!(head.headers[CONTENT_TYPE], "application/json");
    assert!(body_of(&sent).contains(r#""id":1"#), "{sent:?}");
    assert!(matches!(sent.last(), Some(Transmit::Close { stream: s }) if *s == stream));
    assert_eq!(rig.hub.running(), 0);
    assert_eq!(rig.hub.stats().carried, 0, "the finished exchange is forgotten");
}

#[test]
fn a_handler_in_a_task_answers_later_and_then_the_hub_is_idle() {
    let mut rig = Rig::new();
    rig.call(2, "slow");
    assert_eq!(rig.hub.running(), 1);
    // Still running once the answer was decided: the POST streams.
    let sent = rig.take();
    assert!(
        matches!(&sent[..], [Transmit::Respond { head, .. }, Transmit::Write { .. }]
        if head.headers[CONTENT_TYPE] == "text/event-stream"),
        "{sent:?}"
    );
    let idle_before = rig.hub.host().idle.load(Ordering::Relaxed);
    let session = rig.hub.lock().router.sessions().next().unwrap().clone();
    let id = RequestId::Number(2);
    rig.hub.answer(session, id, Ok(RawJson::from(json!({"content": []}))));
    assert!(body_of(&rig.take()).contains(r#""id":2"#));
    assert_eq!(rig.hub.running(), 0);
    assert_eq!(rig.hub.host().idle.load(Ordering::Relaxed), idle_before + 1);
}

#[test]
fn closing_the_sessions_stops_running_tasks_unlocked_and_reports_idle() {
    let mut rig = Rig::new();
    rig.call(3, "slow");
    rig.call(4, "slow");
    rig.hub.close_sessions();
    let mut stopped = rig.hub.host().stopped.lock().unwrap().clone();
    stopped.sort_unstable();
    assert_eq!(stopped, [1, 2]);
    assert_eq!(rig.hub.running(), 0);
    assert!(rig.hub.host().idle.load(Ordering::Relaxed) >= 1);
    assert_eq!(rig.hub.session_count(), 0);
}

#[test]
fn a_cancellation_stops_only_its_task() {
    let mut rig = Rig::new();
    rig.call(5, "slow");
    rig.call(6, "slow");
    rig.post(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 6}}));
    assert_eq!(*rig.hub.host().stopped.lock().unwrap(), [2]);
    assert_eq!(rig.hub.running(), 1);
}

#[test]
fn a_connection_past_its_limit_has_its_exchange_failed_at_once() {
    let mut rig = Rig::new();
    let full = Arc::new(Wire { sent: Mutex::default(), full: Some(4096) });
    let old = std::mem::replace(&mut rig.conn, full);
    rig.call(7, "slow");
    // The stream was refused and failed: the router holds no exchange for it any more.
    assert_eq!(rig.hub.stats().exchanges, 0, "{:?}", rig.hub.stats());
    assert_eq!(rig.hub.stats().carried, 0);
    drop(old);
}

#[test]
fn the_timer_is_rearmed_only_when_the_deadline_moves_and_tick_fires_it() {
    let mut rig = Rig::new();
    let before = rig.hub.host().rearmed.lock().unwrap().len();
    rig.call(8, "echo");
    rig.call(9, "echo");
    let rearmed = rig.hub.host().rearmed.lock().unwrap()[before..].to_vec();
    // Each call's `json_wait` deadline is cleared by the decision after its start.
    assert!(rearmed.windows(2).all(|w| w[0] != w[1]), "{rearmed:?}");
    // The session's idle deadline is the one left; firing early does nothing.
    let next = rig.hub.tick();
    assert!(next.is_some());
    rig.hub.host().clock.lock().unwrap().advance(Duration::from_secs(24 * 3600));
    assert_eq!(rig.hub.session_count(), 1);
    rig.hub.tick();
    assert_eq!(rig.hub.session_count(), 0, "the idle session expired");
}

#[test]
fn asks_of_a_gone_session_are_answered_closed_and_after_runs_on_every_operation() {
    let rig = Rig::new();
    let gone = rig.hub.lock().router.sessions().next().unwrap().clone();
    rig.hub.close_sessions();
    let after = rig.hub.host().after.load(Ordering::Relaxed);
    let slot = Slot::default();
    let related = RequestId::Number(1);
    let params = RawJson::from(json!({}));
    let call = PeerCall { related: related.clone(), method: "roots/list", params };
    rig.hub.ask(&gone, rig.hub.next_key(), slot.clone(), call);
    let outcomes = slot.0.lock().unwrap();
    assert!(matches!(&outcomes[..], [Err(crate::api::CallError::Usage(UsageError::Closed))]));
    let level = crate::schema::LoggingLevel::Info;
    let report = Report::Log { related, level, logger: None, data: json!("x") };
    assert_eq!(rig.hub.report(&gone, report), Err(UsageError::Closed));
    assert_eq!(rig.hub.host().after.load(Ordering::Relaxed), after + 2);
}
