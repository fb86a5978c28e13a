//! The client in 2026-07-28 over stdio, against the server machine: the era ladder
//! (`server/discover` first, `initialize` when the server is not modern), the protocol data
//! in every request's `_meta`, and input-required rounds turned into the session era's
//! events, answered by the app and retried under a new id the app never sees.

mod common;

use std::time::Instant;

use common::*;
use serde_json::{json, Value};
use zest_core::api::CallError;
use zest_core::client::{ClientConfig, Event, ServerNotification, ServerRequest};
use zest_core::error::{CloseReason, RequestError, UsageError};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::schema::{ClientCapabilities, ProtocolVersion};
use zest_core::server::{self, RequestStateConfig, RequestStateKey, ServerConfig};
use zest_core::testkit::{Pair, Wire};
use zest_core::RequestOptions;

fn modern_client() -> ClientConfig {
    let caps: ClientCapabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
    client_config().capabilities(caps).prefer_modern()
}

fn modern_server(now: Instant) -> ServerConfig {
    let mut config = server_config();
    config.supported_versions = ProtocolVersion::ALL.to_vec();
    let key = RequestStateKey::new([9; 32]);
    config.request_state = Some(RequestStateConfig::new(key, now, 1_800_000_000));
    config
}

fn pair(client: ClientConfig, server: impl FnOnce(Instant) -> ServerConfig) -> Pair<Handler> {
    let now = zest_core::testkit::VirtualClock::new().now();
    Pair::new(client, server(now), registry())
}

/// Every message the client wrote, parsed.
fn sent(pair: &Pair<Handler>) -> Vec<Value> {
    let lines = pair.wire.iter().filter_map(|w| match w {
        Wire::ToServer(line) => serde_json::from_str::<Value>(line).ok(),
        _ => None,
    });
    lines.collect()
}

/// The messages of `method` the client wrote.
fn sent_of(pair: &Pair<Handler>, method: &str) -> Vec<Value> {
    sent(pair).into_iter().filter(|m| m["method"] == method).collect()
}

fn sent_methods(pair: &Pair<Handler>) -> Vec<String> {
    sent(pair).iter().filter_map(|m| m["method"].as_str().map(str::to_owned)).collect()
}

fn call_echo(pair: &mut Pair<Handler>) -> RequestId {
    let now = pair.clock.now();
    let params = RawJson::from(json!({"name": "echo", "arguments": {"text": "hi"}}));
    let id =
        pair.client.request(now, "tools/call", Some(params), RequestOptions::default()).unwrap();
    pair.pump();
    id
}

/// The server's pending call and its round.
fn server_call(pair: &mut Pair<Handler>) -> (RequestId, std::sync::Arc<server::Round>) {
    let events = pair.take_server_events();
    let call = events.into_iter().find_map(|e| match e {
        server::Event::Call { id, context, .. } => Some((id, context.round.expect("a round"))),
        _ => None,
    });
    call.expect("the server got the call")
}

fn elicit_params() -> RawJson {
    RawJson::from(
        json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
    )
}

