//! Framing: turning transport byte streams into JSON-RPC frames.
//!
//! - [`lines`]: the stdio transport's newline-delimited framing (bounded, CRLF-tolerant, non-JSON
//!   lines reported and never delivered).
//! - [`sse`]: Server-Sent Events for the HTTP transports (WHATWG decoding, bounded events, and
//!   an encoder whose output the decoder reads back).

pub mod lines;
pub mod sse;

#[cfg(test)]
mod tests;
