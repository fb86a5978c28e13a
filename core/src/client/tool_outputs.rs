//! Checking tool results against the `outputSchema` the server listed
//! (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#output-schema>):
//! schemas are learned from `tools/list` answers, kept as sent, and a `tools/call` result for
//! a listed tool with a schema must carry `structuredContent` that matches it. An `isError`
//! result is not checked (it is the tool's own failure, reported as such).
//!
//! Every request gets exactly one `Event::Response`, and this table drops its entry then, so
//! it never holds more than the calls in flight plus one schema per listed tool.

use crate::jsonrpc::own_ids::{OwnIdMap, OwnIdSet};
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::{Event, ServerNotification};
use crate::error::RequestError;
use crate::http::client::{marks_are_valid, ParamMarks};
use crate::http::server::param_headers::marked;
use crate::json_schema;
use crate::jsonrpc::{RawJson, RequestId};

/// How many schema problems one error names.
const ERRORS_SHOWN: usize = 3;

#[derive(Debug, Default)]
pub(super) struct ToolOutputs {
    /// Tool name → its `outputSchema`, verbatim, from the latest `tools/list` page naming it.
    schemas: HashMap<String, Value>,
    /// `tools/list` requests in flight.
    lists: OwnIdSet,
    /// `tools/call` requests in flight, with the tool they call.
    calls: OwnIdMap<RequestId, String>,
    /// Tool name → the arguments its `inputSchema` marks with `x-mcp-header` (2026-07-28
    /// over HTTP mirrors them into `Mcp-Param-*` headers).
    pub(super) marks: ParamMarks,
}

/// A request whose answer this table looks at.
#[derive(Debug)]
pub(super) enum Watch {
    List,
    Call(String),
}

#[derive(Deserialize)]
struct ListPage {
    #[serde(default)]
    tools: Vec<ListedTool>,
}

#[derive(Deserialize)]
struct ListedTool {
    name: String,
    #[serde(rename = "outputSchema")]
    output_schema: Option<Value>,
    /// Read as a `Value` only where its marks matter (2026-07-28 over HTTP).
    #[serde(rename = "inputSchema")]
    input_schema: Option<Box<serde_json::value::RawValue>>,
}

#[derive(Deserialize)]
struct CallName {
    name: String,
}

#[derive(Deserialize)]
struct CallOutput {
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    #[serde(rename = "structuredContent")]
    structured_content: Option<Value>,
}

impl ToolOutputs {
    /// What to watch for a request of `method` with `params` about to go out: `tools/list`
    /// always, `tools/call` only for a tool with a known schema (so a call pays for reading
    /// its tool name only once some tool has an `outputSchema`).
    pub(super) fn watch(&self, method: &str, params: Option<&RawJson>) -> Option<Watch> {
        match method {
            "tools/list" => Some(Watch::List),
            "tools/call" if !self.schemas.is_empty() => {
                let call = params?.parse::<CallName>().ok()?;
                self.schemas.contains_key(&call.name).then_some(Watch::Call(call.name))
            }
            _ => None,
        }
    }

    /// Request `id` went out with `watch`.
    pub(super) fn sent(&mut self, id: &RequestId, watch: Watch) {
        match watch {
            Watch::List => {
                self.lists.insert(id.clone());
            }
            Watch::Call(tool) => {
                self.calls.insert(id.clone(), tool);
            }
        }
    }

    /// Passes `event` on, learning schemas from `tools/list` results and turning a
    /// `tools/call` result that breaks its tool's schema into
    /// [`RequestError::OutputSchemaMismatch`].
    ///
    /// With `drop_invalid` (2026-07-28 over HTTP), a listed tool whose `x-mcp-header`
    /// annotations break the revision's rules is left out of the result.
    pub(super) fn check(&mut self, event: Event, drop_invalid: bool) -> Event {
        match event {
            Event::Response { id, result } => {
                let listed = self.lists.remove(&id);
                let called = self.calls.remove(&id);
                let result = match (result, called) {
                    (Ok(raw), _) if listed => {
                        let raw = if drop_invalid { without_invalid_tools(raw) } else { raw };
                        self.learn(&raw, drop_invalid);
                        Ok(raw)
                    }
                    (Ok(raw), Some(tool)) => self.verify(&tool, raw),
                    (other, _) => other,
                };
                Event::Response { id, result }
            }
            Event::Notification(ServerNotification::ToolListChanged) | Event::SessionExpired => {
                // The marks stay until a new list replaces them: a call made before the app
                // lists again still names its arguments in headers.
                self.schemas.clear();
                event
            }
            Event::Closed(_) => {
                *self = Self::default();
                event
            }
            other => other,
        }
    }

