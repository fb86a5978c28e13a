//! Framing: turning transport byte streams into JSON-RPC frames.
//!
//! - [`lines`]: the stdio transport's newline-delimited framing (bounded, CRLF-tolerant, non-JSON
//!   lines reported and never delivered).

pub mod lines;

#[cfg(test)]
mod tests;
