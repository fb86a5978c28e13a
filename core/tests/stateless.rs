//! 2026-07-28 requests on a stdio session: `server/discover`, protocol data read from each
//! request's `_meta`, `resultType` and the cache hints on results, the revision's own error
//! codes, and the session era still opening with `initialize` on the same stream.

mod common;

use std::time::Instant;

use common::*;
use serde_json::{json, Value};
use zest_core::io::{Input, Output, Receive, StreamEvent, StreamId, Transmit};
use zest_core::jsonrpc::{codes, RawJson};
use zest_core::schema::{CacheScope, LoggingLevel, ProtocolVersion};
use zest_core::server::{Event, Server, ServerConfig};
use zest_core::testkit::VirtualClock;

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"modern","version":"2.0"}}"#;

fn modern_config() -> ServerConfig {
    let mut config = server_config();
    config.supported_versions = ProtocolVersion::ALL.to_vec();
    config.cache_ttl_ms = 30_000;
    config.cache_scope = CacheScope::Public;
    config.instructions = Some("be brief".into());
    config
}

/// A server machine fed lines by hand; what it wrote and reported is kept.
struct Harness {
    server: Server<Handler>,
    now: Instant,
    written: Vec<Value>,
    events: Vec<Event<Handler>>,
}

impl Harness {
    fn new(config: ServerConfig) -> Self {
        let now = VirtualClock::new().now();
        let server = Server::new(config, registry(), now);
        Self { server, now, written: Vec::new(), events: Vec::new() }
    }

    fn send(&mut self, line: &str) {
        let bytes = format!("{line}\n");
        let event = StreamEvent::Data(bytes.as_bytes());
        let input = Input::Receive(self.now, Receive { stream: StreamId::STDIO, event });
        self.server.handle_input(input);
        self.drain();
    }

    fn drain(&mut self) {
        while let Some(output) = self.server.poll_output() {
            match output {
                Output::Transmit(Transmit::Write { bytes, .. }) => {
                    for line in std::str::from_utf8(&bytes).unwrap().lines() {
                        self.written.push(serde_json::from_str(line).unwrap());
                    }
                }
                Output::Transmit(_) => {}
                Output::Event(event) => self.events.push(event),
            }
        }
    }

    /// The answer to request `id`.
    fn answer(&self, id: &str) -> &Value {
        self.written.iter().rev().find(|m| m["id"] == id).expect("answered")
    }

    /// Sends request `id`, a `tools/call` of `echo` ("hi") with `meta`; what the app gets.
    fn call_echo(&mut self, id: &str, meta: &str) -> Event<Handler> {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}},{meta}}}}}"#
        ));
        self.events.pop().expect("a call")
    }

    fn request(&mut self, id: &str, method: &str, params: &str) -> Value {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"{method}","params":{{{params}}}}}"#
        ));
        self.answer(id).clone()
    }
}

#[test]
fn discover_says_what_the_server_speaks_without_initialize() {
    let mut h = Harness::new(modern_config());
    let answer = h.request("d", "server/discover", META);
    let result = &answer["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 30_000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["instructions"], "be brief");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "test-server");
    assert!(result["supportedVersions"].as_array().unwrap().contains(&json!("2026-07-28")));
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    assert!(h.events.is_empty(), "a stateless request opens nothing: {:?}", h.events);
    assert!(h.server.session().is_none());
}

#[test]
fn a_list_carries_result_type_and_cache_hints() {
    let mut h = Harness::new(modern_config());
    let answer = h.request("l", "tools/list", META);
    let result = &answer["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 30_000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(result["tools"].as_array().unwrap().len(), 3);
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"], "1.0.0");
}

#[test]
fn a_call_reaches_the_app_with_the_client_its_meta_describes() {
    let mut h = Harness::new(modern_config());
    let meta = META.replace(
        r#""io.modelcontextprotocol/clientInfo""#,
        r#""io.modelcontextprotocol/logLevel":"warning","io.modelcontextprotocol/clientInfo""#,
    );
    h.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}},{meta}}}}}"#
    ));
    let Some(Event::Call { id, handler, call, context, .. }) = h.events.pop() else {
        panic!("no call: {:?}", h.events)
    };
    let session = context.session.expect("the request's client");
    assert_eq!(session.protocol_version, ProtocolVersion::V2026_07_28);
    assert_eq!(session.client_info.name, "modern");
    assert!(session.client_capabilities.elicitation.is_some());
    assert_eq!(context.log_level, Some(LoggingLevel::Warning));
    // Logs below the request's level are not sent; at it, they are.
    let now = h.now;
    h.server.log(now, Some(&id), LoggingLevel::Info, None, json!("quiet")).unwrap();
    h.server.log(now, Some(&id), LoggingLevel::Error, None, json!("loud")).unwrap();
    let result = app(&handler, &call);
    h.server.respond(now, id, result).unwrap();
    h.drain();
    let logs: Vec<&Value> =
        h.written.iter().filter(|m| m["method"] == "notifications/message").collect();
    assert_eq!(logs.len(), 1, "{:?}", h.written);
    assert_eq!(logs[0]["params"]["data"], "loud");
    let result = &h.answer("c")["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["content"][0]["text"], "hi");
    assert!(result.get("ttlMs").is_none(), "a call's result is not cached: {result}");
}