#[test]
fn a_modern_server_is_spoken_to_without_a_handshake() {
    let mut pair = pair(modern_client(), modern_server);
    let negotiated = pair.handshake();
    assert_eq!(negotiated.protocol_version, ProtocolVersion::V2026_07_28);
    assert_eq!(negotiated.server_info.name, "test-server");
    assert!(negotiated.capabilities.tools.is_some());
    let id = call_echo(&mut pair);
    let call = sent_of(&pair, "tools/call").pop().expect("the call went out");
    let meta = &call["params"]["_meta"];
    assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "test-client");
    assert!(meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"].is_object());
    pair.serve(app);
    let events = pair.take_client_events();
    let acknowledged =
        events.iter().any(|e| matches!(e, Event::Notification(ServerNotification::Other(_))));
    assert!(!acknowledged, "the listen's acknowledgment is not the app's: {events:?}");
    let response = events.into_iter().find_map(|e| match e {
        Event::Response { id: got, result } if got == id => Some(result),
        _ => None,
    });
    let result = response.unwrap().unwrap().parse::<Value>().unwrap();
    assert_eq!(result["resultType"], "complete");
    // No initialize; the listen for the lists the server announces opens once ready.
    assert_eq!(sent_methods(&pair), ["server/discover", "subscriptions/listen", "tools/call"]);
    pair.server.notify_list_changed(pair.clock.now(), server::ListKind::Tools);
    pair.pump();
    let heard = pair
        .take_client_events()
        .into_iter()
        .any(|e| matches!(e, Event::Notification(ServerNotification::ToolListChanged)));
    assert!(heard, "a list change reaches the app through the listen");
    // `ping`, which the revision removed, goes as `server/discover` and still shows the
    // server alive.
    let now = pair.clock.now();
    let ping = pair.client.request(now, "ping", None, RequestOptions::default()).unwrap();
    pair.serve(app);
    let answered = pair
        .take_client_events()
        .into_iter()
        .any(|e| matches!(e, Event::Response { id, result: Ok(_) } if id == ping));
    assert!(answered, "the ping was answered");
    assert_eq!(sent_methods(&pair).last().map(String::as_str), Some("server/discover"));
    // Other methods the revision removed are refused before anything is sent.
    let tasks = pair.client.request(now, "tasks/list", None, RequestOptions::default());
    assert!(matches!(tasks, Err(UsageError::MethodNotInVersion { .. })), "{tasks:?}");
}

#[test]
fn the_ladder_steps_down_to_initialize_for_a_session_era_server() {
    let mut pair = pair(modern_client(), |_| server_config().session_era());
    let negotiated = pair.handshake();
    assert_eq!(negotiated.protocol_version, ProtocolVersion::LATEST_SESSION);
    assert_eq!(sent_methods(&pair), ["server/discover", "initialize", "notifications/initialized"]);
}

#[test]
fn a_client_pinned_to_2026_closes_on_a_session_era_server() {
    let pinned = modern_client().supported_versions(vec![ProtocolVersion::V2026_07_28]);
    let mut pair = pair(pinned, |_| server_config().session_era());
    pair.pump();
    let closed = pair.take_client_events().into_iter().find_map(|e| match e {
        Event::Closed(reason) => Some(reason),
        _ => None,
    });
    assert!(matches!(closed, Some(CloseReason::InitializeInvalid(_))), "{closed:?}");
}

#[test]
fn an_input_required_call_becomes_the_apps_requests_and_is_retried_under_its_first_id() {
    let mut pair = pair(modern_client(), modern_server);
    pair.handshake();
    pair.take_client_events();
    let app_id = call_echo(&mut pair);
    // Round 1 on the server: the handler asks, the run ends.
    let (id, round) = server_call(&mut pair);
    let asked = round.ask(Some("name"), "elicitation/create", &elicit_params(), |_| true);
    assert!(matches!(asked, Err(CallError::Usage(UsageError::InputRequired { .. }))));
    let now = pair.clock.now();
    pair.server.respond(now, id, Err(ErrorObject::new(-1, "ended"))).unwrap();
    pair.pump();
    // The client hands the app the session era's request, under a local id.
    let events = pair.take_client_events();
    let [Event::Request { id: local, request: ServerRequest::Elicit(_) }] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    let answer = RawJson::from(json!({"action": "accept", "content": {"name": "Ada"}}));
    pair.client.respond(now, local.clone(), Ok(answer)).unwrap();
    pair.pump();
    // Round 2 on the server: the answer is in hand.
    let (id, round) = server_call(&mut pair);
    let got = round.ask(Some("name"), "elicitation/create", &elicit_params(), |_| true).unwrap();
    assert_eq!(got.parse::<Value>().unwrap()["content"]["name"], "Ada");
    let done = RawJson::from(json!({"content": [{"type": "text", "text": "hello Ada"}]}));
    pair.server.respond(now, id, Ok(done)).unwrap();
    pair.pump();
    let events = pair.take_client_events();
    let [Event::Response { id, result: Ok(raw) }] = events.as_slice() else { panic!("{events:?}") };
    assert_eq!(*id, app_id, "the app sees its call's first id");
    assert_eq!(raw.parse::<Value>().unwrap()["content"][0]["text"], "hello Ada");
    // The retry went out with a new id, the answer and the state.
    let calls = sent_of(&pair, "tools/call");
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0]["id"], calls[1]["id"]);
    assert_eq!(calls[1]["params"]["inputResponses"]["name"]["content"]["name"], "Ada");
    assert!(calls[1]["params"]["requestState"].is_string());
}

