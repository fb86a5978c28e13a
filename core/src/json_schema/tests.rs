use serde_json::{json, Value};

use super::{validate, SchemaError, MAX_DEPTH, MAX_ERRORS};

/// The problems found, as displayed.
fn problems(schema: &Value, instance: &Value) -> Vec<String> {
    match validate(schema, instance) {
        Ok(()) => Vec::new(),
        Err(errors) => {
            assert!(!errors.is_empty() && errors.len() <= MAX_ERRORS, "{errors:?}");
            errors.iter().map(ToString::to_string).collect()
        }
    }
}

#[track_caller]
fn accepts(schema: Value, instance: Value) {
    assert_eq!(
        problems(&schema, &instance),
        Vec::<String>::new(),
        "{schema} should accept {instance}"
    );
}

#[track_caller]
fn rejects(schema: Value, instance: Value) -> Vec<String> {
    let found = problems(&schema, &instance);
    assert!(!found.is_empty(), "{schema} should reject {instance}");
    found
}

#[test]
fn typical_tool_input_schema() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
        "additionalProperties": false
    });
    accepts(schema.clone(), json!({"a": 1, "b": 2.5}));
    assert_eq!(
        rejects(schema.clone(), json!({"a": 1})),
        [r#"(root): missing required property "b""#]
    );
    assert_eq!(
        rejects(schema.clone(), json!({"a": 1, "b": 2, "c": 3})),
        [r#"(root): property "c" is not allowed"#]
    );
    assert_eq!(
        rejects(schema.clone(), json!({"a": "1", "b": 2})),
        ["/a: expected number, got string"]
    );
    assert_eq!(rejects(schema, json!([1, 2])), ["(root): expected object, got array"]);
}

#[test]
fn boolean_schemas() {
    accepts(json!(true), json!({"anything": [1]}));
    assert_eq!(rejects(json!(false), json!(null)), ["(root): no value is allowed here"]);
    accepts(json!({}), json!("empty schema accepts all"));
    accepts(json!({"properties": {"a": true}}), json!({"a": 1}));
    assert_eq!(
        rejects(json!({"properties": {"a": false}}), json!({"a": 1})),
        ["/a: no value is allowed here"]
    );
}

#[test]
fn type_keyword() {
    accepts(json!({"type": "integer"}), json!(3));
    accepts(json!({"type": "integer"}), json!(1.0));
    accepts(json!({"type": "integer"}), json!(-7));
    accepts(json!({"type": "integer"}), json!(u64::MAX));
    rejects(json!({"type": "integer"}), json!(1.5));
    accepts(json!({"type": "number"}), json!(3));
    accepts(json!({"type": "null"}), json!(null));
    accepts(json!({"type": "boolean"}), json!(false));
    rejects(json!({"type": "boolean"}), json!(0));
    accepts(json!({"type": ["string", "null"]}), json!(null));
    assert_eq!(
        rejects(json!({"type": ["string", "null"]}), json!(1)),
        ["(root): expected string or null, got number"]
    );
    rejects(json!({"type": "no-such-type"}), json!(1));
    accepts(json!({"type": 7}), json!(1)); // malformed keyword: ignored
}

#[test]
fn enum_and_const_compare_numbers_by_value() {
    accepts(json!({"enum": ["a", 1, null]}), json!(1.0));
    accepts(json!({"enum": ["a", 1, null]}), json!(null));
    assert_eq!(
        rejects(json!({"enum": ["a", 1]}), json!("b")),
        ["(root): value is not one of the enum values"]
    );
    accepts(json!({"const": {"x": [1, 2.0], "y": "z"}}), json!({"y": "z", "x": [1.0, 2]}));
    rejects(json!({"const": {"x": [1, 2]}}), json!({"x": [2, 1]}));
    rejects(json!({"const": {"x": 1}}), json!({"x": 1, "y": 1}));
    rejects(json!({"const": false}), json!(0));
    accepts(json!({"const": null}), json!(null));
}

#[test]
fn object_keywords() {
    let schema = json!({
        "properties": {"n": {"type": "integer"}},
        "additionalProperties": {"type": "string"},
        "minProperties": 1,
        "maxProperties": 2
    });
    accepts(schema.clone(), json!({"n": 1, "s": "x"}));
    assert_eq!(rejects(schema.clone(), json!({"s": 1})), ["/s: expected string, got number"]);
    assert_eq!(
        rejects(schema.clone(), json!({})),
        ["(root): object has 0 properties, fewer than minProperties 1"]
    );
    rejects(schema.clone(), json!({"a": "", "b": "", "c": ""}));
    accepts(schema, json!("not an object: object keywords do not apply"));
    accepts(json!({"required": ["a"]}), json!([]));
}

#[test]
fn pattern_properties_disable_additional_properties() {
    let schema = json!({"patternProperties": {"^x-": {}}, "additionalProperties": false});
    accepts(schema, json!({"x-ok": 1, "other": 2}));
}

#[test]
fn array_keywords() {
    let schema = json!({"prefixItems": [{"type": "string"}], "items": {"type": "integer"}});
    accepts(schema.clone(), json!(["a", 1, 2]));
    accepts(schema.clone(), json!([]));
    assert_eq!(rejects(schema.clone(), json!([1])), ["/0: expected string, got number"]);
    assert_eq!(rejects(schema, json!(["a", 1, "b"])), ["/2: expected integer, got string"]);
    accepts(json!({"prefixItems": [{"type": "string"}]}), json!(["a", 1]));
    rejects(json!({"prefixItems": [true], "items": false}), json!(["a", 1]));
    accepts(json!({"prefixItems": [true], "items": false}), json!(["a"]));

    let old = json!({"items": [{"type": "string"}], "additionalItems": false});
    accepts(old.clone(), json!(["a"]));
    rejects(old, json!(["a", "b"]));

    let sized = json!({"minItems": 1, "maxItems": 2});
    assert_eq!(
        rejects(sized.clone(), json!([])),
        ["(root): array has 0 items, fewer than minItems 1"]
    );
    assert_eq!(
        rejects(sized, json!([1, 2, 3])),
        ["(root): array has 3 items, more than maxItems 2"]
    );
}

#[test]
fn unique_items() {
    let schema = json!({"uniqueItems": true});
    accepts(schema.clone(), json!([1, "1", [1], {"a": 1}, {"a": 2}]));
    assert_eq!(
        rejects(schema.clone(), json!([1, 2, 1.0])),
        ["(root): items 0 and 2 are equal but uniqueItems is set"]
    );
    rejects(schema, json!([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}]));
    accepts(json!({"uniqueItems": false}), json!([1, 1]));
}

