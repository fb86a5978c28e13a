use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::testkit::VirtualClock;

fn config(now: Instant) -> RequestStateConfig {
    RequestStateConfig::new(RequestStateKey::new([7; 32]), now, 1_800_000_000)
}

fn bound(name: &str) -> Binding {
    let params = RawJson::from(json!({"name": name, "arguments": {"x": 1},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}));
    Binding::new("tools/call", Some(&params), None)
}

fn answers() -> BTreeMap<String, Value> {
    BTreeMap::from([("user_name".to_owned(), json!({"action": "accept", "content": {"n": "A"}}))])
}

fn refusal(result: Result<Opened, Rejection>) -> String {
    match result {
        Err(Rejection::InvalidParams(why)) => why,
        Err(other) => panic!("not refused as invalid params: {other:?}"),
        Ok(opened) => panic!("accepted: {:?}", opened.answers),
    }
}

const KEY: &str = "next";

#[test]
fn a_sealed_state_opens_to_its_answers_on_a_retry_of_the_same_call() {
    let now = VirtualClock::new().now();
    let config = config(now);
    let state = config.seal(now, &bound("t"), &answers(), vec![&KEY.to_owned()]).unwrap();
    // The retry's own _meta, inputResponses and requestState do not change the binding.
    let retry = RawJson::from(json!({"arguments": {"x": 1}, "name": "t",
        "inputResponses": {"k": {}}, "requestState": state}));
    let opened = config.open(now, &Binding::new("tools/call", Some(&retry), None), &state).unwrap();
    assert_eq!(opened.answers, answers());
    assert_eq!(opened.asked, [KEY], "the keys the retry may answer");
    // Another process with the same key and clock accepts it too.
    let twin = config.clone();
    assert_eq!(twin.open(now, &bound("t"), &state).unwrap().answers, answers());
}

#[test]
fn a_tampered_state_fails_its_integrity_check() {
    let now = VirtualClock::new().now();
    let config = config(now);
    let state = config.seal(now, &bound("t"), &answers(), vec![&KEY.to_owned()]).unwrap();
    let (payload, tag) = state.split_once('.').unwrap();
    let forged_answers = BTreeMap::from([("user_name".to_owned(), json!("forged"))]);
    let forged = Payload {
        m: "tools/call".into(),
        d: bound("t").digest,
        exp: u64::MAX,
        a: &forged_answers,
        k: Vec::new(),
    };
    let forged = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&forged).unwrap());
    for bad in [format!("{forged}.{tag}"), format!("{payload}.{}", &tag[1..]), "junk".into()] {
        assert_eq!(
            refusal(config.open(now, &bound("t"), &bad)),
            "requestState failed its integrity check"
        );
    }
    let other_key = RequestStateConfig::new(RequestStateKey::new([8; 32]), now, 1_800_000_000);
    assert_eq!(
        refusal(other_key.open(now, &bound("t"), &state)),
        "requestState failed its integrity check"
    );
}

#[test]
fn a_state_replayed_past_its_age_or_on_another_call_is_refused() {
    let clock = VirtualClock::new();
    let start = clock.now();
    let config = config(start);
    let state = config.seal(start, &bound("t"), &answers(), Vec::new()).unwrap();
    assert_eq!(
        refusal(config.open(start, &bound("u"), &state)),
        "requestState was issued for another request"
    );
    let late = start + config.max_age + Duration::from_secs(1);
    assert_eq!(refusal(config.open(late, &bound("t"), &state)), "requestState has expired");
    assert!(config.open(start + config.max_age, &bound("t"), &state).is_ok(), "just in time");
}

#[test]
fn states_are_bounded_in_size_both_ways() {
    let now = VirtualClock::new().now();
    let mut config = config(now);
    config.max_bytes = 200;
    let big = BTreeMap::from([("k".to_owned(), json!("x".repeat(300)))]);
    assert!(matches!(config.seal(now, &bound("t"), &big, Vec::new()), Err(Rejection::Internal(_))));
    let oversized = "a".repeat(201);
    assert_eq!(
        refusal(config.open(now, &bound("t"), &oversized)),
        "requestState is larger than this server issues"
    );
}

#[test]
fn the_key_never_shows_in_debug_output() {
    let shown = format!("{:?}", config(VirtualClock::new().now()));
    assert!(shown.contains("<secret>") && !shown.contains("7, 7"), "{shown}");
}
