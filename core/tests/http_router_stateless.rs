//! 2026-07-28 over Streamable HTTP: each POST stands alone (no session id minted or
//! needed), its headers must agree with its body, and refusals carry the revision's codes
//! and statuses; GET and DELETE have no place in it.

mod common;
mod router_harness;

use http::{Method, StatusCode};
use router_harness::*;
use serde_json::{json, Value};
use zest_core::jsonrpc::codes;
use zest_core::schema::ProtocolVersion;
use zest_core::server::ServerConfig;

fn modern() -> Http {
    let mut server = ServerConfig::new("t", "1");
    server.supported_versions = ProtocolVersion::ALL.to_vec();
    Http::with_server(server, config())
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
           "io.modelcontextprotocol/clientCapabilities":{}})
}

/// POSTs `body` with the 2026-07-28 headers plus `extra`.
fn post(http: &mut Http, body: &Value, extra: &[(&str, &str)]) -> (Option<StatusCode>, Value) {
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
    ];
    headers.extend_from_slice(extra);
    let stream = http.send(Method::POST, "/mcp", &headers, &serde_json::to_vec(body).unwrap());
    let answer = http.answer(stream);
    assert!(answer.headers.get("mcp-session-id").is_none(), "no session id is minted");
    let json = if answer.body.is_empty() { Value::Null } else { answer.json() };
    (answer.status, json)
}

/// POSTs a 2026-07-28 `tools/call`, its `Mcp-Name` header `name`, without answering it.
fn send_call(http: &mut Http, name: &str, call: &Value) -> zest_core::io::StreamId {
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", name),
    ];
    http.send(Method::POST, "/mcp", &headers, &serde_json::to_vec(call).unwrap())
}

fn list_tools() -> Value {
    json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta": meta()}})
}

#[test]
fn a_request_is_answered_without_a_session() {
    let mut http = modern();
    let (status, body) = post(&mut http, &list_tools(), &[("mcp-method", "tools/list")]);
    assert_eq!(status, Some(StatusCode::OK));
    assert_eq!(body["result"]["resultType"], "complete");
    assert_eq!(body["result"]["tools"].as_array().unwrap().len(), 3);
    let discover =
        json!({"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta": meta()}});
    let (status, body) = post(&mut http, &discover, &[("mcp-method", "server/discover")]);
    assert_eq!(status, Some(StatusCode::OK));
    assert!(body["result"]["supportedVersions"].as_array().unwrap().contains(&json!("2026-07-28")));
    assert_eq!(http.router.session_count(), 0, "nothing is kept");
}

#[test]
fn a_call_runs_and_its_named_header_is_checked() {
    let mut http = modern();
    let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"x"},"_meta": meta()}});
    let headers = [("mcp-method", "tools/call"), ("mcp-name", "echo")];
    let stream = {
        let mut h = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
        ];
        h.extend_from_slice(&headers);
        http.send(Method::POST, "/mcp", &h, &serde_json::to_vec(&call).unwrap())
    };
    http.answer_first_call();
    let answer = http.answer(stream);
    let body = if answer.headers["content-type"] == "text/event-stream" {
        answer.messages().pop().unwrap()
    } else {
        answer.json()
    };
    assert_eq!(body["result"]["content"][0]["text"], "x");
    assert_eq!(body["result"]["resultType"], "complete");
    // The name in base64 form is the same name: the call runs (a request that stands alone
    // gets its head with its reply).
    let stream = send_call(&mut http, "=?base64?ZWNobw==?=", &call);
    http.answer_first_call();
    assert_eq!(http.answer(stream).status, Some(StatusCode::OK));
}

#[test]
fn headers_that_disagree_with_the_body_get_32020() {
    let mut http = modern();
    let call = json!({"jsonrpc":"2.0","id":4,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"x"},"_meta": meta()}});
    let cases: [(&[(&str, &str)], &str); 4] = [
        (&[], "Mcp-Method"),
        (&[("mcp-method", "tools/list")], "Mcp-Method"),
        (&[("mcp-method", "tools/call")], "Mcp-Name"),
        (&[("mcp-method", "tools/call"), ("mcp-name", "add")], "Mcp-Name"),
    ];
    for (headers, named) in cases {
        let (status, body) = post(&mut http, &call, headers);
        assert_eq!(status, Some(StatusCode::BAD_REQUEST), "{headers:?}");
        assert_eq!(body["error"]["code"], codes::HEADER_MISMATCH, "{headers:?}: {body}");
        assert!(body["error"].to_string().contains(named), "{body}");
        assert_eq!(body["id"], 4);
    }
}

