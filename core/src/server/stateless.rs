//! 2026-07-28 requests on a session: each carries its revision, the client's capabilities,
//! info and log level in its `_meta`, and stands alone (no `initialize`, nothing kept)
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/lifecycle>).
//!
//! A session that lists 2026-07-28 among its supported revisions answers such requests
//! until a client opens the session era with `initialize`; after that the stream is a
//! session-era one. A server that does not list it never answers with 2026-07-28's errors,
//! which a client would read as "this server is modern".

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use serde_json::Value;

use super::ask::RoundEnd;
use super::{Binding, LazyBinding, Round, Session, SessionInfo};
use crate::error::Rejection;
use crate::jsonrpc::key_search::Keys;
use crate::jsonrpc::{ErrorObject, RawJson, Request};
use crate::lifecycle::rules::{self, Sender, ServerPhase};
use crate::rpc::{RoundEntry, StatelessEntry};
use crate::schema::{
    ClientCapabilities, DiscoverResult, Implementation, LoggingLevel, ProtocolVersion,
    ServerCapabilities, CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
};
use crate::transport::TransportKind;

/// The revision this module speaks.
const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;

/// A request's `_meta` as sent, borrowed from its params' text.
#[derive(Deserialize)]
struct MetaText<'a> {
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a serde_json::value::RawValue>,
}

/// The text of a request's `_meta`, if its params are an object that has one: one pass over
/// the params, after which the protocol members are read from this (small) text alone. A
/// `_meta` written first (as zest's client writes it) is read alone, without a pass over the
/// arguments after it (the params were read whole when the message was decoded).
pub(crate) fn meta_text(params: Option<&RawJson>) -> Option<&str> {
    let text = params?.get();
    if let Some(leading) = leading_meta(text) {
        return (leading != "null").then_some(leading);
    }
    // (Params given as an array name no `_meta`: a struct would take their first element.)
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let view: MetaText<'_> = serde_json::from_str(text).ok()?;
    view.meta.map(serde_json::value::RawValue::get)
}

/// The value of `_meta` when it is the first member of the object `text` (spelled without
/// escapes), read alone.
fn leading_meta(text: &str) -> Option<&str> {
    let mut value = serde_json::Deserializer::from_str(after_leading_meta_key(text)?);
    <&serde_json::value::RawValue>::deserialize(&mut value).ok().map(|raw| raw.get())
}

/// The text after `{"_meta":` (and any whitespace) when the object `text` names `_meta`
/// first.
fn after_leading_meta_key(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix('{')?.trim_start();
    Some(rest.strip_prefix("\"_meta\"")?.trim_start().strip_prefix(':')?.trim_start())
}

/// Where `part`, a slice of `whole`, lies in it.
fn range_in(whole: &str, part: &str) -> Range<usize> {
    // Invariant: `meta_text` and `leading_in` return slices of the params' text.
    let start = (part.as_ptr() as usize)
        .checked_sub(whole.as_ptr() as usize)
        .filter(|start| whole.get(*start..start + part.len()) == Some(part))
        .expect("the `_meta` is a slice of the params' text");
    start..start + part.len()
}

/// Only the revision a `_meta` names.
#[derive(Deserialize)]
struct VersionOnly {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<Value>,
}

#[derive(Deserialize)]
struct StatelessMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    client_capabilities: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo")]
    client_info: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/logLevel")]
    log_level: Option<Value>,
}

/// What a 2026-07-28 request said about its client, once checked.
#[derive(Debug)]
pub(super) struct Stateless {
    pub(super) entry: StatelessEntry,
    pub(super) session: Arc<SessionInfo>,
    /// For a call that may ask the client: its round, until the call is handed out.
    pub(super) round: Option<RoundEntry>,
}

/// What a retry carries besides its request: the answers and the sealed earlier rounds.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Carried {
    input_responses: Option<Value>,
    request_state: Option<Value>,
}

/// The methods whose result may ask the client for input.
fn may_ask(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get" | "resources/read")
}

/// Results a client may cache: they carry `ttlMs` and `cacheScope` when complete.
fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "server/discover"
    )
}

