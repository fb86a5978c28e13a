//! Answering each client request method: validation, registry look-up, pagination.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::registry::{page, Registry};
use std::sync::Arc;
use std::time::Instant;

use super::call_params::{self, TokenOnly, PROGRESS_TOKEN};
use super::{Call, CallContext, Event, Session, SessionInfo};
use crate::error::{ProtocolViolation, Rejection};
use crate::json_schema;
use crate::jsonrpc::{RawJson, Request, RequestId};
use crate::lifecycle::rules::{self, Sender, ServerPhase};
use crate::rpc::{parse_params, InboundEntry};
use crate::schema::{
    CallToolResult, CompleteParams, GetPromptParams, InitializeParams, InitializeResult,
    PaginatedParams, ProgressToken, PromptsCapability, ProtocolVersion, ReadResourceParams,
    ResourcesCapability, ServerCapabilities, SetLevelParams, SubscribeParams, ToolsCapability,
};

/// Only the progress token of a request's `_meta`, read without knowing the method.
#[derive(Deserialize)]
struct MetaOnly {
    #[serde(rename = "_meta")]
    meta: Option<TokenOnly>,
}

fn progress_token(params: Option<&RawJson>) -> Option<ProgressToken> {
    // Most requests ask for no progress: a search for the name spares a pass over what may be
    // megabytes of arguments.
    let params = params.filter(|p| p.may_name(&PROGRESS_TOKEN))?;
    let meta: MetaOnly = params.parse().ok()?;
    meta.meta?.0
}

/// The capabilities a registry implies when the config names none. With `announce` (see
/// [`ServerConfig::announce_changes`](super::ServerConfig::announce_changes)) every list is
/// declared, with `listChanged`, and resources with `subscribe`; without, only the lists that
/// have items, fixed.
pub(super) fn derive_capabilities<H>(registry: &Registry<H>, announce: bool) -> ServerCapabilities {
    let mut caps = ServerCapabilities::default();
    let changes = announce.then_some(true);
    if announce || !registry.tools.is_empty() {
        caps.tools = Some(ToolsCapability { list_changed: changes, ..Default::default() });
    }
    if announce || !registry.prompts.is_empty() {
        caps.prompts = Some(PromptsCapability { list_changed: changes, ..Default::default() });
    }
    if announce || !registry.resources.is_empty() || !registry.templates.is_empty() {
        caps.resources = Some(ResourcesCapability {
            subscribe: changes,
            list_changed: changes,
            ..Default::default()
        });
    }
    if registry.completion.is_some() {
        caps.completions = Some(Default::default());
    }
    caps.logging = Some(Default::default());
    caps
}

impl<H: Clone> Session<H> {
    pub(super) fn handle_request(&mut self, now: Instant, r: Request) {
        if let Some(params) = self.stateless_meta(&r) {
            return self.handle_stateless(now, r, params);
        }
        if let Err(rejection) =
            rules::server_gate(self.phase, self.shared.config.strict_initialized, &r.method)
        {
            self.violation(ProtocolViolation::OutOfOrder {
                method: r.method.clone(),
                phase: self.phase.name(),
            });
            return self.endpoint.reject(Some(r.id), &rejection);
        }
        match r.method.as_str() {
            "ping" => {
                return self.endpoint.reply(
                    self.endpoint.receiving(),
                    r.id,
                    Ok(RawJson::empty_object()),
                )
            }
            "initialize" => return self.initialize(r),
            _ => {}
        }
        let Some(session) = &self.session else {
            return self.endpoint.reject(Some(r.id), &Rejection::NotInitialized);
        };
        let version = session.protocol_version;
        let offered = match rules::needed_capability(version, &r.method) {
            Some(cap) => cap.offered_by_server(&session.server_capabilities),
            None => true,
        };
        if !rules::exists(version, &r.method, Sender::Client) || !offered {
            return self.endpoint.reject(Some(r.id), &Rejection::MethodNotFound(r.method));
        }
        match self.serve(&r) {
            Ok(Some(result)) => self.endpoint.reply(self.endpoint.receiving(), r.id, Ok(result)),
            Ok(None) => {} // handed to the app as Event::Call
            Err(rejection) => self.endpoint.reject(Some(r.id), &rejection),
        }
    }

