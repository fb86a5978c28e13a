use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use serde_json::{json, Value};

use super::*;
use crate::jsonrpc::codes;

fn params(value: Value) -> CreateMessageParams {
    serde_json::from_value(value).unwrap()
}

/// A request with text everywhere a server can put it, including tool turns.
fn rich() -> Value {
    json!({
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "secret-user-question-about-payroll"}},
            {"role": "assistant", "content": [
                {"type": "text", "text": "secret-assistant-reply-calling-tools"},
                {"type": "tool_use", "id": "secret-call-id-17", "name": "secret_tool_name",
                 "input": {"query": "secret-tool-input-value"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "toolUseId": "secret-call-id-17",
                 "content": [{"type": "text", "text": "secret-tool-output-text"}]}
            ]},
            {"role": "user", "content": {"type": "image", "data": "c2VjcmV0LWltYWdlLWJ5dGVz",
                                         "mimeType": "image/x-secret-format"}},
            {"role": "user", "content": {"type": "audio", "data": "c2VjcmV0LWF1ZGlvLWJ5dGVz",
                                         "mimeType": "audio/x-secret-format"}}
        ],
        "systemPrompt": "secret-system-prompt-text",
        "stopSequences": ["secret-stop-sequence"],
        "metadata": {"secret-metadata-key": "secret-metadata-value"},
        "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}]},
        "tools": [{"name": "secret_tool_name", "description": "secret-tool-description",
                   "inputSchema": {"type": "object"}}],
        "maxTokens": 100
    })
}

/// Every string in `value`, keys included, except the values of `type` and `role` (the
/// spec's own vocabulary, which a summary names on purpose).
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                if !(k == "type" || k == "role") {
                    strings(v, out);
                }
            }
        }
        _ => {}
    }
}

#[test]
fn the_summary_holds_no_string_of_the_messages_prompt_tools_or_metadata() {
    let request = rich();
    let summary = SamplingSummary::of(&params(request.clone()));
    let shown = format!("{summary:?}\n{summary}");
    let mut secrets = Vec::new();
    for key in ["messages", "systemPrompt", "stopSequences", "metadata", "tools"] {
        strings(&request[key], &mut secrets);
    }
    // Field names of the schema (`text`, `data`, `input` …) are not secrets.
    secrets.retain(|s| s.contains("secret"));
    assert!(secrets.len() >= 15, "{secrets:?}");
    for secret in &secrets {
        assert!(!shown.contains(secret.as_str()), "{secret:?} leaked into {shown}");
    }
    // What it does hold.
    assert_eq!(summary.model_hints, ["claude-3-sonnet"]);
    assert_eq!((summary.max_tokens, summary.message_count(), summary.tools), (100, 5, 1));
    assert!(summary.system_prompt);
    let kinds: Vec<_> = summary.messages.iter().map(|m| (m.role, m.kinds.clone())).collect();
    use ContentKind::*;
    assert_eq!(
        kinds,
        [
            (Role::User, vec![Text]),
            (Role::Assistant, vec![Text, ToolUse]),
            (Role::User, vec![ToolResult]),
            (Role::User, vec![Image]),
            (Role::User, vec![Audio]),
        ]
    );
    assert!(shown.contains("sha256 "), "{shown}");
}

#[test]
fn the_digest_is_sha256_of_the_canonical_request_whatever_the_key_order() {
    let a = params(json!({
        "maxTokens": 10,
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "metadata": {"b": 1, "a": [true, null, "x"]}
    }));
    let canonical = r#"{"maxTokens":10,"messages":[{"content":{"text":"hi","type":"text"},"role":"user"}],"metadata":{"a":[true,null,"x"],"b":1}}"#;
    let expected: String =
        Sha256::digest(canonical.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(SamplingSummary::of(&a).sha256, expected);
    let reordered = params(json!({
        "metadata": {"a": [true, null, "x"], "b": 1},
        "messages": [{"content": {"text": "hi", "type": "text"}, "role": "user"}],
        "maxTokens": 10
    }));
    assert_eq!(SamplingSummary::of(&reordered).sha256, expected);
    let changed = params(json!({
        "maxTokens": 10,
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi!"}}],
        "metadata": {"b": 1, "a": [true, null, "x"]}
    }));
    assert_ne!(SamplingSummary::of(&changed).sha256, expected);
}

/// A policy whose reviewer approves, counting who was called.
struct Counted {
    reviewed: Arc<AtomicUsize>,
    delegated: Arc<AtomicUsize>,
}

impl Counted {
    fn new() -> Self {
        Self { reviewed: Arc::default(), delegated: Arc::default() }
    }

    fn sync(&self, approve: bool) -> SyncSamplingPolicy {
        let (r, d) = (self.reviewed.clone(), self.delegated.clone());
        SyncSamplingPolicy::reviewed(move |_| {
            r.fetch_add(1, Ordering::SeqCst);
            approve
        })
        .delegate(move |p| {
            d.fetch_add(1, Ordering::SeqCst);
            Ok(CreateMessageResult::text("claude-3-sonnet", format!("{}", p.messages.len())))
        })
    }

    fn asynchronous(&self, approve: bool) -> AsyncSamplingPolicy {
        let (r, d) = (self.reviewed.clone(), self.delegated.clone());
        AsyncSamplingPolicy::reviewed(move |_| {
            r.fetch_add(1, Ordering::SeqCst);
            async move { approve }
        })
        .delegate(move |p| {
            d.fetch_add(1, Ordering::SeqCst);
            async move { Ok(CreateMessageResult::text("m", format!("{}", p.messages.len()))) }
        })
    }

    fn calls(&self) -> (usize, usize) {
        (self.reviewed.load(Ordering::SeqCst), self.delegated.load(Ordering::SeqCst))
    }
}

/// Polls a future that never waits (every future here is ready at once).
fn now<T>(fut: BoxFuture<'static, T>) -> T {
    let mut fut = fut;
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("the policy's future waited"),
    }
}

