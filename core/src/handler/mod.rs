//! Handler types the runtimes register, defined once (a future is not IO).
//!
//! A server registry holds [`AsyncHandler<C>`] (zest-tokio, zest-smol) or [`SyncHandler<C>`]
//! (zest-blocking), where `C` is the runtime's request context (progress, logging, asking the
//! client). The server machine reports a validated [`Call`] with the handler; the runtime runs
//! [`AsyncHandler::run`] or [`SyncHandler::run`] and passes the result to `Server::respond`.
//!
//! Handlers are usually typed functions registered with `Registry::tool` and
//! `Registry::prompt` (see [`typed`]); `raw_tool`, `raw_prompt`, `resource`,
//! `resource_template` and `completion` register closures over the raw params.
//!
//! A tool handler's `Err` becomes an `isError` result (the model sees the message), as in the
//! TypeScript and Python SDKs, unless it is a [`ToolError::protocol`]; a resource, prompt or
//! completion handler's `Err` becomes a JSON-RPC error response.

mod client;
mod error;
pub mod typed;

pub use client::{
    check_roots, complete_form_answer, replace_roots, AsyncClientHandlers, AsyncSamplingPolicy,
    ContentKind, MessageShape, Roots, SamplingSummary, SyncClientHandlers, SyncSamplingPolicy,
};
pub use error::ToolError;
#[cfg(feature = "schemars")]
pub use typed::Elicited;
pub use typed::{FromCall, IntoPromptResult, IntoToolResult, Json, State};

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::jsonrpc::{ErrorObject, RawJson};
use crate::schema::{
    CallToolParams, CallToolResult, CompleteParams, CompleteResult, GetPromptParams,
    GetPromptResult, Prompt, ReadResourceParams, ReadResourceResult, Resource, ResourceTemplate,
    Tool,
};
use crate::server::{Call, Registry};

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a handler returns.
pub type HandlerResult<T> = Result<T, ErrorObject>;

type AsyncFn<C, P, R> = Arc<dyn Fn(C, P) -> BoxFuture<'static, HandlerResult<R>> + Send + Sync>;
type AsyncToolFn<C> = Arc<
    dyn Fn(C, CallToolParams) -> BoxFuture<'static, Result<CallToolResult, ToolError>>
        + Send
        + Sync,
>;
type AsyncResourceFn<C> = Arc<
    dyn Fn(
            C,
            ReadResourceParams,
            BTreeMap<String, String>,
        ) -> BoxFuture<'static, HandlerResult<ReadResourceResult>>
        + Send
        + Sync,
>;

/// An async handler of any kind, with the runtime's context type `C`.
pub enum AsyncHandler<C> {
    /// `completion/complete`.
    Complete(AsyncFn<C, CompleteParams, CompleteResult>),
    /// `prompts/get`.
    Prompt(AsyncFn<C, GetPromptParams, GetPromptResult>),
    /// `resources/read`, with template variables.
    Resource(AsyncResourceFn<C>),
    /// `tools/call`; an `Err` becomes an `isError` result or, for
    /// [`ToolError::protocol`], a JSON-RPC error.
    Tool(AsyncToolFn<C>),
}

impl<C> Clone for AsyncHandler<C> {
    fn clone(&self) -> Self {
        match self {
            Self::Complete(f) => Self::Complete(f.clone()),
            Self::Prompt(f) => Self::Prompt(f.clone()),
            Self::Resource(f) => Self::Resource(f.clone()),
            Self::Tool(f) => Self::Tool(f.clone()),
        }
    }
}

impl<C> std::fmt::Debug for AsyncHandler<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind())
    }
}

impl<C: Send + 'static> AsyncHandler<C> {
    /// Runs the handler for `call`. The future yields what to pass to `Server::respond`.
    pub fn run(&self, ctx: C, call: Call) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
        match (self, call) {
            (Self::Tool(f), Call::Tool(p)) => {
                let fut = f(ctx, p);
                Box::pin(async move { tool_outcome(fut.await) })
            }
            (Self::Resource(f), Call::ReadResource { params, vars }) => {
                let fut = f(ctx, params, vars);
                Box::pin(async move { fut.await.map(|r| RawJson::from_serialize(&r)) })
            }
            (Self::Prompt(f), Call::GetPrompt(p)) => {
                let fut = f(ctx, p);
                Box::pin(async move { fut.await.map(|r| RawJson::from_serialize(&r)) })
            }
            (Self::Complete(f), Call::Complete(p)) => {
                let fut = f(ctx, p);
                Box::pin(async move { fut.await.map(|r| RawJson::from_serialize(&r)) })
            }
            (handler, call) => {
                let e = mismatch(handler.kind(), &call);
                Box::pin(async move { Err(e) })
            }
        }
    }
}