    /// Serves a request the session may answer: its result, `None` when it went to the app
    /// as [`Event::Call`], or why it is refused.
    pub(super) fn serve(&mut self, r: &Request) -> Result<Option<RawJson>, Rejection> {
        match r.method.as_str() {
            "tools/list" => {
                self.list(r, "tools", |reg| reg.tools.iter().map(|e| ser(&e.tool)).collect())
            }
            "prompts/list" => {
                self.list(r, "prompts", |reg| reg.prompts.iter().map(|(p, _)| ser(p)).collect())
            }
            "resources/list" => {
                self.list(r, "resources", |reg| reg.resources.iter().map(|(x, _)| ser(x)).collect())
            }
            "resources/templates/list" => self.list(r, "resourceTemplates", |reg| {
                reg.templates.iter().map(|(t, _, _)| ser(t)).collect()
            }),
            "tools/call" => self.call_tool(r),
            "resources/read" => self.read_resource(r),
            "prompts/get" => self.get_prompt(r),
            "completion/complete" => self.complete(r),
            "resources/subscribe" => self.subscribe(r, true),
            "resources/unsubscribe" => self.subscribe(r, false),
            "logging/setLevel" => self.set_level(r),
            _ => Err(Rejection::MethodNotFound(r.method.clone())),
        }
    }

    fn initialize(&mut self, r: Request) {
        let params: InitializeParams = match parse_params(r.params.as_ref()) {
            Ok(p) => p,
            Err(d) => return self.endpoint.reject(Some(r.id), &Rejection::InvalidParams(d)),
        };
        let supported = &self.shared.config.supported_versions;
        // Only a session-era revision can be agreed by `initialize`, even if the config lists
        // 2026-07-28 among the supported ones.
        let version = ProtocolVersion::parse(&params.protocol_version)
            .filter(|v| v.is_session_era() && supported.contains(v))
            .or_else(|| supported.iter().copied().filter(|v| v.is_session_era()).max())
            .unwrap_or(ProtocolVersion::LATEST_SESSION);
        let capabilities = self.capabilities();
        let result = InitializeResult::new(
            version,
            capabilities.clone(),
            self.shared.config.server_info.clone(),
        );
        let result =
            InitializeResult { instructions: self.shared.config.instructions.clone(), ..result };
        self.endpoint.reply(self.endpoint.receiving(), r.id, Ok(RawJson::from_serialize(&result)));
        let info = Box::new(SessionInfo {
            protocol_version: version,
            client_info: params.client_info,
            client_capabilities: params.capabilities,
            server_capabilities: capabilities,
        });
        self.session = Some(Arc::new(SessionInfo::clone(&info)));
        self.phase = ServerPhase::AwaitingInitialized;
        self.revision += 1;
        self.events.push_back(Event::Initialized(info));
    }

    fn list(
        &self,
        r: &Request,
        key: &str,
        items: impl Fn(&Registry<H>) -> Vec<Value>,
    ) -> Result<Option<RawJson>, Rejection> {
        let params: PaginatedParams =
            parse_params(r.params.as_ref()).map_err(Rejection::InvalidParams)?;
        let all = items(&self.shared.registry);
        let (page, next) =
            page(all.iter(), params.cursor.as_deref(), self.shared.config.page_size)?;
        let mut result = Map::new();
        result.insert(key.to_owned(), Value::Array(page.into_iter().cloned().collect()));
        if let Some(next) = next {
            result.insert("nextCursor".to_owned(), Value::String(next));
        }
        Ok(Some(RawJson::from_serialize(&result)))
    }