impl<H: Clone> Session<H> {
    /// Where the request's `_meta` lies in its params' text (`Some(None)`: it has none; a
    /// range, not a copy, for every request), when it is a 2026-07-28 request this session
    /// answers as one: the session speaks that revision, no `initialize` came yet, and the
    /// request names a revision in its `_meta` (or is `server/discover`, which only that era
    /// has).
    pub(super) fn stateless_meta(&self, r: &Request) -> Option<Option<Range<usize>>> {
        let serves = self.shared.config.supported_versions.iter().any(|v| v.is_stateless());
        if !serves || self.phase != ServerPhase::AwaitingInitialize || r.method == "initialize" {
            return None;
        }
        let (meta, version) = self.last_meta.meta_and_version(r.params.as_ref());
        // The last `_meta` checked named a revision: the same text is not read again.
        let names_version = version.is_some() || self.last_meta.is_last(meta);
        let within = |m: &str| r.params.as_ref().map_or(0..0, |p| range_in(p.get(), m));
        (names_version || r.method == "server/discover").then(|| meta.map(within))
    }

    /// Answers a 2026-07-28 request: checks its `_meta` (`meta`: where it lies in the params),
    /// then serves it as the session era would, with the client it describes, and marks its
    /// result.
    pub(super) fn handle_stateless(
        &mut self,
        now: Instant,
        r: Request,
        meta: Option<Range<usize>>,
    ) {
        let meta = meta.and_then(|at| r.params.as_ref()?.get().get(at));
        let checked = self.check_meta(meta, &r.method);
        let mut stateless = match checked {
            Ok(stateless) => stateless,
            Err(rejection) => return self.endpoint.reject_in(r.id, &rejection, MODERN),
        };
        let offered = match rules::needed_capability(MODERN, &r.method) {
            Some(cap) => cap.offered_by_server(&stateless.session.server_capabilities),
            None => true,
        };
        if !rules::exists(MODERN, &r.method, Sender::Client) || !offered {
            let rejection = Rejection::MethodNotFound(r.method);
            return self.endpoint.reject_in(r.id, &rejection, MODERN);
        }
        if r.method == "subscriptions/listen" {
            if let Err(rejection) = self.listen(&r, &stateless) {
                self.endpoint.reject_in(r.id, &rejection, MODERN);
            }
            return;
        }
        if may_ask(&r.method) {
            match self.open_round(now, &r, &stateless.session.client_capabilities) {
                Ok(round) => stateless.round = Some(round),
                Err(rejection) => return self.endpoint.reject_in(r.id, &rejection, MODERN),
            }
        }
        let outcome = if r.method == "server/discover" {
            Ok(Some(RawJson::from_serialize(&self.discover())))
        } else {
            self.stateless = Some(stateless);
            let outcome = self.serve(&r);
            self.stateless = None;
            outcome
        };
        match outcome {
            Ok(Some(result)) => {
                let result = self.mark_complete(result, cacheable(&r.method));
                self.endpoint.reply(self.endpoint.receiving(), r.id, Ok(result));
            }
            Ok(None) => {} // handed to the app as Event::Call
            Err(rejection) => self.endpoint.reject_in(r.id, &rejection, MODERN),
        }
    }

    /// `result` with `resultType: "complete"` and, when `cacheable`, the cache hints, unless
    /// it says otherwise (an input-required result keeps its kind and gets no hints).
    pub(super) fn mark_complete(&self, result: RawJson, cacheable: bool) -> RawJson {
        let config = &self.shared.config;
        let hints = cacheable && result_is_complete(&result);
        // A result that has none of the members (nearly every one) gets their text spliced
        // in, made once per server; only one that names some of them has its keys read.
        static MARKS: Keys = Keys::new(&["resultType", "_meta"]);
        static MARKS_AND_HINTS: Keys = Keys::new(&["resultType", "_meta", "ttlMs", "cacheScope"]);
        if !result.may_name(if hints { &MARKS_AND_HINTS } else { &MARKS }) {
            let complete = &self.shared.complete_members;
            if !hints {
                return result.with_leading_text(complete);
            }
            let scope = serde_json::to_string(&config.cache_scope).unwrap_or_default();
            let ttl = config.cache_ttl_ms;
            return result
                .with_leading_text(&format!("{complete},\"ttlMs\":{ttl},\"cacheScope\":{scope}"));
        }
        let mut members =
            vec![("resultType", Value::from(RESULT_COMPLETE)), self.server_info_meta()];
        if hints {
            members.push(("ttlMs", Value::from(config.cache_ttl_ms)));
            members
                .push(("cacheScope", serde_json::to_value(config.cache_scope).unwrap_or_default()));
        }
        result.with_members_if_absent(&members)
    }

