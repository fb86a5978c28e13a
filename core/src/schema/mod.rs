//! Typed MCP params, results and notifications for the session-era revisions (2024-11-05,
//! 2025-03-26, 2025-06-18, 2025-11-25), and what 2026-07-28 adds so far: `server/discover`,
//! the `_meta` keys of its requests, and its input-required results.
//!
//! Each type is the union of its revisions: fields added later are `Option`s, and the doc
//! comment names the revision that introduced them. Decoding is lossless: every object a peer
//! sends keeps the fields this crate does not know in an `extra` map and writes them back, and
//! content blocks of unknown `type` survive as `Unknown` values. Sending only what the
//! negotiated revision allows is the caller's job (see [`ProtocolVersion`]).
//!
//! [`methods`] ties each method name to its params and result types.

mod builders;
mod call_result_de;
mod capabilities;
mod common;
mod completion;
mod constructors;
mod content;
mod content_de;
mod discover;
mod elicitation;
mod lifecycle;
mod logging;
pub mod methods;
mod mrtr;
mod notifications;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod tools;
mod version;
mod wire;

pub use capabilities::{
    CapabilityFlag, ClientCapabilities, ElicitationCapability, PromptsCapability,
    ResourcesCapability, RootsCapability, SamplingCapability, ServerCapabilities, ToolsCapability,
};
pub(crate) use common::progress_token_of;
pub use common::{
    progress_token, set_progress_token, Annotations, Cursor, EmptyParams, EmptyResult, Icon,
    IconTheme, Implementation, Meta, PaginatedParams, ProgressToken, Role, PROGRESS_TOKEN_KEY,
};
pub use completion::{
    CompleteParams, CompleteResult, Completion, CompletionArgument, CompletionContext, Reference,
};
pub use content::{
    AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, ImageContent,
    ResourceContents, SamplingContent, SamplingContents, TextContent, TextResourceContents,
    ToolResultContent, ToolUseContent,
};
pub use discover::{
    CacheScope, DiscoverResult, CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY, RESULT_COMPLETE, RESULT_INPUT_REQUIRED, SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
};
pub use elicitation::{
    ElicitAction, ElicitFormParams, ElicitParams, ElicitResult, ElicitSchema, ElicitUrlParams,
    ElicitationCompleteParams, EnumItems, EnumOption, FormMode, PrimitiveSchema, UrlMode,
};
pub use lifecycle::{InitializeParams, InitializeResult};
pub use logging::{LoggingLevel, LoggingMessageParams, SetLevelParams};
pub use mrtr::{InputRequest, InputRequiredResult, InputResponses};
pub use notifications::{CancelledParams, ProgressParams};
pub use prompts::{
    GetPromptParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage,
};
pub use resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceParams, ReadResourceResult,
    Resource, ResourceTemplate, ResourceUpdatedParams, SubscribeParams, UnsubscribeParams,
};
pub use roots::{ListRootsResult, Root};
pub use sampling::{
    CreateMessageParams, CreateMessageResult, IncludeContext, ModelHint, ModelPreferences,
    SamplingMessage, StopReason, ToolChoice, ToolChoiceMode,
};
pub use tools::{
    CallToolParams, CallToolResult, ListToolsResult, ObjectSchema, ObjectSchemaError, Tool,
    ToolAnnotations,
};
pub(crate) use version::Era;
pub use version::ProtocolVersion;

#[cfg(test)]
mod tests;
