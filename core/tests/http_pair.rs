//! The Streamable HTTP client planner against the router over a simulated HTTP link, in
//! virtual time: both halves of zest's HTTP transport, end to end, with faults.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use quickcheck::{QuickCheck, TestResult};
use serde_json::json;
use zest_core::client::{
    self, ClientConfig, Event as ClientEvent, ServerNotification, ServerRequest,
};
use zest_core::error::{CloseReason, RequestError};
use zest_core::http::client::{HttpClientConfig, HttpMode};
use zest_core::http::server::RouterConfig;
use zest_core::jsonrpc::{RawJson, RequestId};
use zest_core::schema::methods::CallTool;
use zest_core::schema::{CallToolParams, ClientCapabilities, LoggingLevel, ProtocolVersion};
use zest_core::server::{Event, ListKind, ServerConfig};
use zest_core::testkit::{Faults, HttpPair};
use zest_core::RequestOptions;

fn pair_with(
    client: ClientConfig,
    http: HttpClientConfig,
    router: RouterConfig,
) -> HttpPair<Handler> {
    let mut server = ServerConfig::new("s", "1");
    server.announce_changes = true;
    HttpPair::new(client, http, server, router, registry())
}

fn http_config(path: &str) -> HttpClientConfig {
    HttpClientConfig::new(format!("http://127.0.0.1:8080{path}").parse().unwrap())
}

fn ready(version: ProtocolVersion) -> HttpPair<Handler> {
    let mut c = ClientConfig::new("c", "1").session_era();
    c.protocol_version = version;
    c.capabilities = serde_json::from_value::<ClientCapabilities>(json!({"sampling":{}})).unwrap();
    let mut pair = pair_with(c, http_config("/mcp"), RouterConfig::new([9; 32]));
    let events = pair.take_client_events();
    let Some(ClientEvent::Ready(n)) = events.iter().find(|e| matches!(e, ClientEvent::Ready(_)))
    else {
        panic!("no Ready: {events:?} {:?}", pair.transcript())
    };
    assert_eq!(n.protocol_version, version);
    pair.take_router_events();
    pair
}

fn call(name: &str, args: serde_json::Value) -> CallToolParams {
    serde_json::from_value(json!({"name": name, "arguments": args})).unwrap()
}

