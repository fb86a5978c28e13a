use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::methods::*;
use super::*;
use crate::jsonrpc::RequestId;

/// Decodes `json` as `T`, re-encodes it, and checks nothing changed; returns the typed value.
#[track_caller]
fn round_trip<T: Serialize + DeserializeOwned>(json: &Value) -> T {
    let typed: T = serde_json::from_value(json.clone())
        .unwrap_or_else(|e| panic!("decode {}: {e}\n{json:#}", std::any::type_name::<T>()));
    let back = serde_json::to_value(&typed).expect("schema types serialize");
    assert_eq!(&back, json, "round trip of {}", std::any::type_name::<T>());
    typed
}

/// Round-trips a request's params and result through the method's types.
#[track_caller]
fn request<M: Method>(params: &Value, result: &Value) -> (M::Params, M::Result) {
    (round_trip::<M::Params>(params), round_trip::<M::Result>(result))
}

/// Round-trips a notification's params through the method's type.
#[track_caller]
fn notification<M: NotificationMethod>(params: &Value) -> M::Params {
    round_trip::<M::Params>(params)
}

#[test]
fn initialize_2025_11_25() {
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "roots": {"listChanged": true},
            "sampling": {"context": {}, "tools": {}},
            "elicitation": {"form": {}, "url": {}},
            "tasks": {"list": {}, "cancel": {}},
            "experimental": {"x.example/thing": {"on": true}}
        },
        "clientInfo": {
            "name": "example-client",
            "title": "Example Client",
            "version": "1.0.0",
            "description": "A client",
            "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png",
                       "sizes": ["48x48"], "theme": "dark"}],
            "websiteUrl": "https://example.com"
        },
        "_meta": {"progressToken": "init-1"}
    });
    let result = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "logging": {},
            "completions": {},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "tools": {"listChanged": true},
            "tasks": {"requests": {"tools": {"call": {}}}}
        },
        "serverInfo": {"name": "example-server", "version": "2.0.0"},
        "instructions": "Use the tools wisely."
    });
    let (p, r) = request::<Initialize>(&params, &result);
    assert_eq!(p.known_version(), Some(ProtocolVersion::V2025_11_25));
    assert!(p.capabilities.elicitation.as_ref().is_some_and(|e| e.supports_url()));
    assert!(p.capabilities.extra.contains_key("tasks"));
    assert_eq!(progress_token(p.meta.as_ref()), Some(RequestId::from("init-1")));
    assert_eq!(r.capabilities.resources.and_then(|c| c.subscribe), Some(true));
    assert_eq!(r.server_info, Implementation::new("example-server", "2.0.0"));
}

#[test]
fn initialize_2024_11_05_and_unknown_version() {
    let params = json!({
        "protocolVersion": "2024-11-05",
        "capabilities": {"sampling": {}, "roots": {}},
        "clientInfo": {"name": "old", "version": "0.1"}
    });
    let result = json!({
        "protocolVersion": "2024-11-05",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "old-server", "version": "0.1"}
    });
    request::<Initialize>(&params, &result);

    let future: InitializeParams = round_trip(&json!({
        "protocolVersion": "2099-01-01",
        "capabilities": {},
        "clientInfo": {"name": "new", "version": "9"}
    }));
    assert_eq!(future.protocol_version, "2099-01-01");
    assert_eq!(future.known_version(), None);
}

#[test]
fn ping_and_empty_params() {
    let (p, _) = request::<Ping>(&json!({}), &json!({}));
    assert_eq!(p, EmptyParams::default());
    request::<Ping>(&json!({"_meta": {"progressToken": 7}}), &json!({"_meta": {"k": 1}}));
    notification::<Initialized>(&json!({}));
    let p = notification::<Initialized>(&json!({"_meta": {"note": "hi"}, "x-extra": 1}));
    assert_eq!(p.extra.get("x-extra"), Some(&json!(1)));
}

