//! Checking a schema before it is used: what a compiling validator would refuse.

use std::collections::HashSet;

use serde_json::Value;

use super::{percent_decode, push_segment, type_name, SchemaError, MAX_DEPTH};

/// Keywords whose value is one subschema.
const ONE: &[&str] = &[
    "additionalItems",
    "additionalProperties",
    "contains",
    "else",
    "if",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value is a non-empty array of subschemas.
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is an object of subschemas.
const MAP: &[&str] =
    &["$defs", "definitions", "dependentSchemas", "patternProperties", "properties"];
/// Keywords whose value is a non-negative integer.
const COUNTS: &[&str] = &[
    "maxContains",
    "maxItems",
    "maxLength",
    "maxProperties",
    "minContains",
    "minItems",
    "minLength",
    "minProperties",
];
/// The names `type` may use.
const TYPES: &[&str] = &["array", "boolean", "integer", "null", "number", "object", "string"];
/// How many subschemas the search for a `$ref` loop visits before giving up (validation has
/// its own depth guard, so giving up is safe).
const LOOP_SEARCH_LIMIT: usize = 4096;

/// Checks that `schema` is one [`validate`](super::validate) can apply as written.
///
/// Refused: a subschema that is neither an object nor a boolean; a keyword zest applies whose
/// value has the wrong shape (`type` naming no JSON type, `required` that is not a list of
/// strings, `minLength: -1`, `multipleOf: 0`, an empty `anyOf` …); a local `$ref` that does not
/// resolve, or that leads back to itself without descending into the instance (which no
/// instance could ever pass); nesting deeper than [`MAX_DEPTH`]. Keywords zest does not know,
/// and references that are not local (never dereferenced), are accepted.
///
/// `Err` names the first problem, its `path` a JSON pointer into the *schema*. Never panics.
pub fn check_schema(schema: &Value) -> Result<(), SchemaError> {
    walk(schema, schema, &mut String::new(), 0)
}

fn walk(root: &Value, schema: &Value, path: &mut String, depth: usize) -> Result<(), SchemaError> {
    if depth > MAX_DEPTH {
        return Err(problem(path, format!("schema nesting exceeds {MAX_DEPTH} levels")));
    }
    let members = match schema {
        Value::Object(members) => members,
        Value::Bool(_) => return Ok(()),
        other => {
            let kind = type_name(other);
            return Err(problem(
                path,
                format!("a schema must be an object or a boolean, not {kind}"),
            ));
        }
    };
    if let Some(Value::String(reference)) = members.get("$ref") {
        if local_target(reference).is_some() && returns_to(root, path) {
            let message = format!("$ref {reference:?} loops back without consuming the value");
            return Err(problem(path, message));
        }
    }
    for (key, value) in members {
        let parent = push_segment(path, key);
        keyword(root, key, value, path, depth)?;
        path.truncate(parent);
    }
    Ok(())
}

/// Checks one keyword; `path` points at its value.
fn keyword(
    root: &Value,
    key: &str,
    value: &Value,
    path: &mut String,
    depth: usize,
) -> Result<(), SchemaError> {
    match (key, value) {
        (k, sub) if ONE.contains(&k) => walk(root, sub, path, depth + 1),
        ("items", Value::Array(list)) => each(root, list, path, depth),
        ("items", sub) => walk(root, sub, path, depth + 1),
        (k, Value::Array(list)) if LIST.contains(&k) => {
            if list.is_empty() {
                return Err(problem(path, format!("{k} must not be empty")));
            }
            each(root, list, path, depth)
        }
        (k, _) if LIST.contains(&k) => Err(problem(path, format!("{k} must be an array"))),
        (k, Value::Object(subs)) if MAP.contains(&k) => {
            for (name, sub) in subs {
                let parent = push_segment(path, name);
                walk(root, sub, path, depth + 1)?;
                path.truncate(parent);
            }
            Ok(())
        }
        (k, _) if MAP.contains(&k) => Err(problem(path, format!("{k} must be an object"))),
        ("type", Value::String(name)) => known_type(name, path),
        ("type", Value::Array(names)) if !names.is_empty() => names.iter().try_for_each(|n| {
            n.as_str().map_or_else(
                || Err(problem(path, "type names are strings")),
                |n| known_type(n, path),
            )
        }),
        ("type", _) => Err(problem(path, "type must be a type name or a list of them")),
        ("required", Value::Array(names)) if names.iter().all(Value::is_string) => Ok(()),
        ("required", _) => Err(problem(path, "required must be an array of strings")),
        ("enum", Value::Array(_)) => Ok(()),
        ("enum", _) => Err(problem(path, "enum must be an array")),
        ("$schema" | "pattern", Value::String(_)) => Ok(()),
        ("$schema", _) => Err(problem(path, "$schema must be a string")),
        ("pattern", _) => Err(problem(path, "pattern must be a string")),
        ("$ref", Value::String(reference)) => resolves(root, reference, path),
        ("$ref", _) => Err(problem(path, "$ref must be a string")),
        (k, v) if COUNTS.contains(&k) && v.as_u64().is_none() => {
            Err(problem(path, format!("{k} must be a non-negative integer")))
        }
        ("minimum" | "maximum", v) if !v.is_number() => {
            Err(problem(path, format!("{key} must be a number")))
        }
        // Draft 4 wrote these as booleans beside minimum/maximum; both forms are accepted.
        ("exclusiveMinimum" | "exclusiveMaximum", v) if !v.is_number() && !v.is_boolean() => {
            Err(problem(path, format!("{key} must be a number")))
        }
        ("multipleOf", v) if !v.as_f64().is_some_and(|step| step > 0.0) => {
            Err(problem(path, "multipleOf must be a number greater than 0"))
        }
        _ => Ok(()),
    }
}

fn each(root: &Value, list: &[Value], path: &mut String, depth: usize) -> Result<(), SchemaError> {
    for (i, sub) in list.iter().enumerate() {
        let parent = push_segment(path, &i.to_string());
        walk(root, sub, path, depth + 1)?;
        path.truncate(parent);
    }
    Ok(())
}

fn known_type(name: &str, path: &str) -> Result<(), SchemaError> {
    if TYPES.contains(&name) {
        Ok(())
    } else {
        Err(problem(path, format!("unknown type {name:?}")))
    }
}

/// A local reference must point at a subschema of `root`; other references are accepted.
fn resolves(root: &Value, reference: &str, path: &str) -> Result<(), SchemaError> {
    match local_target(reference) {
        Some(Some(pointer)) if root.pointer(&pointer).is_some() => Ok(()),
        Some(_) => Err(problem(path, format!("unresolvable $ref {reference:?}"))),
        None => Ok(()),
    }
}

/// For a local JSON-pointer reference, the decoded pointer (`Some(None)` when it cannot be
/// decoded); `None` for references zest never follows (other documents, `#anchor` names).
fn local_target(reference: &str) -> Option<Option<String>> {
    let fragment = reference.strip_prefix('#')?;
    if !fragment.is_empty() && !fragment.starts_with('/') {
        return None;
    }
    Some(percent_decode(fragment))
}

/// True when applying the subschema at `start` can lead back to it through `$ref` and the
/// keywords that apply to the same value (`allOf`, `anyOf`, `oneOf`, `not`, `if`, `then`,
/// `else`), so validation would recurse without end.
fn returns_to(root: &Value, start: &str) -> bool {
    let mut seen = HashSet::new();
    let mut pending = in_place(root, start);
    while let Some(pointer) = pending.pop() {
        if pointer == start {
            return true;
        }
        if seen.len() >= LOOP_SEARCH_LIMIT {
            return false;
        }
        if seen.insert(pointer.clone()) {
            pending.extend(in_place(root, &pointer));
        }
    }
    false
}

/// The subschemas applied to the same value as the one at `pointer`.
fn in_place(root: &Value, pointer: &str) -> Vec<String> {
    let Some(Value::Object(schema)) = root.pointer(pointer) else { return Vec::new() };
    let mut next = Vec::new();
    if let Some(Value::String(reference)) = schema.get("$ref") {
        if let Some(Some(target)) = local_target(reference) {
            next.push(target);
        }
    }
    let at = |key: &str| {
        let mut p = pointer.to_owned();
        push_segment(&mut p, key);
        p
    };
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = schema.get(key) {
            let base = at(key);
            next.extend((0..list.len()).map(|i| format!("{base}/{i}")));
        }
    }
    next.extend(
        ["not", "if", "then", "else"].into_iter().filter(|k| schema.contains_key(*k)).map(at),
    );
    next
}