fn responses(events: &[ClientEvent]) -> Vec<(RequestId, Result<RawJson, RequestError>)> {
    events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Response { id, result } => Some((id.clone(), result.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn handshake_and_calls_per_session_era_revision() {
    for version in
        [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25]
    {
        let mut pair = ready(version);
        let now = pair.clock.now();
        let id = pair
            .client
            .send::<CallTool>(now, &call("add", json!({"a": 2, "b": 3})), RequestOptions::default())
            .unwrap();
        pair.pump();
        pair.serve(app);
        let events = pair.take_client_events();
        let result = client::decode_result::<CallTool>(responses(&events).remove(0).1).unwrap();
        assert_eq!(result.content[0].as_text(), Some("5"), "{version:?}");
        assert_eq!(responses(&events)[0].0, id);
        let t = pair.transcript().to_vec();
        assert_eq!(t[0], "POST /mcp → 200", "{t:?}");
        // `initialized` and the GET stream go together, and the call only after the GET's head.
        let mut next = t[1..3].to_vec();
        next.sort();
        assert_eq!(next, ["GET /mcp → 200", "POST /mcp → 202"], "{t:?}");
    }
}

#[test]
fn a_tool_that_reports_logs_and_samples_mid_call_completes_on_its_stream() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let now = pair.clock.now();
    let id = pair
        .client
        .send::<CallTool>(
            now,
            &call("echo", json!({"text": "hi"})),
            RequestOptions::with_progress(),
        )
        .unwrap();
    pair.pump();
    let calls = pair.take_router_events();
    let (session, sid) = calls
        .iter()
        .find_map(|e| match &e.event {
            Event::Call { id, .. } => Some((e.session.clone(), id.clone())),
            _ => None,
        })
        .expect("the call reached the router");
    let stream = *pair.open_streams().last().unwrap();
    let s = pair.router.session_mut(&session).unwrap();
    s.progress(now, &sid, 1.0, Some(2.0), Some("half".into())).unwrap();
    s.log(now, Some(&sid), LoggingLevel::Info, Some("tool"), json!("working")).unwrap();
    let sampling =
        json!({"messages":[{"role":"user","content":{"type":"text","text":"?"}}],"maxTokens":5});
    let asked = s
        .request(
            now,
            Some(&sid),
            "sampling/createMessage",
            Some(RawJson::from(sampling)),
            RequestOptions::default(),
        )
        .unwrap();
    pair.pump();
    let events = pair.take_client_events();
    assert!(
        matches!(&events[0], ClientEvent::Progress { id: p, progress } if *p == id && progress.progress == 1.0),
        "{events:?}"
    );
    assert!(
        matches!(&events[1], ClientEvent::Notification(ServerNotification::LoggingMessage(m)) if m.logger.as_deref() == Some("tool"))
    );
    let ClientEvent::Request { id: rid, request: ServerRequest::CreateMessage(_) } = &events[2]
    else {
        panic!("{events:?}")
    };
    // All three came on the call's own POST stream.
    assert_eq!(pair.open_streams().last(), Some(&stream));
    let answer = json!({"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"});
    pair.client.respond(now, rid.clone(), Ok(RawJson::from(answer))).unwrap();
    pair.pump();
    assert!(pair.transcript().last().unwrap().ends_with("→ 202"), "the answer was its own POST");
    let router_events = pair.take_router_events();
    assert!(router_events
        .iter()
        .any(|e| matches!(&e.event, Event::Response { id, result: Ok(_) } if *id == asked)));
    let s = pair.router.session_mut(&session).unwrap();
    s.respond(now, sid, Ok(RawJson::from(json!({"content":[{"type":"text","text":"done"}]}))))
        .unwrap();
    pair.pump();
    let events = pair.take_client_events();
    assert_eq!(responses(&events).len(), 1);
    assert!(!pair.open_streams().contains(&stream), "the call's stream ended with its reply");
}

#[test]
fn list_changed_arrives_on_the_get_stream() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let now = pair.clock.now();
    pair.router.change_registry(now, &[ListKind::Tools], |r| {
        r.add_tool(tool("new", json!({"type":"object"})), "echo");
    });
    pair.pump();
    let events = pair.take_client_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ClientEvent::Notification(ServerNotification::ToolListChanged))),
        "{events:?}"
    );
}

#[test]
fn a_stream_dropped_mid_answer_resumes_and_delivers_everything_once() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let now = pair.clock.now();
    let id = pair
        .client
        .send::<CallTool>(now, &call("echo", json!({"text": "x"})), RequestOptions::with_progress())
        .unwrap();
    pair.pump();
    let (session, sid) = pair
        .take_router_events()
        .into_iter()
        .find_map(|e| match e.event {
            Event::Call { id, .. } => Some((e.session, id)),
            _ => None,
        })
        .unwrap();
    pair.router.session_mut(&session).unwrap().progress(now, &sid, 1.0, None, None).unwrap();
    pair.pump();
    let stream = *pair.open_streams().last().unwrap();
    pair.cut(stream);
    // While the client waits to reconnect, the server goes on.
    let s = pair.router.session_mut(&session).unwrap();
    s.progress(now, &sid, 2.0, None, None).unwrap();
    s.respond(now, sid, Ok(RawJson::from(json!({"content":[]})))).unwrap();
    pair.pump();
    pair.advance(Duration::from_secs(2));
    let events = pair.take_client_events();
    let progress: Vec<f64> = events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Progress { progress, .. } => Some(progress.progress),
            _ => None,
        })
        .collect();
    assert_eq!(progress, [1.0, 2.0], "{events:?}");
    assert_eq!(responses(&events).len(), 1);
    assert_eq!(responses(&events)[0].0, id);
    assert!(pair.transcript().iter().any(|l| l == "GET /mcp → 200"), "{:?}", pair.transcript());
}