impl<C> AsyncHandler<C> {
    fn kind(&self) -> &'static str {
        match self {
            Self::Complete(_) => "completion handler",
            Self::Prompt(_) => "prompt handler",
            Self::Resource(_) => "resource handler",
            Self::Tool(_) => "tool handler",
        }
    }
}

/// Registering async closures over raw params:
/// `registry.raw_tool(tool, |ctx, params| async move { … })`.
impl<C: Send + 'static> Registry<AsyncHandler<C>> {
    /// Adds a tool with a hand-written definition and a handler of the raw params (the
    /// session has validated the arguments against `tool`'s `inputSchema`). An `Err`
    /// becomes an `isError` result with the error's message.
    pub fn raw_tool<F, Fut>(&mut self, tool: Tool, f: F) -> &mut Self
    where
        F: Fn(C, CallToolParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<CallToolResult>> + Send + 'static,
    {
        let f = Arc::new(f);
        self.add_tool(
            tool,
            AsyncHandler::Tool(Arc::new(move |c, p| {
                let fut = f(c, p);
                Box::pin(async move { fut.await.map_err(|e| ToolError::new(e.message)) })
            })),
        );
        self
    }

    /// Adds a resource and its handler.
    pub fn resource<F, Fut>(&mut self, resource: Resource, f: F) -> &mut Self
    where
        F: Fn(C, ReadResourceParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ReadResourceResult>> + Send + 'static,
    {
        let h = AsyncHandler::Resource(Arc::new(move |c, p, _| Box::pin(f(c, p))));
        self.add_resource(resource, h);
        self
    }

    /// Adds a resource template and its handler, which gets the template's variables.
    pub fn resource_template<F, Fut>(&mut self, template: ResourceTemplate, f: F) -> &mut Self
    where
        F: Fn(C, ReadResourceParams, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ReadResourceResult>> + Send + 'static,
    {
        let h = AsyncHandler::Resource(Arc::new(move |c, p, v| Box::pin(f(c, p, v))));
        self.add_resource_template(template, h);
        self
    }

    /// Adds a prompt and a handler of the raw params (required arguments are checked
    /// before it runs).
    pub fn raw_prompt<F, Fut>(&mut self, prompt: Prompt, f: F) -> &mut Self
    where
        F: Fn(C, GetPromptParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<GetPromptResult>> + Send + 'static,
    {
        self.add_prompt(prompt, AsyncHandler::Prompt(Arc::new(move |c, p| Box::pin(f(c, p)))));
        self
    }

    /// Sets the `completion/complete` handler (declares the `completions` capability).
    pub fn completion<F, Fut>(&mut self, f: F) -> &mut Self
    where
        F: Fn(C, CompleteParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<CompleteResult>> + Send + 'static,
    {
        self.set_completion_handler(AsyncHandler::Complete(Arc::new(move |c, p| {
            Box::pin(f(c, p))
        })));
        self
    }
}

type SyncFn<C, P, R> = Arc<dyn Fn(&C, P) -> HandlerResult<R> + Send + Sync>;
type SyncToolFn<C> =
    Arc<dyn Fn(&C, CallToolParams) -> Result<CallToolResult, ToolError> + Send + Sync>;
type SyncResourceFn<C> = Arc<
    dyn Fn(&C, ReadResourceParams, BTreeMap<String, String>) -> HandlerResult<ReadResourceResult>
        + Send
        + Sync,
>;

/// A blocking handler of any kind: a plain function or closure taking the context by reference.
pub enum SyncHandler<C> {
    /// `completion/complete`.
    Complete(SyncFn<C, CompleteParams, CompleteResult>),
    /// `prompts/get`.
    Prompt(SyncFn<C, GetPromptParams, GetPromptResult>),
    /// `resources/read`, with template variables.
    Resource(SyncResourceFn<C>),
    /// `tools/call`; an `Err` becomes an `isError` result or, for
    /// [`ToolError::protocol`], a JSON-RPC error.
    Tool(SyncToolFn<C>),
}

impl<C> Clone for SyncHandler<C> {
    fn clone(&self) -> Self {
        match self {
            Self::Complete(f) => Self::Complete(f.clone()),
            Self::Prompt(f) => Self::Prompt(f.clone()),
            Self::Resource(f) => Self::Resource(f.clone()),
            Self::Tool(f) => Self::Tool(f.clone()),
        }
    }
}

impl<C> std::fmt::Debug for SyncHandler<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind())
    }
}

impl<C> SyncHandler<C> {
    /// Runs the handler for `call` on this thread; returns what to pass to `Server::respond`.
    pub fn run(&self, ctx: &C, call: Call) -> Result<RawJson, ErrorObject> {
        match (self, call) {
            (Self::Tool(f), Call::Tool(p)) => tool_outcome(f(ctx, p)),
            (Self::Resource(f), Call::ReadResource { params, vars }) => {
                f(ctx, params, vars).map(|r| RawJson::from_serialize(&r))
            }
            (Self::Prompt(f), Call::GetPrompt(p)) => f(ctx, p).map(|r| RawJson::from_serialize(&r)),
            (Self::Complete(f), Call::Complete(p)) => {
                f(ctx, p).map(|r| RawJson::from_serialize(&r))
            }
            (handler, call) => Err(mismatch(handler.kind(), &call)),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Self::Complete(_) => "completion handler",
            Self::Prompt(_) => "prompt handler",
            Self::Resource(_) => "resource handler",
            Self::Tool(_) => "tool handler",
        }
    }
}

/// Registering plain closures over raw params: `registry.raw_tool(tool, |ctx, params| Ok(…))`.
impl<C: 'static> Registry<SyncHandler<C>> {
    /// Adds a tool with a hand-written definition and a handler of the raw params, as the
    /// async [`raw_tool`](Registry::<AsyncHandler<C>>::raw_tool) does.
    pub fn raw_tool<F>(&mut self, tool: Tool, f: F) -> &mut Self
    where
        F: Fn(&C, CallToolParams) -> HandlerResult<CallToolResult> + Send + Sync + 'static,
    {
        let handler = move |c: &C, p| f(c, p).map_err(|e: ErrorObject| ToolError::new(e.message));
        self.add_tool(tool, SyncHandler::Tool(Arc::new(handler)));
        self
    }

    /// Adds a resource and its handler.
    pub fn resource<F>(&mut self, resource: Resource, f: F) -> &mut Self
    where
        F: Fn(&C, ReadResourceParams) -> HandlerResult<ReadResourceResult> + Send + Sync + 'static,
    {
        self.add_resource(resource, SyncHandler::Resource(Arc::new(move |c, p, _| f(c, p))));
        self
    }

    /// Adds a resource template and its handler, which gets the template's variables.
    pub fn resource_template<F>(&mut self, template: ResourceTemplate, f: F) -> &mut Self
    where
        F: Fn(
                &C,
                ReadResourceParams,
                BTreeMap<String, String>,
            ) -> HandlerResult<ReadResourceResult>
            + Send
            + Sync
            + 'static,
    {
        self.add_resource_template(template, SyncHandler::Resource(Arc::new(f)));
        self
    }

    /// Adds a prompt and a handler of the raw params (required arguments are checked
    /// before it runs).
    pub fn raw_prompt<F>(&mut self, prompt: Prompt, f: F) -> &mut Self
    where
        F: Fn(&C, GetPromptParams) -> HandlerResult<GetPromptResult> + Send + Sync + 'static,
    {
        self.add_prompt(prompt, SyncHandler::Prompt(Arc::new(f)));
        self
    }

    /// Sets the `completion/complete` handler (declares the `completions` capability).
    pub fn completion<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn(&C, CompleteParams) -> HandlerResult<CompleteResult> + Send + Sync + 'static,
    {
        self.set_completion_handler(SyncHandler::Complete(Arc::new(f)));
        self
    }
}

/// A tool's outcome as the answer to send: a tool failure becomes an `isError` result, a
/// protocol error stays a JSON-RPC error.
fn tool_outcome(outcome: Result<CallToolResult, ToolError>) -> Result<RawJson, ErrorObject> {
    outcome.or_else(ToolError::into_tool_outcome).map(|r| RawJson::from_serialize(&r))
}

fn mismatch(kind: &str, call: &Call) -> ErrorObject {
    crate::error::Rejection::Internal(format!("a {kind} was registered for {call:?}")).to_jsonrpc()
}
