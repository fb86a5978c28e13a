use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use serde_json::{json, Value};

use super::*;
use crate::jsonrpc::codes;
use crate::schema::{ElicitAction, EmptyParams};

fn now<T>(mut fut: BoxFuture<'static, T>) -> T {
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("the handler waited"),
    }
}

fn caps(value: Value) -> ClientCapabilities {
    serde_json::from_value(value).unwrap()
}

#[test]
fn nothing_is_declared_until_a_handler_or_policy_is_set() {
    let base = ClientCapabilities::default();
    assert_eq!(AsyncClientHandlers::default().capabilities(base.clone()), base);
    assert_eq!(SyncClientHandlers::default().capabilities(base.clone()), base);
    let violations_only = SyncClientHandlers::default().on_violation(|_| {});
    assert_eq!(violations_only.capabilities(base.clone()), base);
    let declared = |h: SyncClientHandlers| {
        serde_json::to_value(h.capabilities(ClientCapabilities::default())).unwrap()
    };
    let forms = SyncClientHandlers::default()
        .on_elicitation(|_| Ok(ElicitResult::new(ElicitAction::Cancel)));
    assert_eq!(declared(forms.clone()), json!({"elicitation": {}}), "no sampling without one");
    assert_eq!(
        declared(SyncClientHandlers::default().sampling_policy(SyncSamplingPolicy::deny())),
        json!({"sampling": {}})
    );
    let with_tools = SyncSamplingPolicy::deny().with_tools();
    assert_eq!(
        declared(SyncClientHandlers::default().sampling_policy(with_tools)),
        json!({"sampling": {"tools": {}}})
    );
    let url = forms.on_url_elicitation(|_| Ok(ElicitResult::new(ElicitAction::Decline)));
    assert_eq!(declared(url), json!({"elicitation": {"form": {}, "url": {}}}));
    let roots = SyncClientHandlers::default().roots(vec![]);
    assert_eq!(declared(roots), json!({"roots": {"listChanged": true}}));
    // The async handlers declare the same.
    let policy = AsyncSamplingPolicy::deny().with_tools();
    let a = AsyncClientHandlers::default().sampling_policy(policy).roots(vec![]);
    assert_eq!(
        serde_json::to_value(a.capabilities(ClientCapabilities::default())).unwrap(),
        json!({"sampling": {"tools": {}}, "roots": {"listChanged": true}})
    );
    // What the config already declares is kept.
    let base = caps(json!({"sampling": {"context": {}}}));
    let kept = SyncClientHandlers::default().on_sampling(|_| Err(ErrorObject::internal("x")));
    assert_eq!(kept.capabilities(base.clone()), base);
}

fn sampling_request(max_tokens: u64) -> ServerRequest {
    let params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": max_tokens
    });
    ServerRequest::CreateMessage(RawParams::new(Some(&RawJson::from(params))))
}

#[test]
fn the_handler_refuses_params_that_do_not_decode_with_invalid_params() {
    // The client hands sampling and elicitation on undecoded: the handler's decoding
    // answers a misfit -32602, as the machine did when it decoded them itself.
    let misfit = RawJson::from(json!({"messages": "not a list"}));
    let sampling = SyncClientHandlers::default().on_sampling(|_| panic!("never called"));
    let e = sampling.run(ServerRequest::CreateMessage(RawParams::new(Some(&misfit)))).unwrap_err();
    assert_eq!(e.code, -32602, "{e:?}");
    let elicitation = answering(accept(json!({})));
    let e = elicitation.run(ServerRequest::Elicit(RawParams::new(Some(&misfit)))).unwrap_err();
    assert_eq!(e.code, -32602, "{e:?}");
    let e = SyncClientHandlers::default().run(sampling_request(1)).unwrap_err();
    assert_eq!(e.code, -32601, "no handler: {e:?}");
}

#[test]
fn a_policy_refuses_through_run_before_its_delegate_is_called() {
    let delegated = Arc::new(AtomicUsize::new(0));
    let d = delegated.clone();
    let policy = SyncSamplingPolicy::reviewed(|_| true).max_tokens(100).delegate(move |_| {
        d.fetch_add(1, Ordering::SeqCst);
        Ok(CreateMessageResult::text("m", "ok"))
    });
    let handlers = SyncClientHandlers::default().sampling_policy(policy);
    let e = handlers.run(sampling_request(101)).unwrap_err();
    assert_eq!(e.code, codes::INVALID_PARAMS);
    assert_eq!(delegated.load(Ordering::SeqCst), 0);
    let ok = handlers.run(sampling_request(100)).unwrap();
    assert_eq!(ok.to_value().unwrap()["model"], "m");
    assert_eq!(delegated.load(Ordering::SeqCst), 1);
    let a = AsyncClientHandlers::default()
        .sampling_policy(AsyncSamplingPolicy::reviewed(|_| async { false }));
    assert_eq!(now(a.run(sampling_request(1))).unwrap_err().code, codes::USER_REJECTED);
}

