//! 2026-07-28 over Streamable HTTP, client side: no session, and every POST says in its
//! headers what its body holds: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (the tool's
//! or prompt's name, the resource's URI) and one `Mcp-Param-{Name}` per argument its tool
//! marks with `x-mcp-header`, so that intermediaries can route without reading bodies.
//! Values that are not plain header text travel as `=?base64?…?=`.

use std::borrow::Cow;
use std::collections::HashMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use http::header::{HeaderName, HeaderValue};
use http::HeaderMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::http::server::param_headers::lookup;
use crate::rpc::{Outgoing, OutgoingKind};
use crate::schema::ProtocolVersion;

/// Tool name → its `x-mcp-header` arguments: the header's name and the argument's path.
pub(crate) type ParamMarks = HashMap<String, Vec<(String, Vec<String>)>>;

/// What the headers repeat from a request's body, borrowed from its text: the arguments are
/// read only for a tool that marks some of them.
#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    uri: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

/// The headers of a 2026-07-28 POST carrying `out`.
pub(super) fn headers(out: &Outgoing, marks: &ParamMarks) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let version = HeaderValue::from_static(ProtocolVersion::V2026_07_28.as_str());
    headers.insert(HeaderName::from_static("mcp-protocol-version"), version);
    let (OutgoingKind::Request { method, .. } | OutgoingKind::Notification { method }) = &out.kind
    else {
        return headers;
    };
    headers.insert(HeaderName::from_static("mcp-method"), encode(method));
    if !matches!(method.as_str(), "tools/call" | "prompts/get" | "resources/read") {
        return headers;
    }
    let Some(params) = serde_json::from_slice::<Body<'_>>(&out.json).ok().and_then(|b| b.params)
    else {
        return headers;
    };
    let named = if method == "resources/read" { &params.uri } else { &params.name };
    if let Some(named) = named {
        headers.insert(HeaderName::from_static("mcp-name"), encode(named));
    }
    let marked =
        params.name.as_ref().filter(|_| method == "tools/call").and_then(|n| marks.get(&**n));
    let marked = marked.filter(|marked| !marked.is_empty());
    let arguments = marked.and(params.arguments).and_then(|a| serde_json::from_str(a.get()).ok());
    for (name, path) in marked.into_iter().flatten() {
        let Some(text) = lookup(arguments.as_ref(), path).and_then(as_text) else {
            continue;
        };
        if let Ok(header) = HeaderName::from_bytes(format!("mcp-param-{name}").as_bytes()) {
            headers.insert(header, encode(&text));
        }
    }
    headers
}

/// An argument as header text: a string as is, an integer in decimal, a boolean as
/// `true`/`false`; nothing for null or any other type.
fn as_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

/// True when every `x-mcp-header` in a tool's `inputSchema` is one a client may honour: on
/// a property reached from the root through `properties` keys only, of type string, integer
/// or boolean, named by a non-empty RFC 9110 token, unique (ignoring case) in the schema.
/// A tool that breaks any of these is dropped from `tools/list` over HTTP.
pub(crate) fn marks_are_valid(input_schema: &Value) -> bool {
    let mut names = Vec::new();
    valid_under(input_schema, true, &mut names)
}

fn valid_under(schema: &Value, reachable: bool, names: &mut Vec<String>) -> bool {
    match schema {
        Value::Object(map) => {
            if let Some(name) = map.get("x-mcp-header") {
                let primitive = matches!(
                    map.get("type").and_then(Value::as_str),
                    Some("string" | "integer" | "boolean")
                );
                let Some(name) = name.as_str().filter(|n| is_token(n)) else { return false };
                let lower = name.to_ascii_lowercase();
                if !reachable || !primitive || names.contains(&lower) {
                    return false;
                }
                names.push(lower);
            }
            map.iter().all(|(key, value)| match (key.as_str(), value) {
                // Each value of `properties` is a property schema, still reachable.
                ("properties", Value::Object(props)) => {
                    props.values().all(|p| valid_under(p, reachable, names))
                }
                _ => valid_under(value, false, names),
            })
        }
        Value::Array(items) => items.iter().all(|v| valid_under(v, false, names)),
        _ => true,
    }
}