#[test]
fn string_lengths_count_characters() {
    let schema = json!({"minLength": 2, "maxLength": 3});
    accepts(schema.clone(), json!("hé"));
    accepts(schema.clone(), json!("😀😀😀"));
    assert_eq!(
        rejects(schema.clone(), json!("x")),
        ["(root): string has 1 characters, fewer than minLength 2"]
    );
    rejects(schema.clone(), json!("abcd"));
    accepts(schema, json!(12345));
    accepts(json!({"maxLength": 2.0}), json!("ab"));
}

#[test]
fn numeric_bounds() {
    let schema = json!({"minimum": 1, "maximum": 10});
    accepts(schema.clone(), json!(1));
    accepts(schema.clone(), json!(10.0));
    assert_eq!(rejects(schema.clone(), json!(0.5)), ["(root): 0.5 is less than the minimum 1"]);
    assert_eq!(rejects(schema, json!(11)), ["(root): 11 is greater than the maximum 10"]);

    let exclusive = json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1.5});
    accepts(exclusive.clone(), json!(1));
    rejects(exclusive.clone(), json!(0));
    rejects(exclusive.clone(), json!(0.0));
    rejects(exclusive, json!(1.5));

    accepts(json!({"minimum": -1}), json!(u64::MAX));
    rejects(json!({"maximum": i64::MAX}), json!(u64::MAX));
}

