//! A machine's outputs as a runtime over one byte stream (stdio, in memory) performs them.

use std::time::Instant;

use bytes::Bytes;

use crate::client::{self, Client};
use crate::io::{Input, Output, Receive, StdioTransmit, StreamEvent, StreamId, TransportFailure};
use crate::server::{self, Server};

/// A machine that runs over one byte stream: the client's and the server's.
pub trait StdioMachine {
    /// What it reports to the application.
    type Event;
    /// Its next output (see the machine's own `poll_output`).
    fn poll_output(&mut self) -> Option<Output<Self::Event>>;
    /// Feeds it one input (see the machine's own `handle_input`).
    fn handle_input(&mut self, input: Input<'_>);
}

impl StdioMachine for Client {
    type Event = client::Event;

    fn poll_output(&mut self) -> Option<Output<client::Event>> {
        Self::poll_output(self)
    }

    fn handle_input(&mut self, input: Input<'_>) {
        Self::handle_input(self, input);
    }
}

impl<H: Clone> StdioMachine for Server<H> {
    type Event = server::Event<H>;

    fn poll_output(&mut self) -> Option<Output<server::Event<H>>> {
        Self::poll_output(self)
    }

    fn handle_input(&mut self, input: Input<'_>) {
        Self::handle_input(self, input);
    }
}

/// One output of a machine over a byte stream.
#[derive(Debug)]
#[must_use]
pub enum StdioOutput<E> {
    /// Write these bytes (whole lines).
    Write(Bytes),
    /// Close our writing side (the child's stdin, or our stdout) once what is queued is
    /// written.
    Close,
    /// An event of the machine.
    Event(E),
}

/// Drains a machine for a byte-stream runtime. A transmit a pipe cannot carry (see
/// [`Transmit::into_stdio`](crate::io::Transmit::into_stdio)) fails the stream with that
/// [`TransportFailure::Unsupported`] once the outputs before it are drained; the outputs of
/// that end follow.
#[derive(Debug, Default)]
pub struct StdioOutputs {
    unsupported: Option<TransportFailure>,
}

impl StdioOutputs {
    /// Nothing seen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next output of `machine`; `None` once it is drained. `now` is when a stream
    /// that must fail fails.
    pub fn next<M: StdioMachine>(
        &mut self,
        machine: &mut M,
        now: Instant,
    ) -> Option<StdioOutput<M::Event>> {
        loop {
            match machine.poll_output() {
                Some(Output::Transmit(t)) => match t.into_stdio() {
                    Ok(StdioTransmit::Write(bytes)) => return Some(StdioOutput::Write(bytes)),
                    Ok(StdioTransmit::Close) => return Some(StdioOutput::Close),
                    Err(failure) => {
                        self.unsupported.get_or_insert(failure);
                    }
                },
                Some(Output::Event(event)) => return Some(StdioOutput::Event(event)),
                None => {
                    let event = StreamEvent::Failed(self.unsupported.take()?);
                    machine.handle_input(Input::Receive(
                        now,
                        Receive { stream: StreamId::STDIO, event },
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::io::Transmit;
    use crate::testkit::VirtualClock;

    /// Hands out scripted outputs; records the failures it was fed.
    #[derive(Default)]
    struct Scripted {
        outputs: VecDeque<Output<&'static str>>,
        failed: Vec<TransportFailure>,
    }

    impl StdioMachine for Scripted {
        type Event = &'static str;

        fn poll_output(&mut self) -> Option<Output<&'static str>> {
            self.outputs.pop_front()
        }

        fn handle_input(&mut self, input: Input<'_>) {
            if let Input::Receive(_, Receive { event: StreamEvent::Failed(why), .. }) = input {
                self.failed.push(why);
                self.outputs.push_back(Output::Event("closed"));
            }
        }
    }

    #[test]
    fn an_unsupported_transmit_fails_the_stream_after_the_outputs_before_it() {
        let write = Transmit::Write { stream: StreamId::STDIO, bytes: Bytes::from_static(b"x\n") };
        let abort = Transmit::Abort { stream: StreamId::STDIO };
        let mut machine = Scripted::default();
        machine.outputs.extend([
            Output::Transmit(abort),
            Output::Transmit(write),
            Output::Event("ready"),
        ]);
        let (mut outputs, now) = (StdioOutputs::new(), VirtualClock::new().now());
        let mut seen = Vec::new();
        while let Some(output) = outputs.next(&mut machine, now) {
            seen.push(match output {
                StdioOutput::Write(bytes) => format!("write {bytes:?}"),
                StdioOutput::Close => "close".to_owned(),
                StdioOutput::Event(e) => e.to_owned(),
            });
        }
        assert_eq!(seen, ["write b\"x\\n\"", "ready", "closed"]);
        assert_eq!(machine.failed.len(), 1);
        assert!(
            matches!(machine.failed[0], TransportFailure::Unsupported(_)),
            "{:?}",
            machine.failed
        );
    }
}