#[test]
fn a_request_without_a_log_level_gets_no_logs() {
    let mut h = Harness::new(modern_config());
    let Event::Call { id, .. } = h.call_echo("c", META) else { panic!("no call") };
    let now = h.now;
    h.server.log(now, Some(&id), LoggingLevel::Emergency, None, json!("x")).unwrap();
    h.drain();
    assert!(h.written.iter().all(|m| m["method"] != "notifications/message"), "{:?}", h.written);
}

#[test]
fn an_input_required_result_keeps_its_kind_and_gets_no_cache_hints() {
    let mut h = Harness::new(modern_config());
    h.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{{"uri":"test://static-text",{META}}}}}"#
    ));
    let Some(Event::Call { id, .. }) = h.events.pop() else { panic!("no call") };
    let input_required = json!({"resultType":"input_required","inputRequests":{}});
    let now = h.now;
    h.server.respond(now, id, Ok(RawJson::from(input_required))).unwrap();
    h.drain();
    let result = &h.answer("r")["result"];
    assert_eq!(result["resultType"], "input_required");
    assert!(result.get("ttlMs").is_none() && result.get("cacheScope").is_none(), "{result}");
}

#[test]
fn a_complete_resource_read_carries_the_cache_hints() {
    let mut h = Harness::new(modern_config());
    h.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{{"uri":"test://static-text",{META}}}}}"#
    ));
    let Some(Event::Call { id, handler, call, .. }) = h.events.pop() else { panic!("no call") };
    let now = h.now;
    h.server.respond(now, id, app(&handler, &call)).unwrap();
    h.drain();
    let result = &h.answer("r")["result"];
    assert_eq!(
        (result["resultType"].clone(), result["ttlMs"].clone()),
        (json!("complete"), json!(30_000))
    );
}

