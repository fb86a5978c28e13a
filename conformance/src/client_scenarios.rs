//! What the client fixture (`conformance_client`) does in each non-auth client scenario of
//! the suite. The suite plays the server and checks what it receives; the facts each
//! scenario relies on (tool names, arguments) come from the scenario sources.
//!
//! The steps are written once, against [`ScenarioClient`] (list tools, call a tool), which
//! each runtime's client satisfies: zest-blocking's directly, the async ones by blocking on
//! their futures. The elicitation answer is [`elicitation_answer`], shared by every runtime.

use std::fmt;
use std::str::FromStr;

use serde_json::{json, Map, Value};
use zest_core::api::CallError;

use crate::client_auth::describe_call;
use zest_core::schema::{CallToolResult, ElicitParams, ElicitResult, Tool};

/// A client scenario the fixture plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// `initialize`: connect, list tools, close.
    Initialize,
    /// `tools_call`: call `add_numbers` with two numbers.
    ToolsCall,
    /// `elicitation-sep1034-client-defaults`: accept an elicitation with nothing filled in;
    /// the client applies the schema's defaults (SEP-1034).
    ElicitationDefaults,
    /// `sse-retry`: call `test_reconnection`, whose SSE stream the server closes with
    /// `retry: 500`; the client must resume with `Last-Event-ID` after that delay.
    SseRetry,
    /// `json-schema-2020-12-preservation`: echo a tool's input schema back verbatim.
    JsonSchemaPreservation,
    /// `json-schema-ref-no-deref`: list `lookup_user`, whose schema has a `$ref` to a
    /// network URI, and never fetch it (SEP-2106).
    JsonSchemaRefNoDeref,
    /// `request-metadata` (2026-07-28): discover, then list tools, each request carrying the
    /// protocol `_meta` and header.
    RequestMetadata,
    /// `http-standard-headers` (2026-07-28): call every tool, read every resource, get every
    /// prompt, each POST naming its method and target in headers.
    HttpStandardHeaders,
    /// `http-custom-headers` (2026-07-28): make the tool calls the suite passes in
    /// `MCP_CONFORMANCE_CONTEXT`, mirroring marked arguments into `Mcp-Param-*` headers.
    HttpCustomHeaders,
    /// `http-invalid-tool-headers` (2026-07-28): call every tool the client kept after
    /// dropping those with invalid `x-mcp-header` annotations.
    HttpInvalidToolHeaders,
    /// `sep-2322-client-request-state` (2026-07-28): call the tools that answer with
    /// input-required results (with and without `requestState`, and without `resultType`).
    ClientRequestState,
    /// Every `auth/*` scenario: authorize as the server demands (the OAuth flow runs inside
    /// the client), then list tools and call `test-tool` (two authorized requests, which
    /// step-up and authorization-server migration need).
    Auth,
}

impl Scenario {
    /// Every scenario with the name the suite gives it.
    pub const ALL: [(&'static str, Self); 11] = [
        ("initialize", Self::Initialize),
        ("tools_call", Self::ToolsCall),
        ("elicitation-sep1034-client-defaults", Self::ElicitationDefaults),
        ("sse-retry", Self::SseRetry),
        ("json-schema-2020-12-preservation", Self::JsonSchemaPreservation),
        ("json-schema-ref-no-deref", Self::JsonSchemaRefNoDeref),
        ("request-metadata", Self::RequestMetadata),
        ("http-standard-headers", Self::HttpStandardHeaders),
        ("http-custom-headers", Self::HttpCustomHeaders),
        ("http-invalid-tool-headers", Self::HttpInvalidToolHeaders),
        ("sep-2322-client-request-state", Self::ClientRequestState),
    ];
}

impl FromStr for Scenario {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .iter()
            .find(|(name, _)| *name == s)
            .map(|(_, scenario)| *scenario)
            .or_else(|| s.starts_with("auth/").then_some(Self::Auth))
            .ok_or_else(|| format!("scenario {s:?} is not one this client plays"))
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = Self::ALL.iter().find(|(_, s)| s == self).map_or("auth/*", |(n, _)| n);
        f.write_str(name)
    }
}

