//! One zero-sized marker type per MCP method, tying its wire name to its typed params and
//! result.
//!
//! ```
//! use zest_core::schema::methods::{CallTool, Method};
//! assert_eq!(CallTool::NAME, "tools/call");
//! ```
//!
//! Params of methods whose `params` is optional (`ping`, the list methods, `roots/list`, the
//! parameterless notifications) decode from `{}`; a caller that received no `params` at all
//! decodes `{}` in its place.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{
    CallToolParams, CallToolResult, CancelledParams, CompleteParams, CompleteResult,
    CreateMessageParams, CreateMessageResult, DiscoverResult, ElicitParams, ElicitResult,
    ElicitationCompleteParams, EmptyParams, EmptyResult, GetPromptParams, GetPromptResult,
    InitializeParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListRootsResult, ListToolsResult, LoggingMessageParams, PaginatedParams,
    ProgressParams, ReadResourceParams, ReadResourceResult, ResourceUpdatedParams, SetLevelParams,
    SubscribeParams, UnsubscribeParams,
};

/// A request method: its wire name and typed params and result.
pub trait Method {
    /// The JSON-RPC `method` string.
    const NAME: &'static str;
    /// The request's `params`.
    type Params: Serialize + DeserializeOwned + Clone + fmt::Debug;
    /// The response's `result`.
    type Result: Serialize + DeserializeOwned + Clone + fmt::Debug;
}

/// A notification method.
pub trait NotificationMethod {
    /// The JSON-RPC `method` string.
    const NAME: &'static str;
    /// The notification's `params`.
    type Params: Serialize + DeserializeOwned + Clone + fmt::Debug;
}

macro_rules! request {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $params:ty, $result:ty) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $ty;

        impl Method for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
            type Result = $result;
        }
    };
}

macro_rules! notification {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $params:ty) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $ty;

        impl NotificationMethod for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
        }
    };
}

request!(
    /// `initialize`, client to server: opens the session; MUST be the first exchange.
    Initialize, "initialize", InitializeParams, InitializeResult
);
request!(
    /// `server/discover`, client to server (2026-07-28): what the server speaks and offers.
    Discover, "server/discover", EmptyParams, DiscoverResult
);
request!(
    /// `ping`, either way: the receiver MUST answer promptly with `{}`.
    Ping, "ping", EmptyParams, EmptyResult
);
request!(
    /// `tools/list`, client to server, paginated.
    ListTools, "tools/list", PaginatedParams, ListToolsResult
);
request!(
    /// `tools/call`, client to server.
    CallTool, "tools/call", CallToolParams, CallToolResult
);
request!(
    /// `resources/list`, client to server, paginated.
    ListResources, "resources/list", PaginatedParams, ListResourcesResult
);
request!(
    /// `resources/templates/list`, client to server, paginated.
    ListResourceTemplates, "resources/templates/list", PaginatedParams,
    ListResourceTemplatesResult
);
request!(
    /// `resources/read`, client to server.
    ReadResource, "resources/read", ReadResourceParams, ReadResourceResult
);
request!(
    /// `resources/subscribe`, client to server; needs `resources.subscribe`.
    Subscribe, "resources/subscribe", SubscribeParams, EmptyResult
);
request!(
    /// `resources/unsubscribe`, client to server.
    Unsubscribe, "resources/unsubscribe", UnsubscribeParams, EmptyResult
);
request!(
    /// `prompts/list`, client to server, paginated.
    ListPrompts, "prompts/list", PaginatedParams, ListPromptsResult
);
request!(
    /// `prompts/get`, client to server.
    GetPrompt, "prompts/get", GetPromptParams, GetPromptResult
);
request!(
    /// `completion/complete`, client to server.
    Complete, "completion/complete", CompleteParams, CompleteResult
);
request!(
    /// `logging/setLevel`, client to server; needs `logging`.
    SetLevel, "logging/setLevel", SetLevelParams, EmptyResult
);
request!(
    /// `sampling/createMessage`, server to client; needs `sampling`.
    CreateMessage, "sampling/createMessage", CreateMessageParams, CreateMessageResult
);
request!(
    /// `elicitation/create`, server to client (2025-06-18+); needs `elicitation`.
    Elicit, "elicitation/create", ElicitParams, ElicitResult
);
request!(
    /// `roots/list`, server to client; needs `roots`.
    ListRoots, "roots/list", EmptyParams, ListRootsResult
);

notification!(
    /// `notifications/initialized`, client to server, after a successful `initialize`.
    Initialized, "notifications/initialized", EmptyParams
);
notification!(
    /// `notifications/cancelled`, either way.
    Cancelled, "notifications/cancelled", CancelledParams
);
notification!(
    /// `notifications/progress`, either way.
    Progress, "notifications/progress", ProgressParams
);
notification!(
    /// `notifications/message`, server to client.
    LoggingMessage, "notifications/message", LoggingMessageParams
);
notification!(
    /// `notifications/resources/updated`, server to client, for a subscribed resource.
    ResourceUpdated, "notifications/resources/updated", ResourceUpdatedParams
);
notification!(
    /// `notifications/resources/list_changed`, server to client.
    ResourceListChanged, "notifications/resources/list_changed", EmptyParams
);
notification!(
    /// `notifications/tools/list_changed`, server to client.
    ToolListChanged, "notifications/tools/list_changed", EmptyParams
);
notification!(
    /// `notifications/prompts/list_changed`, server to client.
    PromptListChanged, "notifications/prompts/list_changed", EmptyParams
);
notification!(
    /// `notifications/roots/list_changed`, client to server.
    RootsListChanged, "notifications/roots/list_changed", EmptyParams
);
notification!(
    /// `notifications/elicitation/complete`, server to client (2025-11-25 only).
    ElicitationComplete, "notifications/elicitation/complete", ElicitationCompleteParams
);
