//! The sampling policy: who may make the client's model write, and what they get to see.
//!
//! ```text
//!  sampling/createMessage ──▶ limits ──refused──▶ -32602, naming the limit (nobody saw it)
//!                               │ admitted
//!                               ▼
//!                       deny? ──yes──▶ -1 "the user rejected the sampling request"
//!                               │ reviewed
//!                               ▼
//!              reviewer(SamplingSummary) ──false──▶ -1
//!                               │ true
//!                               ▼
//!                   delegate(CreateMessageParams) ──▶ the result
//! ```
//!
//! The limits (a ceiling on `maxTokens`, an allowlist of models, whether tools may be
//! offered) refuse a request before the reviewer or the delegate hear of it. The reviewer
//! sees a [`SamplingSummary`]: a SHA-256 of the canonical request, the model hints, the token
//! ceiling, and each message's role and content kinds, never a message's text. Only the
//! delegate (the app's model) gets the request itself. Sampling with tools (2025-11-25) takes
//! the same path.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::super::{BoxFuture, HandlerResult};
use crate::error::Rejection;
use crate::jsonrpc::ErrorObject;
use crate::schema::{
    CreateMessageParams, CreateMessageResult, Role, SamplingCapability, SamplingContent,
};

/// What a reviewer sees of a sampling request: its shape and a digest, never its text.
///
/// The digest lets a reviewer (or an audit log) tell two requests apart and match an approval
/// to what the delegate later received, without holding the conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SamplingSummary {
    /// SHA-256 of the request's params as canonical JSON (keys sorted, no whitespace),
    /// lowercase hex.
    pub sha256: String,
    /// The names in `modelPreferences.hints`, in the server's order.
    pub model_hints: Vec<String>,
    /// The request's `maxTokens`.
    pub max_tokens: u64,
    /// Each message's role and content kinds, in order.
    pub messages: Vec<MessageShape>,
    /// How many tools the model is offered (2025-11-25).
    pub tools: usize,
    /// Whether the request carries a system prompt (its text is not shown).
    pub system_prompt: bool,
}

/// One message of a [`SamplingSummary`]: who it is from and what kinds of content it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MessageShape {
    /// Who the message is from.
    pub role: Role,
    /// The kind of each content block, in order.
    pub kinds: Vec<ContentKind>,
}

/// The kind of one content block of a sampling message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContentKind {
    /// `audio`.
    Audio,
    /// `image`.
    Image,
    /// A type this crate does not know (its name is not shown: it is the server's text).
    Other,
    /// `text`.
    Text,
    /// `tool_result` (2025-11-25).
    ToolResult,
    /// `tool_use` (2025-11-25).
    ToolUse,
}

impl SamplingSummary {
    /// Summarizes `params`.
    pub fn of(params: &CreateMessageParams) -> Self {
        let hints = params.model_preferences.as_ref().and_then(|p| p.hints.as_ref());
        Self {
            sha256: digest(params),
            model_hints: hints
                .map(|h| h.iter().filter_map(|h| h.name.clone()).collect())
                .unwrap_or_default(),
            max_tokens: params.max_tokens,
            messages: params
                .messages
                .iter()
                .map(|m| MessageShape {
                    role: m.role,
                    kinds: m.content.as_slice().iter().map(ContentKind::of).collect(),
                })
                .collect(),
            tools: params.tools.as_ref().map_or(0, Vec::len),
            system_prompt: params.system_prompt.is_some(),
        }
    }

    /// How many messages the request holds.
    pub fn message_count(&self) -> usize {
        self.messages.len()
    }
}

/// One line for a prompt to the user: `2 messages (user: text; assistant: text, image),
/// up to 100 tokens, models [claude-3-sonnet], sha256 3f2a…`.
impl fmt::Display for SamplingSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} message", self.messages.len())?;
        if self.messages.len() != 1 {
            f.write_str("s")?;
        }
        let shapes: Vec<String> = self
            .messages
            .iter()
            .map(|m| {
                let kinds: Vec<&str> = m.kinds.iter().map(ContentKind::as_str).collect();
                let role = match m.role {
                    Role::Assistant => "assistant",
                    Role::User => "user",
                };
                format!("{role}: {}", kinds.join(", "))
            })
            .collect();
        write!(f, " ({}), up to {} tokens", shapes.join("; "), self.max_tokens)?;
        if !self.model_hints.is_empty() {
            write!(f, ", models [{}]", self.model_hints.join(", "))?;
        }
        if self.tools > 0 {
            write!(f, ", {} tools", self.tools)?;
        }
        if self.system_prompt {
            f.write_str(", with a system prompt")?;
        }
        write!(f, ", sha256 {}", self.sha256)
    }
}