#[test]
fn bad_requests_get_the_revisions_codes_and_statuses() {
    let mut http = modern();
    let unknown = json!({"jsonrpc":"2.0","id":6,"method":"tools/dance","params":{"_meta": meta()}});
    let (status, body) = post(&mut http, &unknown, &[("mcp-method", "tools/dance")]);
    assert_eq!(status, Some(StatusCode::NOT_FOUND));
    assert_eq!(body["error"]["code"], codes::METHOD_NOT_FOUND);
    let no_meta = json!({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}});
    let (status, body) = post(&mut http, &no_meta, &[("mcp-method", "tools/list")]);
    assert_eq!(status, Some(StatusCode::BAD_REQUEST));
    assert_eq!(body["error"]["code"], codes::INVALID_PARAMS, "{body}");
    let wrong_type = json!({"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":
        {"io.modelcontextprotocol/protocolVersion":"2026-07-28",
         "io.modelcontextprotocol/clientCapabilities":"all"}}});
    let (status, body) = post(&mut http, &wrong_type, &[("mcp-method", "tools/list")]);
    assert_eq!(status, Some(StatusCode::BAD_REQUEST));
    assert_eq!(body["error"]["code"], codes::INVALID_PARAMS, "{body}");
}

#[test]
fn get_and_delete_are_not_allowed_in_this_revision() {
    let mut http = modern();
    let headers = [("accept", "text/event-stream"), ("mcp-protocol-version", "2026-07-28")];
    let get = http.send(Method::GET, "/mcp", &headers, b"");
    assert_eq!(http.answer(get).status, Some(StatusCode::METHOD_NOT_ALLOWED));
    let delete = http.send(Method::DELETE, "/mcp", &[("mcp-protocol-version", "2026-07-28")], b"");
    assert_eq!(http.answer(delete).status, Some(StatusCode::METHOD_NOT_ALLOWED));
}

#[test]
fn the_session_era_is_served_beside_it_on_the_same_endpoint() {
    let mut http = modern();
    let session = http.handshake(json!({}));
    let call = http.post(Some(&session), echo_x(9));
    http.answer_first_call();
    assert_eq!(http.answer(call).status, Some(StatusCode::OK));
    let (status, body) = post(&mut http, &list_tools(), &[("mcp-method", "tools/list")]);
    assert_eq!(
        (status, body["result"]["resultType"].clone()),
        (Some(StatusCode::OK), json!("complete"))
    );
    assert_eq!(http.router.session_count(), 1, "only the session-era one");
}

#[test]
fn closing_the_stream_of_a_request_cancels_it() {
    let mut http = modern();
    http.decide = false;
    let call = json!({"jsonrpc":"2.0","id":10,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"x"},"_meta": meta()}});
    let stream = send_call(&mut http, "echo", &call);
    assert_eq!(http.router.session_count(), 1, "the call runs");
    http.drop_stream(stream);
    let cancelled = http.events.iter().any(|e| {
        matches!(
            &e.event,
            zest_core::server::Event::Cancelled { .. } | zest_core::server::Event::Closed(_)
        )
    });
    assert!(cancelled, "{:?}", http.events.iter().map(|e| &e.event).collect::<Vec<_>>());
    assert_eq!(http.router.session_count(), 0, "nothing is kept");
}

#[test]
fn an_unknown_revision_in_both_places_gets_32022_with_the_request_id() {
    let mut http = modern();
    let body = json!({"jsonrpc":"2.0","id":301,"method":"server/discover","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"v999.0.0",
        "io.modelcontextprotocol/clientCapabilities":{}}}});
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "v999.0.0"),
        ("mcp-method", "server/discover"),
    ];
    let stream = http.send(Method::POST, "/mcp", &headers, &serde_json::to_vec(&body).unwrap());
    let answer = http.answer(stream);
    assert_eq!(answer.status, Some(StatusCode::BAD_REQUEST));
    let json = answer.json();
    assert_eq!(json["id"], 301);
    assert_eq!(json["error"]["code"], codes::UNSUPPORTED_PROTOCOL_VERSION, "{json}");
    assert_eq!(json["error"]["data"]["requested"], "v999.0.0");
}