    /// `_meta` naming this server, as results of this revision SHOULD carry.
    fn server_info_meta(&self) -> (&'static str, Value) {
        ("_meta", self.shared.server_meta.clone())
    }

    fn discover(&self) -> DiscoverResult {
        let config = &self.shared.config;
        DiscoverResult {
            result_type: RESULT_COMPLETE.to_owned(),
            supported_versions: config
                .supported_versions
                .iter()
                .map(|v| v.as_str().to_owned())
                .collect(),
            capabilities: self.capabilities(),
            instructions: config.instructions.clone(),
            ttl_ms: config.cache_ttl_ms,
            cache_scope: config.cache_scope,
            meta: self.server_info_meta().1.as_object().cloned(),
            extra: Default::default(),
        }
    }

    /// The round of a call: the answers its `inputResponses` and its `requestState` carry,
    /// the state checked (sealed by this key, for this request, in time).
    fn open_round(
        &self,
        now: Instant,
        r: &Request,
        client: &ClientCapabilities,
    ) -> Result<RoundEntry, Rejection> {
        // Nearly every call carries neither: a search for their names spares a pass over
        // what may be megabytes of arguments.
        static CARRIED: Keys = Keys::new(&["inputResponses", "requestState"]);
        let carries = |p: &RawJson| p.may_name(&CARRIED);
        let params = r.params.as_ref().filter(|p| carries(p));
        let carried = params.map(|p| p.parse::<Carried>()).transpose();
        let carried = carried.map_err(Rejection::InvalidParams)?.unwrap_or_default();
        let principal = self.principal.as_ref().map(|p| p.subject.as_str());
        let invalid = |why: &str| Rejection::InvalidParams(why.to_owned());
        let (opened, binding) = match carried.request_state {
            None | Some(Value::Null) => {
                let method = r.method.clone();
                let principal = principal.map(str::to_owned);
                (None, LazyBinding::Pending { method, params: r.params.clone(), principal })
            }
            Some(Value::String(state)) => {
                let config = self.shared.config.request_state.as_ref();
                let config = config.ok_or_else(|| invalid("requestState was not issued here"))?;
                let binding = Binding::new(&r.method, r.params.as_ref(), principal);
                (Some(config.open(now, &binding, &state)?), LazyBinding::Ready(binding))
            }
            Some(_) => return Err(invalid("requestState must be a string")),
        };
        let responses = match carried.input_responses {
            None | Some(Value::Null) => serde_json::Map::new(),
            Some(Value::Object(responses)) => responses,
            Some(_) => return Err(invalid("inputResponses must be an object")),
        };
        let resumed = opened.is_some();
        let answers = match opened {
            // A first call may carry answers of its own (there is nothing to check them by).
            None => responses.into_iter().collect(),
            // A retry answers what its round asked, and nothing it answered before changes;
            // other keys are ignored.
            Some(opened) => {
                let mut answers = opened.answers;
                for (key, answer) in responses {
                    if opened.asked.contains(&key) {
                        answers.entry(key).or_insert(answer);
                    }
                }
                answers
            }
        };
        let round = Arc::new(Round::new(answers, client.clone(), resumed));
        Ok(RoundEntry { round, binding })
    }

