//! Correlation in virtual time: timeouts, progress resets under the cap, cancellation races,
//! close, server-to-client requests, pagination and the registry's checks.

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;
use zest_core::client::{decode_result, Event as ClientEvent, ServerRequest};
use zest_core::error::{CloseReason, RequestError};
use zest_core::jsonrpc::{codes, RawJson};
use zest_core::schema::methods::{CallTool, ListTools};
use zest_core::schema::{CallToolParams, CallToolResult, ListToolsResult, ProtocolVersion};
use zest_core::server::{Call, Event as ServerEvent, Registry};
use zest_core::testkit::Pair;
use zest_core::RequestOptions;

fn call_params(name: &str, args: serde_json::Value) -> CallToolParams {
    serde_json::from_value(json!({"name": name, "arguments": args})).unwrap()
}

#[test]
fn a_tool_call_round_trips_typed() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let id = pair
        .client
        .send::<CallTool>(
            now,
            &call_params("add", json!({"a": 2, "b": 3})),
            RequestOptions::default(),
        )
        .unwrap();
    pair.pump();
    pair.serve(app);
    let result = decode_result::<CallTool>(response_for(&pair.take_client_events(), &id)).unwrap();
    assert_eq!(serde_json::to_value(&result.content).unwrap(), json!([{"type":"text","text":"5"}]));
}

#[test]
fn progress_resets_the_timeout_but_never_past_the_cap() {
    let mut pair = ready_pair();
    let t0 = pair.clock.now();
    let opts = RequestOptions::with_progress()
        .timeout(Duration::from_secs(30))
        .max_total(Duration::from_secs(300));
    let id =
        pair.client.send::<CallTool>(t0, &call_params("echo", json!({"text": "x"})), opts).unwrap();
    pair.pump();
    let events = pair.take_server_events();
    let ServerEvent::Call { id: sid, progress_token: Some(_), .. } = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(pair.client.poll_timeout(), Some(t0 + Duration::from_secs(30)));
    // 14 progress reports, 20 s apart: each restarts the 30 s idle timeout.
    for i in 1..=14u32 {
        pair.advance(Duration::from_secs(20));
        let now = pair.clock.now();
        pair.server.progress(now, sid, f64::from(i), Some(100.0), None).unwrap();
        pair.pump();
        let progress = pair.take_client_events();
        assert!(
            matches!(&progress[..], [ClientEvent::Progress { id: pid, .. }] if *pid == id),
            "{progress:?}"
        );
        let expected = (now + Duration::from_secs(30)).min(t0 + Duration::from_secs(300));
        assert_eq!(pair.client.poll_timeout(), Some(expected));
    }
    assert_eq!(pair.client.poll_timeout(), Some(t0 + Duration::from_secs(300)), "capped");
    pair.advance_to(t0 + Duration::from_secs(300) - Duration::from_millis(1));
    assert!(pair.take_client_events().is_empty(), "early timeouts are harmless");
    pair.advance_to(t0 + Duration::from_secs(300));
    assert_eq!(response_for(&pair.take_client_events(), &id), Err(RequestError::TimedOut));
    // The timeout cancelled the request on the server, and the late answer is dropped.
    assert!(pair
        .take_server_events()
        .iter()
        .any(|e| matches!(e, ServerEvent::Cancelled { id } if id == sid)));
    let now = pair.clock.now();
    pair.server.respond(now, sid.clone(), Ok(RawJson::empty_object())).unwrap();
    pair.pump();
    assert!(pair.take_client_events().is_empty());
}