#[test]
fn tools_list() {
    let params = json!({"cursor": "page-2"});
    let result = json!({
        "tools": [
            {
                "name": "get_weather",
                "title": "Weather",
                "description": "Current weather for a city",
                "inputSchema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                    "additionalProperties": false
                },
                "outputSchema": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": {"celsius": {"type": "number"}}
                },
                "annotations": {"title": "Weather lookup", "readOnlyHint": true,
                                "openWorldHint": true},
                "execution": {"taskSupport": "optional"},
                "icons": [{"src": "data:image/png;base64,AAAA"}],
                "_meta": {"example.com/owner": "team-a"}
            },
            {"name": "noop", "inputSchema": {"type": "object"}}
        ],
        "nextCursor": "page-3"
    });
    let (p, r) = request::<ListTools>(&params, &result);
    assert_eq!(p.cursor.as_deref(), Some("page-2"));
    assert_eq!(r.tools[0].annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
    assert!(r.tools[0].extra.contains_key("execution"));
    assert_eq!(r.tools[1].input_schema, ObjectSchema::default());
}

#[test]
fn tools_call() {
    let params = json!({
        "name": "get_weather",
        "arguments": {"city": "Paris", "days": 3},
        "task": {"ttl": 60000},
        "_meta": {"progressToken": 42}
    });
    let result = json!({
        "content": [
            {"type": "text", "text": "{\"celsius\":21.5}"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png",
             "annotations": {"audience": ["user"], "priority": 0.5}},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///tmp/report.txt", "name": "report",
             "mimeType": "text/plain", "size": 2048},
            {"type": "resource", "resource": {"uri": "file:///tmp/a.bin", "blob": "AAEC",
             "mimeType": "application/octet-stream"},
             "annotations": {"priority": 1, "lastModified": "2025-01-12T15:00:58Z"}}
        ],
        "structuredContent": {"celsius": 21.5},
        "isError": false
    });
    let (p, r) = request::<CallTool>(&params, &result);
    assert_eq!(progress_token(p.meta.as_ref()), Some(RequestId::Number(42)));
    assert!(p.extra.contains_key("task"));
    assert!(matches!(r.content[3], ContentBlock::ResourceLink(ref l) if l.size == Some(2048)));
    assert!(matches!(r.content[4], ContentBlock::Resource(ref e)
        if matches!(e.resource, ResourceContents::Blob(_))));
    assert!(!r.is_error());
}

#[test]
fn resources_family() {
    let list = json!({
        "resources": [{
            "uri": "file:///project/src/main.rs", "name": "main.rs", "title": "Main",
            "description": "Entry point", "mimeType": "text/x-rust", "size": 1024,
            "annotations": {"audience": ["user", "assistant"], "priority": 0.8},
            "icons": [{"src": "https://example.com/rs.svg", "mimeType": "image/svg+xml",
                       "sizes": ["any"], "theme": "light"}]
        }],
        "nextCursor": "n"
    });
    request::<ListResources>(&json!({}), &list);

    let templates = json!({
        "resourceTemplates": [{
            "uriTemplate": "file:///{path}", "name": "files", "mimeType": "text/plain"
        }]
    });
    request::<ListResourceTemplates>(&json!({"cursor": "c"}), &templates);

    let read = json!({
        "contents": [
            {"uri": "file:///project/src/main.rs", "mimeType": "text/x-rust",
             "text": "fn main() {}", "_meta": {"k": "v"}},
            {"uri": "file:///project/logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}
        ]
    });
    let (_, r) = request::<ReadResource>(&json!({"uri": "file:///project/src/main.rs"}), &read);
    assert!(matches!(r.contents[0], ResourceContents::Text(ref t) if t.text == "fn main() {}"));
    assert_eq!(r.contents[1].uri(), "file:///project/logo.png");

    request::<Subscribe>(&json!({"uri": "file:///project/src/main.rs"}), &json!({}));
    request::<Unsubscribe>(&json!({"uri": "file:///project/src/main.rs"}), &json!({}));
    notification::<ResourceUpdated>(&json!({"uri": "file:///project/src/main.rs"}));
    notification::<ResourceListChanged>(&json!({}));
}

#[test]
fn prompts_family() {
    let list = json!({
        "prompts": [{
            "name": "code_review", "title": "Request Code Review",
            "description": "Asks the model to review code",
            "arguments": [{"name": "code", "title": "Code", "description": "The code",
                           "required": true}],
            "icons": [{"src": "https://example.com/p.png"}]
        }]
    });
    request::<ListPrompts>(&json!({}), &list);

    let params = json!({"name": "code_review", "arguments": {"code": "def hello(): pass"}});
    let result = json!({
        "description": "Code review prompt",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Please review this code"}},
            {"role": "assistant", "content": {"type": "resource", "resource": {
                "uri": "resource://example", "mimeType": "text/plain", "text": "Resource"}}}
        ]
    });
    let (p, r) = request::<GetPrompt>(&params, &result);
    assert_eq!(p.arguments.unwrap()["code"], "def hello(): pass");
    assert_eq!(r.messages[0].content.as_text(), Some("Please review this code"));
    notification::<PromptListChanged>(&json!({}));
}

