//! Serde helpers shared by the schema types: tagged unions with a lossless fallback, and numbers
//! written the way JavaScript writes them.

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::Value;

/// A body serialized with a leading discriminator entry, e.g. `{"type": "text", ..body}`.
#[derive(Serialize)]
pub(super) struct Tagged<'a, T: Serialize> {
    #[serde(rename = "type")]
    pub(super) tag: &'static str,
    #[serde(flatten)]
    pub(super) body: &'a T,
}

/// The `type` discriminator of a JSON object, if it has a string one.
pub(super) fn type_tag(value: &Value) -> Option<&str> {
    value.get("type").and_then(Value::as_str)
}

/// Decodes the body of a `type`-tagged object: the tag itself is dropped so that it does not
/// reappear in the body's `extra` map.
pub(super) fn untagged_body<T: DeserializeOwned, E: serde::de::Error>(
    mut value: Value,
) -> Result<T, E> {
    if let Some(map) = value.as_object_mut() {
        map.remove("type");
    }
    serde_json::from_value(value).map_err(E::custom)
}

/// Decodes `value` as `T`, mapping the error into the caller's deserializer error.
pub(super) fn from_value<T: DeserializeOwned, E: serde::de::Error>(value: Value) -> Result<T, E> {
    serde_json::from_value(value).map_err(E::custom)
}

/// Largest integer an IEEE double (and so a JavaScript peer) holds exactly: 2^53 - 1.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Writes an integral `f64` without a fraction (`50`, not `50.0`), as JavaScript peers do, so
/// that integers survive a round trip unchanged and integer-typed peers can read them.
pub(super) fn f64_js<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    let v = *value;
    if v.fract() == 0.0 && v.abs() <= MAX_SAFE_INTEGER {
        // The cast is exact: `v` is integral and within ±2^53.
        return s.serialize_i64(v as i64);
    }
    s.serialize_f64(v)
}

/// [`f64_js`] for optional fields; use with `skip_serializing_if = "Option::is_none"`.
pub(super) fn opt_f64_js<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => f64_js(v, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct N(#[serde(serialize_with = "f64_js")] f64);

    #[test]
    fn integral_floats_are_written_as_integers() {
        assert_eq!(serde_json::to_string(&N(50.0)).unwrap(), "50");
        assert_eq!(serde_json::to_string(&N(-3.0)).unwrap(), "-3");
        assert_eq!(serde_json::to_string(&N(0.25)).unwrap(), "0.25");
        assert_eq!(serde_json::to_string(&N(1e300)).unwrap(), "1e+300");
    }
}
