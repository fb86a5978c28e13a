//! zest over smol: an MCP stdio client that spawns and supervises a server process, and an
//! MCP server on any pair of byte streams (this process's stdin/stdout, usually).
//!
//! Built only on smol's parts (async-io, async-process, async-channel, futures-lite and
//! smol's global executor), so it runs the same when driven from `smol::block_on`,
//! `async_std::task::block_on` or any other executor: the calls that wait on a client
//! session's loop poll it (a call needs no other thread), and a task on smol's global
//! executor (its threads start on first use) polls it whenever no call waits.
//!
//! All protocol semantics live in [`zest_core`]; this crate is adapters, one driver loop per
//! session and handles (docs/design-notes.md#thin-runtimes).
//!
//! - [`Client`]: spawns a server process ([`StdioCommand`]), performs the handshake and offers
//!   the typed API of [`ClientApi`]. Calls are futures; dropping one cancels its request.
//!   Progress callbacks run wherever the session's loop is polled (the task of a call that
//!   waits, or smol's global executor), and [`StdioCommand::on_stderr`] on a task of that
//!   executor: keep them short and never block in them.
//! - [`serve`] / [`serve_stdio`]: one server session over byte streams, with handlers from a
//!   [`Registry`] getting a [`RequestContext`].
//!
//! ```no_run
//! use zest_smol::{Client, ClientApi, ClientOptions, StdioCommand};
//!
//! smol::block_on(async {
//!     let cmd = StdioCommand::new("my-mcp-server").arg("--stdio");
//!     let client = Client::spawn(cmd, ClientOptions::new("my-app", "1.0")).await?;
//!     let tools = client.list_all_tools().await?;
//!     let answer = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
//!     println!("{} tools; echo said {:?}", tools.len(), answer.content);
//!     client.close().await?;
//!     Ok::<_, Box<dyn std::error::Error>>(())
//! })
//! .unwrap();
//! ```
//!
//! # A client with a sampling policy
//!
//! Sampling is declared only when the app sets a policy (or a raw `on_sampling` handler).
//! Requests over the token limit or for a model outside the allowlist are refused unseen; the
//! reviewer sees a [`SamplingSummary`], never the text; the delegate alone gets the
//! conversation.
//!
//! ```no_run
//! use zest_smol::schema::CreateMessageResult;
//! use zest_smol::{Client, ClientApi, ClientOptions, SamplingPolicy, SamplingSummary};
//! use zest_smol::StdioCommand;
//!
//! async fn approve_in_ui(summary: SamplingSummary) -> bool {
//!     eprintln!("allow the server to sample? {summary}");
//!     true
//! }
//!
//! smol::block_on(async {
//!     let policy = SamplingPolicy::reviewed(approve_in_ui)
//!         .max_tokens(1024)
//!         .models(["claude-*", "gpt-4o"])
//!         .delegate(|request| async move {
//!             let turns = request.messages.len(); // ask your model here
//!             Ok(CreateMessageResult::text("gpt-4o", format!("read {turns} messages")))
//!         });
//!     let options = ClientOptions::new("app", "1.0").sampling(policy);
//!     let client = Client::spawn(StdioCommand::new("my-server"), options).await?;
//!     let result = client.call_tool("hello", serde_json::json!({"name": "Ada"})).await?;
//!     println!("{:?}", result.content);
//!     Ok::<(), Box<dyn std::error::Error>>(())
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
mod command;
mod http_server;
mod memory;
mod pipe;
mod server;
mod timer;
mod writer;

pub use zest_core as core;
pub use zest_core::api::{CallError, CallOptions, ClientApi, PeerApi};
pub use zest_core::handler::{AsyncClientHandlers, AsyncHandler, BoxFuture, HandlerResult};
pub use zest_core::schema;
pub use zest_core::RequestOptions;

pub use client::{Client, Notifications};
pub use command::{ClientOptions, StdioCommand, DEFAULT_GRACE};
pub use http_server::{
    router_config, serve_http, serve_http_with, HttpConfig, HttpServer, ServerStats, SmolHub,
    DEFAULT_SHUTDOWN_GRACE,
};
pub use memory::{in_memory, in_memory_with, InMemoryServer};
pub use server::{
    serve, serve_stdio, Registry, RequestContext, ServerHandle, SessionLink, StdioServer,
};
pub use zest_core::auth::{
    AuthError, ClientCredentials, OAuthConfig, Principal, ProtectedResource, Tokens,
};
pub use zest_core::handler::{AsyncSamplingPolicy as SamplingPolicy, SamplingSummary};
pub use zest_core::handler::{Elicited, Json, State, ToolError};
pub use zest_core::http::client::HttpMode;
pub use zest_core::runtime::http_client::HttpEndpoint;
pub use zest_core::runtime::ConnectError;
pub use zest_core::runtime::NOTIFICATION_QUEUE;
pub use zest_core::server::ListKind;
pub use zest_core::server::ServerConfig;
pub use zest_net::{
    authorize_headless, authorize_in_browser, introspection_validator, jwt_validator,
    open_in_browser, Introspection, LOGIN_TIMEOUT,
};

/// The request context under the shorter name typed handlers use: `|args: T, ctx: Context|`.
pub use server::RequestContext as Context;

/// The handles are shared across threads and tasks.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Client>();
    send_sync::<RequestContext>();
    send_sync::<ConnectError>();
};
