use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::describe;

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Call {
    name: String,
    count: u32,
    #[serde(default)]
    items: Vec<Item>,
    #[serde(default)]
    kind: Option<Kind>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Item {
    text: String,
    #[serde(default)]
    tags: Vec<u8>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Text,
    Image,
}

/// What the path-tracking parse says about `text` (the message this module must match).
fn tracked<T: DeserializeOwned + std::fmt::Debug>(text: &str) -> String {
    let mut de = serde_json::Deserializer::from_str(text);
    let e = serde_path_to_error::deserialize::<_, T>(&mut de).expect_err("the case fails");
    match e.path().to_string() {
        root if root == "." => e.into_inner().to_string(),
        path => format!("{path}: {}", e.into_inner()),
    }
}

fn scanned<T: DeserializeOwned + std::fmt::Debug>(text: &str) -> String {
    let e = serde_json::from_str::<T>(text).expect_err("the case fails");
    describe(text, &e)
}

#[test]
fn the_scanned_path_is_the_tracked_one() {
    let cases = [
        r#"{"name": 1, "count": 2}"#,
        r#"{"name": "a", "count": "two"}"#,
        r#"{"name": "a"}"#,
        r#"{"count": 1}"#,
        r#"{"name": "a", "count": 1, "items": [{"text": "x"}, {"text": 5}]}"#,
        r#"{"name": "a", "count": 1, "items": [{"text": "x"}, {}]}"#,
        r#"{"name": "a", "count": 1, "items": [{"text": "x", "tags": [1, 2, 300]}]}"#,
        r#"{"name": "a", "count": 1, "items": {"text": "x"}}"#,
        r#"{"name": "a", "count": 1, "kind": "video"}"#,
        r#"{"name": "a", "count": 1, "kind": 3, "items": []}"#,
        r#"{"na\"me": 1, "name": "a", "count": -1}"#,
        "{\n  \"name\": \"a\",\n  \"count\": 1,\n  \"items\": [\n    {\"text\": [\"x\"]}\n  ]\n}",
        r#"{"name": "a,]}{[", "count": 1, "items": [{"text": "\\\"", "tags": ["q"]}]}"#,
        r#"[1, 2]"#,
        r#""text""#,
        r#"{"name": "a", "count": 4294967296}"#,
    ];
    for case in cases {
        assert_eq!(scanned::<Call>(case), tracked::<Call>(case), "for {case}");
    }
}

#[test]
fn sequences_name_their_elements_and_their_length() {
    for case in [r#"[[1, 2], [3, "x"]]"#, r#"[[1, 2], [3]]"#, r#"[[1, 2], {}]"#] {
        assert_eq!(scanned::<Vec<(u8, u8)>>(case), tracked::<Vec<(u8, u8)>>(case), "for {case}");
    }
}

#[test]
fn a_failure_deep_in_a_member_is_named_by_its_path() {
    let text =
        r#"{"name": "a", "count": 1, "items": [{"text": "x"}, {"text": "y", "tags": [1, "z"]}]}"#;
    let message = scanned::<Call>(text);
    assert!(message.starts_with("items[1].tags[1]: invalid type: string \"z\""), "{message}");
}

#[test]
fn the_protocol_types_name_the_same_paths() {
    use crate::schema::CallToolResult;
    use crate::schema::InitializeParams;
    let init = [
        r#"{"protocolVersion": 1, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}"#,
        r#"{"protocolVersion": "x", "capabilities": {"roots": 5}, "clientInfo": {"name": "c", "version": "1"}}"#,
        r#"{"protocolVersion": "x", "capabilities": {}, "clientInfo": {"version": "1"}}"#,
    ];
    for case in init {
        assert_eq!(scanned::<InitializeParams>(case), tracked::<InitializeParams>(case));
    }
    let result = r#"{"content": [{"type": "text", "text": "a"}, {"type": "image", "data": 1}]}"#;
    assert_eq!(scanned::<CallToolResult>(result), tracked::<CallToolResult>(result));
}

#[test]
fn a_value_read_ahead_as_a_whole_is_named_by_its_member() {
    use crate::schema::CallToolResult;
    let cases = [
        r#"{"content": [{"type": "text", "text": "a"}, {"type": "image", "data": 1}]}"#,
        r#"{"content": [{"type": "image", "data": 1}, {"type": "text", "text": "a"}]}"#,
        r#"{"content": [{"type": "text", "text": 1}], "isError": false}"#,
        r#"{"content": [{"type": "text"}], "isError": false}"#,
        r#"{"isError": "no", "content": []}"#,
        r#"{"content": [{"type": "resource", "resource": {"uri": 5, "text": "t"}}]}"#,
        r#"{"content": [{"type": "text"}, {"type": "text", "text": "a"}]}"#,
    ];
    for case in cases {
        assert_eq!(scanned::<CallToolResult>(case), tracked::<CallToolResult>(case), "for {case}");
    }
}

#[test]
fn a_value_read_ahead_inside_an_object_is_named_by_its_key() {
    use crate::schema::CreateMessageParams;
    let case = r#"{"messages": [{"content": {"text": 5, "type": "text"}, "role": "user"}], "maxTokens": 1}"#;
    let tracked = tracked::<CreateMessageParams>(case);
    assert_eq!(scanned::<CreateMessageParams>(case), tracked);
    assert!(tracked.starts_with("messages[0].content: "), "{tracked}");
}

#[test]
fn a_position_inside_a_character_is_no_panic() {
    // A lone surrogate escape: serde_json reports a position within the `é` after it.
    let text = "{\"name\": \"\\ud800\u{e9}\", \"count\": 1}";
    let message = scanned::<Call>(text);
    assert!(message.starts_with("name: "), "{message}");
}