    fn call_tool(&mut self, r: &Request) -> Result<Option<RawJson>, Rejection> {
        let registry = &self.shared.registry;
        let reads_meta = |name: &str| registry.find_tool(name).is_some_and(|t| t.reads_meta);
        let (mut params, progress_token) =
            call_params::read(r.params.as_ref(), reads_meta).map_err(Rejection::InvalidParams)?;
        let Some(tool) = self.shared.registry.find_tool(&params.name) else {
            return Err(Rejection::UnknownTool(params.name));
        };
        // The arguments are lent to the validator and put back as they came (absent stays
        // absent): a clone would copy every argument, a whole megabyte for a 1 MiB text.
        let absent = params.arguments.is_none();
        let args = Value::Object(params.arguments.take().unwrap_or_default());
        let checked = json_schema::validate(&tool.input_schema, &args);
        if let (false, Value::Object(map)) = (absent, args) {
            params.arguments = Some(map);
        }
        if let Err(errors) = checked {
            let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
            let text = format!("invalid arguments for tool {}: {}", params.name, list.join("; "));
            return Ok(Some(RawJson::from_serialize(&CallToolResult::error_text(text))));
        }
        let checks_output = tool.output_schema.is_some();
        let handler = tool.handler.clone();
        let mut entry = InboundEntry::new(self.endpoint.receiving(), progress_token);
        entry.tool = checks_output.then(|| params.name.clone());
        Ok(self.dispatch(r.id.clone(), entry, handler, Call::Tool(params)))
    }

    fn read_resource(&mut self, r: &Request) -> Result<Option<RawJson>, Rejection> {
        let params: ReadResourceParams =
            parse_params(r.params.as_ref()).map_err(Rejection::InvalidParams)?;
        let Some((handler, vars)) = self.shared.registry.resolve_resource(&params.uri) else {
            return Err(Rejection::ResourceNotFound(params.uri));
        };
        let handler = handler.clone();
        let entry = InboundEntry::new(self.endpoint.receiving(), progress_token(r.params.as_ref()));
        Ok(self.dispatch(r.id.clone(), entry, handler, Call::ReadResource { params, vars }))
    }

    fn get_prompt(&mut self, r: &Request) -> Result<Option<RawJson>, Rejection> {
        let params: GetPromptParams =
            parse_params(r.params.as_ref()).map_err(Rejection::InvalidParams)?;
        let Some((prompt, handler)) = self.shared.registry.find_prompt(&params.name) else {
            return Err(Rejection::UnknownPrompt(params.name));
        };
        let given = params.arguments.as_ref();
        for arg in prompt.arguments.iter().flatten() {
            if arg.required == Some(true) && !given.is_some_and(|g| g.contains_key(&arg.name)) {
                return Err(Rejection::MissingPromptArgument(arg.name.clone()));
            }
        }
        let handler = handler.clone();
        let entry = InboundEntry::new(self.endpoint.receiving(), progress_token(r.params.as_ref()));
        Ok(self.dispatch(r.id.clone(), entry, handler, Call::GetPrompt(params)))
    }

    fn complete(&mut self, r: &Request) -> Result<Option<RawJson>, Rejection> {
        let params: CompleteParams =
            parse_params(r.params.as_ref()).map_err(Rejection::InvalidParams)?;
        let Some(handler) = self.shared.registry.completion.clone() else {
            let empty = serde_json::json!({"completion": {"values": [], "hasMore": false}});
            return Ok(Some(RawJson::from(empty)));
        };
        let entry = InboundEntry::new(self.endpoint.receiving(), progress_token(r.params.as_ref()));
        Ok(self.dispatch(r.id.clone(), entry, handler, Call::Complete(params)))
    }

    fn subscribe(&mut self, r: &Request, on: bool) -> Result<Option<RawJson>, Rejection> {
        let params: SubscribeParams =
            parse_params(r.params.as_ref()).map_err(Rejection::InvalidParams)?;
        if on {
            let full = self.subscriptions.len() >= self.shared.config.max_subscriptions;
            if full && !self.subscriptions.contains(&params.uri) {
                return Err(Rejection::Internal("too many subscriptions".into()));
            }
            self.subscriptions.insert(params.uri);
        } else {
            self.subscriptions.remove(&params.uri);
        }
        self.revision += 1;
        Ok(Some(RawJson::empty_object()))
    }