    /// What ends a call whose run asked the client, in place of the handler's `answer`:
    /// an input-required result with the asks and the sealed answers so far, or -32021 when
    /// the run failed for want of a capability the client lacks.
    pub(super) fn end_round(
        &self,
        now: Instant,
        round: &RoundEntry,
        answer: Result<RawJson, ErrorObject>,
    ) -> Result<RawJson, ErrorObject> {
        let wire = |rejection: Rejection| rejection.to_wire(MODERN, TransportKind::Stdio).error;
        match round.round.end() {
            RoundEnd::Complete => answer,
            RoundEnd::InputRequired { requests, used } => {
                let config = self.shared.config.request_state.as_ref().ok_or_else(|| {
                    wire(Rejection::Internal("ServerConfig::request_state is not set".into()))
                })?;
                let asked = requests.keys().collect();
                let state = config.seal(now, &round.binding.get(), &used, asked).map_err(wire)?;
                Ok(RawJson::from(serde_json::json!({
                    "resultType": RESULT_INPUT_REQUIRED,
                    "inputRequests": requests,
                    "requestState": state,
                })))
            }
            RoundEnd::MissingCapabilities(missing) if answer_failed(&answer) => {
                let required = missing
                    .iter()
                    .map(|name| (name.to_string(), Value::Object(Default::default())));
                let required =
                    serde_json::from_value(Value::Object(required.collect())).unwrap_or_default();
                Err(wire(Rejection::MissingRequiredClientCapability {
                    required: Box::new(required),
                }))
            }
            RoundEnd::MissingCapabilities(_) => answer,
        }
    }

    /// The revision, capabilities, info and log level a request's `_meta` (its text) names,
    /// checked (read again only when it differs from the last one's).
    fn check_meta(&mut self, text: Option<&str>, method: &str) -> Result<Stateless, Rejection> {
        let meta = self.last_meta.check(&self.shared.config, text)?;
        let capabilities = self.capabilities();
        let session = self.last_meta.session(&meta, capabilities);
        let entry = StatelessEntry { cacheable: cacheable(method), log_level: meta.log_level };
        Ok(Stateless { entry, session, round: None })
    }
}

/// The last 2026-07-28 `_meta` checked, as sent, and what it said: a client sends the same
/// one with every request, so it is read once; and the session it last described.
#[derive(Clone, Debug, Default)]
pub(crate) struct LastMeta {
    checked: Option<(Box<str>, Arc<RequestMeta>)>,
    /// The session made last, and the meta it was made from (the one checked last, or an
    /// older one).
    session: Option<(Arc<RequestMeta>, Arc<SessionInfo>)>,
}

impl LastMeta {
    /// Whether `text` is the last `_meta` checked (and found good).
    pub(crate) fn is_last(&self, text: Option<&str>) -> bool {
        matches!((&self.checked, text), (Some((last, _)), Some(text)) if **last == *text)
    }

