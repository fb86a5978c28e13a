//! Arbitrary bytes → a schema and an instance (split at the first NUL, each parsed as JSON) →
//! `json_schema::check_schema` and `json_schema::validate`.
//!
//! Neither may panic or run away (the validator bounds its depth and work), validation is
//! deterministic, and the schemas that accept everything (`true`, `{}`) accept every instance.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use zest_core::json_schema::{check_schema, validate};

fuzz_target!(|data: &[u8]| {
    let cut = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (schema, instance) = (&data[..cut], data.get(cut + 1..).unwrap_or_default());
    let Ok(instance) = serde_json::from_slice::<Value>(instance) else { return };
    assert_eq!(validate(&json!(true), &instance), Ok(()));
    assert_eq!(validate(&json!({}), &instance), Ok(()));
    let Ok(schema) = serde_json::from_slice::<Value>(schema) else { return };
    let _ = check_schema(&schema);
    let first = validate(&schema, &instance);
    assert_eq!(first, validate(&schema, &instance), "validation is deterministic");
    if let Err(errors) = first {
        assert!(!errors.is_empty(), "a failed validation names at least one problem");
    }
});