/// Regression: the router forgot a stream's events as soon as it had written the last one, so
/// a connection that broke while the response was on its way left nothing to resume from, and
/// the call failed with `StreamLost` though the server had answered it.
#[test]
fn a_response_cut_in_the_middle_of_its_event_is_replayed_on_resume() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    // Every body chunk after an exchange's first is split inside and the exchange cut.
    pair.set_faults(Faults::seeded(1).split(1000));
    let now = pair.clock.now();
    let id = pair
        .client
        .send::<CallTool>(now, &call("echo", json!({"text": "x"})), RequestOptions::default())
        .unwrap();
    pair.pump();
    let (session, sid) = pair
        .take_router_events()
        .into_iter()
        .find_map(|e| match e.event {
            Event::Call { id, .. } => Some((e.session, id)),
            _ => None,
        })
        .unwrap();
    let answer = json!({"content":[{"type":"text","text":"x"}]});
    pair.router
        .session_mut(&session)
        .unwrap()
        .respond(now, sid, Ok(RawJson::from(answer)))
        .unwrap();
    pair.pump();
    assert!(responses(&pair.take_client_events()).is_empty(), "the response was cut");
    pair.advance(Duration::from_secs(10));
    let events = pair.take_client_events();
    let outcomes = responses(&events);
    assert_eq!(outcomes.len(), 1, "{events:?}");
    assert_eq!(outcomes[0].0, id);
    let result = client::decode_result::<CallTool>(outcomes[0].1.clone()).unwrap();
    assert_eq!(result.content[0].as_text(), Some("x"));
    let t = pair.transcript();
    assert!(t.iter().any(|l| l == "GET /mcp → 200"), "resumed with a GET: {t:?}");
}

#[test]
fn an_expired_session_fails_in_flight_calls_then_starts_afresh() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let now = pair.clock.now();
    let first = pair
        .client
        .send::<CallTool>(now, &call("echo", json!({"text": "x"})), RequestOptions::default())
        .unwrap();
    pair.pump();
    let session = pair.router.sessions().next().unwrap().clone();
    pair.take_router_events();
    pair.router.close_session(now, &session);
    pair.pump();
    // The next request carries the dead id: 404, and the client starts over.
    pair.client
        .send::<CallTool>(now, &call("echo", json!({"text": "y"})), RequestOptions::default())
        .unwrap();
    pair.pump();
    let events = pair.take_client_events();
    assert!(events.iter().any(|e| matches!(e, ClientEvent::SessionExpired)), "{events:?}");
    assert!(events.iter().any(|e| matches!(e, ClientEvent::Ready(_))), "{events:?}");
    let outcomes = responses(&events);
    assert!(outcomes.iter().all(|(_, r)| r.is_err()), "{outcomes:?}");
    assert!(outcomes.iter().any(|(i, _)| *i == first), "the call in flight got its one outcome");
    assert_eq!(pair.router.session_count(), 1, "a new session");
    assert_ne!(pair.router.sessions().next().unwrap(), &session);
    let now = pair.clock.now();
    pair.client
        .send::<CallTool>(now, &call("add", json!({"a": 1, "b": 1})), RequestOptions::default())
        .unwrap();
    pair.pump();
    pair.serve(app);
    assert!(responses(&pair.take_client_events())[0].1.is_ok());
}

