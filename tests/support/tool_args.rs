//! Reading the test tools' arguments, for the HTTP test support of every runtime (included
//! by tests/support/http_tools.rs and zest-blocking's tests/common/http.rs).

use serde_json::Value;
use zest_core::schema::CallToolParams;

/// Argument `name` as a string; empty when absent or not a string.
pub(crate) fn str_arg(p: &CallToolParams, name: &str) -> String {
    p.arguments
        .as_ref()
        .and_then(|a| a.get(name))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Argument `name` as a number; 0 when absent or not a number.
pub(crate) fn num_arg(p: &CallToolParams, name: &str) -> f64 {
    p.arguments.as_ref().and_then(|a| a.get(name)).and_then(Value::as_f64).unwrap_or(0.0)
}