#[test]
fn invalid_arguments_answer_with_a_marked_error_result() {
    let mut h = Harness::new(modern_config());
    let params = format!(r#""name":"add","arguments":{{"a":"one"}},{META}"#);
    let result = h.request("a", "tools/call", &params)["result"].clone();
    assert_eq!(result["isError"], true);
    assert_eq!(result["resultType"], "complete");
}

#[test]
fn an_unsupported_revision_gets_32022_with_the_supported_list() {
    let mut h = Harness::new(modern_config());
    for (id, version) in [("u", "2099-01-01"), ("s", "2025-11-25")] {
        let meta = META.replace("2026-07-28", version);
        let error = h.request(id, "tools/list", &meta)["error"].clone();
        assert_eq!(error["code"], codes::UNSUPPORTED_PROTOCOL_VERSION, "{version}: {error}");
        assert_eq!(error["data"]["requested"], version);
        assert!(error["data"]["supported"].as_array().unwrap().contains(&json!("2026-07-28")));
    }
}

#[test]
fn missing_protocol_data_gets_invalid_params() {
    let mut h = Harness::new(modern_config());
    let no_caps = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
    let error = h.request("a", "tools/list", no_caps)["error"].clone();
    assert_eq!(error["code"], codes::INVALID_PARAMS, "{error}");
    assert!(error.to_string().contains("clientCapabilities"), "{error}");
    let error = h.request("b", "server/discover", "")["error"].clone();
    assert_eq!(error["code"], codes::INVALID_PARAMS, "{error}");
    let bad_level = META.replace(
        r#""io.modelcontextprotocol/clientInfo""#,
        r#""io.modelcontextprotocol/logLevel":"loud","io.modelcontextprotocol/clientInfo""#,
    );
    let error = h.request("c", "tools/list", &bad_level)["error"].clone();
    assert_eq!(error["code"], codes::INVALID_PARAMS, "{error}");
}

#[test]
fn methods_the_revision_removed_are_not_found() {
    let mut h = Harness::new(modern_config());
    for method in ["ping", "logging/setLevel", "resources/subscribe"] {
        let params = format!(r#""level":"info","uri":"test://static-text",{META}"#);
        let error = h.request(method, method, &params)["error"].clone();
        assert_eq!(error["code"], codes::METHOD_NOT_FOUND, "{method}: {error}");
    }
}

#[test]
fn an_unknown_resource_is_invalid_params_in_this_revision() {
    let mut h = Harness::new(modern_config());
    let params = format!(r#""uri":"test://nowhere",{META}"#);
    let error = h.request("r", "resources/read", &params)["error"].clone();
    assert_eq!(error["code"], codes::INVALID_PARAMS, "{error}");
}

#[test]
fn a_session_era_server_answers_modern_requests_as_before() {
    let mut h = Harness::new(server_config().session_era());
    let error = h.request("l", "tools/list", META)["error"].clone();
    assert_eq!(error["code"], codes::INVALID_REQUEST, "not initialized: {error}");
    let answer = h.request("d", "server/discover", META);
    // What a client's era ladder reads as "initialize first".
    assert!(answer.get("result").is_none(), "{answer}");
    assert_eq!(answer["error"]["code"], codes::INVALID_REQUEST, "{answer}");
}

#[test]
fn initialize_still_opens_the_session_era_on_the_same_stream() {
    let mut h = Harness::new(modern_config());
    assert_eq!(h.request("l", "tools/list", META)["result"]["resultType"], "complete");
    let init = r#""protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"1"}"#;
    let answer = h.request("i", "initialize", init);
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    h.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let result = h.request("m", "tools/list", META)["result"].clone();
    assert!(result.get("resultType").is_none(), "a session-era answer: {result}");
}

#[test]
fn structured_output_is_checked_in_this_revision_too() {
    let mut h = Harness::new(modern_config());
    h.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{{"name":"weather","arguments":{{"broken":true}},{META}}}}}"#
    ));
    let Some(Event::Call { id, handler, call, .. }) = h.events.pop() else { panic!("no call") };
    let now = h.now;
    h.server.respond(now, id, app(&handler, &call)).unwrap();
    h.drain();
    let result = &h.answer("w")["result"];
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["resultType"], "complete");
}

