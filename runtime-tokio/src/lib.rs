//! zest over tokio: MCP over stdio, as a client of a server run as a child process and as a
//! server on this process's stdin and stdout.
//!
//! This crate is adapters, one loop per session and handles; every protocol rule lives in
//! [`zest_core`]. Each session has one loop that owns the core machine and repeats: drain
//! `poll_output` (write frames, route events to the futures and channels waiting for them),
//! then wait for bytes, a command or the core's `poll_timeout`, and feed exactly one of them
//! back. It works on the current-thread and the multi-thread runtime alike: a client
//! session's loop runs in a task, and on a multi-thread runtime the futures of the calls that
//! wait on it poll it too (a call then needs no other worker; progress callbacks run where
//! the loop is polled: a waiting call's task or the session's task).
//!
//! # A client
//!
//! ```no_run
//! use zest_tokio::{Client, ClientApi, ClientOptions, StdioCommand};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let command = StdioCommand::new("my-mcp-server").arg("--stdio");
//! let client = Client::spawn(command, ClientOptions::new("my-app", "1.0")).await?;
//! for tool in client.list_all_tools().await? {
//!     println!("{}", tool.name);
//! }
//! let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
//! println!("{:?}", result.content);
//! let status = client.close().await?; // close stdin, wait, SIGTERM, wait, SIGKILL
//! println!("server exited: {status}");
//! # Ok(()) }
//! ```
//!
//! Dropping a call's future before it completes cancels the request
//! (`notifications/cancelled` is sent). Dropping the last [`Client`] clone shuts the child
//! down like [`Client::close`].
//!
//! # A client with a sampling policy
//!
//! Sampling is declared only when the app sets a policy (or a raw `on_sampling` handler). A
//! request over the token limit or for a model outside the allowlist is refused before anyone
//! sees it; the reviewer sees a [`SamplingSummary`] (a SHA-256 of the request, model hints,
//! token ceiling, message roles and content kinds, never the text); the delegate alone gets
//! the conversation.
//!
//! ```no_run
//! use zest_tokio::schema::CreateMessageResult;
//! use zest_tokio::{Client, ClientApi, ClientOptions, SamplingPolicy, SamplingSummary};
//! use zest_tokio::StdioCommand;
//!
//! async fn approve_in_ui(summary: SamplingSummary) -> bool {
//!     eprintln!("allow the server to sample? {summary}");
//!     true
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let policy = SamplingPolicy::reviewed(approve_in_ui)
//!     .max_tokens(1024)
//!     .models(["claude-*", "gpt-4o"])
//!     .delegate(|request| async move {
//!         let turns = request.messages.len(); // ask your model here
//!         Ok(CreateMessageResult::text("gpt-4o", format!("read {turns} messages")))
//!     });
//! let options = ClientOptions::new("app", "1.0").sampling(policy);
//! let client = Client::spawn(StdioCommand::new("my-server"), options).await?;
//! let result = client.call_tool("hello", serde_json::json!({"name": "Ada"})).await?;
//! println!("{:?}", result.content);
//! # Ok(()) }
//! ```
//!
//! # A server
//!
//! ```no_run
//! use zest_tokio::{serve_stdio, Registry, ServerConfig};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo {
//!     /// The text to send back.
//!     text: String,
//! }
//!
//! # async fn run() {
//! let registry = Registry::new()
//!     .tool("echo", "Echoes text", |Echo { text }| async move { text });
//! let reason = serve_stdio(ServerConfig::new("my-server", "1.0"), registry).await;
//! eprintln!("session over: {reason}");
//! # }
//! ```
//!
//! # Over HTTP
//!
//! [`Client::connect`] speaks Streamable HTTP (and legacy HTTP+SSE) to a URL.
//! [`serve_http`] serves a [`Registry`] on a listener of its own (`/mcp`, `/sse`,
//! `/health`). With the `tower` feature, `McpService` serves the same router as a
//! `tower::Service` to mount at `/mcp` in an axum app beside other routes (see the
//! `tokio_axum_server` example); its responses stream SSE answers as they are produced.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
mod command;
mod http_server;
mod memory;
mod server;
mod timer;
mod writer;

pub use zest_core as core;
pub use zest_core::api::{CallError, CallOptions, ClientApi, PeerApi};
pub use zest_core::schema;

pub use client::{Client, Notifications};
pub use command::{ClientOptions, StdioCommand, DEFAULT_GRACE};
pub use http_server::{
    router_config, serve_http, serve_http_with, HttpConfig, HttpServer, ServerStats, TokioHub,
    DEFAULT_SHUTDOWN_GRACE,
};
#[cfg(feature = "tower")]
pub use http_server::{McpBody, McpService};
pub use memory::{in_memory, in_memory_with, InMemoryServer};
pub use server::{
    serve, serve_stdio, Registry, RequestContext, ServerHandle, SessionLink, StdioServer,
};
pub use zest_core::auth::{
    AuthError, ClientCredentials, OAuthConfig, Principal, ProtectedResource, Tokens,
};
pub use zest_core::handler::{AsyncClientHandlers, Elicited, Json, State, ToolError};
pub use zest_core::handler::{AsyncSamplingPolicy as SamplingPolicy, SamplingSummary};
pub use zest_core::http::client::HttpMode;
pub use zest_core::runtime::http_client::HttpEndpoint;
pub use zest_core::runtime::ConnectError;
pub use zest_core::runtime::NOTIFICATION_QUEUE;
pub use zest_core::server::ListKind;
pub use zest_core::server::ServerConfig;
pub use zest_core::RequestOptions;
pub use zest_net::{
    authorize_headless, authorize_in_browser, introspection_validator, jwt_validator,
    open_in_browser, Introspection, LOGIN_TIMEOUT,
};

/// The request context under the shorter name typed handlers use: `|args: T, ctx: Context|`.
pub use server::RequestContext as Context;

#[cfg(test)]
mod tests {
    fn shareable<T: Send + Sync + 'static>() {}

    /// Fails to compile if a handle stops being shareable across tasks and threads.
    #[test]
    fn handles_are_send_and_sync() {
        shareable::<crate::Client>();
        shareable::<crate::RequestContext>();
        shareable::<crate::ConnectError>();
        #[cfg(feature = "tower")]
        {
            shareable::<crate::McpService>();
            shareable::<crate::McpBody>();
        }
    }
}
