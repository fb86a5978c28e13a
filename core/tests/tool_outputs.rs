//! The client checks `tools/call` results against the `outputSchema` it was given by
//! `tools/list`: a mismatch or missing `structuredContent` is a typed error, an `isError`
//! result is passed on unchecked, and a tool never listed is not checked.

mod common;

use common::*;
use serde_json::{json, Value};
use zest_core::client::decode_result;
use zest_core::error::RequestError;
use zest_core::jsonrpc::{RawJson, RequestId};
use zest_core::schema::methods::{CallTool, ListTools};
use zest_core::schema::PaginatedParams;
use zest_core::testkit::Pair;
use zest_core::RequestOptions;

fn call(pair: &mut Pair<Handler>, args: Value) -> RequestId {
    let now = pair.clock.now();
    let params = serde_json::from_value(json!({"name": "weather", "arguments": args})).unwrap();
    let id = pair.client.send::<CallTool>(now, &params, RequestOptions::default()).unwrap();
    pair.pump();
    id
}

/// Calls `weather` and answers it with `result` straight onto the client's wire (zest's own
/// server checks its tools' output before sending, so it never answers like this).
fn call_answered(pair: &mut Pair<Handler>, result: Value) -> Result<RawJson, RequestError> {
    let id = call(pair, json!({}));
    let line = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string() + "\n";
    pair.inject_to_client(line.as_bytes());
    response_for(&pair.take_client_events(), &id)
}

fn list_tools(pair: &mut Pair<Handler>) {
    let now = pair.clock.now();
    let params = PaginatedParams::default();
    let id = pair.client.send::<ListTools>(now, &params, RequestOptions::default()).unwrap();
    pair.pump();
    pair.serve(app);
    let listed = decode_result::<ListTools>(response_for(&pair.take_client_events(), &id));
    assert!(listed.unwrap().tools.iter().any(|t| t.name == "weather" && t.output_schema.is_some()));
}

#[test]
fn a_listed_schema_is_enforced_on_the_result() {
    let mut pair = ready_pair();
    list_tools(&mut pair);

    let good = call(&mut pair, json!({}));
    pair.serve(app);
    let result = decode_result::<CallTool>(response_for(&pair.take_client_events(), &good));
    assert_eq!(result.unwrap().structured_content, Some(json!({"temp": 21.5})));

    match call_answered(&mut pair, json!({"content": [], "structuredContent": {"temp": "hot"}})) {
        Err(RequestError::OutputSchemaMismatch { tool, problems }) => {
            assert_eq!(tool, "weather");
            assert!(problems.iter().any(|p| p.starts_with("/temp")), "{problems:?}");
        }
        other => panic!("expected an output schema mismatch, got {other:?}"),
    }
}

#[test]
fn a_result_without_structured_content_breaks_a_listed_schema() {
    let mut pair = ready_pair();
    list_tools(&mut pair);
    let result = call_answered(&mut pair, json!({"content": [{"type": "text", "text": "21.5"}]}));
    let Err(RequestError::OutputSchemaMismatch { problems, .. }) = result else {
        panic!("expected a mismatch, got {result:?}")
    };
    assert_eq!(problems, ["the result has no structuredContent"]);
}

#[test]
fn an_is_error_result_is_the_tools_own_failure_and_is_not_checked() {
    let mut pair = ready_pair();
    list_tools(&mut pair);
    let failed = json!({"content": [{"type": "text", "text": "no sensor"}], "isError": true});
    let result = decode_result::<CallTool>(call_answered(&mut pair, failed)).unwrap();
    assert_eq!(result.is_error, Some(true));
}

#[test]
fn a_tool_never_listed_is_not_checked() {
    let mut pair = ready_pair();
    let off = json!({"content": [], "structuredContent": {"temp": "hot"}});
    let result = decode_result::<CallTool>(call_answered(&mut pair, off));
    assert_eq!(result.unwrap().structured_content, Some(json!({"temp": "hot"})));
}
