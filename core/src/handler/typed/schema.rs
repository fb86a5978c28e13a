//! Tool and prompt schemas from Rust types, with `schemars` (feature `schemars`).

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::schema::{ObjectSchema, PromptArgument};

/// The JSON Schema of `T` as a tool's `inputSchema` or `outputSchema`: JSON Schema 2020-12
/// without a `$schema` member (MCP reads a schema without one as 2020-12, and clients of
/// older revisions accept it), subschemas inlined where `schemars` can (only recursive types
/// keep a `$ref` into `$defs`), no root `title`, and `type: "object"` at the root.
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
    let root = match &mut value {
        Value::Bool(true) => return Ok(serde_json::json!({"type": "object"})),
        Value::Object(root) => root,
        _ => return Err("its schema accepts nothing".to_owned()),
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

fn every_variant_is_an_object(root: &Map<String, Value>) -> bool {
    let variants = root.get("oneOf").or_else(|| root.get("anyOf")).and_then(Value::as_array);
    variants.is_some_and(|list| {
        !list.is_empty()
            && list.iter().all(|v| v.get("type").and_then(Value::as_str) == Some("object"))
    })
}