impl ContentKind {
    fn of(block: &SamplingContent) -> Self {
        match block {
            SamplingContent::Audio(_) => Self::Audio,
            SamplingContent::Image(_) => Self::Image,
            SamplingContent::Text(_) => Self::Text,
            SamplingContent::ToolResult(_) => Self::ToolResult,
            SamplingContent::ToolUse(_) => Self::ToolUse,
            SamplingContent::Unknown(_) => Self::Other,
        }
    }

    /// The wire name (`other` for a type this crate does not know).
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Audio => "audio",
            Self::Image => "image",
            Self::Other => "other",
            Self::Text => "text",
            Self::ToolResult => "tool_result",
            Self::ToolUse => "tool_use",
        }
    }
}

/// SHA-256 of the canonical JSON of `params`, lowercase hex.
fn digest(params: &CreateMessageParams) -> String {
    let mut canonical = String::new();
    // Invariant: the params are made of maps with string keys, strings, numbers and bools.
    let value = serde_json::to_value(params).expect("sampling params always serialize");
    write_canonical(&value, &mut canonical);
    crate::hex::lower_hex(&Sha256::digest(canonical.as_bytes()))
}

/// JSON with object keys sorted and no whitespace, whatever order the map kept.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The checks that run before anyone sees a request.
#[derive(Clone, Debug, Default)]
struct Limits {
    max_tokens: Option<u64>,
    models: Option<Vec<String>>,
    tools: bool,
}

impl Limits {
    /// `Err` with the -32602 error the server gets when the request is refused unseen.
    fn admit(&self, p: &CreateMessageParams) -> Result<(), ErrorObject> {
        let refuse = |why: String| Err(Rejection::InvalidParams(why).to_jsonrpc());
        if !self.tools && (p.tools.is_some() || p.tool_choice.is_some()) {
            return refuse(
                "this client does not offer tools to its model (no sampling.tools)".into(),
            );
        }
        if let Some(limit) = self.max_tokens.filter(|&limit| p.max_tokens > limit) {
            return refuse(format!(
                "maxTokens {} exceeds this client's limit of {limit}",
                p.max_tokens
            ));
        }
        if let Some(allowed) = &self.models {
            let hints = SamplingSummary::of(p).model_hints;
            let fits = |hint: &String| allowed.iter().any(|pattern| glob(pattern, hint));
            if !hints.is_empty() && !hints.iter().any(fits) {
                return refuse(format!(
                    "none of the requested models ({}) is allowed by this client (allowed: {})",
                    hints.join(", "),
                    allowed.join(", ")
                ));
            }
        }
        check_tool_turns(p).or_else(refuse)
    }
}