/// What a runtime test once raced on a real clock (a 300 ms `request_timeout`, progress every
/// 100 ms): the configured `request_timeout` is the deadline of a call made with default
/// options, to the instant, and a call with progress under the same config outlives it as long
/// as each report comes within it.
#[test]
fn the_configured_request_timeout_is_the_default_deadline_and_progress_outlives_it() {
    let mut config = client_config();
    config.request_timeout = Duration::from_secs(30);
    let mut pair = Pair::new(config, server_config(), registry());
    pair.handshake();
    pair.take_client_events();
    let t0 = pair.clock.now();
    let args = json!({"text": "x"});
    let plain =
        pair.client.send::<CallTool>(t0, &call_params("echo", args.clone()), Default::default());
    let plain = plain.unwrap();
    let with_progress = pair.client.send::<CallTool>(
        t0,
        &call_params("echo", args),
        RequestOptions::with_progress(),
    );
    let with_progress = with_progress.unwrap();
    pair.pump();
    let events = pair.take_server_events();
    let sid = events
        .iter()
        .find_map(|e| match e {
            ServerEvent::Call { id, progress_token: Some(_), .. } => Some(id.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the call with progress carries a token: {events:?}"));
    assert_eq!(pair.client.poll_timeout(), Some(t0 + Duration::from_secs(30)));

    // One report 20 s in restarts only the call that asked for progress.
    pair.advance(Duration::from_secs(20));
    let now = pair.clock.now();
    pair.server.progress(now, &sid, 1.0, None, None).unwrap();
    pair.pump();
    pair.take_client_events();
    pair.advance_to(t0 + Duration::from_secs(30) - Duration::from_millis(1));
    assert!(pair.take_client_events().is_empty(), "nothing is due before the deadline");
    pair.advance_to(t0 + Duration::from_secs(30));
    let events = pair.take_client_events();
    assert_eq!(response_for(&events, &plain), Err(RequestError::TimedOut));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ClientEvent::Response { id, .. } if *id == with_progress)),
        "the call with progress is still running: {events:?}"
    );

    // Reports every 20 s carry it to 160 s, five times the idle timeout, and it is answered.
    for i in 2..=8u32 {
        pair.advance_to(t0 + Duration::from_secs(20) * i);
        let now = pair.clock.now();
        pair.server.progress(now, &sid, f64::from(i), None, None).unwrap();
        pair.pump();
        let events = pair.take_client_events();
        assert!(
            matches!(&events[..], [ClientEvent::Progress { id, .. }] if *id == with_progress),
            "{events:?}"
        );
    }
    let now = pair.clock.now();
    assert_eq!(now, t0 + Duration::from_secs(160));
    let done = json!({"content": [{"type": "text", "text": "done after 8 steps"}]});
    pair.server.respond(now, sid, Ok(RawJson::from(done))).unwrap();
    pair.pump();
    assert!(response_for(&pair.take_client_events(), &with_progress).is_ok());
}

#[test]
fn progress_must_increase() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    pair.client
        .send::<CallTool>(
            now,
            &call_params("echo", json!({"text": "x"})),
            RequestOptions::with_progress(),
        )
        .unwrap();
    pair.pump();
    let events = pair.take_server_events();
    let ServerEvent::Call { id, .. } = &events[0] else { panic!() };
    pair.server.progress(now, id, 1.0, None, None).unwrap();
    assert_eq!(
        pair.server.progress(now, id, 1.0, None, None),
        Err(zest_core::error::UsageError::ProgressNotIncreasing)
    );
}

#[test]
fn a_cancelled_requests_late_response_is_dropped() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let slow = pair
        .client
        .send::<CallTool>(
            now,
            &call_params("echo", json!({"text": "slow"})),
            RequestOptions::default(),
        )
        .unwrap();
    let other = pair
        .client
        .send::<CallTool>(
            now,
            &call_params("echo", json!({"text": "other"})),
            RequestOptions::default(),
        )
        .unwrap();
    pair.pump();
    pair.client.cancel(now, &slow, Some("user gave up")).unwrap();
    pair.pump();
    let events = pair.take_client_events();
    assert_eq!(response_for(&events, &slow), Err(RequestError::Cancelled));
    // The server saw the cancellation for exactly that request …
    let server_events = pair.take_server_events();
    let cancelled: Vec<_> =
        server_events.iter().filter(|e| matches!(e, ServerEvent::Cancelled { .. })).collect();
    assert_eq!(cancelled.len(), 1);
    // … and the answers: the cancelled one is dropped by the server, the other arrives.
    for e in server_events {
        if let ServerEvent::Call { id, handler, call, .. } = e {
            let result = app(&handler, &call);
            pair.server.respond(now, id, result).unwrap();
        }
    }
    pair.pump();
    let events = pair.take_client_events();
    assert!(response_for(&events, &other).is_ok());
    assert_eq!(events.len(), 1, "nothing else: {events:?}");
    // A cancel racing a response that already went out: the response is dropped silently.
    let raced = pair
        .client
        .send::<CallTool>(
            now,
            &call_params("echo", json!({"text": "race"})),
            RequestOptions::default(),
        )
        .unwrap();
    pair.pump();
    pair.serve(app); // the server answers …
    pair.client.cancel(now, &raced, None).ok(); // … but the client already saw it, so cancel fails
    let events = pair.take_client_events();
    assert!(response_for(&events, &raced).is_ok());
}

