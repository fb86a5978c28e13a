use super::*;

fn single(text: &str) -> Message {
    match decode(text.as_bytes()) {
        Ok(Frame::Single(m)) => m,
        other => panic!("expected one message from {text}, got {other:?}"),
    }
}

fn invalid(text: &str) -> (Option<RequestId>, InvalidReason) {
    match decode(text.as_bytes()) {
        Err(DecodeError::InvalidRequest { id, reason }) => (id, reason),
        other => panic!("expected InvalidRequest from {text}, got {other:?}"),
    }
}

#[test]
fn decodes_the_four_shapes() {
    let r = single(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}}"#);
    let Message::Request(r) = r else { panic!() };
    assert_eq!(r.id, RequestId::Number(7));
    assert_eq!(r.method, "tools/list");
    assert_eq!(r.params.unwrap().get(), r#"{"cursor":"x"}"#);

    let n = single(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(matches!(n, Message::Notification(Notification { params: None, .. })));

    let ok = single(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#);
    assert_eq!(ok, Message::result(RequestId::from("a"), RawJson::empty_object()));

    let err = single(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}}"#);
    assert_eq!(err, Message::error(Some(RequestId::Number(3)), ErrorObject::new(-32601, "nope")));
}

#[test]
fn string_and_number_ids_stay_distinct() {
    let a = single(r#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#);
    let b = single(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert_ne!(a, b);
    assert_eq!(
        String::from_utf8(a.to_vec()).unwrap(),
        r#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#
    );
}

#[test]
fn error_responses_may_lack_an_id_or_carry_null() {
    for text in [
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
    ] {
        let Message::Response(r) = single(text) else { panic!() };
        assert_eq!(r.id, None);
        assert_eq!(r.outcome.unwrap_err().code, codes::PARSE_ERROR);
    }
}

#[test]
fn malformed_json_is_a_parse_error_32700() {
    let e = decode(br#"{"jsonrpc":"2.0","id":1,"method":"#).unwrap_err();
    assert!(matches!(e, DecodeError::Parse { .. }), "{e:?}");
    assert_eq!(e.to_error_object().code, codes::PARSE_ERROR);
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    let e = decode(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}").unwrap_err();
    assert_eq!(e, DecodeError::InvalidUtf8);
    assert_eq!(e.to_error_object().code, codes::PARSE_ERROR);
}

#[test]
fn json_that_is_not_jsonrpc_is_invalid_request_32600() {
    assert!(matches!(invalid("42").1, InvalidReason::NotAnObject(_)));
    assert_eq!(invalid(r#"{"hello":"world","jsonrpc":"2.0"}"#).1, InvalidReason::MissingMember);
    assert_eq!(invalid(r#"{"jsonrpc":"2.0","result":{}}"#).1, InvalidReason::MissingId);
    let e = decode(br#"{"foo":1}"#).unwrap_err();
    assert_eq!(e.to_error_object().code, codes::INVALID_REQUEST);
}

#[test]
fn wrong_or_missing_version_is_rejected_with_the_id_kept() {
    let (id, reason) = invalid(r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#);
    assert_eq!((id, reason), (Some(RequestId::Number(9)), InvalidReason::WrongVersion));
    assert_eq!(invalid(r#"{"id":9,"method":"ping"}"#).1, InvalidReason::WrongVersion);
}

#[test]
fn null_fractional_and_huge_ids_are_invalid() {
    for id in ["null", "1.5", "1e3", "18446744073709551616", "{}", "true"] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        assert_eq!(invalid(&text).1, InvalidReason::InvalidId, "id {id}");
    }
}

#[test]
fn mixed_shapes_and_scalar_params_are_invalid() {
    let (id, r) =
        invalid(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#);
    assert_eq!((id, r), (Some(RequestId::Number(1)), InvalidReason::MixedShape));
    assert_eq!(
        invalid(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#).1,
        InvalidReason::InvalidParams
    );
    assert_eq!(
        invalid(r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#).1,
        InvalidReason::MalformedError
    );
}

#[test]
fn batches_decode_element_by_element() {
    let Ok(Frame::Batch(items)) =
        decode(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}, 5, {"jsonrpc":"2.0","method":"n"}]"#)
    else {
        panic!()
    };
    assert_eq!(items.len(), 3);
    assert!(items[0].is_ok() && items[1].is_err() && items[2].is_ok());
    assert_eq!(invalid("[]").1, InvalidReason::EmptyBatch);
}

#[test]
fn encoding_is_compact_and_never_contains_a_newline() {
    let pretty = RawJson::from_string("{\n  \"a\": [1,\n 2]\n}".to_owned()).unwrap();
    let m = Message::result(RequestId::Number(1), pretty);
    let line = encode_line(&m);
    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
    assert_eq!(line, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":[1,2]}}\n");
    let e = Message::error(None, ErrorObject::new(-32700, "bad"));
    assert_eq!(
        e.to_vec(),
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#
    );
}

#[test]
fn encode_then_decode_is_identity_for_every_shape() {
    let messages = [
        Message::request(RequestId::from("x\"y"), "tools/call", &serde_json::json!({"name": "é"})),
        Message::notification::<serde_json::Value>("notifications/initialized", None),
        Message::result(RequestId::Number(-4), RawJson::from(serde_json::json!({"ok": [1, null]}))),
        Message::error(
            Some(RequestId::Number(2)),
            ErrorObject::new(-32602, "bad").with_data(serde_json::json!({"k": 1})),
        ),
    ];
    for m in messages {
        assert_eq!(single(std::str::from_utf8(&m.to_vec()).unwrap()), m);
    }
}

/// Shown by the `jsonrpc_decode` fuzz target on a crafted input: `1e400` and `"\ud800"` are
/// valid JSON that `serde_json::Value` cannot hold. Encoding a pretty-printed raw value went
/// through `Value` and panicked on them (and rounded a 30-digit integer to an f64); so did `==`.
#[test]
fn raw_values_no_value_can_hold_encode_and_compare_without_panicking() {
    let text = concat!(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"big\": 1e400,\r",
        "\"s\": \"\\ud800 x\",\r\"n\": 123456789012345678901234567890}}"
    );
    let m = single(text);
    let line = encode_line(&m);
    let expected = concat!(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"big\":1e400,",
        "\"s\":\"\\ud800 x\",\"n\":123456789012345678901234567890}}\n"
    );
    let line_text = std::str::from_utf8(&line).unwrap();
    assert_eq!(line_text, expected, "whitespace dropped, numbers and strings exactly as sent");
    assert_eq!(single(std::str::from_utf8(&line).unwrap()), m);
    let Message::Response(Response { outcome: Ok(raw), .. }) = &m else { panic!("{m:?}") };
    assert!(raw.to_value().is_err());
    let spaced = RawJson::from_string("{ \"big\" : 1e400 }".to_owned()).unwrap();
    assert_eq!(spaced, RawJson::from_string("{\"big\":1e400}".to_owned()).unwrap());
    assert_ne!(spaced, RawJson::from_string("{\"big\":2e400}".to_owned()).unwrap());
}

/// Serializes through `RawJson::from_serialize` from inside its own `serialize`, as a user
/// type wrapping a raw value might.
struct Nested(&'static str);

impl serde::Serialize for Nested {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RawJson::from_serialize(&serde_json::json!({ "inner": self.0 })).serialize(s)
    }
}

#[test]
fn from_serialize_is_compact_and_reentrant() {
    let raw = RawJson::from_serialize(&serde_json::json!({"a": [1, 2], "s": "x\ny"}));
    assert_eq!(raw.get(), r#"{"a":[1,2],"s":"x\ny"}"#);
    // A serialization inside another one (a user type wrapping a raw value) works too.
    let outer = RawJson::from_serialize(&serde_json::json!({"n": 1}));
    let nested = RawJson::from_serialize(&[Nested("deep")]);
    assert_eq!(nested.get(), r#"[{"inner":"deep"}]"#);
    assert_eq!(outer.get(), r#"{"n":1}"#);
    // Past the size a thread keeps, its buffer is let go; what follows is still right.
    let big = "z".repeat(5 * 1024 * 1024);
    let raw = RawJson::from_serialize(&serde_json::json!({ "t": big }));
    assert_eq!(raw.get().len(), big.len() + 8);
    assert_eq!(RawJson::from_serialize(&7).get(), "7");
}
