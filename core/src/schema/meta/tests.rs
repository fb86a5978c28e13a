use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::Meta;
use crate::schema::{progress_token, CallToolParams, CallToolResult};

fn map_of(text: &str) -> Map<String, Value> {
    serde_json::from_str(text).unwrap()
}

#[test]
fn a_received_meta_is_kept_as_text_until_read() {
    let text =
        r#"{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"n":[1,2.5,-3]}"#;
    let result: CallToolResult =
        serde_json::from_str(&format!(r#"{{"content":[],"_meta":{text}}}"#)).unwrap();
    let meta = result.meta.unwrap();
    assert!(meta.0.map.get().is_none(), "built before it was read");
    assert_eq!(meta.0.text.as_deref(), Some(text));
    assert_eq!(*meta, map_of(text));
    assert!(meta.0.map.get().is_some());
}

#[test]
fn reads_as_the_map_would_whatever_the_text() {
    let deep = format!("{}1{}", "[".repeat(99), "]".repeat(99));
    let texts = [
        "{}".to_owned(),
        r#"{"a":{"b":[true,false,null,"x\"y\\z"]},"c":1.5e3,"d":"\u00e9\ud83d\ude00"}"#.to_owned(),
        r#"{"k":"v","k":"last"}"#.to_owned(),
        r#"{"c":1.5e3,"d":[1E2,-0.5],"e":"1e9 in a string"}"#.to_owned(),
        r#"{"big":123456789012345678901234567890}"#.to_owned(),
        format!(r#"{{"deep":{deep}}}"#),
    ];
    for text in &texts {
        let meta: Meta = serde_json::from_str(text).unwrap();
        assert_eq!(*meta, map_of(text), "{text}");
        let from_value: Meta = serde_json::from_value(serde_json::from_str(text).unwrap()).unwrap();
        assert_eq!(meta, from_value, "{text}");
        assert_eq!(serde_json::to_value(&meta).unwrap(), Value::Object(map_of(text)));
    }
}

#[test]
fn what_the_map_refuses_is_refused_when_decoded() {
    let deep = format!("{}1{}", "[".repeat(140), "]".repeat(140));
    let refused = [
        r#"{"a":"\ud800"}"#.to_owned(),
        r#"{"a":1e400}"#.to_owned(),
        format!(r#"{{"a":{}}}"#, "9".repeat(400)),
        format!(r#"{{"a":{deep}}}"#),
    ];
    for text in &refused {
        assert!(serde_json::from_str::<Map<String, Value>>(text).is_err(), "{text}");
        assert!(serde_json::from_str::<Meta>(text).is_err(), "{text}");
    }
    for not_an_object in ["5", r#""text""#, "[1]", "true"] {
        let params = format!(r#"{{"name":"t","_meta":{not_an_object}}}"#);
        let err = serde_json::from_str::<CallToolParams>(&params).unwrap_err();
        assert!(err.to_string().contains("expected a map"), "{err}");
    }
    let params: CallToolParams = serde_json::from_str(r#"{"name":"t","_meta":null}"#).unwrap();
    assert!(params.meta.is_none());
}

#[test]
fn a_change_is_what_is_written() {
    let mut meta: Meta = serde_json::from_str(r#"{"a":1}"#).unwrap();
    meta.insert("b".into(), json!(2));
    assert!(meta.0.text.is_none());
    assert_eq!(serde_json::to_string(&meta).unwrap(), r#"{"a":1,"b":2}"#);
    assert_eq!(meta.clone().into_map(), map_of(r#"{"a":1,"b":2}"#));
    let built: Meta = [("a".to_owned(), json!(1))].into_iter().collect();
    assert_eq!(built, Meta::from(map_of(r#"{"a":1}"#)));
}

#[test]
fn decoders_that_hand_over_members_are_taken_too() {
    // `flatten` and untagged enums buffer a value before handing it on.
    #[derive(Deserialize)]
    struct Outer {
        #[serde(flatten)]
        inner: Inner,
    }
    #[derive(Deserialize)]
    struct Inner {
        #[serde(rename = "_meta")]
        meta: Meta,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Meta { _meta: Meta },
    }
    let outer: Outer = serde_json::from_str(r#"{"_meta":{"a":[1]}}"#).unwrap();
    assert_eq!(*outer.inner.meta, map_of(r#"{"a":[1]}"#));
    let Either::Meta { _meta } = serde_json::from_str(r#"{"_meta":{"b":2}}"#).unwrap();
    assert_eq!(*_meta, map_of(r#"{"b":2}"#));
}

#[test]
fn a_progress_token_is_found_without_building_a_meta_that_has_none() {
    let none: Meta = serde_json::from_str(r#"{"io.modelcontextprotocol/clientInfo":{}}"#).unwrap();
    assert_eq!(progress_token(Some(&none)), None);
    assert!(none.0.map.get().is_none());
    let some: Meta = serde_json::from_str(r#"{"progressToken":"t-1"}"#).unwrap();
    assert_eq!(progress_token(Some(&some)), Some("t-1".into()));
}

#[test]
fn an_optional_meta_is_one_pointer_wide() {
    assert_eq!(size_of::<Option<Meta>>(), size_of::<usize>());
}

#[test]
fn a_text_left_open_or_unbalanced_is_never_kept() {
    assert!(super::surely_parses(br#"{"a":[1,{"b":"}"}]}"#));
    assert!(!super::surely_parses(br#"{"a":"#));
    assert!(!super::surely_parses(br#"{"a":"open"#));
    assert!(!super::surely_parses(br#"{"a":[1}"#));
    // Handed over under serde_json's raw-value name by a deserializer that is not serde_json:
    // refused when the map would refuse it, not kept and read as an empty map.
    let entry = (super::RAW_VALUE_KEY, r#"{"a":"#);
    let handed = serde::de::value::MapDeserializer::<_, serde::de::value::Error>::new(
        std::iter::once(entry),
    );
    assert!(Meta::deserialize(handed).is_err());
}

#[test]
fn reads_as_a_map_in_every_way() {
    let meta: Meta = serde_json::from_str(r#"{"a":1,"b":2}"#).unwrap();
    let keys: Vec<&String> = (&meta).into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["a", "b"]);
    assert_eq!(map_of(r#"{"a":1,"b":2}"#), meta);
    assert_eq!(meta.into_iter().count(), 2);
}