#[test]
fn completion() {
    let prompt_ref = json!({
        "ref": {"type": "ref/prompt", "name": "code_review"},
        "argument": {"name": "language", "value": "py"}
    });
    let result = json!({
        "completion": {"values": ["python", "pytorch", "pyside"], "total": 10, "hasMore": true}
    });
    let (p, _) = request::<Complete>(&prompt_ref, &result);
    assert_eq!(p.reference, Reference::prompt("code_review"));

    let resource_ref = json!({
        "ref": {"type": "ref/resource", "uri": "file:///{path}"},
        "argument": {"name": "path", "value": "src/"},
        "context": {"arguments": {"owner": "me"}},
        "_meta": {"progressToken": "c1"}
    });
    let (p, _) = request::<Complete>(&resource_ref, &json!({"completion": {"values": []}}));
    assert_eq!(p.reference, Reference::resource("file:///{path}"));

    let err = serde_json::from_value::<CompleteParams>(json!({
        "ref": {"type": "ref/unknown"}, "argument": {"name": "a", "value": "b"}
    }));
    assert!(err.is_err());
}

#[test]
fn logging() {
    let (p, _) = request::<SetLevel>(&json!({"level": "warning"}), &json!({}));
    assert_eq!(p, SetLevelParams::new(LoggingLevel::Warning));
    let m = notification::<LoggingMessage>(&json!({
        "level": "error", "logger": "database",
        "data": {"error": "Connection failed", "details": {"host": "localhost", "port": 5432}}
    }));
    assert_eq!(m.level, LoggingLevel::Error);
    assert!(serde_json::from_value::<SetLevelParams>(json!({"level": "loud"})).is_err());
}

#[test]
fn logging_levels_are_ordered_by_severity() {
    use LoggingLevel as L;
    let mut shuffled = [L::Alert, L::Debug, L::Emergency, L::Warning, L::Info];
    shuffled.sort();
    assert_eq!(shuffled, [L::Debug, L::Info, L::Warning, L::Alert, L::Emergency]);
    assert!(L::ALL.windows(2).all(|w| w[0] < w[1]));
    for level in L::ALL {
        assert_eq!(serde_json::to_value(level).unwrap(), json!(level.as_str()));
        assert_eq!(L::parse(level.as_str()), Some(level));
    }
}

#[test]
fn sampling_2024_shape() {
    let params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
        "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}], "intelligencePriority": 0.8,
                             "speedPriority": 0.5, "costPriority": 0},
        "systemPrompt": "You are a helpful assistant.",
        "includeContext": "thisServer",
        "temperature": 0.7,
        "maxTokens": 100,
        "stopSequences": ["\n\n"],
        "metadata": {"provider": {"x": 1}}
    });
    let result = json!({
        "role": "assistant",
        "content": {"type": "text", "text": "The capital of France is Paris."},
        "model": "claude-3-sonnet-20240307",
        "stopReason": "endTurn"
    });
    let (p, r) = request::<CreateMessage>(&params, &result);
    assert_eq!(p.include_context, Some(IncludeContext::ThisServer));
    assert!(matches!(p.messages[0].content, SamplingContents::Single(_)));
    assert_eq!(r.stop_reason, Some(StopReason::EndTurn));
}

