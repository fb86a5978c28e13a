//! The typed MCP API, defined once: each runtime implements the one generic request path and
//! gets every named method (`list_tools`, `call_tool`, …) with the same name and shape.
//!
//! [`ClientApi::Call`] is what a call returns: a future in zest-tokio and zest-smol, a plain
//! `Result` in zest-blocking. [`PeerApi`] is the same idea for a server handler asking the
//! client (sampling, elicitation, roots).

mod pages;

pub use pages::PageWalk;

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde_json::Value;

use crate::auth::AuthError;
use crate::error::{CloseReason, RequestError, UsageError};
use crate::rpc::RequestOptions;
use crate::schema::methods::{
    CallTool, Complete, CreateMessage, Elicit, GetPrompt, ListPrompts, ListResourceTemplates,
    ListResources, ListRoots, ListTools, Method, Ping, ReadResource, SetLevel, Subscribe,
    Unsubscribe,
};
use crate::schema::{
    CallToolParams, CallToolResult, CompleteParams, CompleteResult, CompletionArgument,
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, EmptyParams, EmptyResult,
    GetPromptParams, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListRootsResult, ListToolsResult, LoggingLevel, PaginatedParams,
    ProgressParams, Prompt, ReadResourceParams, ReadResourceResult, Reference, Resource,
    ResourceTemplate, SetLevelParams, SubscribeParams, Tool, UnsubscribeParams,
};

/// Why a typed call through a runtime handle failed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallError {
    /// The call was not sent: wrong time, closed session, bad arguments.
    Usage(UsageError),
    /// The call was sent and ended without a result.
    Request(RequestError),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(e) => write!(f, "{e}"),
            Self::Request(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CallError {}

impl CallError {
    /// The OAuth failure behind it, if the call failed for want of authorization.
    pub fn auth(&self) -> Option<&AuthError> {
        match self {
            Self::Request(RequestError::Auth(e))
            | Self::Request(RequestError::Closed(CloseReason::Auth(e))) => Some(e),
            _ => None,
        }
    }

    /// The URL-mode elicitations the server requires first (a -32042 error); see
    /// [`RequestError::url_elicitations`].
    pub fn url_elicitations(&self) -> Option<Vec<crate::schema::ElicitUrlParams>> {
        match self {
            Self::Request(e) => e.url_elicitations(),
            Self::Usage(_) => None,
        }
    }
}

impl From<UsageError> for CallError {
    fn from(e: UsageError) -> Self {
        Self::Usage(e)
    }
}

impl From<RequestError> for CallError {
    fn from(e: RequestError) -> Self {
        Self::Request(e)
    }
}

/// A callback for progress notifications on one request.
pub type ProgressFn = Box<dyn FnMut(ProgressParams) + Send>;

/// Options for one call ([`ClientApi::call_tool_with`]): its timeouts and where its progress
/// goes. `CallOptions::new()` takes every timeout from the client's config and asks for no
/// progress.
#[derive(Default)]
pub struct CallOptions {
    request: RequestOptions,
    on_progress: Option<ProgressFn>,
}

impl CallOptions {
    /// The client's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long the call may go without an answer (or, with progress, without a report).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.request = self.request.timeout(timeout);
        self
    }

    /// How long the call may take at most, progress or not.
    pub fn max_total(mut self, max_total: Duration) -> Self {
        self.request = self.request.max_total(max_total);
        self
    }

    /// Asks the server for progress and hands each report to `f`; each report restarts
    /// the [`timeout`](Self::timeout), never past [`max_total`](Self::max_total).
    pub fn on_progress(mut self, f: impl FnMut(ProgressParams) + Send + 'static) -> Self {
        self.request.progress = true;
        self.request.reset_on_progress = true;
        self.on_progress = Some(Box::new(f));
        self
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("request", &self.request)
            .field("on_progress", &self.on_progress.is_some())
            .finish()
    }
}

/// A paginated list method: how to take the items and the next cursor out of a page.
pub trait Paged: Method<Params = PaginatedParams> {
    /// One listed item.
    type Item;
    /// Splits a page into its items and the cursor of the next page.
    fn split(page: Self::Result) -> (Vec<Self::Item>, Option<String>);
}