fn simple(max_tokens: u64, hints: &[&str]) -> CreateMessageParams {
    let hints: Vec<Value> = hints.iter().map(|h| json!({"name": h})).collect();
    params(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}],
        "modelPreferences": {"hints": hints},
        "maxTokens": max_tokens
    }))
}

#[test]
fn over_the_token_limit_or_outside_the_allowlist_reaches_neither_reviewer_nor_delegate() {
    for asynchronous in [false, true] {
        let counted = Counted::new();
        let run = |p: CreateMessageParams| {
            if asynchronous {
                now(counted
                    .asynchronous(true)
                    .max_tokens(1024)
                    .models(["claude-*", "gpt-4o"])
                    .run(p))
            } else {
                counted.sync(true).max_tokens(1024).models(["claude-*", "gpt-4o"]).run(p)
            }
        };
        let e = run(simple(5000, &["claude-3-sonnet"])).unwrap_err();
        assert_eq!(e.code, codes::INVALID_PARAMS);
        assert!(e.message.contains("maxTokens 5000 exceeds this client's limit of 1024"), "{e}");
        let e = run(simple(100, &["llama-3", "sonnet"])).unwrap_err();
        assert_eq!(e.code, codes::INVALID_PARAMS);
        assert!(e.message.contains("none of the requested models (llama-3, sonnet)"), "{e}");
        assert!(e.message.contains("allowed: claude-*, gpt-4o"), "{e}");
        assert_eq!(counted.calls(), (0, 0), "refused requests were seen");
        // Within the limits: reviewed, then delegated.
        run(simple(1024, &["llama-3", "gpt-4o"])).unwrap();
        run(simple(10, &[])).unwrap();
        assert_eq!(counted.calls(), (2, 2));
    }
}

#[test]
fn deny_mode_and_a_refusing_reviewer_answer_minus_one_without_the_delegate() {
    let counted = Counted::new();
    let e = counted.sync(false).run(simple(10, &[])).unwrap_err();
    assert_eq!((e.code, e.message.as_str()), (-1, "the user rejected the sampling request"));
    assert_eq!(counted.calls(), (1, 0));
    let e = now(counted.asynchronous(false).run(simple(10, &[]))).unwrap_err();
    assert_eq!(e.code, codes::USER_REJECTED);
    assert_eq!(counted.calls(), (2, 0));
    assert_eq!(SyncSamplingPolicy::deny().run(simple(10, &[])).unwrap_err().code, -1);
    assert_eq!(now(AsyncSamplingPolicy::deny().run(simple(10, &[]))).unwrap_err().code, -1);
    // Approved without a delegate: an internal error, not a made-up answer.
    let e = SyncSamplingPolicy::reviewed(|_| true).run(simple(10, &[])).unwrap_err();
    assert_eq!(e.code, codes::INTERNAL_ERROR);
}

#[test]
fn sampling_with_tools_goes_through_the_same_policy() {
    let counted = Counted::new();
    let e = counted.sync(true).run(params(rich())).unwrap_err();
    assert_eq!(e.code, codes::INVALID_PARAMS);
    assert!(e.message.contains("sampling.tools"), "{e}");
    assert_eq!(counted.calls(), (0, 0));
    let policy = counted.sync(true).with_tools().max_tokens(50);
    assert!(policy.capability().tools.is_some());
    assert!(counted.sync(true).capability().tools.is_none());
    assert_eq!(policy.run(params(rich())).unwrap_err().code, codes::INVALID_PARAMS, "100 > 50");
    counted.sync(true).with_tools().run(params(rich())).unwrap();
    assert_eq!(counted.calls(), (1, 1));
    // The tool-turn rules: an unanswered tool_use, a tool_result mixed with text.
    let mut unanswered = rich();
    unanswered["messages"][2]["content"][0]["toolUseId"] = json!("another-id");
    let mut mixed = rich();
    mixed["messages"][2]["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "text", "text": "x"}));
    for bad in [unanswered, mixed] {
        let e = counted.sync(true).with_tools().run(params(bad)).unwrap_err();
        assert_eq!(e.code, codes::INVALID_PARAMS, "{e}");
    }
    assert_eq!(counted.calls(), (1, 1));
}

#[test]
fn model_patterns_match_whole_names_with_stars() {
    for (pattern, name, fits) in [
        ("gpt-4o", "gpt-4o", true),
        ("gpt-4o", "gpt-4o-mini", false),
        ("claude-*", "claude-3-sonnet", true),
        ("claude-*", "claude-", true),
        ("claude-*", "sonnet", false),
        ("*sonnet*", "claude-3-sonnet-2024", true),
        ("*", "", true),
        ("a*b*c", "axxbyyc", true),
        ("a*b*c", "axxbyy", false),
        ("ab*ba", "aba", false),
    ] {
        assert_eq!(glob(pattern, name), fits, "{pattern} ~ {name}");
    }
}