#[test]
fn sampling_with_tools_2025_11_25() {
    let params = json!({
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_1", "name": "get_weather",
                 "input": {"city": "Paris"}, "_meta": {"cache": "a"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "toolUseId": "call_1",
                 "content": [{"type": "text", "text": "21C"}],
                 "structuredContent": {"celsius": 21}, "isError": false}
            ], "_meta": {"turn": 3}}
        ],
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object",
                   "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
        "toolChoice": {"mode": "required"},
        "maxTokens": 1000,
        "task": {"ttl": 30000}
    });
    let result = json!({
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "call_2", "name": "get_weather", "input": {"city": "Lyon"}}
        ],
        "model": "some-model",
        "stopReason": "toolUse"
    });
    let (p, r) = request::<CreateMessage>(&params, &result);
    assert!(matches!(p.messages[1].content, SamplingContents::Multiple(ref v) if v.len() == 1));
    assert!(matches!(p.messages[2].content.as_slice()[0], SamplingContent::ToolResult(ref t)
        if t.tool_use_id == "call_1"));
    assert_eq!(p.tool_choice.and_then(|c| c.mode), Some(ToolChoiceMode::Required));
    assert_eq!(r.content.as_slice().len(), 2);
    assert_eq!(r.stop_reason, Some(StopReason::ToolUse));

    let custom: CreateMessageResult = round_trip(&json!({
        "role": "assistant", "content": {"type": "text", "text": "x"},
        "model": "m", "stopReason": "contentFilter"
    }));
    assert_eq!(custom.stop_reason, Some(StopReason::Other("contentFilter".into())));
}

#[test]
fn elicitation_form_without_mode_is_form() {
    let params = json!({
        "message": "Please provide your GitHub username",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}},
            "required": ["name"]
        }
    });
    let result = json!({"action": "accept", "content": {"name": "octocat"}});
    let (p, r) = request::<Elicit>(&params, &result);
    let ElicitParams::Form(form) = &p else { panic!("absent mode must be form: {p:?}") };
    assert_eq!(form.mode, None);
    assert_eq!(form.requested_schema.properties["name"].min_length, Some(1));
    assert_eq!(r.action, ElicitAction::Accept);

    // An explicit "form" is kept, and so is a null mode read as form.
    let explicit = json!({"mode": "form", "message": "m",
                          "requestedSchema": {"type": "object", "properties": {}}});
    let p: ElicitParams = round_trip(&explicit);
    assert!(matches!(p, ElicitParams::Form(ElicitFormParams { mode: Some(FormMode::Form), .. })));
}

#[test]
fn elicitation_every_primitive_schema() {
    let params = json!({
        "mode": "form",
        "message": "Profile",
        "requestedSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email", "title": "Email",
                          "default": "a@example.com"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
                "ratio": {"type": "number", "minimum": 0.5},
                "subscribe": {"type": "boolean", "default": true},
                "color": {"type": "string", "enum": ["red", "green"]},
                "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"},
                                                     {"const": "l", "title": "Large"}]},
                "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
                "tags": {"type": "array", "minItems": 1, "maxItems": 2,
                         "items": {"type": "string", "enum": ["x", "y"]}, "default": ["x"]},
                "titled_tags": {"type": "array",
                                "items": {"anyOf": [{"const": "x", "title": "Ex"}]}}
            },
            "required": ["email"]
        }
    });
    let result = json!({"action": "accept", "content": {
        "email": "a@example.com", "age": 30, "subscribe": true, "tags": ["x", "y"]}});
    let (p, _) = request::<Elicit>(&params, &result);
    let ElicitParams::Form(form) = p else { panic!("form expected") };
    let props = &form.requested_schema.properties;
    assert_eq!(props["age"].maximum, Some(150.0));
    assert_eq!(props["size"].one_of.as_ref().map(|o| o[1].value.as_str()), Some("l"));
    assert_eq!(props["color"], PrimitiveSchema::enumeration(["red", "green"]));
}