#[test]
fn cancel_before_the_response_arrives_then_late_response_is_silent() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let id = pair
        .client
        .send::<CallTool>(
            now,
            &call_params("echo", json!({"text": "x"})),
            RequestOptions::default(),
        )
        .unwrap();
    pair.pump();
    // The server answers but the bytes are still "in the pipe" when the client cancels.
    let events = pair.take_server_events();
    let ServerEvent::Call { id: sid, handler, call, .. } = &events[0] else { panic!() };
    pair.server.respond(now, sid.clone(), app(handler, call)).unwrap();
    pair.client.cancel(now, &id, None).unwrap();
    pair.pump();
    let events = pair.take_client_events();
    assert_eq!(response_for(&events, &id), Err(RequestError::Cancelled));
    assert!(!events.iter().any(|e| matches!(e, ClientEvent::Violation(_))), "{events:?}");
}

#[test]
fn close_fails_every_pending_request_exactly_once() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let ids: Vec<_> = (0..5)
        .map(|i| {
            pair.client
                .send::<CallTool>(
                    now,
                    &call_params("echo", json!({"text": i.to_string()})),
                    RequestOptions::default(),
                )
                .unwrap()
        })
        .collect();
    pair.pump();
    pair.client.close(now);
    pair.client.close(now);
    pair.pump();
    let events = pair.take_client_events();
    for id in &ids {
        assert_eq!(response_for(&events, id), Err(RequestError::Closed(CloseReason::Local)));
    }
    let closed = events.iter().filter(|e| matches!(e, ClientEvent::Closed(_))).count();
    assert_eq!(closed, 1);
    assert!(matches!(events.last(), Some(ClientEvent::Closed(CloseReason::Local))));
    // The server saw EOF: it closes once too, and its in-flight calls are cancelled.
    let server_events = pair.take_server_events();
    assert_eq!(
        server_events
            .iter()
            .filter(|e| matches!(e, ServerEvent::Closed(CloseReason::TransportEnded)))
            .count(),
        1
    );
    assert_eq!(pair.client.poll_timeout(), None);
}

#[test]
fn peer_eof_fails_pending_requests_with_transport_ended() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let id =
        pair.client.send::<ListTools>(now, &Default::default(), RequestOptions::default()).unwrap();
    // The request is written, then the server's end of the pipe closes before any answer.
    while pair.client.poll_output().is_some() {}
    pair.client.handle_input(zest_core::io::Input::Receive(
        now,
        zest_core::io::Receive {
            stream: zest_core::io::StreamId::STDIO,
            event: zest_core::io::StreamEvent::End,
        },
    ));
    pair.pump();
    let events = pair.take_client_events();
    assert_eq!(response_for(&events, &id), Err(RequestError::Closed(CloseReason::TransportEnded)));
}

fn sampling_pair() -> Pair<Handler> {
    let mut cfg = client_config();
    cfg.capabilities = serde_json::from_value(
        json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}}),
    )
    .unwrap();
    let mut pair = Pair::new(cfg, server_config(), registry());
    pair.handshake();
    pair.take_client_events();
    pair.take_server_events();
    pair
}

