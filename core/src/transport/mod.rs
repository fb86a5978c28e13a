//! Transport adapters: bytes on streams in, frames out; routed messages in, transmits out.
//!
//! The machines speak in decoded messages and [`Outgoing`](crate::Outgoing) messages tagged
//! with a [`Route`](crate::Route). An adapter owns whatever framing its transport needs and
//! decides which stream a route means.

mod stdio;

pub(crate) use stdio::StdioTransport;
