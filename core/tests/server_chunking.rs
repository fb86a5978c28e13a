//! How the bytes a client writes are chunked never changes what the server reports or sends
//! (STYLE rule 14), checked with quickcheck beside the client's property in `properties.rs`:
//! a stream of client frames, good and bad, fed whole, cut at arbitrary points, and byte by
//! byte, must give the same events and the same transmits.

mod common;

use std::time::Instant;

use common::*;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use serde_json::json;
use zest_core::io::{self, Input, Output, Receive, StreamEvent, StreamId, Transmit};
use zest_core::server::{Event as ServerEvent, Server};
use zest_core::testkit::VirtualClock;

/// The server's line limit in this property, so over-long lines are cheap to make.
const MAX_LINE: usize = 200;

const HANDSHAKE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"prop\",\"version\":\"1\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// One frame a client (or something else writing to the server's stdin) might produce.
#[derive(Clone, Debug)]
enum FrameSpec {
    Call(u8),
    BadArguments(u8),
    UnknownTool(u8),
    ListTools(u8),
    Ping(u8),
    Cancel(u8),
    SetLevel,
    Garbage,
    Blank,
    Banner,
    TooLong(u8),
    Batch(u8),
    BadUtf8,
    StrayResponse,
    DuplicateInitialize,
}

impl Arbitrary for FrameSpec {
    fn arbitrary(g: &mut Gen) -> Self {
        // Few ids, so duplicates and cancellations of live calls happen.
        let id = u8::arbitrary(g) % 8;
        match u8::arbitrary(g) % 15 {
            0 => Self::Call(id),
            1 => Self::BadArguments(id),
            2 => Self::UnknownTool(id),
            3 => Self::ListTools(id),
            4 => Self::Ping(id),
            5 => Self::Cancel(id),
            6 => Self::SetLevel,
            7 => Self::Garbage,
            8 => Self::Blank,
            9 => Self::Banner,
            10 => Self::TooLong(id),
            11 => Self::Batch(id),
            12 => Self::BadUtf8,
            13 => Self::StrayResponse,
            _ => Self::DuplicateInitialize,
        }
    }
}

impl FrameSpec {
    fn bytes(&self) -> Vec<u8> {
        let v = match self {
            Self::Call(id) => json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                "params":{"name":"echo","arguments":{"text":"hi"}}}),
            Self::BadArguments(id) => json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                "params":{"name":"add","arguments":{"a":"one"}}}),
            Self::UnknownTool(id) => json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                "params":{"name":"nope"}}),
            Self::ListTools(id) => {
                json!({"jsonrpc":"2.0","id":format!("l{id}"),"method":"tools/list"})
            }
            Self::Ping(id) => json!({"jsonrpc":"2.0","id":format!("p{id}"),"method":"ping"}),
            Self::Cancel(id) => json!({"jsonrpc":"2.0","method":"notifications/cancelled",
                "params":{"requestId":id}}),
            Self::SetLevel => json!({"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel",
                "params":{"level":"debug"}}),
            Self::Garbage => return br#"{"jsonrpc":"2.0","id":"#.to_vec(),
            Self::Blank => return b" \t".to_vec(),
            Self::Banner => return b"client says hello".to_vec(),
            Self::TooLong(id) => json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                "params":{"name":"echo","arguments":{"text":"x".repeat(MAX_LINE)}}}),
            Self::Batch(id) => json!([{"jsonrpc":"2.0","id":format!("b{id}"),"method":"ping"}]),
            Self::BadUtf8 => return b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}".to_vec(),
            Self::StrayResponse => json!({"jsonrpc":"2.0","id":999,"result":{}}),
            Self::DuplicateInitialize => json!({"jsonrpc":"2.0","id":"again","method":"initialize",
                "params":{"protocolVersion":"2025-11-25","capabilities":{},
                          "clientInfo":{"name":"prop","version":"1"}}}),
        };
        serde_json::to_vec(&v).unwrap()
    }
}

/// A stream of frames after the handshake, where to cut it, and how it ends.
#[derive(Clone, Debug)]
struct Chunked {
    frames: Vec<(FrameSpec, bool)>,
    cuts: Vec<usize>,
    /// Leave the last line unterminated and end the stream (EOF) after it.
    eof: bool,
}

impl Chunked {
    fn stream(&self) -> Vec<u8> {
        let mut out = HANDSHAKE.to_vec();
        for (i, (frame, crlf)) in self.frames.iter().enumerate() {
            out.extend(frame.bytes());
            if !(self.eof && i + 1 == self.frames.len()) {
                out.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
            }
        }
        out
    }
}

impl Arbitrary for Chunked {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut frames: Vec<(FrameSpec, bool)> = Arbitrary::arbitrary(g);
        frames.truncate(24);
        Self { frames, cuts: Arbitrary::arbitrary(g), eof: bool::arbitrary(g) }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        let eof = self.eof;
        Box::new(
            (self.frames.clone(), self.cuts.clone()).shrink().map(move |(frames, cuts)| Self {
                frames,
                cuts,
                eof,
            }),
        )
    }
}

/// Feeds the chunks (then EOF if asked) to a fresh server and returns its events and its
/// transmits, each in order. (Within one drain `poll_output` gives transmits before events,
/// so how the two interleave legitimately depends on the chunking.)
fn outputs(chunks: &[&[u8]], eof: bool) -> (Vec<ServerEvent<Handler>>, Vec<Transmit>) {
    let now: Instant = VirtualClock::new().now();
    let mut config = server_config();
    config.max_line = MAX_LINE;
    let mut server = Server::new(config, registry(), now);
    let mut out = Vec::new();
    let mut drain = |server: &mut Server<Handler>| {
        while let Some(o) = server.poll_output() {
            out.push(o);
        }
    };
    drain(&mut server);
    for chunk in chunks {
        server.handle_input(io::data(now, StreamId::STDIO, chunk));
        drain(&mut server);
    }
    if eof {
        let end = Receive { stream: StreamId::STDIO, event: StreamEvent::End };
        server.handle_input(Input::Receive(now, end));
        drain(&mut server);
    }
    let mut events = Vec::new();
    let mut transmits = Vec::new();
    for o in out {
        match o {
            Output::Event(e) => events.push(e),
            Output::Transmit(t) => transmits.push(t),
        }
    }
    (events, transmits)
}

fn chunking_is_invisible(input: Chunked) -> bool {
    let stream = input.stream();
    let whole = outputs(&[&stream], input.eof);
    assert!(
        whole.0.iter().any(|e| matches!(e, ServerEvent::Ready)),
        "the handshake completed: {:?}",
        whole.0
    );
    let mut cuts: Vec<usize> = input.cuts.iter().map(|c| c % (stream.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut from = 0;
    for cut in cuts {
        chunks.push(&stream[from..cut]);
        from = cut;
    }
    chunks.push(&stream[from..]);
    assert_eq!(outputs(&chunks, input.eof), whole, "chunks {chunks:?}");
    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(outputs(&bytes, input.eof), whole, "byte by byte");
    true
}

#[test]
fn any_chunking_of_the_clients_bytes_yields_the_same_server_outputs() {
    QuickCheck::new().quickcheck(chunking_is_invisible as fn(Chunked) -> bool);
}