#[test]
fn server_requests_round_trip_through_the_client_app() {
    let mut pair = sampling_pair();
    let now = pair.clock.now();
    let sampling = pair
        .server
        .request(
            now,
            None,
            "sampling/createMessage",
            Some(RawJson::from(json!({
                "messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10
            }))),
            RequestOptions::default(),
        )
        .unwrap();
    let elicit = pair.server.request(now, None, "elicitation/create", Some(RawJson::from(json!({
        "message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}
    }))), RequestOptions::default()).unwrap();
    let roots =
        pair.server.request(now, None, "roots/list", None, RequestOptions::default()).unwrap();
    pair.pump();
    let events = pair.take_client_events();
    assert_eq!(events.len(), 3, "{events:?}");
    for e in events {
        let ClientEvent::Request { id, request } = e else { panic!("{e:?}") };
        let answer = match request {
            ServerRequest::CreateMessage(p) => {
                assert_eq!(p.decode().unwrap().max_tokens, 10);
                json!({"role":"assistant","content":{"type":"text","text":"hello"},"model":"test-model"})
            }
            ServerRequest::Elicit(_) => json!({"action":"accept","content":{"name":"Ada"}}),
            ServerRequest::ListRoots(_) => json!({"roots":[{"uri":"file:///tmp","name":"tmp"}]}),
            other => panic!("{other:?}"),
        };
        pair.client.respond(now, id, Ok(RawJson::from(answer))).unwrap();
    }
    pair.pump();
    let events = pair.take_server_events();
    let result_of = |want| {
        events.iter().find_map(|e| match e {
            ServerEvent::Response { id, result: Ok(r) } if *id == want => {
                Some(r.to_value().unwrap())
            }
            _ => None,
        })
    };
    assert_eq!(result_of(sampling).unwrap()["model"], "test-model");
    assert_eq!(result_of(elicit).unwrap()["content"]["name"], "Ada");
    assert_eq!(result_of(roots).unwrap()["roots"][0]["uri"], "file:///tmp");
}

#[test]
fn server_requests_need_the_clients_capability() {
    let mut pair = ready_pair(); // the client declared nothing
    let now = pair.clock.now();
    let err = pair.server.request(
        now,
        None,
        "sampling/createMessage",
        Some(RawJson::empty_object()),
        RequestOptions::default(),
    );
    assert!(matches!(
        err,
        Err(zest_core::error::UsageError::CapabilityNotNegotiated { capability: "sampling", .. })
    ));
    // A server that sends one anyway gets -32601 from the client machine, and the app sees nothing.
    pair.inject_to_client(b"{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}\n");
    assert!(pair.take_client_events().is_empty());
    let last = pair.wire.iter().rev().find_map(|w| match w {
        zest_core::testkit::Wire::ToServer(t) => Some(t.clone()),
        _ => None,
    });
    let last: serde_json::Value = serde_json::from_str(&last.unwrap()).unwrap();
    assert_eq!(last["error"]["code"], codes::METHOD_NOT_FOUND);
}

