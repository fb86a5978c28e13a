use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::*;

fn client(caps: Value) -> ClientCapabilities {
    serde_json::from_value(caps).unwrap()
}

fn params() -> RawJson {
    RawJson::from(json!({"message": "name?", "requestedSchema": {"type": "object"}}))
}

fn accepted(answer: &Value) -> bool {
    answer.get("action").is_some()
}

fn input_required(result: Result<RawJson, CallError>) -> String {
    match result {
        Err(CallError::Usage(UsageError::InputRequired { key })) => key,
        other => panic!("not input required: {other:?}"),
    }
}

#[test]
fn asks_without_an_answer_are_recorded_under_their_keys_and_end_the_run() {
    let round =
        Round::new(BTreeMap::new(), client(json!({"elicitation": {}, "sampling": {}})), false);
    assert_eq!(input_required(round.ask(None, "elicitation/create", &params(), accepted)), "ask-1");
    let named = round.ask(Some("capital"), "sampling/createMessage", &params(), accepted);
    assert_eq!(input_required(named), "capital");
    let RoundEnd::InputRequired { requests, used } = round.end() else { panic!("asked") };
    assert_eq!(requests["ask-1"]["method"], "elicitation/create");
    assert_eq!(requests["ask-1"]["params"]["message"], "name?");
    assert_eq!(requests["capital"]["method"], "sampling/createMessage");
    assert!(used.is_empty());
}

#[test]
fn an_answer_the_call_carries_is_read_and_carried_on() {
    let answer = json!({"action": "accept", "content": {"name": "Alice"}});
    let answers =
        BTreeMap::from([("ask-1".to_owned(), answer.clone()), ("extra".to_owned(), json!(1))]);
    let round = Round::new(answers, client(json!({"elicitation": {}})), true);
    assert!(round.resumed());
    let got = round.ask(None, "elicitation/create", &params(), accepted).unwrap();
    assert_eq!(got.parse::<Value>().unwrap(), answer);
    assert_eq!(input_required(round.ask(None, "elicitation/create", &params(), accepted)), "ask-2");
    let RoundEnd::InputRequired { used, .. } = round.end() else { panic!("asked") };
    assert_eq!(used, BTreeMap::from([("ask-1".to_owned(), answer)]), "unused keys are dropped");
}

#[test]
fn an_answer_of_the_wrong_shape_is_asked_for_again() {
    let answers = BTreeMap::from([("user_name".to_owned(), json!(12345))]);
    let round = Round::new(answers, client(json!({"elicitation": {}})), false);
    let again = round.ask(Some("user_name"), "elicitation/create", &params(), accepted);
    assert_eq!(input_required(again), "user_name");
}

#[test]
fn an_ask_the_client_cannot_answer_fails_and_is_reported_as_missing() {
    let round = Round::new(BTreeMap::new(), client(json!({"sampling": {}})), false);
    let refused = round.ask(None, "elicitation/create", &params(), accepted);
    assert!(matches!(
        refused,
        Err(CallError::Usage(UsageError::CapabilityNotNegotiated {
            capability: "elicitation",
            ..
        }))
    ));
    let ping = round.ask(None, "ping", &RawJson::empty_object(), |_| true);
    assert!(matches!(ping, Err(CallError::Usage(UsageError::MethodNotInVersion { .. }))));
    assert_eq!(round.end(), RoundEnd::MissingCapabilities(vec!["elicitation"]));
}

#[test]
fn a_run_that_asked_nothing_is_complete() {
    let round = Round::new(BTreeMap::new(), client(json!({})), false);
    assert_eq!(round.end(), RoundEnd::Complete);
}
