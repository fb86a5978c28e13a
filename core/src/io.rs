//! The machines' doors: what goes in ([`Input`]) and what comes out ([`Output`]).

use std::fmt;
use std::time::Instant;

use bytes::Bytes;

/// Names one byte stream of a connection. The runtime echoes it back with what it reads.
///
/// stdio has one stream, [`StreamId::STDIO`]. Streamable HTTP will name each POST exchange
/// and SSE stream with its own id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u64);

impl StreamId {
    /// The single stream of a stdio connection.
    pub const STDIO: Self = Self(0);
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stream {}", self.0)
    }
}

/// One thing that happened to a machine.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// Something arrived on a stream.
    Receive(Instant, Receive<'a>),
    /// Time passed. Harmless when early.
    Timeout(Instant),
}

/// Something that arrived on a stream.
#[derive(Clone, Copy, Debug)]
pub struct Receive<'a> {
    /// The stream, as named by the machine's transmits.
    pub stream: StreamId,
    /// What happened.
    pub event: StreamEvent<'a>,
}

/// What happened on a stream.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum StreamEvent<'a> {
    /// Bytes, in any chunking.
    Data(&'a [u8]),
    /// The peer closed the stream cleanly (EOF).
    End,
    /// The stream broke.
    Failed(&'a str),
}

/// Something the runtime must do.
#[must_use]
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Transmit {
    /// Write the bytes, in order, to the stream.
    Write {
        /// Where.
        stream: StreamId,
        /// What; a whole frame.
        bytes: Bytes,
    },
    /// Finish writing and close the stream (on stdio: close the child's stdin).
    Close {
        /// Which.
        stream: StreamId,
    },
}

/// One output of a machine: an effect to perform or an event to handle.
#[must_use]
#[derive(Clone, Debug, PartialEq)]
pub enum Output<E> {
    /// An effect for the runtime.
    Transmit(Transmit),
    /// Something for the application.
    Event(E),
}

impl Input<'_> {
    /// The time carried by this input.
    pub fn now(&self) -> Instant {
        match self {
            Self::Receive(now, _) | Self::Timeout(now) => *now,
        }
    }
}

/// Shorthand for `Input::Receive(now, Receive { stream, event: StreamEvent::Data(bytes) })`.
pub fn data(now: Instant, stream: StreamId, bytes: &[u8]) -> Input<'_> {
    Input::Receive(now, Receive { stream, event: StreamEvent::Data(bytes) })
}
