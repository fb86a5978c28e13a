//! Transports: which one carries a session ([`TransportKind`]), and the adapters that turn
//! bytes on streams into frames and routed messages into transmits.
//!
//! The machines speak in decoded messages and [`Outgoing`](crate::Outgoing) messages tagged
//! with a [`Route`](crate::Route). An adapter owns whatever framing its transport needs and
//! decides which stream a route means. What else differs per transport is how a refusal goes
//! on the wire (see [`Rejection::to_wire`](crate::error::Rejection::to_wire)).

mod stdio;

pub(crate) use stdio::StdioTransport;

/// The transports MCP defines
/// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportKind {
    /// The deprecated HTTP+SSE transport of 2024-11-05: a GET SSE stream carries every server
    /// message, responses included, and the client POSTs to the endpoint that stream names.
    LegacySse,
    /// Newline-delimited JSON-RPC on a child process's stdin and stdout. No HTTP statuses.
    Stdio,
    /// Streamable HTTP (2025-03-26 on): one endpoint; each client message is a POST answered
    /// with JSON, an SSE stream, or 202.
    StreamableHttp,
}

impl TransportKind {
    /// True for the transports where every exchange is an HTTP request with a status.
    pub fn is_http(self) -> bool {
        matches!(self, Self::LegacySse | Self::StreamableHttp)
    }
}