fn problem(path: &str, message: impl Into<String>) -> SchemaError {
    SchemaError { path: path.to_owned(), message: message.into() }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refused(schema: Value) -> SchemaError {
        check_schema(&schema).expect_err(&schema.to_string())
    }

    #[test]
    fn ordinary_schemas_pass() {
        for schema in [
            json!({"type": "object"}),
            json!(true),
            json!({"type": "object", "additionalProperties": false, "properties": {
                "name": {"type": "string", "minLength": 1, "pattern": "^[a-z]+$"},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
                "pair": {"type": "array", "prefixItems": [{"type": "number"}, true]},
                "age": {"type": ["integer", "null"], "minimum": 0, "exclusiveMaximum": 200}
            }, "required": ["name"]}),
            json!({"$defs": {"node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
                "$ref": "#/$defs/node"}),
            json!({"type": "object", "properties": {"x": {"$ref": "https://example.com/x"}}}),
            json!({"type": "object", "x-mcp-header": "Region", "format": "anything"}),
            json!({"minimum": 1, "exclusiveMinimum": true}),
        ] {
            assert_eq!(check_schema(&schema), Ok(()), "{schema}");
        }
    }

    #[test]
    fn malformed_keywords_are_refused_with_a_path_into_the_schema() {
        let e = refused(json!({"type": "object", "properties": {"a": {"type": "strng"}}}));
        assert_eq!(e.path, "/properties/a/type");
        assert!(e.message.contains("strng"));
        assert_eq!(refused(json!({"properties": {"a": 3}})).path, "/properties/a");
        assert_eq!(refused(json!({"properties": []})).path, "/properties");
        assert_eq!(refused(json!({"required": "a"})).path, "/required");
        assert_eq!(refused(json!({"anyOf": []})).path, "/anyOf");
        assert_eq!(refused(json!({"allOf": [{"type": 1}]})).path, "/allOf/0/type");
        assert_eq!(refused(json!({"minLength": -1})).path, "/minLength");
        assert_eq!(refused(json!({"multipleOf": 0})).path, "/multipleOf");
        assert_eq!(refused(json!({"items": [{"not": "x"}]})).path, "/items/0/not");
        assert_eq!(refused(json!({"type": []})).path, "/type");
        assert_eq!(refused(json!({"$schema": 7})).path, "/$schema");
        assert_eq!(refused(json!("object")).path, "");
    }

    #[test]
    fn references_must_resolve_and_must_not_loop_in_place() {
        let e = refused(json!({"properties": {"a": {"$ref": "#/$defs/missing"}}}));
        assert_eq!(e.path, "/properties/a/$ref");
        assert!(refused(json!({"$ref": "#"})).message.contains("loops back"));
        let two_step = json!({
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
            "properties": {"x": {"$ref": "#/$defs/a"}}
        });
        assert!(refused(two_step).message.contains("loops back"));
        let escaped = json!({"$defs": {"a/b": {"type": "string"}}, "$ref": "#/$defs/a~1b"});
        assert_eq!(check_schema(&escaped), Ok(()));
    }

    #[test]
    fn nesting_is_bounded() {
        let mut schema = json!({"type": "object"});
        for _ in 0..=MAX_DEPTH {
            schema = json!({"not": schema});
        }
        assert!(refused(schema).message.contains("nesting"));
    }
}