#[test]
fn members_are_added_only_where_absent_and_the_rest_is_kept_as_it_was() {
    let add = [("resultType", json!("complete")), ("ttlMs", json!(5))];
    let empty = RawJson::empty_object().with_members_if_absent(&add);
    assert_eq!(empty.get(), r#"{"resultType":"complete","ttlMs":5}"#);
    let spaced = RawJson::from_string(r#"  { "a" : [1, {"ttlMs": 9}] }"#.into()).unwrap();
    let spaced = spaced.with_members_if_absent(&add);
    let value: Value = serde_json::from_str(spaced.get()).unwrap();
    assert_eq!(value, json!({"resultType":"complete","ttlMs":5,"a":[1,{"ttlMs":9}]}));
    let kept = RawJson::from(json!({"resultType":"input_required"})).with_members_if_absent(&add);
    let value: Value = serde_json::from_str(kept.get()).unwrap();
    assert_eq!(value, json!({"resultType":"input_required","ttlMs":5}));
    let not_an_object = RawJson::from(json!([1])).with_members_if_absent(&add);
    assert_eq!(not_an_object.get(), "[1]");
}

#[test]
fn a_server_without_the_logging_capability_cannot_log_to_a_modern_request() {
    let mut config = modern_config();
    let tools_only = serde_json::from_value(json!({"tools": {}})).unwrap();
    config = config.capabilities(tools_only);
    let mut h = Harness::new(config);
    let meta = META.replace(
        r#""io.modelcontextprotocol/clientInfo""#,
        r#""io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/clientInfo""#,
    );
    h.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}},{meta}}}}}"#
    ));
    let Some(Event::Call { id, .. }) = h.events.pop() else { panic!("no call: {:?}", h.events) };
    let now = h.now;
    let refused = h.server.log(now, Some(&id), LoggingLevel::Error, None, json!("x"));
    assert!(
        matches!(refused, Err(zest_core::error::UsageError::CapabilityNotNegotiated { .. })),
        "{refused:?}"
    );
    h.drain();
    assert!(h.written.iter().all(|m| m["method"] != "notifications/message"), "{:?}", h.written);
}

mod rounds {
    use super::*;
    use zest_core::api::CallError;
    use zest_core::error::UsageError;
    use zest_core::jsonrpc::ErrorObject;
    use zest_core::server::{RequestStateConfig, RequestStateKey, Round};

    fn config(now: Instant) -> ServerConfig {
        let mut config = modern_config();
        let key = RequestStateKey::new([3; 32]);
        config.request_state = Some(RequestStateConfig::new(key, now, 1_800_000_000));
        config
    }

    fn elicit() -> RawJson {
        RawJson::from(json!({"message": "name?", "requestedSchema": {"type": "object"}}))
    }

    fn accepted(answer: &Value) -> bool {
        answer.get("action").is_some()
    }