#[test]
fn a_call_waiting_for_the_apps_answers_can_be_cancelled_or_closed() {
    let mut pair = pair(modern_client(), modern_server);
    pair.handshake();
    pair.take_client_events();
    for close in [false, true] {
        let app_id = call_echo(&mut pair);
        let (id, round) = server_call(&mut pair);
        let _ = round.ask(None, "elicitation/create", &elicit_params(), |_| true);
        let now = pair.clock.now();
        pair.server.respond(now, id, Err(ErrorObject::new(-1, "ended"))).unwrap();
        pair.pump();
        let events = pair.take_client_events();
        let [Event::Request { id: local, .. }] = events.as_slice() else { panic!("{events:?}") };
        if close {
            pair.client.close(now);
        } else {
            pair.client.cancel(now, &app_id, None).unwrap();
        }
        pair.pump();
        let events = pair.take_client_events();
        let outcome = events.iter().find_map(|e| match e {
            Event::Response { id, result: Err(e) } if *id == app_id => Some(e.clone()),
            _ => None,
        });
        match close {
            false => {
                assert_eq!(outcome, Some(RequestError::Cancelled), "{events:?}");
                assert!(events.contains(&Event::Cancelled { id: local.clone() }), "{events:?}");
                // A late answer to the dropped ask is allowed and sends nothing.
                let late = RawJson::from(json!({"action": "decline"}));
                assert_eq!(pair.client.respond(now, local.clone(), Ok(late)), Ok(()));
                pair.pump();
                assert!(pair.take_client_events().is_empty());
            }
            true => assert!(matches!(outcome, Some(RequestError::Closed(_))), "{events:?}"),
        }
    }
}

/// A call whose first round the server answers with `input_requests`: the pair and the
/// call's id, the result taken in.
fn asked_for(input_requests: Value) -> (Pair<Handler>, RequestId) {
    let mut pair = pair(modern_client(), modern_server);
    pair.handshake();
    pair.take_client_events();
    let app_id = call_echo(&mut pair);
    let (id, _) = server_call(&mut pair);
    let result = json!({"resultType": "input_required", "requestState": "s",
        "inputRequests": input_requests});
    let now = pair.clock.now();
    pair.server.respond(now, id, Ok(RawJson::from(result))).unwrap();
    pair.pump();
    (pair, app_id)
}

/// Why call `app_id` failed as an invalid result, its one event.
fn invalid_result(pair: &mut Pair<Handler>, app_id: &RequestId) -> String {
    let events = pair.take_client_events();
    let [Event::Response { id, result: Err(RequestError::InvalidResult(why)) }] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(id, app_id);
    why.clone()
}