    /// The `_meta` of the object `params` when it comes first and is the last one checked,
    /// found without a JSON pass over it: a checked `_meta` is an object (or an array), whose
    /// text ends where the value ends, so params that start with `{"_meta":` and that text
    /// have that `_meta`.
    pub(crate) fn leading_in<'a>(&self, params: &'a str) -> Option<&'a str> {
        let (last, _) = self.checked.as_ref()?;
        let value = after_leading_meta_key(params)?;
        value.get(..last.len()).filter(|v| *v == &**last)
    }

    /// The `_meta` of `params` and the revision it names: from [`leading_in`](Self::leading_in)
    /// without reading it when it is the last one checked, else found and read.
    pub(crate) fn meta_and_version<'a>(
        &self,
        params: Option<&'a RawJson>,
    ) -> (Option<&'a str>, Option<Cow<'static, str>>) {
        let last = params.and_then(|p| self.leading_in(p.get()));
        match (last, &self.checked) {
            (Some(meta), Some((_, checked))) => (Some(meta), Some(checked.version.as_str().into())),
            _ => {
                let meta = meta_text(params);
                (meta, meta_version(meta).map(Cow::Owned))
            }
        }
    }

    /// Takes the session `other` (a copy of this one handed to a request's machine) made for
    /// the meta this one checked last, so that the next copy starts with it.
    pub(crate) fn adopt_session(&mut self, other: &Self) {
        let checked = self.checked.as_ref().map(|(_, meta)| meta);
        if let (Some(checked), Some((made_for, _))) = (checked, &other.session) {
            if Arc::ptr_eq(checked, made_for) {
                self.session.clone_from(&other.session);
            }
        }
    }

    /// What `text` (a request's `_meta`) says, checked: the last answer when the text is the
    /// last one's.
    pub(crate) fn check(
        &mut self,
        config: &super::ServerConfig,
        text: Option<&str>,
    ) -> Result<Arc<RequestMeta>, Rejection> {
        match (&self.checked, text) {
            (Some((last, meta)), Some(text)) if **last == *text => Ok(meta.clone()),
            (_, text) => {
                let meta = Arc::new(check_request_meta(config, text)?);
                if let Some(text) = text {
                    self.checked = Some((text.into(), meta.clone()));
                }
                Ok(meta)
            }
        }
    }

    /// The session a request with `meta` (from [`check`](Self::check)) is served in: the
    /// last one made, while its meta and the server's capabilities are the same (copying the
    /// client's info and capabilities for every request cost 2 % of a server at 64 B).
    pub(crate) fn session(
        &mut self,
        meta: &Arc<RequestMeta>,
        server_capabilities: ServerCapabilities,
    ) -> Arc<SessionInfo> {
        if let Some((made_for, session)) = &self.session {
            if Arc::ptr_eq(made_for, meta) && session.server_capabilities == server_capabilities {
                return session.clone();
            }
        }
        let session = Arc::new(SessionInfo {
            protocol_version: meta.version,
            client_info: meta.client_info.clone(),
            client_capabilities: meta.capabilities.clone(),
            server_capabilities,
        });
        self.session = Some((meta.clone(), session.clone()));
        session
    }
}

/// True for an error, or a tool result marked `isError`.
fn answer_failed(answer: &Result<RawJson, ErrorObject>) -> bool {
    #[derive(Deserialize)]
    struct IsError {
        #[serde(rename = "isError", default)]
        is_error: bool,
    }
    match answer {
        Err(_) => true,
        Ok(raw) => raw.parse::<IsError>().is_ok_and(|r| r.is_error),
    }
}

/// The revision a request's `_meta` (its text, see [`meta_text`]) names, as sent (not
/// checked), if it names one.
pub(crate) fn meta_version(meta: Option<&str>) -> Option<String> {
    match serde_json::from_str::<VersionOnly>(meta?).ok()?.protocol_version? {
        Value::String(v) => Some(v),
        other => Some(other.to_string()),
    }
}

/// What a 2026-07-28 request's `_meta` says, checked.
#[derive(Debug)]
pub(crate) struct RequestMeta {
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Implementation,
    pub(crate) log_level: Option<LoggingLevel>,
}

/// Reads and checks the protocol data of a 2026-07-28 request's `_meta`: a revision of that
/// era `config` supports (else -32022 with the supported list), the client's capabilities
/// (required), its info and log level (each well formed when present).
pub(crate) fn check_request_meta(
    config: &super::ServerConfig,
    meta: Option<&str>,
) -> Result<RequestMeta, Rejection> {
    let missing = |key: &str| Rejection::MissingRequestMeta { key: key.to_owned() };
    let Some(meta) = meta else { return Err(missing(PROTOCOL_VERSION_KEY)) };
    let meta = serde_json::from_str::<StatelessMeta>(meta).map_err(|e| {
        let why = crate::jsonrpc::error_path::describe(meta, &e);
        Rejection::InvalidParams(format!("_meta: {why}"))
    })?;
    let requested = match meta.protocol_version {
        Some(Value::String(v)) => v,
        Some(other) => other.to_string(),
        None => return Err(missing(PROTOCOL_VERSION_KEY)),
    };
    let supported = &config.supported_versions;
    let known =
        ProtocolVersion::parse(&requested).filter(|v| v.is_stateless() && supported.contains(v));
    let Some(version) = known else {
        let supported = supported.iter().map(|v| v.as_str().to_owned()).collect();
        return Err(Rejection::UnsupportedProtocolVersion { requested, supported });
    };
    let capabilities = meta.client_capabilities.ok_or_else(|| missing(CLIENT_CAPABILITIES_KEY))?;
    // A required member that cannot be read is as good as missing.
    let capabilities =
        serde_json::from_value(capabilities).map_err(|_| missing(CLIENT_CAPABILITIES_KEY))?;
    let client_info = match meta.client_info {
        Some(info) => serde_json::from_value(info)
            .map_err(|e| Rejection::InvalidParams(format!("clientInfo: {e}")))?,
        None => Implementation::new("stateless-client", "0"),
    };
    let log_level = match meta.log_level {
        Some(level) => Some(
            serde_json::from_value::<LoggingLevel>(level)
                .map_err(|e| Rejection::InvalidParams(format!("logLevel: {e}")))?,
        ),
        None => None,
    };
    Ok(RequestMeta { version, capabilities, client_info, log_level })
}