impl Paged for ListTools {
    type Item = Tool;
    fn split(page: ListToolsResult) -> (Vec<Tool>, Option<String>) {
        (page.tools, page.next_cursor)
    }
}

impl Paged for ListPrompts {
    type Item = Prompt;
    fn split(page: ListPromptsResult) -> (Vec<Prompt>, Option<String>) {
        (page.prompts, page.next_cursor)
    }
}

impl Paged for ListResources {
    type Item = Resource;
    fn split(page: ListResourcesResult) -> (Vec<Resource>, Option<String>) {
        (page.resources, page.next_cursor)
    }
}

impl Paged for ListResourceTemplates {
    type Item = ResourceTemplate;
    fn split(page: ListResourceTemplatesResult) -> (Vec<ResourceTemplate>, Option<String>) {
        (page.resource_templates, page.next_cursor)
    }
}

/// The most pages `list_all_*` follows before giving up on a server whose cursors never end.
pub const MAX_PAGES: usize = 10_000;

/// The client's typed API. Runtimes implement the three required methods.
pub trait ClientApi {
    /// What a call returns: a future, or a `Result` in the blocking runtime.
    type Call<'a, T: 'a>
    where
        Self: 'a;

    /// Sends a typed request. `on_progress`, when given, asks the server for progress and
    /// receives each report (progress also restarts the idle timeout).
    fn request_with<M: Method>(
        &self,
        params: M::Params,
        opts: RequestOptions,
        on_progress: Option<ProgressFn>,
    ) -> Self::Call<'_, M::Result>
    where
        M::Result: 'static;

    /// Every item of a paginated list, following `nextCursor` (at most [`MAX_PAGES`]).
    fn list_all<M: Paged>(&self) -> Self::Call<'_, Vec<M::Item>>
    where
        M::Item: 'static,
        M::Result: 'static;

    /// A call that fails at once (for arguments that cannot be sent).
    fn fail<T: 'static>(&self, error: CallError) -> Self::Call<'_, T>;

    /// Sends a typed request with default options.
    fn request<M: Method>(&self, params: M::Params) -> Self::Call<'_, M::Result>
    where
        M::Result: 'static,
    {
        self.request_with::<M>(params, RequestOptions::default(), None)
    }

