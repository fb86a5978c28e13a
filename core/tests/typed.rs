//! Typed tools and prompts: schemas generated from Rust types, arguments checked and
//! deserialized before the handler runs, errors that work with `?`, structured output.
#![cfg(feature = "schemars")]

mod common;

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll, Waker};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use zest_core::client::decode_result;
use zest_core::handler::{
    typed::object_schema_for, AsyncHandler, Json, State, SyncHandler, ToolError,
};
use zest_core::json_schema::validate;
use zest_core::jsonrpc::{codes, ErrorObject, RawJson};
use zest_core::schema::methods::{CallTool, GetPrompt, ListPrompts, ListTools};
use zest_core::schema::{CallToolParams, CallToolResult, GetPromptParams};
use zest_core::server::Registry;
use zest_core::testkit::Pair;
use zest_core::RequestOptions;

use common::{client_config, response_for, server_config};

/// An order: a nested struct, an enum, options and vectors.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct Order {
    /// Who ordered.
    customer: Customer,
    items: Vec<Item>,
    shipping: Shipping,
    note: Option<String>,
    #[serde(default)]
    gift: bool,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct Customer {
    name: String,
    email: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct Item {
    sku: String,
    quantity: u32,
    tags: Vec<String>,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Shipping {
    Standard,
    Express,
}

fn good_order() -> Value {
    json!({
        "customer": {"name": "Ada", "email": null},
        "items": [{"sku": "a-1", "quantity": 2, "tags": ["red"]}, {"sku": "b", "quantity": 1, "tags": []}],
        "shipping": "express",
        "note": "leave at the door"
    })
}

#[test]
fn the_generated_schema_accepts_good_arguments_and_refuses_bad_ones() {
    let schema = object_schema_for::<Order>().unwrap();
    assert_eq!(schema["type"], "object");
    assert!(schema.get("$schema").is_none(), "no dialect member: {schema}");
    let mut required: Vec<&str> =
        schema["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    required.sort_unstable();
    assert_eq!(required, ["customer", "items", "shipping"]);
    assert_eq!(schema["properties"]["customer"]["description"], "Who ordered.");

    let quantity = &schema["properties"]["items"]["items"]["properties"]["quantity"];
    assert_eq!(quantity["minimum"], 0, "{quantity}");
    assert!(quantity.get("format").is_none(), "no non-standard format: {quantity}");

    assert_eq!(validate(&schema, &good_order()), Ok(()));
    let minimal = json!({"customer": {"name": "B"}, "items": [], "shipping": "standard"});
    assert_eq!(validate(&schema, &minimal), Ok(()));

    let bad = [
        ("/customer/name", json!({"customer": {"name": 5}, "items": [], "shipping": "standard"})),
        (
            "/items/0/quantity",
            json!({"customer": {"name": "B"}, "items": [{"sku": "a", "quantity": -1, "tags": []}], "shipping": "standard"}),
        ),
        (
            "/items/0/tags/1",
            json!({"customer": {"name": "B"}, "items": [{"sku": "a", "quantity": 1, "tags": ["x", 2]}], "shipping": "standard"}),
        ),
        ("/shipping", json!({"customer": {"name": "B"}, "items": [], "shipping": "teleport"})),
        (
            "/note",
            json!({"customer": {"name": "B"}, "items": [], "shipping": "standard", "note": 7}),
        ),
        ("", json!({"customer": {"name": "B"}, "items": []})),
    ];
    for (path, instance) in bad {
        let errors = validate(&schema, &instance).expect_err(&instance.to_string());
        assert!(errors.iter().any(|e| e.path == path), "{path} not in {errors:?}");
    }
}

/// A property named `format`, beside a standard format that must stay.
#[derive(Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Formats {
    format: String,
    #[schemars(email)]
    contact: String,
    small: u8,
}

#[test]
fn only_formats_json_schema_does_not_define_are_dropped() {
    let schema = object_schema_for::<Formats>().unwrap();
    let properties = &schema["properties"];
    assert_eq!(properties["format"], json!({"type": "string"}));
    assert_eq!(properties["contact"]["format"], "email");
    assert_eq!(properties["small"], json!({"type": "integer", "minimum": 0, "maximum": 255}));
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Sum {
    total: f64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ReadArgs {
    path: String,
}

/// A field whose schema (a string) is looser than its type (a number).
#[derive(Deserialize, schemars::JsonSchema)]
struct Loose {
    #[schemars(with = "String")]
    count: u32,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Greeting {
    /// Who to greet.
    name: String,
    /// How: "warm" or "dry".
    tone: Option<String>,
}

struct Hits(AtomicU32);

/// Fails as reading a missing file does (the core does no file IO, not even in tests).
fn read(path: &str) -> std::io::Result<String> {
    Err(std::io::Error::new(std::io::ErrorKind::NotFound, format!("{path}: no such file")))
}

type Sync = SyncHandler<()>;

fn blocking_registry() -> Registry<Sync> {
    Registry::<Sync>::new()
        .with_state(Hits(AtomicU32::new(0)))
        .tool("add", "Adds", |Add { a, b }| Json(Sum { total: a + b }))
        .tool("read", "Reads a file", |p: ReadArgs| -> Result<String, ToolError> {
            Ok(read(&p.path)?)
        })
        .tool("loose", "Counts", |l: Loose| format!("{}", l.count))
        .tool("hit", "Counts calls", |hits: State<Hits>| {
            (hits.0.fetch_add(1, Ordering::SeqCst) + 1).to_string()
        })
        .tool("refuse", "Refuses", || -> Result<String, ToolError> {
            let object = ErrorObject::invalid_params("no").with_data(json!({"why": "because"}));
            Err(ToolError::protocol(object))
        })
        .prompt("greet", "Greets someone", |g: Greeting| {
            format!("Hello, {}! ({})", g.name, g.tone.unwrap_or_else(|| "warm".into()))
        })
}

fn pair(registry: Registry<Sync>) -> Pair<Sync> {
    let mut pair = Pair::new(client_config(), server_config(), registry);
    pair.handshake();
    pair.take_client_events();
    pair.take_server_events();
    pair
}

/// Sends `params` as method `M`, runs the handler on this thread, and returns the raw answer.
fn call<M: zest_core::schema::methods::Method>(
    pair: &mut Pair<Sync>,
    params: &M::Params,
) -> Result<RawJson, zest_core::error::RequestError> {
    let now = pair.clock.now();
    let id = pair.client.send::<M>(now, params, RequestOptions::default()).unwrap();
    pair.pump();
    pair.serve(|h, c| h.run(&(), c.clone()));
    response_for(&pair.take_client_events(), &id)
}

fn call_tool(pair: &mut Pair<Sync>, name: &str, args: Value) -> CallToolResult {
    decode_result::<CallTool>(call::<CallTool>(pair, &CallToolParams::new(name, args))).unwrap()
}

fn text(result: &CallToolResult) -> &str {
    result.content[0].as_text().unwrap()
}

#[test]
fn typed_tools_are_listed_with_generated_schemas() {
    let mut pair = pair(blocking_registry());
    let list = decode_result::<ListTools>(call::<ListTools>(&mut pair, &Default::default()));
    let tools = serde_json::to_value(list.unwrap().tools).unwrap();
    let add = tools.as_array().unwrap().iter().find(|t| t["name"] == "add").unwrap();
    assert_eq!(add["description"], "Adds");
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(add["inputSchema"]["properties"]["a"]["type"], "number");
    assert_eq!(add["outputSchema"]["required"], json!(["total"]));
    let hit = tools.as_array().unwrap().iter().find(|t| t["name"] == "hit").unwrap();
    assert_eq!(hit["inputSchema"], json!({"type": "object"}), "() takes no arguments");
}

#[test]
fn a_wrong_argument_type_is_an_is_error_result_naming_the_field() {
    let mut pair = pair(blocking_registry());
    let result = call_tool(&mut pair, "add", json!({"a": 1, "b": "two"}));
    assert!(result.is_error());
    assert!(text(&result).contains("/b"), "{}", text(&result));

    // Past the schema, deserialization names the field too.
    let result = call_tool(&mut pair, "loose", json!({"count": "many"}));
    assert!(result.is_error());
    let message = text(&result);
    assert!(message.contains("count") && message.contains("tool \"loose\""), "{message}");
}

#[test]
fn question_mark_on_an_io_error_is_an_is_error_result_with_its_message() {
    let mut pair = pair(blocking_registry());
    let missing = "/nonexistent/zest/typed-test";
    let expected = read(missing).unwrap_err().to_string();
    let result = call_tool(&mut pair, "read", json!({"path": missing}));
    assert!(result.is_error());
    assert_eq!(text(&result), expected);
}

#[test]
fn a_protocol_error_keeps_its_code_message_and_data() {
    let mut pair = pair(blocking_registry());
    let outcome = call::<CallTool>(&mut pair, &CallToolParams::new("refuse", ()));
    let zest_core::error::RequestError::Remote(e) = outcome.unwrap_err() else { panic!() };
    assert_eq!((e.code, e.message.as_str()), (codes::INVALID_PARAMS, "no"));
    assert_eq!(e.data, Some(json!({"why": "because"})));
}

#[test]
fn json_results_fill_structured_content_that_matches_the_output_schema() {
    let mut pair = pair(blocking_registry());
    let result = call_tool(&mut pair, "add", json!({"a": 1.5, "b": 2}));
    assert!(!result.is_error());
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured, json!({"total": 3.5}));
    assert_eq!(serde_json::from_str::<Value>(text(&result)).unwrap(), structured);
    let schema = object_schema_for::<Sum>().unwrap();
    assert_eq!(validate(&schema, &structured), Ok(()));
}

#[test]
fn state_is_shared_by_every_call() {
    let mut pair = pair(blocking_registry());
    assert_eq!(text(&call_tool(&mut pair, "hit", json!({}))), "1");
    assert_eq!(text(&call_tool(&mut pair, "hit", json!({}))), "2");
}

#[test]
#[should_panic(expected = "State<")]
fn a_handler_taking_state_the_registry_lacks_is_refused_at_registration() {
    let _ = Registry::<Sync>::new().tool("hit", "Counts", |_: State<Hits>| "never");
}

#[test]
#[should_panic(expected = "at most one argument type")]
fn a_handler_taking_two_argument_types_is_refused_at_registration() {
    let _ = Registry::<Sync>::new().tool("two", "Two", |_: Add, _: ReadArgs| "never");
}

#[test]
#[should_panic(expected = "cannot be a tool's input")]
fn an_argument_type_that_is_not_an_object_is_refused_at_registration() {
    let _ = Registry::<Sync>::new().tool("s", "String", |_: Vec<String>| "never");
}

#[test]
fn typed_prompts_list_their_arguments_and_deserialize_them() {
    let mut pair = pair(blocking_registry());
    let list = decode_result::<ListPrompts>(call::<ListPrompts>(&mut pair, &Default::default()));
    let prompts = serde_json::to_value(list.unwrap().prompts).unwrap();
    assert_eq!(
        prompts[0]["arguments"],
        json!([
            {"name": "name", "description": "Who to greet.", "required": true},
            {"name": "tone", "description": "How: \"warm\" or \"dry\".", "required": false}
        ])
    );
    let params: GetPromptParams =
        serde_json::from_value(json!({"name": "greet", "arguments": {"name": "Ada"}})).unwrap();
    let result = decode_result::<GetPrompt>(call::<GetPrompt>(&mut pair, &params)).unwrap();
    let message = serde_json::to_value(&result.messages[0]).unwrap();
    assert_eq!(message["content"]["text"], "Hello, Ada! (warm)");
}

/// Polls a future that never waits on anything outside itself.
fn ready<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("the handler waited"),
    }
}

#[test]
fn async_handlers_take_arguments_and_state_in_any_order() {
    let registry = Registry::<AsyncHandler<()>>::new()
        .with_state(Hits(AtomicU32::new(10)))
        .tool("add", "Adds", |Add { a, b }| async move { format!("{}", a + b) })
        .tool("hit", "Counts", |hits: State<Hits>, Add { a, .. }| async move {
            Ok::<_, ToolError>(format!("{} {a}", hits.0.fetch_add(1, Ordering::SeqCst)))
        });
    let mut pair = Pair::new(client_config(), server_config(), registry);
    pair.handshake();
    pair.take_server_events();
    let now = pair.clock.now();
    let params = CallToolParams::new("hit", json!({"a": 1, "b": 2}));
    let id = pair.client.send::<CallTool>(now, &params, RequestOptions::default()).unwrap();
    pair.pump();
    pair.serve(|h, c| ready(h.run((), c.clone())));
    let result = decode_result::<CallTool>(response_for(&pair.take_client_events(), &id));
    assert_eq!(text(&result.unwrap()), "10 1");
}

#[test]
fn tool_with_keeps_the_definition_and_replaces_only_what_the_types_say() {
    use zest_core::schema::{Tool, ToolAnnotations};
    let titled = Tool::new("add", "Adds", json!({"type": "object"}))
        .with_title("Adder")
        .with_annotations(ToolAnnotations::new().read_only());
    let hand_written =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let registry = Registry::<Sync>::new()
        .tool_with(titled, |Add { a, b }| Json(Sum { total: a + b }))
        .tool_with(Tool::new("raw", "Keeps its schema", hand_written.clone()), || "ok");
    let tools: Vec<Value> = registry.tools().map(|t| serde_json::to_value(t).unwrap()).collect();
    assert_eq!(tools[0]["title"], "Adder");
    assert_eq!(tools[0]["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(tools[0]["outputSchema"]["required"], json!(["total"]));
    assert_eq!(tools[1]["inputSchema"], hand_written);
    assert!(tools[1].get("outputSchema").is_none());
}

#[test]
fn prompt_arguments_that_do_not_deserialize_are_invalid_params_naming_the_field() {
    let registry =
        Registry::<Sync>::new().prompt("count", "Counts", |l: Loose| l.count.to_string());
    let mut pair = pair(registry);
    let params: GetPromptParams =
        serde_json::from_value(json!({"name": "count", "arguments": {"count": "3"}})).unwrap();
    let zest_core::error::RequestError::Remote(e) =
        call::<GetPrompt>(&mut pair, &params).unwrap_err()
    else {
        panic!("expected a JSON-RPC error")
    };
    assert_eq!(e.code, codes::INVALID_PARAMS);
    assert!(e.message.contains("count") && e.message.contains("prompt \"count\""), "{e:?}");
}