    /// Sends a call of `echo` with `extra` params members; its id and round.
    fn call(
        h: &mut Harness,
        id: &str,
        extra: &str,
    ) -> (zest_core::jsonrpc::RequestId, std::sync::Arc<Round>) {
        h.send(&format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}},{extra}{META}}}}}"#
        ));
        let Some(Event::Call { id, context, .. }) = h.events.pop() else {
            panic!("no call: {:?} {:?}", h.events, h.written.last())
        };
        (id, context.round.expect("a 2026-07-28 call has a round"))
    }

    fn asked(result: Result<RawJson, CallError>) {
        assert!(
            matches!(result, Err(CallError::Usage(UsageError::InputRequired { .. }))),
            "{result:?}"
        );
    }

    #[test]
    fn a_call_asks_in_rounds_and_completes_with_every_answer_in_hand() {
        let mut h = Harness::new(config(VirtualClock::new().now()));
        let now = h.now;
        // Round 1: the run asks for a name and ends; whatever it returns is replaced.
        let (id, round) = call(&mut h, "1", "");
        asked(round.ask(Some("name"), "elicitation/create", &elicit(), accepted));
        h.server.respond(now, id, Err(ErrorObject::new(-1, "the run ended"))).unwrap();
        h.drain();
        let first = h.answer("1")["result"].clone();
        assert_eq!(first["resultType"], "input_required", "{first}");
        assert_eq!(first["inputRequests"]["name"]["method"], "elicitation/create");
        assert!(first.get("ttlMs").is_none(), "{first}");
        let state1 = first["requestState"].as_str().unwrap().to_owned();
        // Round 2: the name is in hand; a second question ends this run.
        let name = r#"{"action":"accept","content":{"name":"Alice"}}"#;
        let (id, round) = call(
            &mut h,
            "2",
            &format!(r#""inputResponses":{{"name":{name}}},"requestState":"{state1}","#),
        );
        assert!(round.resumed());
        assert!(round.ask(Some("name"), "elicitation/create", &elicit(), accepted).is_ok());
        asked(round.ask(Some("age"), "elicitation/create", &elicit(), accepted));
        h.server.respond(now, id, Err(ErrorObject::new(-1, "ended"))).unwrap();
        h.drain();
        let second = h.answer("2")["result"].clone();
        let state2 = second["requestState"].as_str().unwrap().to_owned();
        assert_ne!(state2, state1, "the state carries the new answer");
        assert_eq!(second["inputRequests"].as_object().unwrap().len(), 1, "{second}");
        // Round 3: the name comes from the state, the age from the retry.
        let age = r#"{"action":"accept","content":{"age":30}}"#;
        let (id, round) = call(
            &mut h,
            "3",
            &format!(r#""inputResponses":{{"age":{age}}},"requestState":"{state2}","#),
        );
        let got = round.ask(Some("name"), "elicitation/create", &elicit(), accepted).unwrap();
        assert_eq!(got.parse::<Value>().unwrap()["content"]["name"], "Alice");
        assert!(round.ask(Some("age"), "elicitation/create", &elicit(), accepted).is_ok());
        let done = RawJson::from(json!({"content": [{"type": "text", "text": "Alice, 30"}]}));
        h.server.respond(now, id, Ok(done)).unwrap();
        h.drain();
        let third = h.answer("3")["result"].clone();
        assert_eq!(third["resultType"], "complete", "{third}");
        assert_eq!(third["content"][0]["text"], "Alice, 30");
    }

    #[test]
    fn a_retry_answers_only_what_its_round_asked_and_changes_no_earlier_answer() {
        let mut h = Harness::new(config(VirtualClock::new().now()));
        let now = h.now;
        let (id, round) = call(&mut h, "1", "");
        asked(round.ask(Some("name"), "elicitation/create", &elicit(), accepted));
        h.server.respond(now, id, Err(ErrorObject::new(-1, "ended"))).unwrap();
        h.drain();
        let state1 = h.answer("1")["result"]["requestState"].as_str().unwrap().to_owned();
        // Round 2 also answers a question nobody asked yet: ignored.
        let responses = r#"{"name":{"action":"accept","content":{"name":"Ada"}},"confirm":{"action":"accept","content":{"ok":true}}}"#;
        let (id, round) = call(
            &mut h,
            "2",
            &format!(r#""inputResponses":{responses},"requestState":"{state1}","#),
        );
        assert!(round.ask(Some("name"), "elicitation/create", &elicit(), accepted).is_ok());
        asked(round.ask(Some("confirm"), "elicitation/create", &elicit(), accepted));
        h.server.respond(now, id, Err(ErrorObject::new(-1, "ended"))).unwrap();
        h.drain();
        let state2 = h.answer("2")["result"]["requestState"].as_str().unwrap().to_owned();
        // Round 3 tries to change the sealed name: the sealed one stands.
        let responses = r#"{"name":{"action":"accept","content":{"name":"Mallory"}},"confirm":{"action":"accept","content":{"ok":true}}}"#;
        let (_, round) = call(
            &mut h,
            "3",
            &format!(r#""inputResponses":{responses},"requestState":"{state2}","#),
        );
        let name = round.ask(Some("name"), "elicitation/create", &elicit(), accepted).unwrap();
        assert_eq!(name.parse::<Value>().unwrap()["content"]["name"], "Ada");
        assert!(round.ask(Some("confirm"), "elicitation/create", &elicit(), accepted).is_ok());
    }

    #[test]
    fn a_tampered_or_misplaced_state_is_refused_before_the_handler_runs() {
        let mut h = Harness::new(config(VirtualClock::new().now()));
        let now = h.now;
        let (id, round) = call(&mut h, "1", "");
        asked(round.ask(None, "elicitation/create", &elicit(), accepted));
        h.server.respond(now, id, Err(ErrorObject::new(-1, "ended"))).unwrap();
        h.drain();
        let state = h.answer("1")["result"]["requestState"].as_str().unwrap().to_owned();
        let tampered = format!("x{state}");
        for (id, extra, why) in [
            (
                "t",
                format!(r#""requestState":"{tampered}","#),
                "requestState failed its integrity check",
            ),
            ("n", r#""requestState":7,"#.to_owned(), "requestState must be a string"),
            ("r", r#""inputResponses":[1],"#.to_owned(), "inputResponses must be an object"),
        ] {
            h.send(&format!(
                r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}},{extra}{META}}}}}"#
            ));
            let error = &h.answer(id)["error"];
            assert_eq!(error["code"], codes::INVALID_PARAMS, "{error}");
            assert!(error["message"].as_str().unwrap().contains(why), "{error}");
        }
        // The same state on a call with other arguments belongs to another request.
        h.send(&format!(
            r#"{{"jsonrpc":"2.0","id":"o","method":"tools/call","params":{{"name":"echo","arguments":{{"text":"other"}},"requestState":"{state}",{META}}}}}"#
        ));
        assert!(h.answer("o")["error"]["message"].as_str().unwrap().contains("another request"));
        assert!(h.events.is_empty(), "no handler ran: {:?}", h.events);
    }

    #[test]
    fn state_sealed_for_one_principal_does_not_open_for_another() {
        use zest_core::auth::Principal;
        let mut h = Harness::new(config(VirtualClock::new().now()));
        let now = h.now;
        h.server.set_principal(std::sync::Arc::new(Principal::new("alice", ["mcp"])));
        let (id, round) = call(&mut h, "1", "");
        asked(round.ask(None, "elicitation/create", &elicit(), accepted));
        h.server.respond(now, id, Err(ErrorObject::new(-1, "ended"))).unwrap();
        h.drain();
        let state = h.answer("1")["result"]["requestState"].as_str().unwrap().to_owned();
        // Bob retries Alice's call with her state: it was sealed for another request.
        h.server.set_principal(std::sync::Arc::new(Principal::new("bob", ["mcp"])));
        h.send(&format!(
            r#"{{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}},"requestState":"{state}",{META}}}}}"#
        ));
        let error = &h.answer("b")["error"];
        assert_eq!(error["code"], codes::INVALID_PARAMS, "{error}");
        assert!(error["message"].as_str().unwrap().contains("another request"), "{error}");
        assert!(h.events.is_empty(), "no handler ran: {:?}", h.events);
        // Alice's own retry opens it.
        h.server.set_principal(std::sync::Arc::new(Principal::new("alice", ["mcp"])));
        let (_, round) = call(&mut h, "2", &format!(r#""requestState":"{state}","#));
        assert!(round.resumed(), "the state opened for its principal");
    }

    #[test]
    fn a_run_that_fails_for_want_of_a_client_capability_gets_32021() {
        let mut h = Harness::new(config(VirtualClock::new().now()));
        let now = h.now;
        let (id, round) = call(&mut h, "1", "");
        // META declares elicitation only.
        let sample = RawJson::from(json!({"messages": [], "maxTokens": 1}));
        assert!(round.ask(None, "sampling/createMessage", &sample, |_| true).is_err());
        h.server.respond(now, id, Err(ErrorObject::new(-1, "cannot go on"))).unwrap();
        h.drain();
        let error = &h.answer("1")["error"];
        assert_eq!(error["code"], codes::MISSING_REQUIRED_CLIENT_CAPABILITY, "{error}");
        assert!(error["data"]["requiredCapabilities"]["sampling"].is_object(), "{error}");
    }

    #[test]
    fn without_a_sealing_key_a_run_that_asks_is_an_internal_error() {
        let mut h = Harness::new(modern_config());
        let now = h.now;
        let (id, round) = call(&mut h, "1", "");
        asked(round.ask(None, "elicitation/create", &elicit(), accepted));
        h.server.respond(now, id, Err(ErrorObject::new(-1, "ended"))).unwrap();
        h.drain();
        assert_eq!(h.answer("1")["error"]["code"], codes::INTERNAL_ERROR);
    }
}

mod listen {
    use super::*;
    use zest_core::server::ListKind;

    fn listen(h: &mut Harness, id: &str, filter: &str) {
        h.send(&format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"subscriptions/listen","params":{{"notifications":{filter},{META}}}}}"#
        ));
    }

    fn tagged(h: &Harness, method: &str) -> Vec<Value> {
        let notes = h.written.iter().filter(|m| m["method"] == method);
        notes
            .map(|m| m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone())
            .collect()
    }

    #[test]
    fn a_listen_is_acknowledged_first_and_gets_only_what_it_asked_for_tagged() {
        let mut config = modern_config();
        config.announce_changes = true;
        let mut h = Harness::new(config);
        let now = h.now;
        listen(
            &mut h,
            "L",
            r#"{"toolsListChanged":true,"resourceSubscriptions":["test://static"],"bogus":1}"#,
        );
        let ack = &h.written[0];
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
        assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L");
        assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true);
        assert!(ack["params"]["notifications"].get("promptsListChanged").is_none(), "{ack}");
        assert!(h.written.iter().all(|m| m.get("id").is_none()), "no answer while it is open");
        h.server.notify_list_changed(now, ListKind::Tools);
        h.server.notify_list_changed(now, ListKind::Prompts);
        h.server.resource_updated(now, "test://static-text");
        h.server.resource_updated(now, "other://x");
        h.drain();
        assert_eq!(tagged(&h, "notifications/tools/list_changed"), [json!("L")]);
        assert!(tagged(&h, "notifications/prompts/list_changed").is_empty(), "not asked for");
        assert_eq!(tagged(&h, "notifications/resources/updated"), [json!("L")]);
        // The client ends it (over stdio, by cancelling): nothing more comes.
        h.send(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}"#,
        );
        h.server.notify_list_changed(now, ListKind::Tools);
        h.drain();
        assert_eq!(tagged(&h, "notifications/tools/list_changed").len(), 1);
    }

    #[test]
    fn a_server_that_announces_no_changes_acknowledges_nothing() {
        let mut config = modern_config();
        config.announce_changes = false;
        let mut h = Harness::new(config);
        listen(&mut h, "L", r#"{"toolsListChanged":true,"promptsListChanged":true}"#);
        assert_eq!(h.written[0]["params"]["notifications"], json!({}), "{:?}", h.written);
    }

    #[test]
    fn a_listen_without_a_filter_is_invalid_params() {
        let mut h = Harness::new(modern_config());
        h.send(&format!(
            r#"{{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{{{META}}}}}"#
        ));
        assert_eq!(h.answer("L")["error"]["code"], codes::INVALID_PARAMS);
    }
}