#[test]
fn multiple_of() {
    accepts(json!({"multipleOf": 3}), json!(9));
    assert_eq!(rejects(json!({"multipleOf": 3}), json!(10)), ["(root): 10 is not a multiple of 3"]);
    accepts(json!({"multipleOf": 0.1}), json!(0.3));
    accepts(json!({"multipleOf": 0.01}), json!(19.99));
    rejects(json!({"multipleOf": 0.1}), json!(0.35));
    accepts(json!({"multipleOf": 2.5}), json!(10));
    rejects(json!({"multipleOf": 2}), json!(7.0));
    rejects(json!({"multipleOf": 1}), json!(1e-20));
    accepts(json!({"multipleOf": 0}), json!(5)); // malformed: ignored
    accepts(json!({"multipleOf": -2}), json!(5));
}

#[test]
fn combinators() {
    let all = json!({"allOf": [{"type": "integer"}, {"minimum": 2}]});
    accepts(all.clone(), json!(3));
    assert_eq!(
        rejects(all, json!(1.5)),
        ["(root): expected integer, got number", "(root): 1.5 is less than the minimum 2"]
    );

    let any = json!({"anyOf": [{"type": "string"}, {"minimum": 2}]});
    accepts(any.clone(), json!("x"));
    accepts(any.clone(), json!(3));
    assert_eq!(rejects(any, json!(1)), ["(root): value does not match any schema in anyOf"]);

    let one = json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]});
    accepts(one.clone(), json!(1));
    accepts(one.clone(), json!(2.5));
    assert_eq!(
        rejects(one.clone(), json!(3)),
        ["(root): value matches more than one schema in oneOf (0 and 1)"]
    );
    assert_eq!(rejects(one, json!(0.5)), ["(root): value does not match any schema in oneOf"]);

    let not = json!({"not": {"type": "string"}});
    accepts(not.clone(), json!(1));
    assert_eq!(rejects(not, json!("s")), ["(root): value matches the schema in not"]);
}