#[test]
fn an_input_request_the_client_cannot_answer_fails_the_call_typed() {
    // A server that asks for what this client never declared (sampling).
    let (mut pair, app_id) = asked_for(json!({"q": {"method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 5}}}));
    let why = invalid_result(&mut pair, &app_id);
    assert!(why.contains("did not declare"), "{why}");
}

#[test]
fn an_input_request_whose_params_do_not_fit_fails_the_call_as_the_servers_fault() {
    let misfit = json!({"q": {"method": "elicitation/create", "params": {"message": 7}}});
    let (mut pair, app_id) = asked_for(misfit);
    // The app gets the request undecoded; its decoding refuses it with -32602 …
    let events = pair.take_client_events();
    let [Event::Request { id: local, request: ServerRequest::Elicit(p) }] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    let refused = p.decode().unwrap_err();
    let now = pair.clock.now();
    pair.client.respond(now, local.clone(), Err(refused)).unwrap();
    pair.pump();
    // … and the call fails as a bad result of the server's, not as the app's error.
    let why = invalid_result(&mut pair, &app_id);
    assert!(why.contains("cannot give"), "{why}");
}

mod over_http {
    use super::*;
    use zest_core::http::client::{HttpClientConfig, HttpMode};
    use zest_core::http::server::RouterConfig;
    use zest_core::testkit::HttpPair;

    fn http_pair(
        client: ClientConfig,
        mode: HttpMode,
        server: impl FnOnce(Instant) -> ServerConfig,
    ) -> HttpPair<Handler> {
        let now = zest_core::testkit::VirtualClock::new().now();
        let mut http = HttpClientConfig::new("http://127.0.0.1:8080/mcp".parse().unwrap());
        http.mode = mode;
        HttpPair::new(client, http, server(now), RouterConfig::new([4; 32]), registry())
    }

    fn ready_version(pair: &mut HttpPair<Handler>) -> ProtocolVersion {
        let events = pair.take_client_events();
        let ready = events.iter().find_map(|e| match e {
            Event::Ready(n) => Some(n.protocol_version),
            _ => None,
        });
        ready.unwrap_or_else(|| panic!("no Ready: {events:?} {:?}", pair.transcript()))
    }

    /// A modern pair with an `echo` call sent: the pair, the call's id, the time.
    fn echo_under_way() -> (HttpPair<Handler>, RequestId, Instant) {
        let mut pair = http_pair(modern_client(), HttpMode::Auto, modern_server);
        assert_eq!(ready_version(&mut pair), ProtocolVersion::V2026_07_28);
        let now = pair.clock.now();
        let params = RawJson::from(json!({"name": "echo", "arguments": {"text": "hi"}}));
        let id = pair.client.request(now, "tools/call", Some(params), RequestOptions::default());
        let id = id.unwrap();
        pair.pump();
        (pair, id, now)
    }

    #[test]
    fn cancelling_a_call_closes_its_stream_and_the_router_stops_its_handler() {
        let (mut pair, id, now) = echo_under_way();
        let posts_before = pair.transcript().len();
        let events = pair.take_router_events();
        assert!(events.iter().any(|e| matches!(e.event, server::Event::Call { .. })));
        pair.client.cancel(now, &id, None).unwrap();
        pair.pump();
        let events = pair.take_router_events();
        let stopped = events.iter().any(|e| matches!(e.event, server::Event::Cancelled { .. }));
        assert!(stopped, "the router cancelled the handler: {events:?}");
        // No `notifications/cancelled` POST: the closed stream said it.
        assert_eq!(pair.transcript().len(), posts_before, "{:?}", pair.transcript());
        let events = pair.take_client_events();
        assert!(events.contains(&Event::Response { id, result: Err(RequestError::Cancelled) }));
    }

    #[test]
    fn a_modern_router_is_spoken_to_with_one_post_per_request_and_no_session() {
        let (mut pair, id, now) = echo_under_way();
        // Round 1: the handler asks; the client's app answers; the retry completes.
        let events = pair.take_router_events();
        let (session, call_id, round) = events
            .into_iter()
            .find_map(|e| match e.event {
                server::Event::Call { id, context, .. } => Some((e.session, id, context.round?)),
                _ => None,
            })
            .expect("the call reached the router");
        let _ = round.ask(Some("name"), "elicitation/create", &elicit_params(), |_| true);
        let ended = Err(ErrorObject::new(-1, "ended"));
        pair.router.session_mut(&session).unwrap().respond(now, call_id, ended).unwrap();
        pair.pump();
        let events = pair.take_client_events();
        let [Event::Request { id: local, .. }] = events.as_slice() else { panic!("{events:?}") };
        let answer = RawJson::from(json!({"action": "accept", "content": {"name": "Ada"}}));
        pair.client.respond(now, local.clone(), Ok(answer)).unwrap();
        pair.pump();
        pair.serve(app);
        let events = pair.take_client_events();
        let done = events.iter().find_map(|e| match e {
            Event::Response { id: got, result: Ok(raw) } if *got == id => Some(raw.clone()),
            _ => None,
        });
        let done = done.unwrap_or_else(|| panic!("{events:?} {:?}", pair.transcript()));
        assert_eq!(done.parse::<Value>().unwrap()["resultType"], "complete");
        assert_eq!(pair.router.session_count(), 1, "nothing kept but the open listen");
        assert!(pair.transcript().iter().all(|l| l.starts_with("POST")), "{:?}", pair.transcript());
    }

    #[test]
    fn a_request_whose_stream_breaks_is_sent_again_under_a_new_id() {
        let mut pair = http_pair(modern_client(), HttpMode::Auto, modern_server);
        assert_eq!(ready_version(&mut pair), ProtocolVersion::V2026_07_28);
        let now = pair.clock.now();
        let params = RawJson::from(json!({"name": "echo", "arguments": {"text": "hi"}}));
        let id = pair.client.request(now, "tools/call", Some(params), RequestOptions::default());
        let id = id.unwrap();
        pair.pump();
        // The call reached the router; its stream breaks before the answer.
        assert_eq!(pair.take_router_events().len(), 1);
        // The listen's stream, opened first, and the call's.
        let open = pair.open_streams();
        assert_eq!(open.len(), 2, "{open:?}");
        pair.cut(*open.iter().max().unwrap());
        let events = pair.take_client_events();
        assert!(events.is_empty(), "no outcome yet: it is sent again: {events:?}");
        pair.serve(app);
        let events = pair.take_client_events();
        let answered = events.iter().find_map(|e| match e {
            Event::Response { id: got, result } if *got == id => Some(result.clone()),
            _ => None,
        });
        let result = answered.unwrap_or_else(|| panic!("{events:?} {:?}", pair.transcript()));
        assert_eq!(result.unwrap().parse::<Value>().unwrap()["content"][0]["text"], "hi");
        let posts = pair.transcript().iter().filter(|l| l.starts_with("POST")).count();
        assert_eq!(posts, 4, "discover, listen, the call, the call again: {:?}", pair.transcript());
    }

    #[test]
    fn a_request_is_sent_again_twice_at_most_then_fails_with_why() {
        let mut pair = http_pair(modern_client(), HttpMode::Auto, modern_server);
        ready_version(&mut pair);
        let now = pair.clock.now();
        let params = RawJson::from(json!({"name": "echo", "arguments": {"text": "hi"}}));
        let id = pair.client.request(now, "tools/call", Some(params), RequestOptions::default());
        let id = id.unwrap();
        pair.pump();
        for cut in 1..=3 {
            let open = pair.open_streams();
            assert_eq!(open.len(), 2, "cut {cut}: the listen and the call: {open:?}");
            pair.cut(*open.iter().max().unwrap());
        }
        let events = pair.take_client_events();
        let [Event::Response { id: got, result: Err(RequestError::Transport(_)) }] =
            events.as_slice()
        else {
            panic!("{events:?}")
        };
        assert_eq!(*got, id);
        assert_eq!(pair.open_streams().len(), 1, "only the listen");
    }

    #[test]
    fn the_ladder_steps_down_to_a_session_over_http() {
        let mut pair =
            http_pair(modern_client(), HttpMode::Auto, |_| server_config().session_era());
        assert_eq!(ready_version(&mut pair), ProtocolVersion::LATEST_SESSION);
        assert!(pair.router.session_count() == 1, "{:?}", pair.transcript());
    }
}

#[test]
fn a_discover_refused_with_32022_listing_2026_is_asked_once_more() {
    use zest_core::client::Client;
    use zest_core::io::{Input, Output, Receive, StreamEvent, StreamId, Transmit};
    let now = zest_core::testkit::VirtualClock::new().now();
    let mut client = Client::new(modern_client(), now);
    // What the client writes: each line as JSON.
    let written = |client: &mut Client| -> Vec<Value> {
        let mut lines = Vec::new();
        while let Some(out) = client.poll_output() {
            if let Output::Transmit(Transmit::Write { bytes, .. }) = out {
                let text = String::from_utf8(bytes.to_vec()).unwrap();
                lines.extend(text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()));
            }
        }
        lines
    };
    let feed = |client: &mut Client, message: Value| {
        let line = format!("{message}\n");
        let event = StreamEvent::Data(line.as_bytes());
        client.handle_input(Input::Receive(now, Receive { stream: StreamId::STDIO, event }));
    };
    let first = written(&mut client);
    assert_eq!(first[0]["method"], "server/discover");
    let error = json!({"code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}});
    feed(&mut client, json!({"jsonrpc": "2.0", "id": first[0]["id"], "error": error}));
    let second = written(&mut client);
    assert_eq!(second[0]["method"], "server/discover", "asked again: {second:?}");
    // Refused the same way again: the ladder steps down to initialize.
    feed(&mut client, json!({"jsonrpc": "2.0", "id": second[0]["id"], "error": error}));
    let third = written(&mut client);
    assert_eq!(third[0]["method"], "initialize", "{third:?}");
}

#[test]
fn the_log_level_goes_in_every_request_since_the_revision_has_no_set_level() {
    use zest_core::client::ServerNotification;
    use zest_core::schema::LoggingLevel;
    let mut pair = pair(modern_client(), modern_server);
    pair.handshake();
    pair.take_client_events();
    let now = pair.clock.now();
    let level = RawJson::from(json!({"level": "info"}));
    let set = pair.client.request(now, "logging/setLevel", Some(level), RequestOptions::default());
    let set = set.unwrap();
    pair.pump();
    let events = pair.take_client_events();
    assert!(
        matches!(events.as_slice(), [Event::Response { id, result: Ok(_) }] if *id == set),
        "answered at once: {events:?}"
    );
    assert!(!sent_methods(&pair).contains(&"logging/setLevel".to_owned()), "nothing sent");
    call_echo(&mut pair);
    let events = pair.take_server_events();
    let Some(server::Event::Call { id, context, .. }) = events.into_iter().next() else {
        panic!("no call")
    };
    assert_eq!(context.log_level, Some(LoggingLevel::Info));
    pair.server.log(now, Some(&id), LoggingLevel::Warning, None, json!("careful")).unwrap();
    pair.server.log(now, Some(&id), LoggingLevel::Debug, None, json!("noise")).unwrap();
    pair.pump();
    let logs: Vec<Value> = pair
        .take_client_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Notification(ServerNotification::LoggingMessage(m)) => Some(m.data),
            _ => None,
        })
        .collect();
    assert_eq!(logs, [json!("careful")]);
}

#[test]
fn a_resource_subscription_listens_anew_and_its_updates_reach_the_app() {
    use zest_core::client::ServerNotification;
    let mut pair = pair(modern_client(), modern_server);
    pair.handshake();
    pair.take_client_events();
    let now = pair.clock.now();
    let uri = RawJson::from(json!({"uri": "test://static-text"}));
    let sub = pair.client.request(now, "resources/subscribe", Some(uri), RequestOptions::default());
    let sub = sub.unwrap();
    pair.pump();
    let events = pair.take_client_events();
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Response { id, result: Ok(_) } if *id == sub)));
    let listens = sent_of(&pair, "subscriptions/listen");
    assert_eq!(listens.len(), 2, "the first listen, then one with the resource");
    let asked = &listens[1]["params"]["notifications"]["resourceSubscriptions"];
    assert_eq!(*asked, json!(["test://static-text"]));
    pair.server.resource_updated(now, "test://static-text");
    pair.pump();
    let updated = pair.take_client_events().into_iter().any(|e| {
        matches!(e, Event::Notification(ServerNotification::ResourceUpdated(p)) if p.uri == "test://static-text")
    });
    assert!(updated, "the update reaches the app");
}

