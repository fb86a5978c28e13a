//! zest over tokio: MCP over stdio, as a client of a server run as a child process and as a
//! server on this process's stdin and stdout.
//!
//! This crate is adapters, one loop per session and handles; every protocol rule lives in
//! [`zest_core`]. Each session's driver is one task that owns the core machine and repeats:
//! drain `poll_output` (write frames, route events to the futures and channels waiting for
//! them), then wait for bytes, a command or the core's `poll_timeout`, and feed exactly one of
//! them back. It works on the current-thread and the multi-thread runtime alike.
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
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod calls;
mod client;
mod command;
mod http_server;
mod memory;
mod server;
mod writer;

pub use zest_core as core;
pub use zest_core::api::{CallError, ClientApi, PeerApi};
pub use zest_core::schema;

pub use client::Client;
pub use command::{ClientOptions, StdioCommand, DEFAULT_GRACE};
pub use http_server::{
    router_config, serve_http, serve_http_with, HttpConfig, HttpServer, DEFAULT_SHUTDOWN_GRACE,
};
pub use memory::{in_memory, in_memory_with, InMemoryServer};
pub use server::{serve, serve_stdio, Registry, RequestContext, SessionLink};
pub use zest_core::handler::{Elicited, Json, State, ToolError};
pub use zest_core::http::client::HttpMode;
pub use zest_core::runtime::http_client::HttpEndpoint;
pub use zest_core::runtime::ConnectError;
pub use zest_core::server::ServerConfig;
pub use zest_core::RequestOptions;

/// The request context under the shorter name typed handlers use: `|args: T, ctx: Context|`.
pub use server::RequestContext as Context;

/// The README's Rust examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    fn shareable<T: Send + Sync + 'static>() {}

    /// Fails to compile if a handle stops being shareable across tasks and threads.
    #[test]
    fn handles_are_send_and_sync() {
        shareable::<crate::Client>();
        shareable::<crate::RequestContext>();
        shareable::<crate::ConnectError>();
    }
}