#[test]
fn a_meta_revision_other_than_the_headers_is_a_header_mismatch() {
    let mut http = modern();
    let body = json!({"jsonrpc":"2.0","id":302,"method":"server/discover","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"v999.0.0",
        "io.modelcontextprotocol/clientCapabilities":{}}}});
    let (status, json) = post(&mut http, &body, &[("mcp-method", "server/discover")]);
    assert_eq!(status, Some(StatusCode::BAD_REQUEST));
    assert_eq!(json["error"]["code"], codes::HEADER_MISMATCH, "{json}");
    assert_eq!(json["id"], 302);
}

#[test]
fn a_notification_is_accepted_with_202_whether_or_not_it_is_known() {
    let mut http = modern();
    for method in ["notifications/cancelled", "notifications/vendor/thing"] {
        let note = json!({"jsonrpc":"2.0","method":method,"params":{"requestId":1}});
        let (status, body) = post(&mut http, &note, &[("mcp-method", method)]);
        assert_eq!(status, Some(StatusCode::ACCEPTED), "{method}: {body}");
        assert_eq!(body, Value::Null, "{method}: an empty body");
    }
    assert_eq!(http.router.session_count(), 0, "nothing is kept");
}

#[test]
fn a_listen_streams_its_acknowledgment_even_where_answers_are_json() {
    let mut server = ServerConfig::new("t", "1");
    server.supported_versions = ProtocolVersion::ALL.to_vec();
    server.announce_changes = true;
    let mut router = config();
    router.json_response = true;
    let mut http = Http::with_server(server, router);
    let listen = json!({"jsonrpc":"2.0","id":"L","method":"subscriptions/listen",
        "params":{"notifications":{"toolsListChanged":true},"_meta": meta()}});
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "subscriptions/listen"),
    ];
    let stream = http.send(Method::POST, "/mcp", &headers, &serde_json::to_vec(&listen).unwrap());
    // Past json_wait: the router decides how the POST is answered.
    let later = http.clock.advance_to(http.now() + std::time::Duration::from_millis(10));
    http.router.handle_input(zest_core::io::Input::Timeout(later));
    http.drain();
    let answer = http.answer(stream);
    assert_eq!(answer.headers["content-type"], "text/event-stream", "{answer:?}");
    let first = &answer.messages()[0];
    assert_eq!(first["method"], "notifications/subscriptions/acknowledged", "{first}");
    assert!(!answer.closed, "the listen stays open");
}

/// A handler that fails with a missing client capability long after the POST arrived (a
/// handler on a busy thread, or one that awaited first) still gets its 400: a request that
/// stands alone is answered when its reply is in, neither after `json_wait` nor at the
/// handler's first poll, which would send a 200 SSE head before the error.
#[test]
fn a_late_missing_capability_error_still_gets_400() {
    for first_poll in [false, true] {
        let mut http = modern();
        http.decide = first_poll;
        let call = json!({"jsonrpc":"2.0","id":7,"method":"tools/call",
            "params":{"name":"echo","arguments":{"text":"x"},"_meta": meta()}});
        let stream = send_call(&mut http, "echo", &call);
        let (sid, id, _) = http.take_calls()[0].clone();
        http.clock.advance(std::time::Duration::from_secs(1));
        let now = http.now();
        http.router.handle_input(zest_core::io::Input::Timeout(now));
        http.pump();
        assert!(!http.answers.contains_key(&stream), "no head before the reply ({first_poll})");
        let error = zest_core::jsonrpc::ErrorObject::new(
            codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "the client did not declare sampling",
        );
        http.router.session_mut(&sid).unwrap().respond(now, id, Err(error)).unwrap();
        http.pump();
        let answer = http.answer(stream);
        assert_eq!(answer.status, Some(StatusCode::BAD_REQUEST), "{first_poll}: {answer:?}");
        assert_eq!(answer.json()["error"]["code"], codes::MISSING_REQUIRED_CLIENT_CAPABILITY);
    }
}