/// What a scenario needs from a connected client.
pub trait ScenarioClient {
    /// Every tool, all pages.
    fn list_tools(&self) -> Result<Vec<Tool>, CallError>;
    /// Calls a tool.
    fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, CallError>;
    /// Every resource's URI, all pages.
    fn resource_uris(&self) -> Result<Vec<String>, CallError>;
    /// Reads a resource (the result is not looked at).
    fn read(&self, uri: &str) -> Result<(), CallError>;
    /// Every prompt's name, all pages.
    fn prompt_names(&self) -> Result<Vec<String>, CallError>;
    /// Gets a prompt with no arguments (the result is not looked at).
    fn prompt(&self, name: &str) -> Result<(), CallError>;
}

/// The three runtimes' clients as [`ScenarioClient`]s: `$wait` turns a call of the
/// runtime's `ClientApi` into its result.
macro_rules! scenario_client {
    ($client:ty, $api:path, |$this:ident| $inner:expr, $wait:path) => {
        impl ScenarioClient for $client {
            fn list_tools(&self) -> Result<Vec<Tool>, CallError> {
                let $this = self;
                $wait(<_ as $api>::list_all_tools($inner))
            }
            fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, CallError> {
                let $this = self;
                $wait(<_ as $api>::call_tool($inner, name, arguments))
            }
            fn resource_uris(&self) -> Result<Vec<String>, CallError> {
                let $this = self;
                let listed = $wait(<_ as $api>::list_all_resources($inner))?;
                Ok(listed.into_iter().map(|r| r.uri).collect())
            }
            fn read(&self, uri: &str) -> Result<(), CallError> {
                let $this = self;
                $wait(<_ as $api>::read_resource($inner, uri)).map(drop)
            }
            fn prompt_names(&self) -> Result<Vec<String>, CallError> {
                let $this = self;
                let listed = $wait(<_ as $api>::list_all_prompts($inner))?;
                Ok(listed.into_iter().map(|p| p.name).collect())
            }
            fn prompt(&self, name: &str) -> Result<(), CallError> {
                let $this = self;
                $wait(<_ as $api>::get_prompt($inner, name, Default::default())).map(drop)
            }
        }
    };
}

fn done<T>(result: T) -> T {
    result
}

scenario_client!(zest_blocking::Client, zest_blocking::ClientApi, |c| c, done);

/// A zest-tokio client driven to completion on a tokio runtime, call by call.
#[derive(Debug)]
pub struct OnTokio<'a> {
    /// The runtime to block on.
    pub runtime: &'a tokio::runtime::Runtime,
    /// The client.
    pub client: &'a zest_tokio::Client,
}

impl<'a> OnTokio<'a> {
    fn wait<T>(&self, call: impl std::future::Future<Output = T>) -> T {
        self.runtime.block_on(call)
    }
}

impl ScenarioClient for OnTokio<'_> {
    fn list_tools(&self) -> Result<Vec<Tool>, CallError> {
        self.wait(zest_tokio::ClientApi::list_all_tools(self.client))
    }
    fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, CallError> {
        self.wait(zest_tokio::ClientApi::call_tool(self.client, name, arguments))
    }
    fn resource_uris(&self) -> Result<Vec<String>, CallError> {
        let listed = self.wait(zest_tokio::ClientApi::list_all_resources(self.client))?;
        Ok(listed.into_iter().map(|r| r.uri).collect())
    }
    fn read(&self, uri: &str) -> Result<(), CallError> {
        self.wait(zest_tokio::ClientApi::read_resource(self.client, uri)).map(drop)
    }
    fn prompt_names(&self) -> Result<Vec<String>, CallError> {
        let listed = self.wait(zest_tokio::ClientApi::list_all_prompts(self.client))?;
        Ok(listed.into_iter().map(|p| p.name).collect())
    }
    fn prompt(&self, name: &str) -> Result<(), CallError> {
        let call = zest_tokio::ClientApi::get_prompt(self.client, name, Default::default());
        self.wait(call).map(drop)
    }
}

scenario_client!(zest_smol::Client, zest_smol::ClientApi, |c| c, smol::block_on);

/// Plays `scenario` on a connected client; returns the last tool result (none for
/// `initialize`), or which step failed.
pub fn play(
    scenario: Scenario,
    client: &impl ScenarioClient,
) -> Result<Option<CallToolResult>, String> {
    play_with(scenario, client, &Value::Null)
}