/// Regression (found by the fault-injection properties): in JSON-response mode, a POST whose
/// only request was cancelled is answered with an empty JSON body; the client reported that
/// as a decode violation.
#[test]
fn an_empty_json_answer_to_a_cancelled_call_is_no_violation() {
    let mut c = ClientConfig::new("c", "1").session_era();
    c.protocol_version = ProtocolVersion::V2025_11_25;
    let mut router = RouterConfig::new([5; 32]);
    router.json_response = true;
    let mut pair = pair_with(c, http_config("/mcp"), router);
    pair.take_client_events();
    let now = pair.clock.now();
    let id = pair
        .client
        .send::<CallTool>(now, &call("echo", json!({"text": "x"})), RequestOptions::default())
        .unwrap();
    pair.pump();
    pair.client.cancel(now, &id, None).unwrap();
    pair.pump();
    let events = pair.take_client_events();
    assert!(matches!(&responses(&events)[..], [(i, Err(RequestError::Cancelled))] if *i == id));
    assert!(!events.iter().any(|e| matches!(e, ClientEvent::Violation(_))), "{events:?}");
    assert_eq!(pair.open_streams().len(), 1, "only the GET stream is open");
}

/// Regression (found by the fault-injection properties): once the GET stream's reconnections
/// ran out, the client never opened one again, and everything the server sent outside a call
/// stayed in the router's backlog for the rest of the session.
#[test]
fn a_get_stream_given_up_is_opened_again_after_the_next_accepted_post() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let session = pair.router.sessions().next().unwrap().clone();
    // The GET stream and each reconnection break before anything new arrives on them.
    for _ in 0..4 {
        let get = *pair.open_streams().last().expect("a GET stream");
        pair.cut(get);
        pair.advance(Duration::from_secs(2));
    }
    assert!(pair.open_streams().is_empty(), "the client gave up: {:?}", pair.transcript());
    let now = pair.clock.now();
    pair.client
        .send::<CallTool>(now, &call("echo", json!({"text": "x"})), RequestOptions::default())
        .unwrap();
    pair.pump();
    pair.serve(app);
    let now = pair.clock.now();
    let s = pair.router.session_mut(&session).unwrap();
    s.log(now, None, LoggingLevel::Info, None, json!("outside")).unwrap();
    pair.pump();
    let events = pair.take_client_events();
    assert!(
        events.iter().any(|e| matches!(e, ClientEvent::Notification(ServerNotification::LoggingMessage(m)) if m.data == json!("outside"))),
        "{events:?} {:?}",
        pair.transcript()
    );
}

#[test]
fn close_deletes_the_session() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let now = pair.clock.now();
    pair.client.close(now);
    pair.pump();
    assert!(pair.transcript().iter().any(|l| l == "DELETE /mcp → 200"), "{:?}", pair.transcript());
    assert_eq!(pair.router.session_count(), 0);
    assert!(pair.take_router_events().iter().any(|e| matches!(e.event, Event::Closed(_))));
}

#[test]
fn legacy_client_against_legacy_server() {
    let mut http = http_config("/sse");
    http.mode = HttpMode::LegacySse;
    let mut c = ClientConfig::new("c", "1").session_era();
    c.protocol_version = ProtocolVersion::V2024_11_05;
    let mut pair = pair_with(c, http, RouterConfig::new([1; 32]));
    let events = pair.take_client_events();
    assert!(
        events.iter().any(|e| matches!(e, ClientEvent::Ready(_))),
        "{events:?} {:?}",
        pair.transcript()
    );
    let now = pair.clock.now();
    pair.client
        .send::<CallTool>(now, &call("echo", json!({"text": "old"})), RequestOptions::default())
        .unwrap();
    pair.pump();
    pair.serve(app);
    let result =
        client::decode_result::<CallTool>(responses(&pair.take_client_events()).remove(0).1)
            .unwrap();
    assert_eq!(result.content[0].as_text(), Some("old"));
    assert_eq!(pair.transcript()[0], "GET /sse → 200");
}

#[test]
fn detection_uses_streamable_http_when_it_works() {
    let mut pair = pair_with(
        ClientConfig::new("c", "1").session_era(),
        http_config("/mcp"),
        RouterConfig::new([2; 32]),
    );
    assert!(pair.take_client_events().iter().any(|e| matches!(e, ClientEvent::Ready(_))));
    assert_eq!(pair.transcript()[0], "POST /mcp → 200");
}

