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
//! use serde_json::json;
//! use zest_core::client::{self, Client, ClientConfig};
//! use zest_core::io::{Input, Output, Receive, StreamEvent, Transmit};
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
//! let mut registry: Registry<Handler> = Registry::default();
//! let tool: Tool = serde_json::from_value(json!({
//!     "name": "shout",
//!     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}
//! })).unwrap();
//! registry.add_tool(tool, shout);
//!
//! let now = Instant::now();
//! let mut server = Server::new(ServerConfig::new("demo-server", "1.0"), registry, now);
//! let mut client = Client::new(ClientConfig::new("demo-client", "1.0"), now);
//! let mut call_id = None;
//! let mut answer = None;
//!
//! // The loop: drain both machines, carry bytes across, react to events. A real runtime
//! // would also wait for `poll_timeout()`; in memory nothing ever waits.
//! for _round in 0..10 {
//!     let now = Instant::now();
//!     while let Some(out) = client.poll_output() {
//!         match out {
//!             Output::Transmit(Transmit::Write { stream, bytes }) => server.handle_input(
//!                 Input::Receive(now, Receive { stream, event: StreamEvent::Data(&bytes) }),
//!             ),
//!             Output::Transmit(_) => {}
//!             Output::Event(client::Event::Ready(_)) => {
//!                 let params: CallToolParams = serde_json::from_value(
//!                     json!({"name": "shout", "arguments": {"text": "hello"}}),
//!                 ).unwrap();
//!                 let opts = RequestOptions::default();
//!                 call_id = Some(client.send::<CallTool>(now, &params, opts).unwrap());
//!             }
//!             Output::Event(client::Event::Response { id, result }) => {
//!                 assert_eq!(Some(&id), call_id.as_ref());
//!                 answer = Some(client::decode_result::<CallTool>(result).unwrap());
//!             }
//!             Output::Event(_) => {}
//!         }
//!     }
//!     while let Some(out) = server.poll_output() {
//!         match out {
//!             Output::Transmit(Transmit::Write { stream, bytes }) => client.handle_input(
//!                 Input::Receive(now, Receive { stream, event: StreamEvent::Data(&bytes) }),
//!             ),
//!             Output::Transmit(_) => {}
//!             Output::Event(server::Event::Call { id, handler, call: Call::Tool(p), .. }) => {
//!                 let result = RawJson::from_serialize(&handler(&p));
//!                 server.respond(now, id, Ok(result)).unwrap();
//!             }
//!             Output::Event(_) => {}
//!         }
//!     }
//! }
//! let answer = answer.expect("the call completed");
//! assert_eq!(serde_json::to_value(&answer.content).unwrap()[0]["text"], "HELLO");
//! ```
//!
//! # What comes next, and where it fits
//!
//! - **Several streams per connection.** Inputs and transmits already carry a
//!   [`io::StreamId`]. Streamable HTTP adds `Transmit::Http { stream, request }` and a
//!   `StreamEvent::Head` for response heads; each POST exchange and each SSE stream gets its
//!   own id, and the machine routes responses to the stream their request came on.
//! - **The 2026-07-28 stateless era.** [`schema::ProtocolVersion`] already knows the
//!   revision and its predicates. The client gains a `Stateless` phase entered after a
//!   `server/discover` probe, in which every request gets protocol data in `_meta` and an
//!   input-required result is answered through the same `Event::Request` / `respond` door
//!   and retried by the machine with a new id; the server answers both eras on one
//!   endpoint, choosing per request.
//! - **OAuth** is a separate machine in `auth/` with the same contract: it emits HTTP
//!   requests as transmits and `AuthorizationRequired { url }` as an event, takes responses
//!   and the redirect as inputs, and yields a bearer token the HTTP planner adds to requests.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod api;
pub mod client;
pub mod error;
pub mod framing;
pub mod handler;
pub mod io;
pub mod json_schema;
pub mod jsonrpc;
mod lifecycle;
mod rpc;
pub mod schema;
pub mod server;

pub use rpc::RequestOptions;

#[cfg(feature = "testkit")]
pub mod testkit;
