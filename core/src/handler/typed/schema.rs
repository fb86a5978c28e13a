//! Tool and prompt schemas from Rust types, with `schemars` (feature `schemars`).

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::schema::{ObjectSchema, PromptArgument};

/// The JSON Schema of `T` as a tool's `inputSchema` or `outputSchema`: JSON Schema 2020-12
/// without a `$schema` member (MCP reads a schema without one as 2020-12, and clients of
/// older revisions accept it), subschemas inlined where `schemars` can (only recursive types
/// keep a `$ref` into `$defs`), no root `title`, `type: "object"` at the root, and no
/// `format` that JSON Schema does not define (schemars writes `uint32`, `double`, … for
/// Rust's number types; validators warn about or refuse unknown formats, and the type and
/// range keywords already say it).
///
/// `Err` when `T`'s schema is not an object (a string, a number, an array), or an
/// untagged or adjacently tagged union that may be one, or one zest's validator cannot apply.
/// An enum whose every variant is an object (internally tagged: `#[serde(tag = "kind")]`)
/// gets `type: "object"` beside its `oneOf`. A type that accepts anything (`serde_json::Value`)
/// becomes `{"type": "object"}`.
pub fn object_schema_for<T: JsonSchema>() -> Result<Value, String> {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.meta_schema = None;
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = serde_json::to_value(&schema).map_err(|e| e.to_string())?;
    if value == Value::Bool(true) {
        return Ok(serde_json::json!({"type": "object"}));
    }
    strip_unknown_formats(&mut value, 0);
    let Value::Object(root) = &mut value else {
        return Err("its schema is not an object schema".to_owned());
    };
    root.remove("title");
    if root.is_empty() {
        root.insert("type".into(), "object".into());
    }
    if !root.contains_key("type") && every_variant_is_an_object(root) {
        root.insert("type".into(), "object".into());
    }
    ObjectSchema::try_from_value(value.clone()).map_err(|e| e.to_string())?;
    Ok(value)
}

/// The prompt arguments `T`'s fields describe: each property of its (object) schema, with
/// its `description` (from the field's doc comment) and `title`, required when the schema
/// requires it. Prompt arguments are strings on the wire, so the fields SHOULD be `String`s
/// (or `Option<String>` for optional ones).
///
/// `Err` as for [`object_schema_for`].
pub fn prompt_arguments_for<T: JsonSchema>() -> Result<Vec<PromptArgument>, String> {
    Ok(super::register::prompt_arguments(&object_schema_for::<T>()?))
}

/// The formats JSON Schema 2020-12 defines (§7.3 of the validation vocabulary).
const STANDARD_FORMATS: &[&str] = &[
    "date",
    "date-time",
    "duration",
    "email",
    "hostname",
    "idn-email",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "iri",
    "iri-reference",
    "json-pointer",
    "regex",
    "relative-json-pointer",
    "time",
    "uri",
    "uri-reference",
    "uri-template",
    "uuid",
];

/// Removes every `format` outside [`STANDARD_FORMATS`] from `schema` and its subschemas (not
/// from property names, enum values or defaults).
fn strip_unknown_formats(schema: &mut Value, depth: usize) {
    let Value::Object(members) = schema else { return };
    if depth > 64 {
        return; // schemars never nests this deep; a bound keeps the walk obviously finite
    }
    let unknown =
        members.get("format").and_then(Value::as_str).map(|f| !STANDARD_FORMATS.contains(&f));
    if unknown == Some(true) {
        members.remove("format");
    }
    for (keyword, sub) in members.iter_mut() {
        match keyword.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(map) = sub {
                    map.values_mut().for_each(|s| strip_unknown_formats(s, depth + 1));
                }
            }
            "items" | "prefixItems" | "allOf" | "anyOf" | "oneOf" => match sub {
                Value::Array(list) => {
                    list.iter_mut().for_each(|s| strip_unknown_formats(s, depth + 1))
                }
                other => strip_unknown_formats(other, depth + 1),
            },
            "additionalProperties"
            | "additionalItems"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedProperties"
            | "unevaluatedItems" => {
                strip_unknown_formats(sub, depth + 1);
            }
            _ => {}
        }
    }
}

fn every_variant_is_an_object(root: &Map<String, Value>) -> bool {
    let variants = root.get("oneOf").or_else(|| root.get("anyOf")).and_then(Value::as_array);
    variants.is_some_and(|list| {
        !list.is_empty()
            && list.iter().all(|v| v.get("type").and_then(Value::as_str) == Some("object"))
    })
}
