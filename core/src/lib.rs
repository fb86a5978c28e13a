//! zest-core: the Model Context Protocol as pure state machines.
//!
//! No IO, no async runtime, no clock reads, no OS entropy. A [`client::Client`] or a
//! [`server::Server`] is fed [`io::Input`]s (bytes that arrived, time that passed), takes
//! commands (`request`, `respond`, `cancel`, `close`), and hands back [`io::Output`]s: bytes to
//! write ([`io::Transmit`]) and events for the application. A runtime crate (zest-tokio,
//! zest-smol, zest-blocking) is only adapters, one loop and handles; an embedder can just as
//! well drive the machines from its own loop, as below.
//!
//! # The calling contract
//!
//! 1. Feed one input with `handle_input` (it never fails: peer mistakes become events), or
//!    issue a command (it fails only for local misuse, with a [`error::UsageError`]).
//! 2. Drain `poll_output` until it returns `None`: perform every `Transmit`, handle every
//!    event.
//! 3. Sleep until `poll_timeout` (or until bytes or a command arrive), then feed
//!    `Input::Timeout(now)`; an early timeout is harmless.
//!
//! Every request ends in exactly one `Event::Response` (a result, a remote error, timed out,
//! cancelled, or closed), and a session ends in exactly one `Event::Closed`.
//!
//! # An embedder's own loop: a client and a server in memory
//!
//! ```
//! use std::time::Instant;
//! use bytes::Bytes;
//! use serde_json::json;
//! use zest_core::client::{self, Client, ClientConfig};
//! use zest_core::io::{self, Output, StreamId, Transmit};
//! use zest_core::jsonrpc::RawJson;
//! use zest_core::schema::{methods::CallTool, CallToolParams, CallToolResult, Tool};
//! use zest_core::server::{self, Call, Registry, Server, ServerConfig};
//! use zest_core::RequestOptions;
//!
//! // The server's handlers can be any type; here a plain function pointer.
//! type Handler = fn(&CallToolParams) -> CallToolResult;
//! fn shout(p: &CallToolParams) -> CallToolResult {
//!     let text = p.arguments.as_ref().and_then(|a| a["text"].as_str()).unwrap_or("");
//!     CallToolResult::text(text.to_uppercase())
//! }
//!
//! // Drain the client: keep its bytes for the server, react to its events.
//! fn drain_client(c: &mut Client, now: Instant, out: &mut Vec<Bytes>, answer: &mut Option<CallToolResult>) {
//!     while let Some(output) = c.poll_output() {
//!         match output {
//!             Output::Transmit(Transmit::Write { bytes, .. }) => out.push(bytes),
//!             Output::Event(client::Event::Ready(_)) => {
//!                 let params: CallToolParams = serde_json::from_value(
//!                     json!({"name": "shout", "arguments": {"text": "hello"}}),
//!                 ).unwrap();
//!                 c.send::<CallTool>(now, &params, RequestOptions::default()).unwrap();
//!             }
//!             Output::Event(client::Event::Response { result, .. }) => {
//!                 *answer = Some(client::decode_result::<CallTool>(result).unwrap());
//!             }
//!             _ => {}
//!         }
//!     }
//! }
//!
//! // Drain the server: keep its bytes for the client, run handlers for calls.
//! fn drain_server(s: &mut Server<Handler>, now: Instant, out: &mut Vec<Bytes>) {
//!     while let Some(output) = s.poll_output() {
//!         match output {
//!             Output::Transmit(Transmit::Write { bytes, .. }) => out.push(bytes),
//!             Output::Event(server::Event::Call { id, handler, call: Call::Tool(p), .. }) => {
//!                 let result = RawJson::from_serialize(&handler(&p));
//!                 s.respond(now, id, Ok(result)).unwrap();
//!             }
//!             _ => {}
//!         }
//!     }
//! }
//!
//! let mut registry: Registry<Handler> = Registry::default();
//! let tool = Tool::new("shout", "Upper-cases text", json!({
//!     "type": "object", "properties": {"text": {"type": "string"}}
//! }));
//! registry.add_tool(tool, shout);
//!
//! let now = Instant::now();
//! let mut server = Server::new(ServerConfig::new("demo-server", "1.0"), registry, now);
//! let mut client = Client::new(ClientConfig::new("demo-client", "1.0"), now);
//! let (mut to_server, mut to_client, mut answer) = (Vec::new(), Vec::new(), None);
//!
//! // The loop: every input is followed by a full drain. A real runtime would also sleep
//! // until `poll_timeout()` and feed `Input::Timeout`; in memory nothing ever waits.
//! drain_client(&mut client, now, &mut to_server, &mut answer);
//! while !(to_server.is_empty() && to_client.is_empty()) {
//!     for bytes in std::mem::take(&mut to_server) {
//!         server.handle_input(io::data(now, StreamId::STDIO, &bytes));
//!         drain_server(&mut server, now, &mut to_client);
//!     }
//!     for bytes in std::mem::take(&mut to_client) {
//!         client.handle_input(io::data(now, StreamId::STDIO, &bytes));
//!         drain_client(&mut client, now, &mut to_server, &mut answer);
//!     }
//! }
//! let answer = answer.expect("the call completed");
//! assert_eq!(answer.content[0].as_text(), Some("HELLO"));
//! ```
//!
//! # Messages, routes and transports
//!
//! The machines speak in decoded JSON-RPC messages. Everything a machine sends is an
//! [`Outgoing`] message tagged with a [`Route`]: the reply to the peer's request R, a
//! message *related to* R (progress, a log line, a request back to the peer made while
//! serving R), or standalone. Transport adapters turn routes into bytes: stdio writes every
//! message as a line on its one stream ([`server::Server`], [`client::Client`]); the
//! Streamable HTTP router ([`http::server::Router`]) answers each POST with JSON or an SSE
//! stream that carries its replies and everything related to them, and puts standalone
//! messages on the session's GET stream; the legacy HTTP+SSE transport puts everything on
//! its one GET stream. HTTP/1.1 bytes go through the [`http1`] machines, SSE bytes through
//! [`framing::sse`].
//!
//! A client speaks stdio ([`client::Client::new`]) or HTTP ([`client::Client::new_http`]:
//! Streamable HTTP, legacy HTTP+SSE, or detection between them, see [`http::client`]). A
//! server is many [`server::Session`]s over one shared registry: a stdio
//! [`server::Server`] is one session, the HTTP [`http::server::Router`] holds thousands.
//!
//! # Asking the client, in either era
//!
//! A handler that needs sampling, elicitation or roots asks through its context
//! ([`api::PeerApi`] on [`runtime::RequestContext`]: `create_message`, `elicit`,
//! `list_roots`). In the session era this sends a request related to the call it serves
//! (over HTTP, on the call's own stream); in the 2026-07-28 era the answer comes from the
//! call itself or the ask fails with [`error::UsageError::InputRequired`], the handler
//! returns it with `?`, the call ends with an input-required result
//! ([`schema::InputRequiredResult`], its `requestState` sealed) and runs again with the
//! answers when the client retries (see [`server::Round`]). Handlers are written once;
//! which of the two happens is the session's business. Handlers also see their session
//! through [`server::CallContext`]: the revision, the client's info and capabilities, the
//! log level.
//!
//! # Which era a client speaks
//!
//! By default a client climbs the era ladder: `server/discover` first (over HTTP with the
//! 2026-07-28 headers); a server that lists 2026-07-28 is spoken to in it, any other answer
//! or a timeout steps down to `initialize` (and over HTTP, when detecting, on to legacy
//! HTTP+SSE). [`client::ClientConfig::session_era`] skips the probe; a config whose
//! `supported_versions` holds 2026-07-28 alone never steps down.
//!
//! # OAuth
//!
//! The OAuth client is a sub-machine of the HTTP client transport ([`auth`]): it sends its
//! discovery, registration and token requests as the transport's own exchanges, raises
//! [`client::Event::AuthorizationRequired`] when a person must approve, takes the redirect
//! back through [`client::Client::authorize`], and puts the token on every MCP request.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod api;
pub mod auth;
mod builder;
pub mod client;
pub mod error;
pub mod framing;
pub mod handler;
mod hex;
pub mod http;
pub mod http1;
pub mod io;
pub mod json_schema;
pub mod jsonrpc;
mod lifecycle;
mod rpc;
pub mod runtime;
pub mod schema;
pub mod server;
pub mod stdio;
pub mod transport;

pub use rpc::{Outgoing, OutgoingKind, RequestOptions, Route};
/// The `schemars` zest-core generates tool schemas with (feature `schemars`), for
/// `#[schemars(crate = "zest_core::schemars")]` when the app does not depend on it directly.
#[cfg(feature = "schemars")]
pub use schemars;

#[cfg(feature = "testkit")]
pub mod testkit;
