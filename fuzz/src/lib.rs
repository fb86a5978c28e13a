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

/// HTTP/1.1 bytes built from pieces, so the `http1_*` targets reach bodies and keep-alive
/// instead of spending their time on heads that never parse.
pub mod http1 {
    use arbitrary::Arbitrary;

    /// One piece of an HTTP/1.1 byte stream.
    #[derive(Arbitrary, Debug)]
    pub enum Piece {
        /// Any bytes.
        Raw(Vec<u8>),
        /// One of [`TOKENS`]: start lines, header lines, chunk lines, line ends.
        Token(u8),
        /// A well-formed chunk holding these bytes.
        Chunk(Vec<u8>),
        /// `content-length: N`, CRLF.
        Length(u16),
        /// A byte repeated: long lines, long bodies.
        Run(u16, u8),
    }

    /// Fragments that a parser needs whole to get anywhere.
    pub const TOKENS: &[&[u8]] = &[
        b"HTTP/1.1 200 OK\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"HTTP/1.1 103 Early Hints\r\n",
        b"HTTP/1.1 101 Switching Protocols\r\n",
        b"HTTP/1.1 204 No Content\r\n",
        b"HTTP/1.1 304 Not Modified\r\n",
        b"HTTP/1.0 200 OK\r\n",
        b"GET / HTTP/1.1\r\n",
        b"POST /mcp HTTP/1.1\r\n",
        b"PUT /x?y=1 HTTP/1.1\r\n",
        b"HEAD / HTTP/1.1\r\n",
        b"DELETE /mcp HTTP/1.1\r\n",
        b"POST / HTTP/1.0\r\n",
        b"host: fuzz.test\r\n",
        b"transfer-encoding: chunked\r\n",
        b"transfer-encoding: gzip\r\n",
        b"connection: close\r\n",
        b"connection: keep-alive\r\n",
        b"expect: 100-continue\r\n",
        b"content-type: text/event-stream\r\n",
        b"x-trailer: t\r\n",
        b"\r\n",
        b"\r",
        b"\n",
        b"0\r\n\r\n",
        b"0\r\n",
        b"5;ext=1\r\nhello\r\n",
        b"ffffffffffffffffffff\r\n",
        b"data: 1\n\n",
    ];

    /// The bytes the pieces stand for.
    pub fn render(pieces: &[Piece]) -> Vec<u8> {
        let mut out = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Raw(bytes) => out.extend_from_slice(bytes),
                Piece::Token(i) => out.extend_from_slice(TOKENS[usize::from(*i) % TOKENS.len()]),
                Piece::Chunk(data) => {
                    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
                    out.extend_from_slice(data);
                    out.extend_from_slice(b"\r\n");
                }
                Piece::Length(n) => {
                    out.extend_from_slice(format!("content-length: {n}\r\n").as_bytes())
                }
                Piece::Run(n, b) => out.extend(std::iter::repeat_n(*b, usize::from(*n))),
            }
        }
        out
    }
}