/// An RFC 9110 token: one or more of ``!#$%&'*+-.^_`|~``, digits and letters.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Plain visible ASCII with no edge whitespace as it is; anything else (and anything that
/// looks like the base64 form) as `=?base64?…?=`.
pub(super) fn encode(text: &str) -> HeaderValue {
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !text.starts_with(' ')
        && !text.ends_with(' ')
        && !text.starts_with("=?base64?");
    let text = match plain {
        true => text.to_owned(),
        false => format!("=?base64?{}?=", STANDARD.encode(text)),
    };
    // Both forms are visible ASCII.
    HeaderValue::from_str(&text).expect("visible ASCII")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::jsonrpc::RequestId;
    use crate::rpc::Route;

    fn out(method: &str, params: Value) -> Outgoing {
        let json = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        Outgoing {
            route: Route::Standalone,
            json: serde_json::to_vec(&json).unwrap(),
            kind: OutgoingKind::Request { id: RequestId::Number(1), method: method.into() },
        }
    }

    #[test]
    fn a_call_names_its_tool_and_mirrors_its_marked_arguments() {
        let marks = ParamMarks::from([(
            "route".to_owned(),
            vec![
                ("Region".to_owned(), vec!["region".to_owned()]),
                ("N".to_owned(), vec!["n".to_owned()]),
            ],
        )]);
        let h = headers(
            &out("tools/call", json!({"name": "route", "arguments": {"region": "ü west", "n": 7}})),
            &marks,
        );
        assert_eq!(h["mcp-protocol-version"], "2026-07-28");
        assert_eq!(h["mcp-method"], "tools/call");
        assert_eq!(h["mcp-name"], "route");
        assert_eq!(
            h["mcp-param-region"],
            format!("=?base64?{}?=", STANDARD.encode("ü west")).as_str()
        );
        assert_eq!(h["mcp-param-n"], "7");
        let read = headers(&out("resources/read", json!({"uri": "file:///a b"})), &marks);
        assert_eq!(read["mcp-name"], "file:///a b");
        let list = headers(&out("tools/list", json!({})), &marks);
        assert!(list.get("mcp-name").is_none());
    }

    #[test]
    fn annotations_a_client_may_not_honour_make_the_tool_invalid() {
        let schema = |props: Value| json!({"type": "object", "properties": props});
        let ok = schema(json!({"r": {"type": "string", "x-mcp-header": "Region"},
            "o": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}}));
        assert!(marks_are_valid(&ok));
        for bad in [
            schema(json!({"a": {"type": "string", "x-mcp-header": ""}})),
            schema(json!({"a": {"type": "object", "x-mcp-header": "A"}})),
            schema(json!({"a": {"type": "number", "x-mcp-header": "A"}})),
            schema(
                json!({"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}),
            ),
            schema(json!({"a": {"type": "string", "x-mcp-header": "has space"}})),
            schema(json!({"a": {"type": "string", "x-mcp-header": "a:b"}})),
            schema(json!({"a": {"type": "string", "x-mcp-header": "ünï"}})),
            schema(
                json!({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}),
            ),
        ] {
            assert!(!marks_are_valid(&bad), "{bad}");
        }
    }

    #[test]
    fn values_that_are_not_plain_header_text_are_base64() {
        assert_eq!(encode(""), "");
        assert_eq!(encode("plain"), "plain");
        assert_eq!(encode(" edge"), "=?base64?IGVkZ2U=?=");
        assert_eq!(
            encode("=?base64?x?="),
            format!("=?base64?{}?=", STANDARD.encode("=?base64?x?=")).as_str()
        );
    }
}