#[test]
fn server_requests_the_client_does_not_serve_get_32601_even_when_the_rules_allow_them() {
    let mut cfg = client_config();
    // 2025-11-25 lets a server send tasks/* to a client that declared `tasks`.
    cfg.capabilities =
        serde_json::from_value(json!({"roots": {}, "tasks": {"list": {}, "cancel": {}}})).unwrap();
    let mut pair = Pair::new(cfg, server_config(), registry());
    assert_eq!(pair.handshake().protocol_version, ProtocolVersion::V2025_11_25);
    pair.take_client_events();
    let answers_before = pair.wire.len();
    for (id, method) in
        [("a", "tasks/get"), ("b", "tasks/list"), ("c", "tasks/result"), ("d", "no/such")]
    {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"taskId": "t"}});
        pair.inject_to_client(format!("{line}\n").as_bytes());
    }
    assert_eq!(pair.take_client_events(), [], "nothing reaches the app, least of all roots/list");
    let answers: Vec<serde_json::Value> = pair.wire[answers_before..]
        .iter()
        .filter_map(|w| match w {
            zest_core::testkit::Wire::ToServer(t) => Some(serde_json::from_str(t).unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(answers.len(), 4, "{answers:?}");
    for (answer, id) in answers.iter().zip(["a", "b", "c", "d"]) {
        assert_eq!(answer["id"], id);
        assert_eq!(answer["error"]["code"], codes::METHOD_NOT_FOUND, "{answer}");
    }
    // The methods the client does serve still reach the app.
    pair.inject_to_client(b"{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"roots/list\"}\n");
    let events = pair.take_client_events();
    assert!(matches!(
        &events[..],
        [ClientEvent::Request { request: ServerRequest::ListRoots(_), .. }]
    ));
}

#[test]
fn pagination_walks_a_thousand_tools_in_order() {
    let mut registry: Registry<Handler> = Registry::default();
    for i in 0..1000 {
        registry.add_tool(tool(&format!("tool_{i:04}"), json!({"type":"object"})), "echo");
    }
    let mut pair = Pair::new(client_config(), server_config(), registry);
    pair.handshake();
    pair.take_client_events();
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let now = pair.clock.now();
        let params = serde_json::from_value(json!({"cursor": cursor})).unwrap();
        let id = pair.client.send::<ListTools>(now, &params, RequestOptions::default()).unwrap();
        pair.pump();
        let page: ListToolsResult =
            decode_result::<ListTools>(response_for(&pair.take_client_events(), &id)).unwrap();
        pages += 1;
        names.extend(page.tools.into_iter().map(|t| t.name));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
        assert!(pages <= 20, "pagination does not end");
    }
    assert_eq!(pages, 10);
    let expected: Vec<String> = (0..1000).map(|i| format!("tool_{i:04}")).collect();
    assert_eq!(names, expected);
}

#[test]
fn invalid_tool_arguments_become_an_is_error_result_not_a_protocol_error() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let id = pair
        .client
        .send::<CallTool>(now, &call_params("add", json!({"a": "two"})), RequestOptions::default())
        .unwrap();
    pair.pump();
    assert!(pair.take_server_events().is_empty(), "the handler never ran");
    let result: CallToolResult =
        decode_result::<CallTool>(response_for(&pair.take_client_events(), &id)).unwrap();
    assert_eq!(result.is_error, Some(true));
    let text =
        serde_json::to_value(&result.content).unwrap()[0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("invalid arguments for tool add"), "{text}");
}

#[test]
fn validated_tool_arguments_reach_the_handler_as_sent() {
    let mut pair = ready_pair();
    let text = "x".repeat(64 * 1024);
    let now = pair.clock.now();
    let with = call_params("echo", json!({"text": text}));
    pair.client.send::<CallTool>(now, &with, RequestOptions::default()).unwrap();
    // `weather` accepts any object, so a call without `arguments` passes validation too.
    let without: CallToolParams = serde_json::from_value(json!({"name": "weather"})).unwrap();
    pair.client.send::<CallTool>(now, &without, RequestOptions::default()).unwrap();
    pair.pump();
    let seen: Vec<_> = pair
        .take_server_events()
        .into_iter()
        .filter_map(|e| match e {
            ServerEvent::Call { call: Call::Tool(p), .. } => Some((p.name, p.arguments)),
            _ => None,
        })
        .collect();
    assert_eq!(seen.len(), 2, "both calls passed validation");
    assert_eq!(seen[0].0, "echo");
    let args = seen[0].1.as_ref().expect("the arguments, not lost to the validator");
    assert_eq!(args["text"].as_str(), Some(text.as_str()));
    assert_eq!(seen[1], ("weather".to_owned(), None), "absent arguments stay absent");
}

#[test]
fn unknown_tool_and_prompt_errors_are_invalid_params() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let id = pair
        .client
        .send::<CallTool>(now, &call_params("nope", json!({})), RequestOptions::default())
        .unwrap();
    let missing = pair
        .client
        .request(
            now,
            "prompts/get",
            Some(RawJson::from(json!({"name":"greet"}))),
            RequestOptions::default(),
        )
        .unwrap();
    let unknown_resource = pair
        .client
        .request(
            now,
            "resources/read",
            Some(RawJson::from(json!({"uri":"test://nothing"}))),
            RequestOptions::default(),
        )
        .unwrap();
    pair.pump();
    let events = pair.take_client_events();
    let Err(RequestError::Remote(e)) = response_for(&events, &id) else { panic!() };
    assert_eq!((e.code, e.message.as_str()), (codes::INVALID_PARAMS, "unknown tool: nope"));
    let Err(RequestError::Remote(e)) = response_for(&events, &missing) else { panic!() };
    assert_eq!(
        (e.code, e.message.as_str()),
        (codes::INVALID_PARAMS, "missing required prompt argument: who")
    );
    let Err(RequestError::Remote(e)) = response_for(&events, &unknown_resource) else { panic!() };
    assert_eq!(e.code, codes::RESOURCE_NOT_FOUND);
}