/// [`play`], with the context the suite passes in `MCP_CONFORMANCE_CONTEXT` (the tool calls
/// of `http-custom-headers`).
pub fn play_with(
    scenario: Scenario,
    client: &impl ScenarioClient,
    context: &Value,
) -> Result<Option<CallToolResult>, String> {
    let tools =
        client.list_tools().map_err(|e| format!("tools/list failed: {}", describe_call(&e)))?;
    let call = |name: &str, arguments: Value| {
        let result = (client.call_tool(name, arguments))
            .map_err(|e| format!("{name} failed: {}", describe_call(&e)))?;
        if result.is_error() {
            return Err(format!("{name} answered with an error: {result:?}"));
        }
        Ok(result)
    };
    let require = |name: &str| {
        tools.iter().find(|t| t.name == name).ok_or_else(|| format!("the server lists no {name}"))
    };
    let result = match scenario {
        Scenario::Initialize => return Ok(None),
        Scenario::ToolsCall => {
            require("add_numbers")?;
            call("add_numbers", json!({"a": 5, "b": 3}))?
        }
        Scenario::ElicitationDefaults => {
            require("test_client_elicitation_defaults")?;
            call("test_client_elicitation_defaults", json!({}))?
        }
        Scenario::SseRetry => {
            require("test_reconnection")?;
            call("test_reconnection", json!({}))?
        }
        Scenario::JsonSchemaRefNoDeref => {
            // Listing is the whole step: the schema is kept as sent and never dereferenced.
            require("lookup_user")?;
            return Ok(None);
        }
        Scenario::RequestMetadata => return Ok(None),
        Scenario::HttpStandardHeaders => {
            for tool in &tools {
                call(&tool.name, json!({}))?;
            }
            let uris = client.resource_uris().map_err(|e| format!("resources/list failed: {e}"))?;
            for uri in uris {
                client.read(&uri).map_err(|e| format!("reading {uri} failed: {e}"))?;
            }
            let prompts = client.prompt_names().map_err(|e| format!("prompts/list failed: {e}"))?;
            for name in prompts {
                client.prompt(&name).map_err(|e| format!("prompt {name} failed: {e}"))?;
            }
            return Ok(None);
        }
        Scenario::HttpCustomHeaders => {
            let calls = context["toolCalls"].as_array().cloned().unwrap_or_default();
            let mut last = None;
            for planned in calls {
                let name = planned["name"].as_str().unwrap_or_default().to_owned();
                last = Some(call(&name, planned["arguments"].clone())?);
            }
            return Ok(last);
        }
        Scenario::HttpInvalidToolHeaders => {
            // Only what the client kept: a tool with an invalid annotation is never listed.
            let mut last = None;
            for tool in &tools {
                last = Some(call(&tool.name, json!({}))?);
            }
            return Ok(last);
        }
        Scenario::ClientRequestState => {
            let mut last = None;
            // A call between two MRTR flows carries neither's answers nor state.
            let tools_in_order = [
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ];
            for name in tools_in_order {
                if tools.iter().any(|t| t.name == name) {
                    last = Some(call(name, json!({}))?);
                }
            }
            return Ok(last);
        }
        Scenario::Auth => call("test-tool", json!({}))?,
        Scenario::JsonSchemaPreservation => {
            let focal = require("json_schema_2020_12_tool")?;
            require("json_schema_echo")?;
            let schema = serde_json::to_value(&focal.input_schema)
                .map_err(|e| format!("the input schema does not serialize: {e}"))?;
            call("json_schema_echo", json!({"schema": schema}))?
        }
    };
    Ok(Some(result))
}

/// The fixture user's answer to any elicitation: accept, filling in nothing, so the form's
/// defaults apply. zest's client fills each field the answer leaves out with its schema
/// default (SEP-1034) before the answer is sent.
/// A required field with no default is answered too (a boolean `true`, a number `1`, a
/// string `"zest"`), so that a form that insists gets an answer that fits it.
pub fn elicitation_answer(params: &ElicitParams) -> ElicitResult {
    let form = serde_json::to_value(params).unwrap_or_default();
    let schema = &form["requestedSchema"];
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    let mut content = Map::new();
    for name in required.iter().filter_map(Value::as_str) {
        let field = &schema["properties"][name];
        if field.get("default").is_some() {
            continue;
        }
        let value = match field["type"].as_str() {
            Some("boolean") => json!(true),
            Some("integer" | "number") => json!(1),
            _ => json!("zest"),
        };
        content.insert(name.to_owned(), value);
    }
    ElicitResult::accept(content)
}