#[test]
fn elicitation_url_mode_and_completion() {
    let params = json!({
        "mode": "url",
        "elicitationId": "550e8400-e29b-41d4-a716-446655440000",
        "url": "https://mcp.example.com/ui/set_api_key",
        "message": "Please provide your API key to continue."
    });
    let (p, _) = request::<Elicit>(&params, &json!({"action": "accept"}));
    assert!(matches!(p, ElicitParams::Url(ref u) if u.elicitation_id.starts_with("550e")));
    assert_eq!(p.message(), "Please provide your API key to continue.");
    request::<Elicit>(&params, &json!({"action": "decline"}));
    request::<Elicit>(&params, &json!({"action": "cancel", "_meta": {"why": "closed"}}));

    let done = notification::<ElicitationComplete>(
        &json!({"elicitationId": "550e8400-e29b-41d4-a716-446655440000"}),
    );
    assert_eq!(done.elicitation_id, "550e8400-e29b-41d4-a716-446655440000");

    let bad = serde_json::from_value::<ElicitParams>(json!({"mode": "carrier-pigeon",
                                                             "message": "m"}));
    assert!(bad.unwrap_err().to_string().contains("carrier-pigeon"));
}

#[test]
fn roots() {
    let result = json!({"roots": [
        {"uri": "file:///home/user/projects/myproject", "name": "My Project"},
        {"uri": "file:///home/user/repo", "_meta": {"vcs": "git"}}
    ]});
    let (_, r) = request::<ListRoots>(&json!({}), &result);
    assert_eq!(r.roots[1].name, None);
    notification::<RootsListChanged>(&json!({}));
}

#[test]
fn progress_and_cancellation() {
    // Integer progress from JavaScript peers must come back as integers.
    let p = notification::<Progress>(&json!({
        "progressToken": "abc123", "progress": 50, "total": 100, "message": "Reticulating splines..."
    }));
    assert_eq!(p.progress, 50.0);
    let p = notification::<Progress>(&json!({"progressToken": 7, "progress": 0.25}));
    assert_eq!(p.progress_token, RequestId::Number(7));

    let c = notification::<Cancelled>(&json!({"requestId": "123", "reason": "User requested"}));
    assert_eq!(c.request_id, Some(RequestId::from("123")));
    let c = notification::<Cancelled>(&json!({"requestId": 5}));
    assert_eq!(c, CancelledParams::new(RequestId::Number(5), None));
    notification::<Cancelled>(&json!({"reason": "task-era notice without id"}));
    notification::<ToolListChanged>(&json!({}));
}

#[test]
fn unknown_fields_survive_at_every_level() {
    let result = json!({
        "content": [{
            "type": "resource",
            "resource": {"uri": "u", "text": "t", "x-contents": [1, 2]},
            "annotations": {"priority": 0.1, "x-annotation": true},
            "x-block": {"deep": {"deeper": null}}
        }],
        "x-top": "kept",
        "_meta": {"x-meta": 1}
    });
    let r: CallToolResult = round_trip(&result);
    let ContentBlock::Resource(block) = &r.content[0] else { panic!("resource block") };
    assert!(block.extra.contains_key("x-block"));
    assert!(!block.extra.contains_key("type"), "the tag is not an unknown field");
    assert!(block.annotations.as_ref().unwrap().extra.contains_key("x-annotation"));
    let ResourceContents::Text(text) = &block.resource else { panic!("text contents") };
    assert!(text.extra.contains_key("x-contents"));
    assert_eq!(r.extra["x-top"], "kept");

    let caps = json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {"roots": {"listChanged": false, "x-roots": 1},
                         "elicitation": {}, "x-cap": {"a": [true]}},
        "clientInfo": {"name": "c", "version": "1", "x-info": "i"},
        "x-params": 0
    });
    round_trip::<InitializeParams>(&caps);

    round_trip::<CompleteParams>(&json!({
        "ref": {"type": "ref/prompt", "name": "p", "title": "P", "x-ref": 1},
        "argument": {"name": "a", "value": "b", "x-arg": 2},
        "context": {"arguments": {}, "x-ctx": 3}
    }));
    round_trip::<CreateMessageParams>(&json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi", "x-c": 1},
                      "x-msg": 2}],
        "modelPreferences": {"hints": [{"name": "a", "x-hint": 3}], "x-pref": 4},
        "toolChoice": {"x-choice": 5},
        "maxTokens": 1
    }));
}