#[test]
fn structured_output_is_checked_against_the_output_schema() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let good = pair
        .client
        .send::<CallTool>(now, &call_params("weather", json!({})), RequestOptions::default())
        .unwrap();
    let bad = pair
        .client
        .send::<CallTool>(
            now,
            &call_params("weather", json!({"broken": true})),
            RequestOptions::default(),
        )
        .unwrap();
    pair.pump();
    pair.serve(app);
    let events = pair.take_client_events();
    let good: CallToolResult = decode_result::<CallTool>(response_for(&events, &good)).unwrap();
    assert_eq!(good.structured_content, Some(json!({"temp": 21.5})));
    let bad: CallToolResult = decode_result::<CallTool>(response_for(&events, &bad)).unwrap();
    assert_eq!(bad.is_error, Some(true));
}

/// Calls the `weather` tool (which declares an `outputSchema`) in `version`, lets the app
/// answer with `answer`, and returns what reached the client.
fn weather_answered_with(version: ProtocolVersion, answer: serde_json::Value) -> serde_json::Value {
    let mut cfg = client_config();
    cfg.protocol_version = version;
    let mut pair = Pair::new(cfg, server_config(), registry());
    assert_eq!(pair.handshake().protocol_version, version);
    let now = pair.clock.now();
    let id = pair
        .client
        .send::<CallTool>(now, &call_params("weather", json!({})), RequestOptions::default())
        .unwrap();
    pair.pump();
    pair.serve(|_, _| Ok(RawJson::from(answer.clone())));
    let events = pair.take_client_events();
    response_for(&events, &id).unwrap().to_value().unwrap()
}

#[test]
fn the_output_schema_check_leaves_results_of_other_kinds_alone() {
    let v = ProtocolVersion::V2025_11_25;
    let task = json!({"task": {"taskId": "t1", "status": "working", "ttl": null,
        "createdAt": "2025-11-25T00:00:00Z", "lastUpdatedAt": "2025-11-25T00:00:00Z"}});
    assert_eq!(weather_answered_with(v, task.clone()), task, "a CreateTaskResult passes as is");
    let failed = json!({"content": [{"type": "text", "text": "the sensor is down"}],
        "isError": true});
    assert_eq!(weather_answered_with(v, failed.clone()), failed, "a failure has no structure");
    let input = json!({"resultType": "input_required", "requestState": "abc"});
    assert_eq!(weather_answered_with(v, input.clone()), input, "not a tool result either");
}

#[test]
fn the_output_schema_check_still_catches_plain_results() {
    let v = ProtocolVersion::V2025_06_18;
    let missing = weather_answered_with(v, json!({"content": [{"type": "text", "text": "21"}]}));
    assert_eq!(missing["isError"], true);
    assert!(missing["content"][0]["text"].as_str().unwrap().contains("no structuredContent"));
    let wrong = json!({"content": [], "structuredContent": {"temp": "hot"}, "isError": false});
    assert_eq!(weather_answered_with(v, wrong)["isError"], true);
    // `task` beside `content` is an unknown member of a plain result, not a task.
    let odd = json!({"content": [], "task": {}, "structuredContent": {"temp": "hot"}});
    assert_eq!(weather_answered_with(v, odd)["isError"], true);
    let good = json!({"content": [], "structuredContent": {"temp": 3}, "resultType": "complete"});
    assert_eq!(weather_answered_with(v, good.clone()), good);
}

#[test]
fn the_output_schema_is_not_enforced_before_structured_output_existed() {
    let plain = json!({"content": [{"type": "text", "text": "21 degrees"}]});
    for v in [ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_03_26] {
        assert_eq!(weather_answered_with(v, plain.clone()), plain, "{v}");
    }
}

