//! Helpers shared by the fuzz targets: inputs on the stdio stream, and checks every transmit
//! of either machine must pass.

use std::time::Instant;

use zest_core::io::{Input, Receive, StreamEvent, StreamId, Transmit, TransportFailure};
use zest_core::jsonrpc::decode;

/// Bytes arriving on the stdio stream.
pub fn data(now: Instant, bytes: &[u8]) -> Input<'_> {
    zest_core::io::data(now, StreamId::STDIO, bytes)
}

/// The stdio stream ended (EOF).
pub fn end(now: Instant) -> Input<'static> {
    Input::Receive(now, Receive { stream: StreamId::STDIO, event: StreamEvent::End })
}

/// The stdio stream broke.
pub fn failed(now: Instant) -> Input<'static> {
    let event = StreamEvent::Failed(TransportFailure::Reset("fuzz".into()));
    Input::Receive(now, Receive { stream: StreamId::STDIO, event })
}

/// Whatever the peer sent, a machine only ever writes whole, valid JSON-RPC lines.
pub fn check_transmit(t: &Transmit) {
    if let Transmit::Write { bytes, .. } = t {
        let newlines = bytes.iter().filter(|&&b| b == b'\n' || b == b'\r').count();
        assert_eq!((newlines, bytes.last()), (1, Some(&b'\n')), "one line: {bytes:?}");
        assert!(decode(bytes).is_ok(), "a machine wrote an invalid frame: {bytes:?}");
    }
}
