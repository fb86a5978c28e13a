//! 2026-07-28 `Mcp-Param-*` headers: a tool's `inputSchema` may mark properties with
//! `x-mcp-header: Name`, and a client then mirrors each such argument into an
//! `Mcp-Param-Name` header so that intermediaries can route on it. The server checks that
//! every marked argument and its header agree (a string as is, an integer numerically, a
//! boolean as `true`/`false`; `=?base64?…?=` values decoded first, strictly), and that a
//! header comes exactly when the argument is present and not null.

use http::HeaderMap;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::checks::decode_header_value;
use crate::error::Rejection;
use crate::jsonrpc::RawJson;

/// A `tools/call`'s arguments, read without the rest of its params.
#[derive(Deserialize)]
struct ArgumentsOnly {
    arguments: Option<Map<String, Value>>,
}

/// The properties of `properties` (and of nested objects' `properties`) marked with
/// `x-mcp-header`: the header's name and the property's path from the arguments' root.
pub(crate) fn marked(properties: &Map<String, Value>) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    let mut pending: Vec<(Vec<String>, &Map<String, Value>)> = vec![(Vec::new(), properties)];
    while let Some((path, properties)) = pending.pop() {
        for (key, schema) in properties {
            let mut at = path.clone();
            at.push(key.clone());
            if let Some(name) = schema.get("x-mcp-header").and_then(Value::as_str) {
                found.push((name.to_owned(), at.clone()));
            }
            if let Some(nested) = schema.get("properties").and_then(Value::as_object) {
                pending.push((at, nested));
            }
        }
    }
    found
}

/// Every marked argument of a `tools/call` (`params`) agrees with its `Mcp-Param-*`
/// header; the first that does not is a `HeaderMismatch` naming the header.
pub(super) fn check(
    headers: &HeaderMap,
    marked: &[(String, Vec<String>)],
    params: Option<&RawJson>,
) -> Result<(), Rejection> {
    let arguments = params.and_then(|p| p.parse::<ArgumentsOnly>().ok()).and_then(|a| a.arguments);
    for (name, path) in marked {
        let header_name = format!("Mcp-Param-{name}");
        let mismatch = || Rejection::HeaderMismatch { header: header_name.clone() };
        let value = lookup(arguments.as_ref(), path).filter(|v| !v.is_null());
        let header = headers.get(header_name.as_str());
        match (value, header) {
            (None, None) => {}
            (Some(value), Some(header)) => {
                let text = decode_header_value(header.as_bytes()).ok_or_else(mismatch)?;
                if !agrees(value, &text) {
                    return Err(mismatch());
                }
            }
            _ => return Err(mismatch()),
        }
    }
    Ok(())
}

/// The argument at `path` (property names from the root), if the arguments have it.
pub(crate) fn lookup<'a>(
    arguments: Option<&'a Map<String, Value>>,
    path: &[String],
) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut value = arguments?.get(first)?;
    for key in rest {
        value = value.as_object()?.get(key)?;
    }
    Some(value)
}

fn agrees(value: &Value, header: &str) -> bool {
    match value {
        Value::String(s) => s == header,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        Value::Number(n) => match (n.as_i64(), header.parse::<i64>()) {
            (Some(body), Ok(head)) => body == head,
            _ => n.as_u64().is_some_and(|body| header.parse::<u64>() == Ok(body)),
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;
    use serde_json::json;

    use super::*;

    fn schema() -> Map<String, Value> {
        json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "opts": {"type": "object", "properties": {"tier": {"type": "string", "x-mcp-header": "Tier"}}},
            "plain": {"type": "string"}
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_static(v));
        }
        map
    }

    fn call(arguments: Value) -> RawJson {
        RawJson::from(json!({"name": "t", "arguments": arguments}))
    }

    fn refused(result: Result<(), Rejection>) -> String {
        match result {
            Err(Rejection::HeaderMismatch { header }) => header,
            other => panic!("not a header mismatch: {other:?}"),
        }
    }

    #[test]
    fn marked_properties_are_found_through_nested_properties() {
        let mut found = marked(&schema());
        found.sort();
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Count", "Dry", "Region", "Tier"]);
        assert!(found.contains(&("Tier".into(), vec!["opts".into(), "tier".into()])));
    }

    #[test]
    fn headers_that_agree_with_the_body_pass() {
        let marked = marked(&schema());
        let args = json!({"region": "Hello", "count": 42, "dry": false, "opts": {"tier": "gold"}});
        let h = headers(&[
            ("mcp-param-region", "=?base64?SGVsbG8=?="),
            ("mcp-param-count", "42"),
            ("mcp-param-dry", "false"),
            ("mcp-param-tier", "gold"),
        ]);
        assert!(check(&h, &marked, Some(&call(args))).is_ok());
        // Absent and null arguments need no header.
        assert!(check(&HeaderMap::new(), &marked, Some(&call(json!({"region": null})))).is_ok());
        // A value without both base64 markers is literal.
        let literal = headers(&[("mcp-param-region", "=?base64?SGVsbG8=")]);
        assert!(
            check(&literal, &marked, Some(&call(json!({"region": "=?base64?SGVsbG8="})))).is_ok()
        );
    }

    #[test]
    fn a_missing_different_or_badly_encoded_header_is_a_mismatch() {
        let marked = marked(&schema());
        let hello = call(json!({"region": "Hello"}));
        assert_eq!(refused(check(&HeaderMap::new(), &marked, Some(&hello))), "Mcp-Param-Region");
        for bad in ["Bye", "=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="] {
            let h = headers(&[("mcp-param-region", bad)]);
            assert_eq!(refused(check(&h, &marked, Some(&hello))), "Mcp-Param-Region", "{bad}");
        }
        let h = headers(&[("mcp-param-count", "41")]);
        assert_eq!(
            refused(check(&h, &marked, Some(&call(json!({"count": 42}))))),
            "Mcp-Param-Count"
        );
        let h = headers(&[("mcp-param-dry", "true")]);
        assert_eq!(refused(check(&h, &marked, Some(&call(json!({}))))), "Mcp-Param-Dry");
    }
}