/// The members that tell whether a result is complete, read without the rest.
#[derive(Deserialize)]
struct ResultKind {
    #[serde(rename = "resultType")]
    result_type: Option<String>,
}

pub(super) fn result_is_complete(raw: &RawJson) -> bool {
    // Nearly every result has no `resultType` of its own yet: a search beats a parse of
    // what may be megabytes.
    static RESULT_TYPE: Keys = Keys::new(&["resultType"]);
    if !raw.may_name(&RESULT_TYPE) {
        return true;
    }
    raw.parse::<ResultKind>()
        .map(|k| k.result_type.is_none_or(|t| t == RESULT_COMPLETE))
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta_of(params: &str) -> Option<String> {
        let params = RawJson::from_string(params.to_owned()).unwrap();
        meta_text(Some(&params)).map(str::to_owned)
    }

    #[test]
    fn a_meta_is_found_first_last_or_absent() {
        assert_eq!(meta_of(r#"{"_meta":{"a":1},"arguments":{}}"#).as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(meta_of(r#" { "_meta" : {"a":1} }"#).as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(meta_of(r#"{"arguments":{},"_meta":{"a":1}}"#).as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(meta_of(r#"{"\u005fmeta":{"a":1}}"#).as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(meta_of(r#"{"_meta":null,"arguments":{}}"#), None);
        assert_eq!(meta_of(r#"{"arguments":{},"_meta":null}"#), None);
        assert_eq!(meta_of(r#"{"arguments":{}}"#), None);
        assert_eq!(meta_of("[1]"), None);
    }

    #[test]
    fn a_leading_meta_is_read_without_the_members_after_it() {
        // Read whole, a second `_meta` makes the params unreadable as a struct; a leading one
        // is taken as it stands.
        let twice = r#"{"_meta":{"a":1},"arguments":{},"_meta":{"b":2}}"#;
        assert_eq!(meta_of(twice).as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(meta_of(r#"{"arguments":{},"_meta":{"a":1},"_meta":{"b":2}}"#), None);
    }

    #[test]
    fn only_the_last_meta_checked_and_found_good_is_known() {
        let config = crate::server::ServerConfig::new("s", "1");
        let meta = |version: &str| {
            format!(r#"{{"{PROTOCOL_VERSION_KEY}":"{version}","{CLIENT_CAPABILITIES_KEY}":{{}}}}"#)
        };
        let good = &meta("2026-07-28");
        let mut last = LastMeta::default();
        assert!(!last.is_last(Some(good)));
        assert!(last.check(&config, Some(good)).is_ok());
        assert!(last.is_last(Some(good)));
        assert!(!last.is_last(Some(&meta("2025-11-25"))) && !last.is_last(None));
        let bad = &meta("1999-01-01");
        assert!(last.check(&config, Some(bad)).is_err());
        assert!(!last.is_last(Some(bad)));
    }

    #[test]
    fn the_last_meta_is_found_at_the_start_of_params_without_a_json_pass() {
        let config = crate::server::ServerConfig::new("s", "1");
        let good = format!(
            r#"{{"{PROTOCOL_VERSION_KEY}":"2026-07-28","{CLIENT_CAPABILITIES_KEY}":{{}}}}"#
        );
        let mut last = LastMeta::default();
        let params = format!(r#"{{ "_meta" : {good},"name":"t"}}"#);
        assert_eq!(last.leading_in(&params), None, "nothing checked yet");
        last.check(&config, Some(&good)).unwrap();
        assert_eq!(last.leading_in(&params), Some(good.as_str()));
        let longer = format!(r#"{{"_meta":{},"x":1}},"name":"t"}}"#, &good[..good.len() - 1]);
        assert_eq!(last.leading_in(&longer), None, "another meta that starts alike");
        let later = format!(r#"{{"name":"t","_meta":{good}}}"#);
        assert_eq!(last.leading_in(&later), None, "not first: read as JSON instead");
    }

    #[test]
    fn the_router_reads_the_revision_of_the_last_meta_without_a_pass_and_keeps_its_session() {
        let config = crate::server::ServerConfig::new("s", "1");
        let meta = format!(
            r#"{{"{PROTOCOL_VERSION_KEY}":"2026-07-28","{CLIENT_CAPABILITIES_KEY}":{{}}}}"#
        );
        let params = RawJson::from_string(format!(r#"{{"_meta":{meta},"name":"t"}}"#)).unwrap();
        let mut router = LastMeta::default();
        let (found, version) = router.meta_and_version(Some(&params));
        assert_eq!((found, version.as_deref()), (Some(meta.as_str()), Some("2026-07-28")));
        assert!(matches!(version, Some(Cow::Owned(_))), "read before any check");
        router.check(&config, found).unwrap();
        let (found, version) = router.meta_and_version(Some(&params));
        assert_eq!((found, version.as_deref()), (Some(meta.as_str()), Some("2026-07-28")));
        assert!(matches!(version, Some(Cow::Borrowed(_))), "the last one, not read again");
        // A request's machine gets a copy; the session it makes is kept for the next copy.
        let mut copy = router.clone();
        let checked = copy.check(&config, found).unwrap();
        let session = copy.session(&checked, ServerCapabilities::default());
        router.adopt_session(&copy);
        let mut next = router.clone();
        let again = next.check(&config, found).unwrap();
        assert!(Arc::ptr_eq(&session, &next.session(&again, ServerCapabilities::default())));
        // A session made for another meta is not taken.
        let mut other = LastMeta::default();
        let other_meta = meta.replace("{}}", r#"{"roots":{}}}"#);
        let checked = other.check(&config, Some(&other_meta)).unwrap();
        let stranger = other.session(&checked, ServerCapabilities::default());
        router.adopt_session(&other);
        let mut last = router.clone();
        let again = last.check(&config, found).unwrap();
        let kept = last.session(&again, ServerCapabilities::default());
        assert!(Arc::ptr_eq(&session, &kept) && !Arc::ptr_eq(&stranger, &kept));
    }

    #[test]
    fn a_session_is_made_again_only_when_the_meta_or_the_server_capabilities_change() {
        let config = crate::server::ServerConfig::new("s", "1");
        let meta = |name: &str| {
            format!(
                r#"{{"{PROTOCOL_VERSION_KEY}":"2026-07-28","{CLIENT_CAPABILITIES_KEY}":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"{name}","version":"1"}}}}"#
            )
        };
        let mut last = LastMeta::default();
        let caps = ServerCapabilities::default();
        let ada = last.check(&config, Some(&meta("ada"))).unwrap();
        let first = last.session(&ada, caps.clone());
        let again = last.check(&config, Some(&meta("ada"))).unwrap();
        assert!(Arc::ptr_eq(&first, &last.session(&again, caps.clone())), "the same meta");
        let tools = ServerCapabilities { tools: Some(Default::default()), ..caps.clone() };
        let changed = last.session(&again, tools.clone());
        assert!(!Arc::ptr_eq(&first, &changed));
        assert_eq!(changed.server_capabilities, tools);
        let bob = last.check(&config, Some(&meta("bob"))).unwrap();
        let other = last.session(&bob, tools);
        assert_eq!(other.client_info.name, "bob");
        assert_eq!(first.client_info.name, "ada");
    }
}
