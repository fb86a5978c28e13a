//! A [`StreamEvent`] that owns its bytes, for runtimes that carry events between tasks or
//! threads before they are fed to a machine.

use std::time::Instant;

use bytes::Bytes;

use crate::io::{
    Input, Receive, RequestHead, ResponseHead, StreamEvent, StreamId, TransportFailure,
};

/// What happened on a stream, owned (see [`StreamEvent`] for each variant's meaning).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum OwnedEvent {
    /// Server side: a peer opened a new exchange with this request head.
    Accept(Box<RequestHead>),
    /// Bytes.
    Data(Bytes),
    /// The stream ended cleanly.
    End,
    /// The stream broke.
    Failed(TransportFailure),
    /// Client side: the response head of an exchange.
    Head(Box<ResponseHead>),
}

impl OwnedEvent {
    /// This event on `stream` at `now`, as a machine input (a head is cloned; bytes are
    /// borrowed).
    pub fn input(&self, now: Instant, stream: StreamId) -> Input<'_> {
        let event = match self {
            Self::Accept(head) => StreamEvent::Accept(head.clone()),
            Self::Data(bytes) => StreamEvent::Data(bytes),
            Self::End => StreamEvent::End,
            Self::Failed(failure) => StreamEvent::Failed(failure.clone()),
            Self::Head(head) => StreamEvent::Head(head.clone()),
        };
        Input::Receive(now, Receive { stream, event })
    }
}