#[test]
fn each_request_is_served_with_the_client_its_own_meta_describes() {
    // The server reads an unchanged `_meta` once; a changed one is read again.
    let mut h = Harness::new(modern_config());
    let other = META.replace(r#""name":"modern""#, r#""name":"other""#);
    for (id, meta, name) in [("1", META, "modern"), ("2", &other, "other"), ("3", META, "modern")] {
        let Event::Call { context, .. } = h.call_echo(id, meta) else { panic!("no call {id}") };
        assert_eq!(context.session.expect("a client").client_info.name, name, "request {id}");
    }
}

#[test]
fn a_result_with_a_meta_of_its_own_keeps_it() {
    // Results without `_meta` get the server's info spliced in; one with it is left alone.
    let mut h = Harness::new(modern_config());
    let Event::Call { id, .. } = h.call_echo("m", META) else { panic!("no call") };
    let now = h.now;
    let own = json!({"content": [], "_meta": {"mine": 1}});
    h.server.respond(now, id, Ok(RawJson::from(own))).unwrap();
    h.drain();
    let result = &h.answer("m")["result"];
    assert_eq!(result["_meta"], json!({"mine": 1}));
    assert_eq!(result["resultType"], "complete");
}

#[test]
fn protocol_members_spelled_with_escapes_are_still_read() {
    // A key may be written with `\u` escapes; the quick search for a name must not miss it.
    let mut h = Harness::new(modern_config());
    let escaped = META.replacen(r#""_meta""#, r#""_m\u0065ta""#, 1);
    let answer = h.request("e", "tools/list", &escaped);
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    let own = RawJson::from_string(r#"{"r\u0065sultType":"input_required"}"#.into()).unwrap();
    let kept = own.with_members_if_absent(&[("resultType", json!("complete"))]);
    assert_eq!(kept.get(), r#"{"r\u0065sultType":"input_required"}"#, "no second member");
}