#[test]
fn resources_templates_prompts_and_completion_reach_their_handlers() {
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let read = pair
        .client
        .request(
            now,
            "resources/read",
            Some(RawJson::from(json!({"uri":"test://template/42/data"}))),
            RequestOptions::default(),
        )
        .unwrap();
    let prompt = pair
        .client
        .request(
            now,
            "prompts/get",
            Some(RawJson::from(json!({"name":"greet","arguments":{"who":"Ada"}}))),
            RequestOptions::default(),
        )
        .unwrap();
    let complete = pair.client.request(now, "completion/complete", Some(RawJson::from(json!({"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"A"}}))), RequestOptions::default()).unwrap();
    pair.pump();
    let calls = pair.take_server_events();
    assert!(calls.iter().any(|e| matches!(e, ServerEvent::Call { call: Call::ReadResource { vars, .. }, .. } if vars["id"] == "42")));
    pair.server_events = calls;
    pair.serve(app);
    let events = pair.take_client_events();
    assert!(response_for(&events, &read).unwrap().get().contains("42"));
    assert!(response_for(&events, &prompt).unwrap().get().contains("hello Ada"));
    // No completion handler is registered, so no `completions` capability: -32601.
    let Err(RequestError::Remote(e)) = response_for(&events, &complete) else { panic!() };
    assert_eq!(e.code, codes::METHOD_NOT_FOUND);
    // With a handler registered, completion reaches it.
    let mut registry = registry();
    registry.set_completion_handler("complete");
    let mut pair = Pair::new(client_config(), server_config(), registry);
    assert!(pair.handshake().capabilities.completions.is_some());
    let now = pair.clock.now();
    let complete = pair.client.request(now, "completion/complete", Some(RawJson::from(json!({"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"A"}}))), RequestOptions::default()).unwrap();
    pair.pump();
    pair.serve(app);
    let values = response_for(&pair.take_client_events(), &complete).unwrap().to_value().unwrap();
    assert_eq!(values["completion"]["values"], json!(["alpha", "beta"]));
}

#[test]
fn logging_respects_the_level_the_client_set() {
    use zest_core::schema::LoggingLevel;
    let mut pair = ready_pair();
    let now = pair.clock.now();
    let id = pair
        .client
        .request(
            now,
            "logging/setLevel",
            Some(RawJson::from(json!({"level":"warning"}))),
            RequestOptions::default(),
        )
        .unwrap();
    pair.pump();
    assert!(response_for(&pair.take_client_events(), &id).is_ok());
    assert_eq!(pair.server.log_level(), Some(LoggingLevel::Warning));
    pair.server.log(now, None, LoggingLevel::Info, None, json!("quiet")).unwrap();
    pair.server.log(now, None, LoggingLevel::Error, Some("db"), json!("loud")).unwrap();
    pair.pump();
    let events = pair.take_client_events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(
        matches!(&events[0], ClientEvent::Notification(zest_core::client::ServerNotification::LoggingMessage(m)) if m.data == json!("loud"))
    );
}

#[test]
fn subscriptions_gate_resource_updates_and_list_changes_follow_capabilities() {
    use zest_core::client::ServerNotification as N;
    let mut pair = ready_pair();
    let now = pair.clock.now();
    pair.server.resource_updated(now, "test://static-text");
    pair.pump();
    assert!(pair.take_client_events().is_empty(), "not subscribed yet");
    let id = pair
        .client
        .request(
            now,
            "resources/subscribe",
            Some(RawJson::from(json!({"uri":"test://static-text"}))),
            RequestOptions::default(),
        )
        .unwrap();
    pair.pump();
    assert!(response_for(&pair.take_client_events(), &id).is_ok());
    pair.server.resource_updated(now, "test://static-text");
    pair.server.notify_list_changed(now, zest_core::server::ListKind::Tools);
    pair.pump();
    let events = pair.take_client_events();
    assert!(
        matches!(&events[0], ClientEvent::Notification(N::ResourceUpdated(u)) if u.uri == "test://static-text")
    );
    assert_eq!(events[1], ClientEvent::Notification(N::ToolListChanged));
}
