//! Routers of a fleet sharing one store ([`MemoryFleet`]), driven by scripted HTTP clients
//! in memory and virtual time: any member serves any request of a session, a response
//! reaches the member whose session asked, the standalone stream outlives the member that
//! carried it, broadcasts reach every session, and a store that fails refuses with 503.

mod common;
mod router_harness;

use std::sync::Arc;

use common::Handler;
use http::{Method, StatusCode};
use router_harness::*;
use serde_json::{json, Value};
use zest_core::auth::{Principal, ProtectedResource};
use zest_core::http::server::{MemoryFleet, RouterConfig};
use zest_core::jsonrpc::RawJson;
use zest_core::schema::LoggingLevel;
use zest_core::server::{Broadcast, Event};
use zest_core::testkit::VirtualClock;
use zest_core::RequestOptions;

/// Three routers sharing one store; each `Http` is one process's router.
struct Fleet {
    members: Vec<(Http, MemoryFleet)>,
}

impl Fleet {
    fn new(size: u8) -> Self {
        Self::with(size, |config| config)
    }

    /// `size` members, each router's config made by `configure` (from a fleet one).
    fn with(size: u8, configure: impl Fn(RouterConfig) -> RouterConfig) -> Self {
        let store = MemoryFleet::new();
        let members = (0..size)
            .map(|n| {
                let handle = if n == 0 { store.clone() } else { store.join() };
                let config = RouterConfig::new([n + 1; 32]).fleet(Arc::new(handle.clone()));
                (Http::new(configure(config)), handle)
            })
            .collect();
        Self { members }
    }

    fn at(&mut self, member: usize) -> &mut Http {
        &mut self.members[member].0
    }

    /// Hands every member what the others sent it, until nobody has anything left.
    fn carry(&mut self) {
        for _ in 0..16 {
            let mut quiet = true;
            for (http, handle) in &mut self.members {
                for message in handle.take_messages() {
                    quiet = false;
                    let now = http.now();
                    Broadcast::Fleet(message).apply_all(now, &mut http.router);
                    http.pump();
                }
            }
            if quiet {
                return;
            }
        }
        panic!("the fleet never went quiet");
    }
}

fn ping(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"ping"})
}

#[test]
fn any_member_serves_a_session_opened_on_another_and_a_delete_ends_it_everywhere() {
    let mut fleet = Fleet::new(3);
    let session = fleet.at(0).handshake(json!({}));
    let list =
        fleet.at(1).post(Some(&session), json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    let answer = fleet.at(1).answer(list);
    assert_eq!(answer.status, Some(StatusCode::OK), "{answer:?}");
    assert!(!answer.json()["result"]["tools"].as_array().unwrap().is_empty());
    let call = fleet.at(2).post(Some(&session), echo_x(2));
    fleet.at(2).answer_first_call();
    assert_eq!(fleet.at(2).answer(call).messages()[0]["result"]["content"][0]["text"], "x");
    // DELETE on a fourth request's member; then every member answers 404.
    let delete = fleet.at(1).send(Method::DELETE, "/mcp", &[("mcp-session-id", &session)], b"");
    assert_eq!(fleet.at(1).answer(delete).status, Some(StatusCode::OK));
    fleet.carry();
    for member in 0..3 {
        let p = fleet.at(member).post(Some(&session), ping(3));
        assert_eq!(fleet.at(member).answer(p).status, Some(StatusCode::NOT_FOUND), "{member}");
        assert_eq!(fleet.at(member).router.session_count(), 0, "{member}");
    }
}

#[test]
fn what_the_client_changes_on_one_member_holds_on_the_others() {
    let mut fleet = Fleet::new(2);
    let session = fleet.at(0).handshake(json!({}));
    let set =
        json!({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"error"}});
    let s = fleet.at(1).post(Some(&session), set);
    assert_eq!(fleet.at(1).answer(s).status, Some(StatusCode::OK));
    let subscribe = json!({"jsonrpc":"2.0","id":2,"method":"resources/subscribe",
        "params":{"uri":"file:///a"}});
    let s = fleet.at(1).post(Some(&session), subscribe);
    assert_eq!(fleet.at(1).answer(s).status, Some(StatusCode::OK));
    // Member 0 serves the next request with the level and the subscription member 1 took.
    let p = fleet.at(0).post(Some(&session), ping(3));
    assert_eq!(fleet.at(0).answer(p).status, Some(StatusCode::OK));
    let id = fleet.at(0).router.sessions().next().unwrap().clone();
    let machine = fleet.at(0).router.session_mut(&id).unwrap();
    assert_eq!(machine.log_level(), Some(LoggingLevel::Error));
    assert!(machine.is_subscribed("file:///a"));
}