#[test]
fn unknown_content_types_survive() {
    let result = json!({
        "content": [
            {"type": "video", "url": "https://example.com/v.mp4", "annotations": {"x": 1}},
            {"no_type": true},
            "not even an object"
        ]
    });
    let r: CallToolResult = round_trip(&result);
    assert!(r.content.iter().all(|b| matches!(b, ContentBlock::Unknown(_))));

    // Resource links are not sampling content; they pass through as unknown there.
    let msg: SamplingMessage = round_trip(&json!({
        "role": "user",
        "content": [{"type": "resource_link", "uri": "u", "name": "n"},
                    {"type": "thinking", "text": "hmm"}]
    }));
    assert!(msg.content.as_slice().iter().all(|b| matches!(b, SamplingContent::Unknown(_))));
}

#[test]
fn known_content_type_with_missing_fields_is_an_error() {
    assert!(serde_json::from_value::<ContentBlock>(json!({"type": "text"})).is_err());
    assert!(serde_json::from_value::<ContentBlock>(json!({"type": "image", "data": "x"})).is_err());
    assert!(serde_json::from_value::<ResourceContents>(json!({"uri": "u"})).is_err());
}

#[test]
fn structured_result_also_carries_text() {
    let value = json!({"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65});
    let r = CallToolResult::structured(value.clone());
    assert_eq!(r.structured_content.as_ref(), Some(&value));
    assert_eq!(r.content.len(), 1);
    let text = r.content[0].as_text().expect("a text block");
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), value);
    assert_eq!(r.is_error, None);

    assert_eq!(
        serde_json::to_value(CallToolResult::text("ok")).unwrap(),
        json!({"content": [{"type": "text", "text": "ok"}]})
    );
    assert_eq!(
        serde_json::to_value(CallToolResult::error_text("boom")).unwrap(),
        json!({"content": [{"type": "text", "text": "boom"}], "isError": true})
    );
}

#[test]
fn progress_token_helpers() {
    assert_eq!(progress_token(None), None);
    let mut meta = None;
    set_progress_token(&mut meta, RequestId::Number(3));
    assert_eq!(progress_token(meta.as_ref()), Some(RequestId::Number(3)));
    set_progress_token(&mut meta, RequestId::from("t"));
    assert_eq!(meta.as_ref().unwrap()["progressToken"], json!("t"));
    let bad: Meta = serde_json::from_value(json!({"progressToken": 1.5})).unwrap();
    assert_eq!(progress_token(Some(&bad)), None);
}

#[test]
fn elicitation_capability_modes() {
    let caps = |v: Value| serde_json::from_value::<ElicitationCapability>(v).unwrap();
    assert!(caps(json!({})).supports_form() && !caps(json!({})).supports_url());
    assert!(!caps(json!({"url": {}})).supports_form());
    let both = caps(json!({"form": {}, "url": {}}));
    assert!(both.supports_form() && both.supports_url());
}

#[test]
fn method_names_match_the_spec() {
    let requests = [
        (Initialize::NAME, "initialize"),
        (Ping::NAME, "ping"),
        (ListTools::NAME, "tools/list"),
        (CallTool::NAME, "tools/call"),
        (ListResources::NAME, "resources/list"),
        (ListResourceTemplates::NAME, "resources/templates/list"),
        (ReadResource::NAME, "resources/read"),
        (Subscribe::NAME, "resources/subscribe"),
        (Unsubscribe::NAME, "resources/unsubscribe"),
        (ListPrompts::NAME, "prompts/list"),
        (GetPrompt::NAME, "prompts/get"),
        (Complete::NAME, "completion/complete"),
        (SetLevel::NAME, "logging/setLevel"),
        (CreateMessage::NAME, "sampling/createMessage"),
        (Elicit::NAME, "elicitation/create"),
        (ListRoots::NAME, "roots/list"),
        (Initialized::NAME, "notifications/initialized"),
        (Cancelled::NAME, "notifications/cancelled"),
        (Progress::NAME, "notifications/progress"),
        (LoggingMessage::NAME, "notifications/message"),
        (ResourceUpdated::NAME, "notifications/resources/updated"),
        (ResourceListChanged::NAME, "notifications/resources/list_changed"),
        (ToolListChanged::NAME, "notifications/tools/list_changed"),
        (PromptListChanged::NAME, "notifications/prompts/list_changed"),
        (RootsListChanged::NAME, "notifications/roots/list_changed"),
        (ElicitationComplete::NAME, "notifications/elicitation/complete"),
    ];
    for (got, want) in requests {
        assert_eq!(got, want);
    }
}

