//! A client machine's outputs as an HTTP client runtime performs them.

use std::time::Instant;

use crate::client::{Client, Event};
use crate::io::{HttpClientTransmit, HttpRequest, Output, StreamId, TransportFailure};

/// One output of a client machine over HTTP: an exchange to open or abort, or an event.
#[derive(Debug)]
#[must_use]
pub enum HttpClientOutput {
    /// Perform `request` as exchange `stream` and report its response on it.
    Open {
        /// The exchange.
        stream: StreamId,
        /// What to send.
        request: Box<HttpRequest>,
    },
    /// Stop exchange `stream`: close its connection, report nothing more.
    Abort {
        /// The exchange.
        stream: StreamId,
    },
    /// An event of the machine.
    Event(Event),
}

/// Drains a client machine for an HTTP client runtime. A transmit no HTTP client can
/// perform (see [`Transmit::into_http_client`](crate::io::Transmit::into_http_client))
/// ends the session with that [`TransportFailure::Unsupported`] once the outputs before
/// it are drained ([`Client::fail`]); the outputs of that end follow.
#[derive(Debug, Default)]
pub struct HttpClientOutputs {
    unsupported: Option<TransportFailure>,
}

impl HttpClientOutputs {
    /// Nothing seen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next output of `client`; `None` once it is drained. `now` is when a session
    /// that must fail fails.
    pub fn next(&mut self, client: &mut Client, now: Instant) -> Option<HttpClientOutput> {
        loop {
            match client.poll_output() {
                Some(Output::Transmit(t)) => match t.into_http_client() {
                    Ok(HttpClientTransmit::Open { stream, request }) => {
                        return Some(HttpClientOutput::Open { stream, request })
                    }
                    Ok(HttpClientTransmit::Abort { stream }) => {
                        return Some(HttpClientOutput::Abort { stream })
                    }
                    Err(failure) => {
                        self.unsupported.get_or_insert(failure);
                    }
                },
                Some(Output::Event(event)) => return Some(HttpClientOutput::Event(event)),
                None => client.fail(now, self.unsupported.take()?),
            }
        }
    }
}