#[test]
fn if_then_else() {
    let schema = json!({
        "if": {"properties": {"kind": {"const": "circle"}}, "required": ["kind"]},
        "then": {"required": ["radius"]},
        "else": {"required": ["side"]}
    });
    accepts(schema.clone(), json!({"kind": "circle", "radius": 1}));
    accepts(schema.clone(), json!({"kind": "square", "side": 1}));
    assert_eq!(
        rejects(schema.clone(), json!({"kind": "circle"})),
        [r#"(root): missing required property "radius""#]
    );
    assert_eq!(
        rejects(schema, json!({"kind": "square"})),
        [r#"(root): missing required property "side""#]
    );
    accepts(json!({"then": false}), json!(1)); // no `if`: then/else ignored
    accepts(json!({"if": true}), json!(1));
}

#[test]
fn local_refs() {
    let schema = json!({
        "$defs": {"pos": {"type": "integer", "minimum": 1}, "a/b~c": {"type": "string"}, "sp ace": {"const": 1}},
        "definitions": {"old": {"type": "boolean"}},
        "properties": {
            "p": {"$ref": "#/$defs/pos"},
            "e": {"$ref": "#/$defs/a~1b~0c"},
            "o": {"$ref": "#/definitions/old"},
            "s": {"$ref": "#/$defs/sp%20ace"}
        }
    });
    accepts(schema.clone(), json!({"p": 2, "e": "x", "o": true, "s": 1}));
    let found = rejects(schema, json!({"p": 0, "e": 1, "o": 1, "s": 2}));
    assert_eq!(found.len(), 4, "{found:?}");
}

#[test]
fn recursive_ref_to_root() {
    let tree = json!({
        "type": "object",
        "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["value"]
    });
    accepts(
        tree.clone(),
        json!({"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}),
    );
    assert_eq!(
        rejects(
            tree,
            json!({"value": 1, "children": [{"value": 2, "children": [{"value": "x"}]}]})
        ),
        ["/children/0/children/0/value: expected integer, got string"]
    );
}

#[test]
fn ref_siblings_apply_too() {
    let schema = json!({"$defs": {"n": {"type": "number"}}, "$ref": "#/$defs/n", "minimum": 5});
    accepts(schema.clone(), json!(6));
    rejects(schema, json!(4));
}

#[test]
fn unresolvable_local_ref_is_an_error() {
    let found = rejects(json!({"$ref": "#/$defs/missing"}), json!(1));
    assert_eq!(found, [r##"(root): unresolvable $ref "#/$defs/missing""##]);
    rejects(json!({"$ref": "#/bad%zz"}), json!(1));
    // The schema is broken, so `not` must not turn the failure into a success.
    let found = rejects(json!({"not": {"$ref": "#/nope"}}), json!(1));
    assert_eq!(found, [r##"(root): unresolvable $ref "#/nope""##]);
}

#[test]
fn remote_and_anchor_refs_are_accepted_unchecked() {
    accepts(json!({"$ref": "https://example.com/schema.json"}), json!(1));
    accepts(json!({"$ref": "other.json#/$defs/x"}), json!(1));
    accepts(json!({"$ref": "#anchor"}), json!(1));
}

#[test]
fn format_and_unknown_keywords_are_ignored() {
    accepts(json!({"type": "string", "format": "email"}), json!("not an email"));
    accepts(json!({"pattern": "^a$", "contains": false, "x-vendor": {"y": 1}}), json!(["b"]));
    accepts(json!({"minimum": "1", "required": "a", "properties": [1]}), json!({}));
    accepts(json!(42), json!(1)); // not a schema at all
}

#[test]
fn self_reference_hits_the_depth_bound() {
    let found = rejects(json!({"$ref": "#"}), json!(1));
    assert_eq!(found, [format!("(root): schema nesting exceeds {MAX_DEPTH} levels")]);
    let nested = [format!("(root): schema nesting exceeds {MAX_DEPTH} levels")];
    assert_eq!(rejects(json!({"not": {"$ref": "#"}}), json!(1)), nested);
    assert_eq!(rejects(json!({"anyOf": [{"$ref": "#"}]}), json!(1)), nested);
    rejects(
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
        json!(1),
    );
}

#[test]
fn deep_instance_hits_the_depth_bound() {
    let mut instance = json!(1);
    for _ in 0..100 {
        instance = json!([instance]);
    }
    let schema = json!({"items": {"$ref": "#"}});
    let found = rejects(schema, instance);
    assert!(found[0].contains("nesting exceeds"), "{found:?}");
}

#[test]
fn exponential_schema_runs_out_of_budget() {
    // d0 → anyOf[d1, d1], d1 → anyOf[d2, d2] … d30 never matches: 2^30 paths, within MAX_DEPTH.
    let mut defs = serde_json::Map::new();
    for i in 0..30 {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        defs.insert(format!("d{i}"), json!({"anyOf": [next.clone(), next]}));
    }
    defs.insert("d30".into(), json!(false));
    let schema = json!({"$defs": defs, "$ref": "#/$defs/d0"});
    let found = rejects(schema, json!(1));
    assert_eq!(found, ["(root): validation needs too much work; the schema is too complex"]);
}

#[test]
fn errors_are_capped_and_paths_escaped() {
    let schema = json!({"additionalProperties": {"type": "string"}});
    let instance: serde_json::Map<String, Value> =
        (0..100).map(|i| (format!("k{i:03}"), json!(i))).collect();
    let found = validate(&schema, &Value::Object(instance)).unwrap_err();
    assert_eq!(found.len(), MAX_ERRORS);

    let found = rejects(json!({"properties": {"a/b~": {"type": "null"}}}), json!({"a/b~": 1}));
    assert_eq!(found, ["/a~1b~0: expected null, got number"]);
}

#[test]
fn display_names_the_root() {
    let error = SchemaError { path: String::new(), message: "m".into() };
    assert_eq!(error.to_string(), "(root): m");
    let error = SchemaError { path: "/a/0".into(), message: "m".into() };
    assert_eq!(error.to_string(), "/a/0: m");
}

/// Builds a JSON value from bytes, favouring schema keywords, so arbitrary input explores them.
fn build(bytes: &mut impl Iterator<Item = u8>, depth: usize) -> Value {
    // Keys are drawn from every keyword `validate` applies and these two.
    const EXTRA: &[&str] = &["$defs", "a"];
    const STRINGS: &[&str] =
        &["#", "#/$defs/a", "#/properties", "integer", "string", "object", "a", ""];
    let Some(b) = bytes.next() else {
        return Value::Null;
    };
    match b % 8 {
        _ if depth > 6 => json!(b),
        0 => Value::Bool(b & 8 != 0),
        1 => json!(i64::from(b) - 128),
        2 => json!(f64::from(b) / 7.0),
        3 => json!(STRINGS[usize::from(b >> 3) % STRINGS.len()]),
        4 | 5 => {
            let len = usize::from(b >> 4) % 4;
            Value::Array((0..len).map(|_| build(bytes, depth + 1)).collect())
        }
        _ => {
            let len = usize::from(b >> 4) % 5;
            let mut map = serde_json::Map::new();
            for _ in 0..len {
                let key = bytes.next().map_or(0, usize::from) % (APPLIED.len() + EXTRA.len());
                let key = APPLIED.get(key).unwrap_or_else(|| &EXTRA[key - APPLIED.len()]);
                map.insert((*key).into(), build(bytes, depth + 1));
            }
            Value::Object(map)
        }
    }
}

quickcheck::quickcheck! {
    fn never_panics_and_reports_at_most_max_errors(schema: Vec<u8>, instance: Vec<u8>) -> bool {
        let schema = build(&mut schema.into_iter(), 0);
        let instance = build(&mut instance.into_iter(), 0);
        match validate(&schema, &instance) {
            Ok(()) => true,
            Err(errors) => !errors.is_empty() && errors.len() <= MAX_ERRORS,
        }
    }
}

/// The keywords `validate` applies (the module's doc lists them).
const APPLIED: [&str; 30] = [
    "$ref",
    "type",
    "enum",
    "const",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "minItems",
    "maxItems",
    "prefixItems",
    "items",
    "additionalItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "required",
    "properties",
    "additionalProperties",
    "patternProperties",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
];

/// Every keyword the module applies has its own bit, so an absent one is skipped without a
/// search and a present one is always looked up.
#[test]
fn every_applied_keyword_has_its_own_bit() {
    let mut seen = 0u32;
    for key in APPLIED {
        let bit = super::keyword_bit(key);
        assert_eq!(bit.count_ones(), 1, "{key}");
        assert_eq!(seen & bit, 0, "{key} shares a bit");
        seen |= bit;
    }
    assert_eq!(super::keyword_bit("format"), 0);
    // A schema with only some keywords still finds each of them.
    let schema = json!({"type": "object", "required": ["a"], "maxProperties": 1});
    let Value::Object(map) = &schema else { unreachable!() };
    let keywords = super::Keywords::of(map);
    assert!(keywords.get("required").is_some() && keywords.get("maxProperties").is_some());
    assert!(keywords.get("properties").is_none() && keywords.get("$ref").is_none());
    // Past the bound, the keys are not read: every keyword is searched for.
    let mut wide: serde_json::Map<String, Value> =
        (0..40).map(|i| (format!("x-{i}"), json!(i))).collect();
    wide.insert("required".into(), json!(["a"]));
    let keywords = super::Keywords::of(&wide);
    assert_eq!(keywords.present, u32::MAX);
    assert!(keywords.get("required").is_some() && keywords.get("type").is_none());
    assert!(validate(&Value::Object(wide), &json!({})).is_err());
}