    fn set_level(&mut self, r: &Request) -> Result<Option<RawJson>, Rejection> {
        let params: SetLevelParams =
            parse_params(r.params.as_ref()).map_err(Rejection::InvalidParams)?;
        self.log_level = Some(params.level);
        self.revision += 1;
        Ok(Some(RawJson::empty_object()))
    }

    fn dispatch(
        &mut self,
        id: RequestId,
        entry: InboundEntry,
        handler: H,
        call: Call,
    ) -> Option<RawJson> {
        let progress_token = entry.progress_token.clone();
        let mut entry = entry;
        let context = match &mut self.stateless {
            Some(stateless) => {
                entry.stateless = Some(stateless.entry);
                let session = Some(stateless.session.clone());
                let round = stateless.round.take();
                let context_round = round.as_ref().map(|r| r.round.clone());
                entry.round = round.map(Box::new);
                CallContext {
                    session,
                    log_level: stateless.entry.log_level,
                    round: context_round,
                    principal: self.principal.clone(),
                }
            }
            None => CallContext {
                session: self.session.clone(),
                log_level: self.log_level,
                round: None,
                principal: self.principal.clone(),
            },
        };
        self.endpoint.inbound.begin(&id, entry);
        self.events.push_back(Event::Call { id, handler, call, progress_token, context });
        None
    }

    /// A tool result checked against the tool's `outputSchema`; a mismatch becomes an
    /// `isError` result that says why.
    ///
    /// Only a plain, successful `CallToolResult` is checked
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#output-schema>):
    /// results that report a failure (`isError: true`) carry no structured output, and results
    /// of another shape (a task-creation result, a 2026-07-28 input-required result) are not tool
    /// output at all. Neither is checked in a revision without structured output, whose
    /// client never saw the schema.
    pub(super) fn check_structured_output(
        &self,
        tool: &str,
        raw: RawJson,
        stateless: bool,
    ) -> RawJson {
        let structured = stateless
            || self.session.as_ref().is_some_and(|s| s.protocol_version.has_structured_output());
        if !structured {
            return raw;
        }
        let Some(tool) = self.shared.registry.find_tool(tool) else { return raw };
        let Some(schema) = &tool.output_schema else { return raw };
        let Some(result) = plain_tool_result(&raw) else { return raw };
        if result.is_error() {
            return raw;
        }
        let problem = match &result.structured_content {
            None => {
                "the tool declares an outputSchema but returned no structuredContent".to_owned()
            }
            Some(value) => match json_schema::validate(schema, value) {
                Ok(()) => return raw,
                Err(errors) => {
                    let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    format!(
                        "structuredContent does not match the outputSchema: {}",
                        list.join("; ")
                    )
                }
            },
        };
        RawJson::from_serialize(&CallToolResult::error_text(problem))
    }
}

/// The members that tell a `tools/call` result's kind, read without the rest.
#[derive(Deserialize)]
struct ResultShape {
    content: Option<IgnoredAny>,
    task: Option<IgnoredAny>,
    #[serde(rename = "resultType")]
    result_type: Option<String>,
}

/// `raw` as a plain `CallToolResult`, or `None` for a result of another kind: a
/// `CreateTaskResult` (a `task` and no `content`, 2025-11-25) or one whose `resultType` is not
/// `"complete"` (2026-07-28).
fn plain_tool_result(raw: &RawJson) -> Option<CallToolResult> {
    let shape: ResultShape = raw.parse().ok()?;
    let creates_task = shape.task.is_some() && shape.content.is_none();
    let complete = shape.result_type.as_deref().is_none_or(|t| t == "complete");
    if creates_task || !complete {
        return None;
    }
    raw.parse().ok()
}

fn ser<T: serde::Serialize>(item: &T) -> Value {
    serde_json::to_value(item).unwrap_or(Value::Null)
}