    fn learn(&mut self, raw: &RawJson, with_marks: bool) {
        let Ok(page) = raw.parse::<ListPage>() else { return };
        for tool in page.tools {
            if with_marks {
                // Only schemas that name the keyword are read whole.
                let schema = tool.input_schema.as_ref().map(|s| s.get()).unwrap_or_default();
                let marked = match schema.contains("x-mcp-header") {
                    true => serde_json::from_str::<Value>(schema)
                        .ok()
                        .and_then(|s| s.get("properties").and_then(Value::as_object).map(marked)),
                    false => None,
                };
                match marked.filter(|m| !m.is_empty()) {
                    Some(marked) => self.marks.insert(tool.name.clone(), marked),
                    None => self.marks.remove(&tool.name),
                };
            }
            match tool.output_schema {
                Some(schema) => self.schemas.insert(tool.name, schema),
                None => self.schemas.remove(&tool.name),
            };
        }
    }

    fn verify(&self, tool: &str, raw: RawJson) -> Result<RawJson, RequestError> {
        let Some(schema) = self.schemas.get(tool) else { return Ok(raw) };
        // A result that is no CallToolResult at all fails later, when the caller decodes it.
        let Ok(output) = raw.parse::<CallOutput>() else { return Ok(raw) };
        if output.is_error == Some(true) {
            return Ok(raw);
        }
        let problems = match &output.structured_content {
            None => vec!["the result has no structuredContent".to_owned()],
            Some(content) => match json_schema::validate(schema, content) {
                Ok(()) => return Ok(raw),
                Err(errors) => errors.iter().take(ERRORS_SHOWN).map(ToString::to_string).collect(),
            },
        };
        Err(RequestError::OutputSchemaMismatch { tool: tool.to_owned(), problems })
    }
}

/// A `tools/list` page without the tools whose `x-mcp-header` annotations are invalid (the
/// page as it came when none is).
fn without_invalid_tools(raw: RawJson) -> RawJson {
    let Ok(Value::Object(mut page)) = raw.to_value() else { return raw };
    let Some(Value::Array(tools)) = page.get_mut("tools") else { return raw };
    let valid = |tool: &Value| tool.get("inputSchema").is_none_or(marks_are_valid);
    if tools.iter().all(valid) {
        return raw;
    }
    tools.retain(valid);
    RawJson::from(Value::Object(page))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn listed(outputs: &mut ToolOutputs) {
        let id = RequestId::Number(1);
        outputs.sent(&id, Watch::List);
        let page = json!({"tools": [{"name": "t", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "required": ["x"]}}]});
        outputs.check(Event::Response { id, result: Ok(RawJson::from(page)) }, false);
    }

    fn watched(outputs: &ToolOutputs) -> bool {
        let params = RawJson::from(json!({"name": "t", "arguments": {}}));
        outputs.watch("tools/call", Some(&params)).is_some()
    }

    #[test]
    fn list_changed_expiry_and_close_forget_the_schemas() {
        let changes = [
            Event::Notification(ServerNotification::ToolListChanged),
            Event::SessionExpired,
            Event::Closed(crate::error::CloseReason::Local),
        ];
        for change in changes {
            let mut outputs = ToolOutputs::default();
            listed(&mut outputs);
            assert!(watched(&outputs));
            outputs.check(change, false);
            assert!(!watched(&outputs));
        }
    }

    #[test]
    fn every_outcome_drops_its_entry() {
        let mut outputs = ToolOutputs::default();
        listed(&mut outputs);
        let id = RequestId::Number(2);
        outputs.sent(&id, Watch::Call("t".into()));
        outputs.check(Event::Response { id, result: Err(RequestError::TimedOut) }, false);
        assert!(outputs.calls.is_empty() && outputs.lists.is_empty());
    }

    #[test]
    fn over_http_in_2026_a_tool_with_an_invalid_annotation_is_dropped_and_the_rest_kept() {
        let page = json!({"tools": [
            {"name": "ok", "inputSchema": {"type": "object",
                "properties": {"r": {"type": "string", "x-mcp-header": "Region"}}}},
            {"name": "bad", "inputSchema": {"type": "object",
                "properties": {"r": {"type": "string", "x-mcp-header": "a b"}}}}
        ]});
        for (strict, kept) in [(true, vec!["ok"]), (false, vec!["ok", "bad"])] {
            let mut outputs = ToolOutputs::default();
            let id = RequestId::Number(1);
            outputs.sent(&id, Watch::List);
            let event = Event::Response { id, result: Ok(RawJson::from(page.clone())) };
            let Event::Response { result: Ok(raw), .. } = outputs.check(event, strict) else {
                panic!("a response")
            };
            let listed = raw.parse::<Value>().unwrap();
            let names: Vec<&str> = listed["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, kept);
            assert_eq!(outputs.marks.contains_key("ok"), strict, "marks matter in 2026 over HTTP");
        }
    }
}