/// The 2025-11-25 rules on tool turns: a user message with a `tool_result` holds only tool
/// results, and every assistant `tool_use` is answered in the next user message.
fn check_tool_turns(p: &CreateMessageParams) -> Result<(), String> {
    for (i, message) in p.messages.iter().enumerate() {
        let blocks = message.content.as_slice();
        let results = blocks.iter().filter(|b| matches!(b, SamplingContent::ToolResult(_))).count();
        if message.role == Role::User && results != 0 && results != blocks.len() {
            return Err(format!("message {i} mixes tool_result with other content"));
        }
        let uses: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                SamplingContent::ToolUse(u) => Some(u.id.as_str()),
                _ => None,
            })
            .collect();
        if message.role != Role::Assistant || uses.is_empty() {
            continue;
        }
        let answered: Vec<&str> = p
            .messages
            .get(i + 1)
            .filter(|next| next.role == Role::User)
            .map(|next| {
                next.content
                    .as_slice()
                    .iter()
                    .filter_map(|b| match b {
                        SamplingContent::ToolResult(r) => Some(r.tool_use_id.as_str()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        if let Some(id) = uses.iter().find(|id| !answered.contains(id)) {
            return Err(format!("tool_use {id} in message {i} has no tool_result after it"));
        }
    }
    Ok(())
}

/// `pattern` matches `name`, where `*` in the pattern stands for any run of characters.
fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    // Invariant: `split` yields at least one part.
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let mut parts: Vec<&str> = parts.collect();
    let Some(last) = parts.pop() else { return rest.is_empty() };
    for part in parts {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The error a denied request gets: code -1, as in the spec's example of a user rejection.
fn rejected() -> ErrorObject {
    Rejection::UserRejected("the user rejected the sampling request".into()).to_jsonrpc()
}

fn no_delegate() -> ErrorObject {
    Rejection::Internal("the sampling policy has no delegate to produce a result".into())
        .to_jsonrpc()
}

type AsyncReviewer = Arc<dyn Fn(SamplingSummary) -> BoxFuture<'static, bool> + Send + Sync>;
type AsyncDelegate = Arc<
    dyn Fn(CreateMessageParams) -> BoxFuture<'static, HandlerResult<CreateMessageResult>>
        + Send
        + Sync,
>;
type SyncReviewer = Arc<dyn Fn(SamplingSummary) -> bool + Send + Sync>;
type SyncDelegate =
    Arc<dyn Fn(CreateMessageParams) -> HandlerResult<CreateMessageResult> + Send + Sync>;

/// A sampling policy with async reviewer and delegate (zest-tokio, zest-smol, where it is
/// exported as `SamplingPolicy`).
///
/// ```
/// # use zest_core::handler::AsyncSamplingPolicy as SamplingPolicy;
/// # use zest_core::schema::CreateMessageResult;
/// # async fn approve_in_ui(_: String) -> bool { true }
/// let policy = SamplingPolicy::reviewed(|summary| approve_in_ui(summary.to_string()))
///     .max_tokens(1024)
///     .models(["claude-*", "gpt-4o"])
///     .delegate(|request| async move {
///         // Call the model here; the request holds the whole conversation.
///         Ok(CreateMessageResult::text("gpt-4o", format!("{} messages read", request.messages.len())))
///     });
/// ```
#[derive(Clone, Default)]
pub struct AsyncSamplingPolicy {
    /// `None`: deny every request.
    reviewer: Option<AsyncReviewer>,
    delegate: Option<AsyncDelegate>,
    limits: Limits,
}

impl AsyncSamplingPolicy {
    /// Declares sampling and refuses every request (-1), limits or not: for servers that
    /// insist on the capability when the user has said no.
    pub fn deny() -> Self {
        Self::default()
    }

    /// Shows each admitted request to `reviewer` as a [`SamplingSummary`]; `true` approves
    /// it (then the [`delegate`](Self::delegate) answers), `false` refuses it (-1).
    pub fn reviewed<F, Fut>(reviewer: F) -> Self
    where
        F: Fn(SamplingSummary) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = bool> + Send + 'static,
    {
        Self { reviewer: Some(Arc::new(move |s| Box::pin(reviewer(s)))), ..Self::default() }
    }

    /// Produces the result of an approved request (the app's model). Without one, approved
    /// requests fail with an internal error.
    pub fn delegate<F, Fut>(mut self, delegate: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<CreateMessageResult>> + Send + 'static,
    {
        self.delegate = Some(Arc::new(move |p| Box::pin(delegate(p))));
        self
    }

    /// Refuses, unseen, requests whose `maxTokens` is above `limit`.
    pub fn max_tokens(mut self, limit: u64) -> Self {
        self.limits.max_tokens = Some(limit);
        self
    }

    /// Refuses, unseen, requests whose model hints name none of these models. A pattern's `*`
    /// matches any run of characters (`claude-*`); hints are matched whole, so a hint of
    /// `sonnet` fits `*sonnet*` but not `claude-*`. A request without hints is admitted: the
    /// delegate picks the model.
    pub fn models<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.limits.models = Some(patterns.into_iter().map(Into::into).collect());
        self
    }

    /// Offers tools to the model (declares `sampling.tools`, 2025-11-25): requests with
    /// `tools` take the same path as others. Without it they are refused unseen.
    pub fn with_tools(mut self) -> Self {
        self.limits.tools = true;
        self
    }

    /// The `sampling` capability this policy declares.
    pub fn capability(&self) -> SamplingCapability {
        capability(&self.limits)
    }

    /// Decides one request: limits, then the reviewer, then the delegate.
    pub fn run(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, HandlerResult<CreateMessageResult>> {
        if let Err(e) = self.limits.admit(&params) {
            return Box::pin(async move { Err(e) });
        }
        let Some(reviewer) = &self.reviewer else {
            return Box::pin(async move { Err(rejected()) });
        };
        let review = reviewer(SamplingSummary::of(&params));
        let delegate = self.delegate.clone();
        Box::pin(async move {
            if !review.await {
                return Err(rejected());
            }
            match delegate {
                Some(delegate) => delegate(params).await,
                None => Err(no_delegate()),
            }
        })
    }
}

/// A sampling policy with plain-function reviewer and delegate (zest-blocking, where it is
/// exported as `SamplingPolicy`). The same rules as [`AsyncSamplingPolicy`].
///
/// ```
/// # use zest_core::handler::SyncSamplingPolicy as SamplingPolicy;
/// # use zest_core::schema::CreateMessageResult;
/// # fn approve_in_ui(_: String) -> bool { true }
/// let policy = SamplingPolicy::reviewed(|summary| approve_in_ui(summary.to_string()))
///     .max_tokens(1024)
///     .models(["claude-*", "gpt-4o"])
///     .delegate(|request| {
///         Ok(CreateMessageResult::text("gpt-4o", format!("{} messages read", request.messages.len())))
///     });
/// ```
#[derive(Clone, Default)]
pub struct SyncSamplingPolicy {
    reviewer: Option<SyncReviewer>,
    delegate: Option<SyncDelegate>,
    limits: Limits,
}

impl SyncSamplingPolicy {
    /// Declares sampling and refuses every request (-1).
    pub fn deny() -> Self {
        Self::default()
    }

    /// Shows each admitted request to `reviewer` as a [`SamplingSummary`]; `true` approves
    /// it, `false` refuses it (-1).
    pub fn reviewed(reviewer: impl Fn(SamplingSummary) -> bool + Send + Sync + 'static) -> Self {
        Self { reviewer: Some(Arc::new(reviewer)), ..Self::default() }
    }

    /// Produces the result of an approved request (the app's model).
    pub fn delegate(
        mut self,
        delegate: impl Fn(CreateMessageParams) -> HandlerResult<CreateMessageResult>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        self.delegate = Some(Arc::new(delegate));
        self
    }

    /// Refuses, unseen, requests whose `maxTokens` is above `limit`.
    pub fn max_tokens(mut self, limit: u64) -> Self {
        self.limits.max_tokens = Some(limit);
        self
    }

    /// Refuses, unseen, requests whose model hints name none of these models; see
    /// [`AsyncSamplingPolicy::models`].
    pub fn models<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.limits.models = Some(patterns.into_iter().map(Into::into).collect());
        self
    }

    /// Offers tools to the model (declares `sampling.tools`).
    pub fn with_tools(mut self) -> Self {
        self.limits.tools = true;
        self
    }

    /// The `sampling` capability this policy declares.
    pub fn capability(&self) -> SamplingCapability {
        capability(&self.limits)
    }

    /// Decides one request on this thread: limits, then the reviewer, then the delegate.
    pub fn run(&self, params: CreateMessageParams) -> HandlerResult<CreateMessageResult> {
        self.limits.admit(&params)?;
        let Some(reviewer) = &self.reviewer else { return Err(rejected()) };
        if !reviewer(SamplingSummary::of(&params)) {
            return Err(rejected());
        }
        match &self.delegate {
            Some(delegate) => delegate(params),
            None => Err(no_delegate()),
        }
    }
}

fn capability(limits: &Limits) -> SamplingCapability {
    SamplingCapability {
        tools: limits.tools.then(Default::default),
        ..SamplingCapability::default()
    }
}

impl fmt::Debug for AsyncSamplingPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        describe(f, "AsyncSamplingPolicy", self.reviewer.is_some(), &self.limits)
    }
}

impl fmt::Debug for SyncSamplingPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        describe(f, "SyncSamplingPolicy", self.reviewer.is_some(), &self.limits)
    }
}

fn describe(f: &mut fmt::Formatter<'_>, name: &str, reviewed: bool, l: &Limits) -> fmt::Result {
    f.debug_struct(name)
        .field("mode", &if reviewed { "reviewed" } else { "deny" })
        .field("max_tokens", &l.max_tokens)
        .field("models", &l.models)
        .field("tools", &l.tools)
        .finish()
}

#[cfg(test)]
mod tests;
