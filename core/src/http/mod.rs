//! MCP over HTTP, sans IO: the Streamable HTTP transport (2025-03-26 on) and the legacy
//! HTTP+SSE transport (2024-11-05), client ([`client`]) and server ([`server`]).
//!
//! Everything here works on HTTP heads ([`RequestHead`](crate::io::RequestHead),
//! [`ResponseHead`](crate::io::ResponseHead)) and body chunks, never on sockets: a runtime
//! moves the bytes (through the [`http1`](crate::http1) machines, or an HTTP library of its
//! own) and feeds heads and chunks in as [`StreamEvent`](crate::io::StreamEvent)s. The client
//! planner turns the machine's routed messages into
//! [`Transmit::Http`](crate::io::Transmit) requests and the runtime's reports back into
//! messages; reconnection delays are deadlines the machine returns from `poll_timeout`.

pub mod client;
pub mod server;