#[test]
fn a_round_with_only_a_state_is_retried_at_once() {
    let mut pair = pair(modern_client(), modern_server);
    pair.handshake();
    pair.take_client_events();
    let app_id = call_echo(&mut pair);
    let (id, _) = server_call(&mut pair);
    let only_state = json!({"resultType": "input_required", "requestState": "opaque"});
    let now = pair.clock.now();
    pair.server.respond(now, id, Ok(RawJson::from(only_state))).unwrap();
    pair.pump();
    let calls = sent_of(&pair, "tools/call");
    assert_eq!(calls.len(), 2, "retried at once");
    assert_eq!(calls[1]["params"]["requestState"], "opaque");
    // This server did not seal that state: the retry fails, and the app hears it once.
    let events = pair.take_client_events();
    let outcomes: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, Event::Response { id, .. } if *id == app_id))
        .collect();
    assert_eq!(outcomes.len(), 1, "{events:?}");
}

#[test]
fn a_listen_the_server_ends_is_opened_anew_and_its_end_is_not_the_apps() {
    let mut pair = pair(modern_client(), modern_server);
    pair.handshake();
    pair.take_client_events();
    let listen_id = |pair: &Pair<Handler>, nth: usize| -> Value {
        let listens = sent_of(pair, "subscriptions/listen");
        listens.get(nth).map(|m| m["id"].clone()).unwrap_or_default()
    };
    let first = listen_id(&pair, 0);
    let end = json!({"jsonrpc": "2.0", "id": first, "result": {"resultType": "complete",
        "_meta": {"io.modelcontextprotocol/subscriptionId": first}}});
    pair.inject_to_client(format!("{end}\n").as_bytes());
    let events = pair.take_client_events();
    assert!(events.iter().all(|e| !matches!(e, Event::Response { .. })), "{events:?}");
    // The next input opens it anew.
    pair.advance(std::time::Duration::from_millis(1));
    assert_ne!(listen_id(&pair, 1), Value::Null, "a second listen went out");
    assert_ne!(listen_id(&pair, 1), first);
}

