//! A stand-in, over stdio, for the servers the suite plays in its non-auth client scenarios,
//! so the client fixture's steps are tested before zest has an HTTP client. Same tool names
//! and arguments as the suite's; each answer shows what the server received.
//!
//! Tools: `add_numbers {a, b}` → `The sum of A and B is S`; `test_client_elicitation_defaults`
//! → elicits a form whose every field has a default, answers with the content it got (JSON);
//! `test_reconnection` → a text; `json_schema_2020_12_tool` (the rich 2020-12 schema) and
//! `json_schema_echo {schema}` → the schema it got (JSON); `lookup_user`, whose schema has a
//! `$ref` to a network URI.

use serde_json::{json, Value};
use zest_blocking::core::jsonrpc::{codes, ErrorObject};
use zest_blocking::schema::{CallToolParams, CallToolResult, Tool};
use zest_blocking::{serve_stdio, PeerApi, Registry};
use zest_conformance::fixture::content::{json_schema_2020_12, Elicitation};
use zest_conformance::fixture::server_config;

/// Where `lookup_user`'s profile schema points: a loopback port nothing listens on.
pub const PROFILE_REF: &str = "http://127.0.0.1:9/canary/profile.json";

fn main() {
    let mut r = Registry::default();
    let numbers = json!({
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"]
    });
    r.raw_tool(Tool::new("add_numbers", "Add two numbers together", numbers), |_, p| {
        let (a, b) = (arg(&p, "a"), arg(&p, "b"));
        let sum = a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0);
        Ok(CallToolResult::text(format!("The sum of {a} and {b} is {sum}")))
    });
    let empty = || json!({"type": "object", "properties": {}});
    let defaults = Tool::new(
        "test_client_elicitation_defaults",
        "Tests that client applies defaults for omitted elicitation fields",
        empty(),
    );
    r.raw_tool(defaults, |ctx, p| {
        let answer = ctx.elicit(Elicitation::Sep1034Defaults.request(&p));
        let answer = answer.map_err(|e| ErrorObject::new(codes::INTERNAL_ERROR, e.to_string()))?;
        Ok(CallToolResult::text(Value::Object(answer.content.unwrap_or_default()).to_string()))
    });
    r.raw_tool(
        Tool::new("test_reconnection", "Closes its SSE stream mid-call", empty()),
        |_, _| Ok(CallToolResult::text("Reconnection test completed successfully")),
    );
    let focal = Tool::new("json_schema_2020_12_tool", "Rich 2020-12 schema", json_schema_2020_12());
    r.raw_tool(focal, |_, _| Ok(CallToolResult::text("called")));
    let echo_schema = json!({
        "type": "object",
        "properties": {"schema": {"type": "object"}},
        "required": ["schema"]
    });
    r.raw_tool(Tool::new("json_schema_echo", "Echoes the schema it gets", echo_schema), |_, p| {
        Ok(CallToolResult::text(arg(&p, "schema").to_string()))
    });
    // json-schema-ref-no-deref: a `$ref` to a network URI the client must never fetch
    // (nothing listens there).
    let lookup = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"userId": {"type": "string", "pattern": "^[a-z0-9-]+$"}},
        "properties": {
            "id": {"$ref": "#/$defs/userId"},
            "profile": {"$ref": PROFILE_REF}
        },
        "required": ["id"]
    });
    r.raw_tool(Tool::new("lookup_user", "Look up a user profile by id", lookup), |_, _| {
        Ok(CallToolResult::text("called"))
    });
    let reason = serve_stdio(server_config("blocking (client scenarios)"), r);
    eprintln!("scenario_server: session over: {reason}");
}

fn arg(p: &CallToolParams, name: &str) -> Value {
    p.arguments.as_ref().and_then(|a| a.get(name)).cloned().unwrap_or(Value::Null)
}