/// The form server-everything sends, trimmed to one field of each shape.
fn form() -> ElicitFormParams {
    serde_json::from_value(json!({
        "message": "Please provide inputs",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 2},
                "check": {"type": "boolean"},
                "firstLine": {"type": "string", "default": "It was a dark and stormy night."},
                "email": {"type": "string", "format": "email"},
                "birthdate": {"type": "string", "format": "date"},
                "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
                "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 2.5},
                "untitled": {"type": "string", "enum": ["Monica", "Rachel"], "default": "Monica"},
                "untitledMulti": {"type": "array", "minItems": 1, "maxItems": 2,
                    "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]},
                    "default": ["Guitar"]},
                "titled": {"type": "string", "oneOf": [
                    {"const": "hero-1", "title": "Superman"},
                    {"const": "hero-2", "title": "Green Lantern"}], "default": "hero-1"},
                "titledMulti": {"type": "array", "minItems": 1, "maxItems": 2,
                    "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"},
                                        {"const": "fish-2", "title": "Salmon"}]},
                    "default": ["fish-1"]},
                "legacy": {"type": "string", "enum": ["pet-1", "pet-2"],
                    "enumNames": ["Cats", "Dogs"], "default": "pet-1"}
            },
            "required": ["name"]
        }
    }))
    .unwrap()
}

fn accept(content: Value) -> ElicitResult {
    serde_json::from_value(json!({"action": "accept", "content": content})).unwrap()
}

fn answering(answer: ElicitResult) -> SyncClientHandlers {
    SyncClientHandlers::default().on_elicitation(move |_| Ok(answer.clone()))
}

fn elicit(p: impl Into<ElicitParams>) -> ServerRequest {
    ServerRequest::Elicit(RawParams::from(&p.into()))
}

#[test]
fn defaults_fill_only_the_fields_the_answer_leaves_out() {
    let answer = accept(json!({"name": "Ada", "integer": 7, "untitledMulti": ["Piano", "Drums"]}));
    let sent = answering(answer).run(elicit(form())).unwrap().to_value().unwrap();
    assert_eq!(
        sent,
        json!({"action": "accept", "content": {
            "name": "Ada",
            "integer": 7,
            "untitledMulti": ["Piano", "Drums"],
            "firstLine": "It was a dark and stormy night.",
            "number": 2.5,
            "untitled": "Monica",
            "titled": "hero-1",
            "titledMulti": ["fish-1"],
            "legacy": "pet-1"
        }})
    );
    // An accept without content gets the defaults too (and then misses `name`).
    let mut bare = ElicitResult::new(ElicitAction::Accept);
    let why = complete_form_answer(&form(), &mut bare).unwrap_err();
    assert!(why.contains("name"), "{why}");
    assert_eq!(bare.content.as_ref().unwrap()["integer"], 42);
    // Decline and cancel are sent as they are.
    for action in [ElicitAction::Decline, ElicitAction::Cancel] {
        let sent = answering(ElicitResult::new(action)).run(elicit(form())).unwrap();
        assert!(sent.to_value().unwrap().get("content").is_none());
    }
}

#[test]
fn answers_that_do_not_fit_the_schema_are_refused() {
    for (bad, field) in [
        (json!({"name": "A"}), "name"),
        (json!({}), "name"),
        (json!({"name": "Ada", "check": "yes"}), "check"),
        (json!({"name": "Ada", "integer": 101}), "integer"),
        (json!({"name": "Ada", "integer": 1.5}), "integer"),
        (json!({"name": "Ada", "untitled": "Joey"}), "untitled"),
        (json!({"name": "Ada", "untitledMulti": []}), "untitledMulti"),
        (json!({"name": "Ada", "untitledMulti": ["Guitar", "Piano", "Drums"]}), "untitledMulti"),
        (json!({"name": "Ada", "untitledMulti": ["Banjo"]}), "untitledMulti"),
        (json!({"name": "Ada", "titled": "hero-9"}), "titled"),
        (json!({"name": "Ada", "titledMulti": ["fish-3"]}), "titledMulti"),
        (json!({"name": "Ada", "legacy": "Cats"}), "legacy"),
        (json!({"name": "Ada", "email": "not-an-email"}), "email"),
        (json!({"name": "Ada", "birthdate": "1815-13-10"}), "birthdate"),
        (json!({"name": "Ada", "favourite": "extra"}), "favourite"),
    ] {
        let e = answering(accept(bad.clone())).run(elicit(form())).unwrap_err();
        assert_eq!(e.code, codes::INTERNAL_ERROR, "{bad}");
        assert!(e.message.contains("does not fit the requested schema"), "{e}");
        assert!(e.message.contains(field), "{bad}: {e}");
    }
    let good = json!({"name": "Ada", "email": "ada@example.org", "birthdate": "1815-12-10",
                      "titledMulti": ["fish-1", "fish-2"]});
    answering(accept(good)).run(elicit(form())).unwrap();
    // The async handlers apply the same checks.
    let a = AsyncClientHandlers::default()
        .on_elicitation(|_| async { Ok(accept(json!({"name": "Ada", "check": 1}))) });
    assert_eq!(now(a.run(elicit(form()))).unwrap_err().code, codes::INTERNAL_ERROR);
}