#[test]
fn a_server_that_never_stops_asking_is_refused_after_the_round_limit() {
    let mut pair = pair(modern_client(), modern_server);
    pair.handshake();
    pair.take_client_events();
    let app_id = call_echo(&mut pair);
    let mut rounds = 0;
    let outcome = loop {
        assert!(rounds <= 40, "the client never gave up");
        let now = pair.clock.now();
        // A wizard with no end: every run asks one question more than the last.
        let (id, round) = server_call(&mut pair);
        let mut key = 0;
        while round
            .ask(Some(&format!("q{key}")), "elicitation/create", &elicit_params(), |_| true)
            .is_ok()
        {
            key += 1;
        }
        pair.server.respond(now, id, Err(ErrorObject::new(-1, "ended"))).unwrap();
        pair.pump();
        let events = pair.take_client_events();
        match events.as_slice() {
            [Event::Request { id: local, .. }] => {
                let answer = RawJson::from(json!({"action": "accept", "content": {"name": "x"}}));
                pair.client.respond(now, local.clone(), Ok(answer)).unwrap();
                pair.pump();
                rounds += 1;
            }
            [Event::Response { id, result }] if *id == app_id => break result.clone(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(rounds, 32, "every round up to the limit was answered");
    let Err(RequestError::InvalidResult(why)) = outcome else { panic!("{outcome:?}") };
    assert!(why.contains("more than 32 times"), "{why}");
}

#[test]
fn a_call_whose_app_never_answers_times_out_at_its_hard_cap_across_rounds() {
    let mut pair = pair(modern_client(), modern_server);
    pair.handshake();
    pair.take_client_events();
    let now = pair.clock.now();
    let params = RawJson::from(json!({"name": "echo", "arguments": {"text": "hi"}}));
    let opts = RequestOptions::default().max_total(std::time::Duration::from_secs(5));
    let app_id = pair.client.request(now, "tools/call", Some(params), opts).unwrap();
    pair.pump();
    let (id, round) = server_call(&mut pair);
    let _ = round.ask(None, "elicitation/create", &elicit_params(), |_| true);
    pair.server.respond(now, id, Err(ErrorObject::new(-1, "ended"))).unwrap();
    pair.pump();
    let events = pair.take_client_events();
    let [Event::Request { id: local, .. }] = events.as_slice() else { panic!("{events:?}") };
    // The app takes its time; the call's 5 s cap counts from its first send.
    assert_eq!(pair.client.poll_timeout(), Some(now + std::time::Duration::from_secs(5)));
    pair.advance(std::time::Duration::from_secs(6));
    let events = pair.take_client_events();
    assert!(events.contains(&Event::Cancelled { id: local.clone() }), "{events:?}");
    let outcome = events.iter().find_map(|e| match e {
        Event::Response { id, result } if *id == app_id => Some(result.clone()),
        _ => None,
    });
    assert_eq!(outcome, Some(Err(RequestError::TimedOut)), "{events:?}");
}
