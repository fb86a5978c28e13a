//! HTTP transports: the Streamable HTTP client planner and the legacy HTTP+SSE client
//! ([`client`]).
//!
//! A planner turns the machine's routed messages into [`Transmit::Http`](crate::io::Transmit)
//! requests and the runtime's reports on those exchanges (response heads, body bytes, ends,
//! failures) back into messages. It holds no socket and reads no clock: reconnection delays
//! are deadlines the machine returns from `poll_timeout`.

pub mod client;
