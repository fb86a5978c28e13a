//! zest over blocking std threads: no async runtime.
//!
//! - [`Client::spawn`] runs an MCP server as a child process over stdio. Calls block the
//!   calling thread and may come from many threads at once. The child runs in its own process
//!   group and is always shut down and reaped: close stdin, wait, SIGTERM, wait, SIGKILL.
//! - [`serve_stdio`] / [`serve`] serve a [`Registry`] of plain closures with a
//!   [`RequestContext`] (progress, logging, cancellation, asking the client for sampling); a
//!   request runs on the thread that read it, and one that runs for more than 5–10 ms (or
//!   asks the client something) lets a new thread read on, so no request waits long behind
//!   another.
//! - [`Client::connect`] / [`Client::connect_to`] reach a server over Streamable HTTP or
//!   legacy HTTP+SSE (`http` and `https`): the same [`Client`] and [`ClientApi`]; a caller
//!   performs its request's exchange itself up to a JSON answer, and an event stream is read
//!   on a thread of its own, through zest-core's connection machine.
//! - [`serve_http`] / [`serve_http_with`] serve the same [`Registry`] over HTTP (Streamable
//!   HTTP at `/mcp`, legacy HTTP+SSE, `/health`) on threads until [`HttpServer::shutdown`];
//!   a handler's progress, logs and requests to the client travel on its call's SSE stream.
//!
//! Threading: no thread owns a session. zest-core's machine sits behind a lock, and the
//! thread that has an input feeds it and drains it: a caller sends its own request and writes
//! the frame to the child's stdin; the thread reading the peer's stream feeds the bytes and
//! completes the waiting callers; a server handler's thread feeds its answer and writes it.
//! One supervisor thread per session sleeps until the machine's `poll_timeout`, has a worker
//! thread write for the reader (neither ever blocks on a write), and ends the session (the
//! client's supervisor owns the child and reaps it; the server's is the thread that called
//! [`serve`]).
//!
//! ```no_run
//! use serde_json::json;
//! use zest_blocking::{Client, ClientApi, ClientOptions, StdioCommand};
//!
//! let client = Client::spawn(
//!     StdioCommand::new("my-mcp-server").arg("--stdio"),
//!     ClientOptions::new("my-app", "1.0"),
//! )?;
//! let tools = client.list_all_tools()?;
//! let result = client.call_tool("echo", json!({"text": "hi"}))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # A client with a sampling policy
//!
//! Sampling is declared only when the app sets a policy (or a raw `on_sampling` handler).
//! Requests over the token limit or for a model outside the allowlist are refused unseen; the
//! reviewer sees a [`SamplingSummary`], never the text; the delegate alone gets the
//! conversation. Reviewer and delegate are plain closures, run on the request's thread.
//!
//! ```no_run
//! use zest_blocking::schema::CreateMessageResult;
//! use zest_blocking::{Client, ClientApi, ClientOptions, SamplingPolicy, SamplingSummary};
//! use zest_blocking::StdioCommand;
//!
//! fn approve_in_ui(summary: SamplingSummary) -> bool {
//!     eprintln!("allow the server to sample? {summary}");
//!     true
//! }
//!
//! let policy = SamplingPolicy::reviewed(approve_in_ui)
//!     .max_tokens(1024)
//!     .models(["claude-*", "gpt-4o"])
//!     .delegate(|request| {
//!         let turns = request.messages.len(); // ask your model here
//!         Ok(CreateMessageResult::text("gpt-4o", format!("read {turns} messages")))
//!     });
//! let options = ClientOptions::new("app", "1.0").sampling(policy);
//! let client = Client::spawn(StdioCommand::new("my-server"), options)?;
//! let result = client.call_tool("hello", serde_json::json!({"name": "Ada"}))?;
//! println!("{:?}", result.content);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
mod http_server;
mod link;
mod memory;
mod read_timeout;
mod server;
mod workers;

pub use zest_core as core;
pub use zest_core::api::{CallError, CallOptions, ClientApi, PeerApi};
pub use zest_core::schema;

pub use client::{
    CancelHandle, Client, ClientOptions, Notifications, PendingCall, NOTIFICATION_QUEUE,
};
pub use http_server::{
    router_config, serve_http, serve_http_with, HttpConfig, HttpServer, ServerStats,
    DEFAULT_SHUTDOWN_GRACE,
};
pub use memory::{in_memory, in_memory_with, InMemoryServer};
pub use server::{
    serve, serve_stdio, Registry, RequestContext, ServerHandle, SessionLink, StdioServer,
};
pub use zest_core::auth::{
    AuthError, ClientCredentials, OAuthConfig, Principal, ProtectedResource, Tokens,
};
pub use zest_core::handler::{Elicited, Json, State, SyncClientHandlers, ToolError};
pub use zest_core::handler::{SamplingSummary, SyncSamplingPolicy as SamplingPolicy};
pub use zest_core::http::client::HttpMode;
pub use zest_core::runtime::http_client::HttpEndpoint;
pub use zest_core::runtime::ConnectError;
pub use zest_core::server::ListKind;
pub use zest_core::server::ServerConfig;
pub use zest_core::RequestOptions;
pub use zest_net::{
    authorize_headless, authorize_in_browser, introspection_validator, jwt_validator,
    open_in_browser, Introspection, LOGIN_TIMEOUT,
};

/// The request context under the shorter name typed handlers use: `|args: T, ctx: Context|`.
pub use server::RequestContext as Context;
pub use zest_core::stdio::StdioCommand;

/// How long [`StdioCommand::shutdown_grace`] waits by default.
pub const DEFAULT_GRACE: std::time::Duration = StdioCommand::DEFAULT_GRACE;

// Handles cross threads: checked at compile time.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    const fn send<T: Send>() {}
    send_sync::<Client>();
    send_sync::<CancelHandle>();
    send_sync::<Notifications>();
    send::<PendingCall<schema::CallToolResult>>();
    send::<RequestContext>();
};
