//! Framing: turning transport byte streams into JSON-RPC frames.
//!
//! - [`lines`]: the stdio transport's newline-delimited framing (bounded, CRLF-tolerant, non-JSON
//!   lines reported and never delivered).
//! - [`sse`]: Server-Sent Events for the HTTP transports (WHATWG decoding, bounded events, and
//!   an encoder whose output the decoder reads back).

pub mod lines;
pub mod sse;

/// The largest buffer a session keeps between messages for the next one: the line being
/// decoded, the buffer a large frame is encoded into, the written frame a stdio writer hands
/// back, a thread's serialization scratch. Up to this size a run of large messages reuses its
/// buffers instead of faulting fresh memory in for each; a larger message gets buffers of
/// its own, freed when it is done, so one 50 MiB result does not leave 50 MiB (or the 64 MiB
/// a doubled buffer takes) behind for the session's life.
pub const KEPT_BUFFER_MAX: usize = 4 * 1024 * 1024;

/// Empties `buf` for its next use, keeping its memory up to [`KEPT_BUFFER_MAX`].
pub(crate) fn release(buf: &mut Vec<u8>) {
    if buf.capacity() > KEPT_BUFFER_MAX {
        *buf = Vec::new();
    } else {
        buf.clear();
    }
}

#[cfg(test)]
mod tests;
