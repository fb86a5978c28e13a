//! stdio: one stream, newline-delimited JSON. Routes do not matter: everything is written to
//! [`StreamId::STDIO`] in the order it was sent.

use bytes::Bytes;

use crate::error::CloseReason;
use crate::framing::lines::{LineDecoder, LineEvent};
use crate::io::{StreamEvent, StreamId, Transmit, TransportFailure};
use crate::rpc::{Incoming, Outgoing};

#[derive(Debug)]
pub(crate) struct StdioTransport {
    lines: LineDecoder,
}

impl StdioTransport {
    pub(crate) fn new(max_line: usize) -> Self {
        Self { lines: LineDecoder::new(max_line) }
    }

    /// What arrived on the stream: the frames it completed, decoded, and why the session ends
    /// when the stream did (EOF: after an unterminated last line is decoded; failure: at once).
    pub(crate) fn receive(
        &mut self,
        event: StreamEvent<'_>,
    ) -> (Vec<Incoming>, Option<CloseReason>) {
        let mut out = Vec::new();
        let ended = match event {
            StreamEvent::Data(bytes) => {
                self.lines.feed(bytes, &mut |ev| out.push(incoming(ev)));
                None
            }
            StreamEvent::End => {
                self.lines.finish(&mut |ev| out.push(incoming(ev)));
                Some(CloseReason::TransportEnded)
            }
            StreamEvent::Failed(why) => Some(CloseReason::TransportFailed(why)),
            // HTTP heads never arrive on a pipe; a runtime that sends one has a bug.
            StreamEvent::Accept(_) | StreamEvent::Head(_) => Some(CloseReason::TransportFailed(
                TransportFailure::Other("an http head arrived on a stdio stream".into()),
            )),
        };
        (out, ended)
    }

    /// One message as one line.
    pub(crate) fn transmit(outgoing: Outgoing) -> Transmit {
        let mut json = outgoing.json;
        json.push(b'\n');
        Transmit::Write { stream: StreamId::STDIO, bytes: Bytes::from(json) }
    }

    /// Closing the session closes our writing side.
    pub(crate) fn close() -> Transmit {
        Transmit::Close { stream: StreamId::STDIO }
    }
}

fn incoming(ev: LineEvent<'_>) -> Incoming {
    match ev {
        LineEvent::Frame(bytes) => Incoming::decode(bytes),
        LineEvent::Violation(v) => Incoming::Line(v),
    }
}
