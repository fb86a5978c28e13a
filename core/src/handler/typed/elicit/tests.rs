use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::json;

use super::*;
use crate::error::UsageError;
use crate::jsonrpc::{RawJson, RequestId};
use crate::runtime::{CancelFlag, PeerCall, Report};

/// A blocking-style link that keeps the params of the last peer request and answers with a
/// canned result.
#[derive(Clone)]
struct Canned {
    sent: Arc<Mutex<Option<Value>>>,
    answer: Value,
}

impl Link for Canned {
    type Reply<'a, T: 'a> = T;
    type Server = ();

    fn server(&self) -> &() {
        &()
    }

    fn report(&self, _: Report) -> Result<(), UsageError> {
        Ok(())
    }

    fn peer_request(&self, call: PeerCall) -> Result<RawJson, CallError> {
        *self.sent.lock().unwrap() = Some(call.params.to_value().unwrap());
        Ok(RawJson::from_serialize(&self.answer))
    }

    fn ready<'a, T: Send + 'a, U: 'a>(value: T, f: fn(T) -> U) -> U {
        f(value)
    }

    fn map<'a, T: 'a, U: 'a>(reply: T, f: fn(T) -> U) -> U {
        f(reply)
    }
}

fn ask<T: DeserializeOwned + JsonSchema + 'static>(
    answer: Value,
) -> (Result<Elicited<T>, CallError>, Value) {
    let link = Canned { sent: Arc::default(), answer };
    let ctx = RequestContext::new(RequestId::Number(1), CancelFlag::new(), link.clone());
    let outcome = ctx.elicit_as::<T>("Delete everything?");
    let sent = link.sent.lock().unwrap().take().unwrap();
    (outcome, sent)
}

#[derive(Debug, Deserialize, PartialEq, JsonSchema)]
struct Confirm {
    /// Really?
    ok: bool,
    /// Why, if you like.
    reason: Option<String>,
    level: Level,
}

#[derive(Debug, Deserialize, PartialEq, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Level {
    Low,
    High,
}

#[test]
fn the_form_is_the_types_fields_and_the_answer_is_the_type() {
    let answer = json!({"action": "accept", "content": {"ok": true, "level": "high"}});
    let (outcome, sent) = ask::<Confirm>(answer);
    assert_eq!(
        outcome.unwrap(),
        Elicited::Accept(Confirm { ok: true, reason: None, level: Level::High })
    );
    assert_eq!(sent["message"], "Delete everything?");
    let schema = &sent["requestedSchema"];
    assert_eq!(schema["properties"]["ok"], json!({"type": "boolean", "description": "Really?"}));
    assert_eq!(schema["properties"]["reason"]["type"], "string", "an Option is optional");
    assert_eq!(schema["properties"]["level"]["enum"], json!(["low", "high"]));
    assert_eq!(schema["required"], json!(["ok", "level"]));
}

#[test]
fn decline_and_cancel_carry_no_answer() {
    let (declined, _) = ask::<Confirm>(json!({"action": "decline"}));
    assert_eq!(declined.unwrap(), Elicited::Decline);
    let (cancelled, _) = ask::<Confirm>(json!({"action": "cancel"}));
    assert_eq!(cancelled.unwrap(), Elicited::Cancel);
}

#[test]
fn an_answer_that_does_not_match_the_form_is_an_invalid_result_naming_the_field() {
    let answer = json!({"action": "accept", "content": {"ok": "yes", "level": "high"}});
    let (outcome, _) = ask::<Confirm>(answer);
    let Err(CallError::Request(RequestError::InvalidResult(message))) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(message.contains("/ok"), "{message}");
}

#[derive(Deserialize, JsonSchema)]
struct Nested {
    _inner: Confirm,
}

#[test]
fn a_nested_type_cannot_be_a_form() {
    let e = ElicitFormParams::for_type::<Nested>("x").unwrap_err();
    assert!(e.contains("_inner"), "{e}");
}
