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
}

impl Scenario {
    /// Every scenario with the name the suite gives it.
    pub const ALL: [(&'static str, Self); 6] = [
        ("initialize", Self::Initialize),
        ("tools_call", Self::ToolsCall),
        ("elicitation-sep1034-client-defaults", Self::ElicitationDefaults),
        ("sse-retry", Self::SseRetry),
        ("json-schema-2020-12-preservation", Self::JsonSchemaPreservation),
        ("json-schema-ref-no-deref", Self::JsonSchemaRefNoDeref),
    ];
}

impl FromStr for Scenario {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .iter()
            .find(|(name, _)| *name == s)
            .map(|(_, scenario)| *scenario)
            .ok_or_else(|| format!("scenario {s:?} is not one this client plays"))
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = Self::ALL.iter().find(|(_, s)| s == self).map_or("?", |(n, _)| n);
        f.write_str(name)
    }
}

/// What a scenario needs from a connected client.
pub trait ScenarioClient {
    /// Every tool, all pages.
    fn list_tools(&self) -> Result<Vec<Tool>, CallError>;
    /// Calls a tool.
    fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, CallError>;
}

impl ScenarioClient for zest_blocking::Client {
    fn list_tools(&self) -> Result<Vec<Tool>, CallError> {
        zest_blocking::ClientApi::list_all_tools(self)
    }
    fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, CallError> {
        zest_blocking::ClientApi::call_tool(self, name, arguments)
    }
}

/// A zest-tokio client driven to completion on a tokio runtime, call by call.
#[derive(Debug)]
pub struct OnTokio<'a> {
    /// The runtime to block on.
    pub runtime: &'a tokio::runtime::Runtime,
    /// The client.
    pub client: &'a zest_tokio::Client,
}

impl ScenarioClient for OnTokio<'_> {
    fn list_tools(&self) -> Result<Vec<Tool>, CallError> {
        self.runtime.block_on(zest_tokio::ClientApi::list_all_tools(self.client))
    }
    fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, CallError> {
        self.runtime.block_on(zest_tokio::ClientApi::call_tool(self.client, name, arguments))
    }
}

impl ScenarioClient for zest_smol::Client {
    fn list_tools(&self) -> Result<Vec<Tool>, CallError> {
        smol::block_on(zest_smol::ClientApi::list_all_tools(self))
    }
    fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, CallError> {
        smol::block_on(zest_smol::ClientApi::call_tool(self, name, arguments))
    }
}

/// Plays `scenario` on a connected client; returns the last tool result (none for
/// `initialize`), or which step failed.
pub fn play(
    scenario: Scenario,
    client: &impl ScenarioClient,
) -> Result<Option<CallToolResult>, String> {
    let tools = client.list_tools().map_err(|e| format!("tools/list failed: {e}"))?;
    let call = |name: &str, arguments: Value| {
        let result =
            client.call_tool(name, arguments).map_err(|e| format!("{name} failed: {e}"))?;
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
pub fn elicitation_answer(_params: &ElicitParams) -> ElicitResult {
    ElicitResult::accept(Map::new())
}