#[test]
fn a_response_posted_to_another_member_reaches_the_request_that_waits_for_it() {
    let mut fleet = Fleet::new(2);
    let session = fleet.at(0).handshake(json!({"sampling":{}}));
    let call = fleet.at(0).post(Some(&session), echo_x(1));
    let (sid, id, _) = fleet.at(0).take_calls()[0].clone();
    let now = fleet.at(0).now();
    let sampling =
        json!({"messages":[{"role":"user","content":{"type":"text","text":"?"}}],"maxTokens":5});
    let asked = fleet
        .at(0)
        .router
        .session_mut(&sid)
        .unwrap()
        .request(
            now,
            Some(&id),
            "sampling/createMessage",
            Some(RawJson::from(sampling)),
            RequestOptions::default(),
        )
        .unwrap();
    fleet.at(0).pump();
    let request = fleet.at(0).answer(call).messages()[0].clone();
    assert_eq!(request["method"], "sampling/createMessage");
    // Member 1 gets the response: 202, and it travels to member 0.
    let reply = fleet.at(1).post(
        Some(&session),
        json!({"jsonrpc":"2.0","id": request["id"],
        "result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}}),
    );
    assert_eq!(fleet.at(1).answer(reply).status, Some(StatusCode::ACCEPTED));
    assert!(fleet.at(1).events.iter().all(|e| !matches!(e.event, Event::Response { .. })));
    fleet.carry();
    let heard = fleet
        .at(0)
        .events
        .iter()
        .any(|e| matches!(&e.event, Event::Response { id, result: Ok(_) } if *id == asked));
    assert!(heard, "{:?}", fleet.at(0).events);
}

#[test]
fn the_standalone_stream_outlives_the_member_that_carried_it() {
    let mut fleet = Fleet::new(3);
    let session = fleet.at(0).handshake(json!({}));
    let get = fleet.at(1).get(&session, None);
    assert_eq!(fleet.at(1).answer(get).status, Some(StatusCode::OK));
    // A broadcast on member 2 reaches the session through member 1's GET stream.
    let now = fleet.at(2).now();
    Broadcast::<Handler>::Log { level: LoggingLevel::Info, logger: None, data: json!("one") }
        .apply_all(now, &mut fleet.at(2).router);
    fleet.at(2).pump();
    fleet.carry();
    let events = fleet.at(1).answer(get).events();
    let last = events.last().unwrap().0.clone().unwrap();
    assert_eq!(fleet.at(1).answer(get).messages()[0]["params"]["data"], "one");
    // Member 1 dies (its routers' state is gone); two more records arrive meanwhile.
    fleet.members.remove(1);
    for data in ["two", "three"] {
        let now = fleet.at(1).now();
        Broadcast::<Handler>::Log { level: LoggingLevel::Info, logger: None, data: json!(data) }
            .apply_all(now, &mut fleet.at(1).router);
        fleet.at(1).pump();
    }
    fleet.carry();
    // The client resumes on member 0 and gets both, once, in order.
    let resumed = fleet.at(0).get(&session, Some(&last));
    let data: Vec<Value> = fleet
        .at(0)
        .answer(resumed)
        .messages()
        .iter()
        .map(|m| m["params"]["data"].clone())
        .collect();
    assert_eq!(data, [json!("two"), json!("three")]);
    assert_eq!(fleet.at(0).answer(resumed).status, Some(StatusCode::OK));
}

#[test]
fn an_answer_stream_lost_on_one_member_is_replayed_by_another() {
    let mut fleet = Fleet::new(2);
    let session = fleet.at(0).handshake(json!({}));
    let call = fleet.at(0).post(
        Some(&session),
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":1}}}),
    );
    let (sid, id, _) = fleet.at(0).take_calls()[0].clone();
    let now = fleet.at(0).now();
    fleet.at(0).router.session_mut(&sid).unwrap().progress(now, &id, 1.0, None, None).unwrap();
    fleet.at(0).pump();
    let primed = fleet.at(0).answer(call).events()[0].0.clone().unwrap();
    fleet.at(0).drop_stream(call);
    let now = fleet.at(0).now();
    let s = fleet.at(0).router.session_mut(&sid).unwrap();
    s.progress(now, &id, 2.0, None, None).unwrap();
    s.respond(now, id, Ok(RawJson::from(json!({"content":[]})))).unwrap();
    fleet.at(0).pump();
    let resumed = fleet.at(1).get(&session, Some(&primed));
    let messages = fleet.at(1).answer(resumed).messages();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[2]["id"], 5);
}

#[test]
fn a_store_that_fails_refuses_with_503_and_half_does_nothing() {
    let mut fleet = Fleet::new(2);
    let session = fleet.at(0).handshake(json!({}));
    fleet.members[0].1.set_down(true);
    let p = fleet.at(1).post(Some(&session), ping(1));
    let answer = fleet.at(1).answer(p);
    assert_eq!(answer.status, Some(StatusCode::SERVICE_UNAVAILABLE));
    assert!(answer.json()["error"]["message"].as_str().unwrap().contains("retry"), "{answer:?}");
    // A new session cannot be shared: refused, and not kept here either.
    let init = fleet.at(1).post(
        None,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"c","version":"1"}}}),
    );
    assert_eq!(fleet.at(1).answer(init).status, Some(StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(fleet.at(1).router.session_count(), 0);
    fleet.members[0].1.set_down(false);
    let p = fleet.at(1).post(Some(&session), ping(2));
    assert_eq!(fleet.at(1).answer(p).status, Some(StatusCode::OK));
}

/// Tokens for two subjects.
fn validate(token: &str) -> Result<Principal, String> {
    let mut principal = match token {
        "alice" => Principal::new("alice", Vec::<String>::new()),
        "bob" => Principal::new("bob", Vec::<String>::new()),
        _ => return Err("unknown token".into()),
    };
    principal.expires_at = Some(2_000);
    Ok(principal)
}

#[test]
fn a_fleet_session_answers_only_its_principal_on_every_member() {
    let mut fleet = Fleet::with(2, |mut config| {
        config.oauth = Some(ProtectedResource::new("http://localhost/mcp", "https://as", validate));
        config.wall_clock = Some((VirtualClock::new().now(), 1_000));
        config
    });
    fleet.at(0).authorization = Some("Bearer alice");
    let session = fleet.at(0).handshake(json!({}));
    // Member 1 holds no copy: it asks the store whose session it is.
    fleet.at(1).authorization = Some("Bearer bob");
    let post = fleet.at(1).post(Some(&session), ping(1));
    assert_eq!(fleet.at(1).answer(post).status, Some(StatusCode::FORBIDDEN));
    let get = fleet.at(1).get(&session, None);
    assert_eq!(fleet.at(1).answer(get).status, Some(StatusCode::FORBIDDEN));
    let delete = fleet.at(1).send(Method::DELETE, "/mcp", &[("mcp-session-id", &session)], b"");
    assert_eq!(fleet.at(1).answer(delete).status, Some(StatusCode::FORBIDDEN));
    fleet.at(1).authorization = Some("Bearer alice");
    let post = fleet.at(1).post(Some(&session), ping(2));
    assert_eq!(fleet.at(1).answer(post).status, Some(StatusCode::OK));
    // Bob cannot take it over afterwards either, on a member that now holds a copy.
    fleet.at(1).authorization = Some("Bearer bob");
    let post = fleet.at(1).post(Some(&session), ping(3));
    assert_eq!(fleet.at(1).answer(post).status, Some(StatusCode::FORBIDDEN));
}

#[test]
fn with_json_answers_a_calls_related_messages_reach_the_fleets_standalone_stream() {
    let mut fleet = Fleet::with(2, |config| config.json_response(true));
    // Answers are decided when clear, as on a runtime whose handlers run on threads.
    fleet.at(0).decide = false;
    let session = fleet.at(0).handshake(json!({}));
    let get = fleet.at(1).get(&session, None);
    let call = fleet.at(0).post(Some(&session), echo_x(1));
    let (sid, id, _) = fleet.at(0).take_calls()[0].clone();
    let now = fleet.at(0).now();
    let machine = fleet.at(0).router.session_mut(&sid).unwrap();
    machine.log(now, Some(&id), LoggingLevel::Info, None, json!("working")).unwrap();
    fleet.at(0).pump();
    let machine = fleet.at(0).router.session_mut(&sid).unwrap();
    machine.respond(now, id, Ok(RawJson::from(json!({"content":[]})))).unwrap();
    fleet.at(0).pump();
    fleet.carry();
    assert_eq!(fleet.at(0).answer(call).json()["id"], 1);
    let events = fleet.at(1).answer(get).events();
    let log = events.iter().find(|(_, data)| data.contains("working"));
    assert_eq!(log.and_then(|(id, _)| id.as_deref()), Some("1-1"), "{events:?}");
}