#[test]
fn detection_falls_back_to_legacy_after_404() {
    // The URL is the legacy stream endpoint: a POST there gets 404, a GET the endpoint event.
    let mut c = ClientConfig::new("c", "1").session_era();
    c.protocol_version = ProtocolVersion::V2024_11_05;
    let mut pair = pair_with(c, http_config("/sse"), RouterConfig::new([3; 32]));
    let events = pair.take_client_events();
    assert!(
        events.iter().any(|e| matches!(e, ClientEvent::Ready(_))),
        "{events:?} {:?}",
        pair.transcript()
    );
    assert_eq!(&pair.transcript()[..2], ["POST /sse → 404", "GET /sse → 200"]);
}

#[test]
fn detection_never_falls_back_after_403() {
    let mut router = RouterConfig::new([4; 32]);
    router.allowed_hosts = vec!["mcp.example".into()];
    let mut pair =
        pair_with(ClientConfig::new("c", "1").session_era(), http_config("/mcp"), router);
    let events = pair.take_client_events();
    assert!(
        events.iter().any(|e| matches!(e, ClientEvent::Closed(CloseReason::HttpStatus { status, .. }) if status.as_u16() == 403)),
        "{events:?}"
    );
    assert_eq!(pair.transcript(), ["POST /mcp → 403"], "no GET after a 403");
}

/// Random cuts of the exchanges while calls are in flight: every call ends exactly once.
#[test]
fn every_request_ends_exactly_once_under_random_cuts() {
    fn property(cuts: Vec<(u8, u8)>, answers: Vec<bool>) -> TestResult {
        let mut pair = ready(ProtocolVersion::V2025_11_25);
        let mut sent = Vec::new();
        for (i, &(cut, wait)) in cuts.iter().take(12).enumerate() {
            let now = pair.clock.now();
            if let Ok(id) = pair.client.send::<CallTool>(
                now,
                &call("echo", json!({"text": i.to_string()})),
                RequestOptions::with_progress().timeout(Duration::from_secs(30)),
            ) {
                sent.push(id);
            }
            pair.pump();
            let streams = pair.open_streams();
            if cut % 3 == 0 && !streams.is_empty() {
                pair.cut(streams[usize::from(cut) % streams.len()]);
            }
            if answers.get(i).copied().unwrap_or(true) {
                pair.serve(app);
            }
            pair.advance(Duration::from_millis(u64::from(wait) * 20));
        }
        // Drain: answer what is left and let every timer run out.
        for _ in 0..3 {
            pair.serve(app);
            pair.advance(Duration::from_secs(60));
        }
        let events = pair.take_client_events();
        let mut count: BTreeMap<RequestId, usize> = BTreeMap::new();
        for (id, _) in responses(&events) {
            *count.entry(id).or_default() += 1;
        }
        for id in &sent {
            if count.get(id) != Some(&1) {
                return TestResult::error(format!(
                    "{id}: {:?} outcomes; {events:?}",
                    count.get(id)
                ));
            }
        }
        TestResult::from_bool(count.len() == sent.len())
    }
    QuickCheck::new().tests(200).quickcheck(property as fn(Vec<(u8, u8)>, Vec<bool>) -> TestResult);
}

#[test]
fn an_effect_the_runtime_cannot_perform_fails_the_session_and_every_pending_call() {
    let mut pair = ready(ProtocolVersion::V2025_11_25);
    let now = pair.clock.now();
    let id = pair
        .client
        .send::<CallTool>(now, &call("add", json!({"a": 1, "b": 1})), RequestOptions::default())
        .unwrap();
    // A runtime that could not perform one of the machine's transmits says so.
    let failure = zest_core::io::TransportFailure::Unsupported("write");
    pair.client.fail(now, failure.clone());
    pair.pump();
    let events = pair.take_client_events();
    let closed = RequestError::Closed(CloseReason::TransportFailed(failure.clone()));
    assert_eq!(responses(&events), [(id, Err(closed))]);
    assert!(
        matches!(events.last(), Some(ClientEvent::Closed(CloseReason::TransportFailed(f))) if *f == failure),
        "{events:?}"
    );
    assert!(pair.client.is_closed());
}