    /// `ping`.
    fn ping(&self) -> Self::Call<'_, EmptyResult> {
        self.request::<Ping>(EmptyParams::default())
    }

    /// One page of `tools/list`.
    fn list_tools(&self, cursor: Option<String>) -> Self::Call<'_, ListToolsResult> {
        self.request::<ListTools>(PaginatedParams { cursor, ..Default::default() })
    }

    /// Every tool, all pages.
    fn list_all_tools(&self) -> Self::Call<'_, Vec<Tool>> {
        self.list_all::<ListTools>()
    }

    /// `tools/call`; `arguments` must be a JSON object or `null`.
    fn call_tool(&self, name: &str, arguments: Value) -> Self::Call<'_, CallToolResult> {
        match tool_params(name, arguments) {
            Ok(params) => self.request::<CallTool>(params),
            Err(e) => self.fail(e),
        }
    }

    /// `tools/call` with progress reports delivered to `on_progress`.
    fn call_tool_with_progress(
        &self,
        name: &str,
        arguments: Value,
        on_progress: impl FnMut(ProgressParams) + Send + 'static,
    ) -> Self::Call<'_, CallToolResult> {
        self.call_tool_with(name, arguments, CallOptions::new().on_progress(on_progress))
    }

    /// `tools/call` with this call's own timeouts and progress callback.
    fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Self::Call<'_, CallToolResult> {
        match tool_params(name, arguments) {
            Ok(params) => {
                self.request_with::<CallTool>(params, options.request, options.on_progress)
            }
            Err(e) => self.fail(e),
        }
    }

    /// One page of `resources/list`.
    fn list_resources(&self, cursor: Option<String>) -> Self::Call<'_, ListResourcesResult> {
        self.request::<ListResources>(PaginatedParams { cursor, ..Default::default() })
    }

    /// Every resource, all pages.
    fn list_all_resources(&self) -> Self::Call<'_, Vec<Resource>> {
        self.list_all::<ListResources>()
    }

    /// One page of `resources/templates/list`.
    fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Self::Call<'_, ListResourceTemplatesResult> {
        self.request::<ListResourceTemplates>(PaginatedParams { cursor, ..Default::default() })
    }

    /// Every resource template, all pages.
    fn list_all_resource_templates(&self) -> Self::Call<'_, Vec<ResourceTemplate>> {
        self.list_all::<ListResourceTemplates>()
    }

    /// `resources/read`.
    fn read_resource(&self, uri: &str) -> Self::Call<'_, ReadResourceResult> {
        self.request::<ReadResource>(ReadResourceParams {
            uri: uri.to_owned(),
            ..Default::default()
        })
    }

    /// `resources/subscribe`.
    fn subscribe(&self, uri: &str) -> Self::Call<'_, EmptyResult> {
        self.request::<Subscribe>(SubscribeParams { uri: uri.to_owned(), ..Default::default() })
    }

    /// `resources/unsubscribe`.
    fn unsubscribe(&self, uri: &str) -> Self::Call<'_, EmptyResult> {
        self.request::<Unsubscribe>(UnsubscribeParams { uri: uri.to_owned(), ..Default::default() })
    }

    /// One page of `prompts/list`.
    fn list_prompts(&self, cursor: Option<String>) -> Self::Call<'_, ListPromptsResult> {
        self.request::<ListPrompts>(PaginatedParams { cursor, ..Default::default() })
    }

    /// Every prompt, all pages.
    fn list_all_prompts(&self) -> Self::Call<'_, Vec<Prompt>> {
        self.list_all::<ListPrompts>()
    }

    /// `prompts/get`.
    fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Self::Call<'_, GetPromptResult> {
        let arguments = (!arguments.is_empty()).then_some(arguments);
        self.request::<GetPrompt>(GetPromptParams {
            name: name.to_owned(),
            arguments,
            ..Default::default()
        })
    }

    /// `completion/complete` for one argument of a prompt or resource template.
    fn complete(
        &self,
        reference: Reference,
        argument: &str,
        value: &str,
    ) -> Self::Call<'_, CompleteResult> {
        let argument = CompletionArgument {
            name: argument.to_owned(),
            value: value.to_owned(),
            ..Default::default()
        };
        self.request::<Complete>(CompleteParams {
            reference,
            argument,
            context: None,
            meta: None,
            extra: Default::default(),
        })
    }

    /// `logging/setLevel`.
    fn set_logging_level(&self, level: LoggingLevel) -> Self::Call<'_, EmptyResult> {
        self.request::<SetLevel>(SetLevelParams::new(level))
    }
}

fn tool_params(name: &str, arguments: Value) -> Result<CallToolParams, CallError> {
    let arguments = match arguments {
        Value::Object(map) => Some(map),
        Value::Null => None,
        _ => return Err(CallError::Usage(UsageError::ParamsNotAnObject)),
    };
    Ok(CallToolParams { name: name.to_owned(), arguments, ..Default::default() })
}

/// What a server handler may ask the client, typed. Runtimes' request contexts implement
/// [`peer_request`](Self::peer_request).
pub trait PeerApi {
    /// What a call returns: a future, or a `Result` in the blocking runtime.
    type Call<'a, T: 'a>
    where
        Self: 'a;

    /// Sends a typed request to the client.
    fn peer_request<M: Method>(&self, params: M::Params) -> Self::Call<'_, M::Result>
    where
        M::Result: 'static;

    /// `sampling/createMessage`: asks the client's model (the client must declare `sampling`).
    fn create_message(&self, params: CreateMessageParams) -> Self::Call<'_, CreateMessageResult> {
        self.peer_request::<CreateMessage>(params)
    }

    /// `elicitation/create`: asks the user (the client must declare `elicitation`).
    fn elicit(&self, params: ElicitParams) -> Self::Call<'_, ElicitResult> {
        self.peer_request::<Elicit>(params)
    }

    /// `roots/list` (the client must declare `roots`).
    fn list_roots(&self) -> Self::Call<'_, ListRootsResult> {
        self.peer_request::<ListRoots>(EmptyParams::default())
    }

    /// `ping` to the client.
    fn ping_client(&self) -> Self::Call<'_, EmptyResult> {
        self.peer_request::<Ping>(EmptyParams::default())
    }
}