#[test]
fn formats_are_checked_for_shape() {
    for (format, text, fits) in [
        ("email", "a@b.c", true),
        ("email", "a@", false),
        ("email", "a b@c", false),
        ("uri", "https://example.org/x", true),
        ("uri", "mailto:a@b.c", true),
        ("uri", "no scheme", false),
        ("uri", "1http://x", false),
        ("date", "2025-11-25", true),
        ("date", "2025-11-5", false),
        ("date-time", "2025-11-25T10:00:00Z", true),
        ("date-time", "2025-11-25T10:00:00.123+02:00", true),
        ("date-time", "2025-11-25 10:00:00Z", false),
        ("date-time", "2025-11-25T10:00Z", false),
    ] {
        assert_eq!(elicitation::fits_format(format, text), fits, "{format} {text}");
    }
}

fn url_request() -> ElicitUrlParams {
    serde_json::from_value(json!({"mode": "url", "message": "Sign in", "elicitationId": "e-1",
                                  "url": "https://example.org/connect"}))
    .unwrap()
}

#[test]
fn url_mode_goes_to_its_own_handler_and_undeclared_modes_get_32602() {
    // (The client machine refuses a mode the capabilities do not declare before any handler
    // runs; a form handler gets URL requests only when the config declares URL mode itself.)
    let e = SyncClientHandlers::default().run(elicit(url_request())).unwrap_err();
    assert_eq!(e.code, codes::INVALID_PARAMS);
    assert!(e.message.contains("url-mode"), "{e}");
    // A URL-mode answer never carries content.
    let forms_only = answering(accept(json!({"name": "Ada"})));
    let sent = forms_only.run(elicit(url_request())).unwrap().to_value().unwrap();
    assert_eq!(sent, json!({"action": "accept"}));
    let urls_only = SyncClientHandlers::default().on_url_elicitation(|p| {
        assert_eq!(p.url, "https://example.org/connect");
        Ok(ElicitResult::new(ElicitAction::Accept))
    });
    assert_eq!(
        urls_only.run(elicit(url_request())).unwrap().to_value().unwrap(),
        json!({"action": "accept"})
    );
    let e = urls_only.run(elicit(form())).unwrap_err();
    assert_eq!(e.code, codes::INVALID_PARAMS);
    assert!(e.message.contains("form-mode"), "{e}");
    let a = AsyncClientHandlers::default()
        .on_url_elicitation(|_| async { Ok(ElicitResult::new(ElicitAction::Decline)) });
    assert_eq!(now(a.run(elicit(url_request()))).unwrap().to_value().unwrap()["action"], "decline");
}

fn root(uri: &str) -> Root {
    serde_json::from_value(json!({"uri": uri})).unwrap()
}

#[test]
fn roots_come_from_the_apps_list_which_may_change() {
    let handlers = SyncClientHandlers::default().roots(vec![root("file:///work/a")]);
    let list = handlers.root_list().expect("a root list");
    let answer = || handlers.run(ServerRequest::ListRoots(EmptyParams::default())).unwrap();
    assert_eq!(answer().to_value().unwrap(), json!({"roots": [{"uri": "file:///work/a"}]}));
    list.set(vec![root("file:///work/b"), root("file:///work/c")]).unwrap();
    assert_eq!(answer().to_value().unwrap()["roots"][1]["uri"], "file:///work/c");
    for bad in ["https://example.org/", "file:///work/../etc", "file:///work/%2E%2E/etc"] {
        assert!(list.set(vec![root(bad)]).is_err(), "{bad}");
    }
    assert_eq!(list.get().len(), 2, "a refused list changes nothing");
    // An invalid root given at build time is refused when the server asks, not sent.
    let bad = AsyncClientHandlers::default().roots(vec![root("/no/scheme")]);
    let e = now(bad.run(ServerRequest::ListRoots(EmptyParams::default()))).unwrap_err();
    assert_eq!(e.code, codes::INTERNAL_ERROR);
    assert!(SyncClientHandlers::default()
        .on_roots(|| Ok(ListRootsResult::default()))
        .root_list()
        .is_none());
}