#[test]
fn an_unknown_icon_theme_or_missing_content_does_not_fail_the_result() {
    let tool: Tool = serde_json::from_value(serde_json::json!({
        "name": "t", "inputSchema": {"type": "object"},
        "icons": [{"src": "https://example.invalid/i.png", "theme": "sepia"}]
    }))
    .unwrap();
    assert_eq!(tool.icons.unwrap()[0].theme, None);
    let result: CallToolResult =
        serde_json::from_value(serde_json::json!({"isError": false})).unwrap();
    assert!(result.content.is_empty());
}

#[test]
fn tool_try_new_keeps_every_keyword_of_an_object_schema() {
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": false,
        "$defs": {"unit": {"enum": ["c", "f"]}}
    });
    let tool = Tool::try_new("weather", "Reports the weather", schema.clone()).unwrap();
    assert_eq!(serde_json::to_value(&tool.input_schema).unwrap(), schema);
    assert_eq!(tool, Tool::new("weather", "Reports the weather", schema.clone()));
    let out = json!({"type": "object", "properties": {"temp": {"type": "number"}}});
    let tool = tool.try_with_output_schema(out.clone()).unwrap();
    assert_eq!(serde_json::to_value(tool.output_schema.unwrap()).unwrap(), out);
}

#[test]
fn tool_try_new_refuses_what_is_not_an_object_schema_instead_of_replacing_it() {
    let refuse = |schema: Value| Tool::try_new("t", "d", schema).unwrap_err();
    assert_eq!(refuse(json!(null)), ObjectSchemaError::NotAnObject);
    assert_eq!(refuse(json!(["type", "object"])), ObjectSchemaError::NotAnObject);
    // The properties would have been lost to a silent `{"type": "object"}` before.
    let untyped = refuse(json!({"properties": {"a": {"type": "string"}}}));
    assert_eq!(untyped, ObjectSchemaError::RootNotObject { found: None });
    assert_eq!(untyped.to_string(), "the schema has no root type; it must be \"object\"");
    let string = refuse(json!({"type": "string"}));
    assert_eq!(string, ObjectSchemaError::RootNotObject { found: Some(json!("string")) });
    assert_eq!(string.to_string(), "the schema's root type is \"string\", not \"object\"");
    assert!(matches!(
        refuse(json!({"type": ["object", "null"]})),
        ObjectSchemaError::RootNotObject { .. }
    ));
    let ObjectSchemaError::Unusable(e) =
        refuse(json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/nowhere"}}}))
    else {
        panic!("a dangling $ref is unusable")
    };
    assert_eq!(e.path, "/properties/a/$ref");
    let unusable = refuse(json!({"type": "object", "required": "a"}));
    assert_eq!(
        unusable.to_string(),
        "the schema cannot be applied: /required: required must be an array of strings"
    );
    let out = Tool::new("t", "d", json!({"type": "object"})).try_with_output_schema(json!(true));
    assert_eq!(out.unwrap_err(), ObjectSchemaError::NotAnObject);
}

#[test]
#[should_panic(expected = "invalid inputSchema for tool \"bad\": the schema has no root type")]
fn tool_new_panics_on_a_malformed_schema_literal() {
    let _ = Tool::new("bad", "no type", json!({}));
}

#[test]
#[should_panic(expected = "invalid outputSchema for tool \"t\": the schema's root type is")]
fn with_output_schema_panics_on_a_malformed_schema_literal() {
    let _ = Tool::new("t", "d", json!({"type": "object"})).with_output_schema(json!({"type": 1}));
}
