//! One accepted HTTP/1.1 connection between a socket and a [`Router`], sans IO: the part of
//! an HTTP server that is the same on every runtime.
//!
//! ```text
//!  socket bytes ──handle_data──▶ ServerConn ──poll_inbound──▶ Inbound::feed ──▶ Router
//!  socket ◀──poll_transmit── (http1::ServerConnection) ◀──handle_transmit── router Transmit
//! ```
//!
//! Each request a connection reads becomes one router exchange with a fresh [`StreamId`]
//! from the server's [`StreamIds`] (unique across all its connections). The router's answer
//! (`Respond`, `Write`s, `Close` on that stream) becomes HTTP/1.1 bytes: an SSE answer
//! (`Content-Type: text/event-stream`) streams chunk by chunk as events are produced; any
//! other answer is gathered until its `Close` and sent with `Content-Length`. A response the
//! router starts before the request body has ended (a refusal) waits for that end, as
//! HTTP/1.1 requires. A request the connection cannot read (too large, malformed, head too
//! slow) is refused with its status by the connection itself; the router hears `Failed`.
//! A client that goes away (EOF, a broken socket) fails the exchange under way, so the
//! router detaches the stream it carried.
//!
//! A runtime's connection task then only moves bytes: read → [`ServerConn::handle_data`],
//! EOF → [`ServerConn::handle_end`], router transmit for [`ServerConn::stream`] →
//! [`ServerConn::handle_transmit`]; after each, feed every [`ServerConn::poll_inbound`] to the
//! router, write every [`ServerConn::poll_transmit`], and sleep until
//! [`ServerConn::poll_timeout`].

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::BytesMut;
use http::{Response, StatusCode};

mod accepted;
mod dispatch;
mod hub;
mod hub_link;

pub use accepted::{serve_accepted, AcceptedIo};
pub use dispatch::{Dispatch, ServerStats, Step};
pub use hub::{Hub, HubConn, HubHost, Start};
pub use hub_link::{ContextParts, HubLink, HubSink};

/// How many connections a server's listener lets wait to be accepted (Linux caps it at
/// `net.core.somaxconn`). std binds with 128: a burst of clients connecting at once, as in
/// the 1,000-session bench, overflowed it, and each connection dropped there waited for its
/// SYN to be sent again, a second later. Runtimes set it right after binding.
pub const LISTEN_BACKLOG: i32 = 1024;

use super::OwnedEvent;
use crate::error::Rejection;
use crate::http::server::Router;
use crate::http1::{self, Config, ServerConnection, ServerEvent};
use crate::io::{RequestHead, ResponseHead, StreamId, Transmit, TransportFailure};
use crate::jsonrpc::Message;
use crate::schema::ProtocolVersion;
use crate::transport::TransportKind;

/// Allocates the stream ids of a server's exchanges, across all its connections. Never 0
/// (the stdio stream), never the same twice.
#[derive(Debug)]
pub struct StreamIds(AtomicU64);

impl StreamIds {
    /// A counter whose first id is 1.
    pub const fn new() -> Self {
        Self(AtomicU64::new(1))
    }

    /// The next id.
    pub fn next(&self) -> StreamId {
        StreamId(self.0.fetch_add(1, Ordering::Relaxed))
    }
}

impl Default for StreamIds {
    fn default() -> Self {
        Self::new()
    }
}

/// What a connection has for the router: one input of one exchange, owned.
#[derive(Clone, Debug, PartialEq)]
pub struct Inbound {
    /// The exchange.
    pub stream: StreamId,
    /// What happened on it (`Accept`, `Data`, `End` or `Failed`).
    pub event: OwnedEvent,
}

impl Inbound {
    /// Feeds this to `router` as one input; drain the router afterwards.
    pub fn feed<H: Clone>(&self, now: Instant, router: &mut Router<H>) {
        router.handle_input(self.event.input(now, self.stream));
    }
}

/// One accepted connection: an [`http1::ServerConnection`] speaking the router's language.
/// See the [module docs](self) for the calling contract.
#[derive(Debug)]
pub struct ServerConn {
    http: ServerConnection,
    ids: Arc<StreamIds>,
    /// The exchange being read or answered; at most one (requests are answered in order).
    exchange: Option<Exchange>,
    inbound: VecDeque<Inbound>,
}

#[derive(Debug)]
struct Exchange {
    stream: StreamId,
    /// The request body has ended: a response may start.
    request_ended: bool,
    /// Router transmits that came before the request ended.
    held: VecDeque<Transmit>,
    answer: Answer,
}

#[derive(Debug)]
enum Answer {
    /// No head yet.
    Unstarted,
    /// A whole body gathered until `Close`, then sent with `Content-Length`.
    Gathering { head: Box<ResponseHead>, body: BytesMut },
    /// Chunks go out as they come.
    Streaming,
}

impl ServerConn {
    /// A connection accepted at `now`, limited by `config`, naming exchanges from `ids`.
    pub fn new(config: Config, now: Instant, ids: Arc<StreamIds>) -> Self {
        Self {
            http: ServerConnection::new(config, now),
            ids,
            exchange: None,
            inbound: VecDeque::new(),
        }
    }

    /// Feeds bytes read from the socket. Drain [`poll_inbound`](Self::poll_inbound) and
    /// [`poll_transmit`](Self::poll_transmit) afterwards.
    pub fn handle_data(&mut self, now: Instant, bytes: &[u8]) {
        self.http.handle_data(bytes);
        self.pump(now);
    }

    /// The client closed its side (EOF). An exchange under way fails: the client cannot
    /// read its answer any more, and the router frees what the exchange carried.
    pub fn handle_end(&mut self, now: Instant) {
        self.http.handle_end();
        self.pump(now);
        self.gone(TransportFailure::Reset("the client closed the connection".into()));
    }

    /// Reading or writing the socket failed: the exchange under way fails and the connection
    /// closes.
    pub fn handle_failed(&mut self, why: String) {
        self.gone(TransportFailure::Reset(why));
    }

    /// The connection is given up for `failure` (say [`not_reading`](super::not_reading)):
    /// the exchange under way fails with it and the connection closes.
    pub fn handle_failure(&mut self, failure: TransportFailure) {
        self.gone(failure);
    }

    /// Time passed: a request head that is late is refused with 408.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.http.handle_timeout(now);
        self.pump(now);
    }

    /// Performs one router transmit. Only transmits for [`stream`](Self::stream) belong here;
    /// others (for an exchange this connection already finished) are dropped.
    pub fn handle_transmit(&mut self, now: Instant, transmit: Transmit) {
        // A client-side effect; a router never emits it.
        if matches!(transmit, Transmit::Http { .. }) {
            return;
        }
        let stream = transmit.stream();
        let Some(exchange) = self.exchange.as_mut().filter(|e| e.stream == stream) else {
            return;
        };
        if !exchange.request_ended {
            exchange.held.push_back(transmit);
            return;
        }
        self.answer(now, transmit);
    }

    /// The next router input; `None` when drained.
    #[must_use]
    pub fn poll_inbound(&mut self) -> Option<Inbound> {
        self.inbound.pop_front()
    }

    /// The next thing to do with the socket: write bytes, or close it.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<http1::Transmit> {
        self.http.poll_transmit()
    }

    /// The request-head deadline, while a head is awaited.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.http.poll_timeout()
    }

    /// The router stream of the exchange under way, whose transmits this connection carries.
    pub fn stream(&self) -> Option<StreamId> {
        self.exchange.as_ref().map(|e| e.stream)
    }

    /// True once the connection is closed or closing.
    pub fn is_closed(&self) -> bool {
        self.http.is_closed()
    }

    /// Turns the HTTP machine's events into router inputs.
    fn pump(&mut self, now: Instant) {
        while let Some(event) = self.http.poll_event() {
            match event {
                ServerEvent::Head(head) => {
                    let stream = self.ids.next();
                    self.exchange = Some(Exchange {
                        stream,
                        request_ended: false,
                        held: VecDeque::new(),
                        answer: Answer::Unstarted,
                    });
                    let head =
                        RequestHead { method: head.method, uri: head.uri, headers: head.headers };
                    self.push(stream, OwnedEvent::Accept(Box::new(head)));
                }
                ServerEvent::Data(bytes) => {
                    if let Some(e) = &self.exchange {
                        let stream = e.stream;
                        self.push(stream, OwnedEvent::Data(bytes));
                    }
                }
                ServerEvent::End => {
                    let Some(e) = self.exchange.as_mut() else { continue };
                    e.request_ended = true;
                    let stream = e.stream;
                    let held = std::mem::take(&mut e.held);
                    self.push(stream, OwnedEvent::End);
                    for transmit in held {
                        self.answer(now, transmit);
                    }
                }
                ServerEvent::Failed(error) => {
                    let failure = match &error {
                        http1::Error::BodyTooLarge { limit } => TransportFailure::TooLarge {
                            limit: usize::try_from(*limit).unwrap_or(usize::MAX),
                        },
                        http1::Error::HeadTimeout => TransportFailure::TimedOut,
                        other => TransportFailure::Other(other.to_string()),
                    };
                    if let Some(e) = self.exchange.take() {
                        self.push(e.stream, OwnedEvent::Failed(failure));
                    }
                    match error.status() {
                        // Err only when a response already started; then closing is all.
                        Some(status) => {
                            if self.http.reject_with_json(status, &refusal_body(&error)).is_err() {
                                self.http.close();
                            }
                        }
                        None => self.http.close(),
                    }
                }
            }
        }
    }

    /// Performs a transmit for the current exchange, whose request has ended.
    fn answer(&mut self, now: Instant, transmit: Transmit) {
        let Some(exchange) = self.exchange.as_mut() else { return };
        let result = match (transmit, &mut exchange.answer) {
            (Transmit::Respond { head, .. }, answer @ Answer::Unstarted) => {
                if crate::io::is_event_stream(&head.headers) {
                    *answer = Answer::Streaming;
                    self.http.send_head(response(*head, ()))
                } else {
                    *answer = Answer::Gathering { head, body: BytesMut::new() };
                    Ok(())
                }
            }
            (Transmit::Write { bytes, .. }, Answer::Gathering { body, .. }) => {
                body.extend_from_slice(&bytes);
                Ok(())
            }
            (Transmit::Write { bytes, .. }, Answer::Streaming) => self.http.send_data(bytes),
            (Transmit::Close { .. }, Answer::Gathering { .. }) => {
                let Some(Exchange { answer: Answer::Gathering { head, body }, .. }) =
                    self.exchange.take()
                else {
                    return;
                };
                self.http.send_response(now, response(*head, body.freeze()))
            }
            (Transmit::Close { .. }, Answer::Streaming) => {
                self.exchange = None;
                self.http.finish(now)
            }
            (Transmit::Close { .. }, Answer::Unstarted) => {
                self.exchange = None;
                self.http.reject(StatusCode::INTERNAL_SERVER_ERROR)
            }
            // An abort, or a transmit out of order: the exchange cannot be answered properly.
            _ => Err(http1::UsageError::NotStreaming),
        };
        if result.is_err() {
            self.gone(TransportFailure::Other("the answer could not be sent".into()));
            return;
        }
        // A pipelined request may have been waiting for this response to end.
        if self.exchange.is_none() {
            self.pump(now);
        }
    }

    /// The exchange under way cannot go on: tell the router, and close.
    fn gone(&mut self, failure: TransportFailure) {
        if let Some(e) = self.exchange.take() {
            self.push(e.stream, OwnedEvent::Failed(failure));
        }
        self.http.close();
    }
}

impl ServerConn {
    fn push(&mut self, stream: StreamId, event: OwnedEvent) {
        self.inbound.push_back(Inbound { stream, event });
    }
}

fn response<B>(head: ResponseHead, body: B) -> Response<B> {
    let mut response = Response::new(body);
    *response.status_mut() = head.status;
    *response.headers_mut() = head.headers;
    response
}

/// The JSON-RPC error a refusal at the HTTP/1.1 layer carries, as the router's own refusals
/// do: an oversized body says so with its limit; others (a bad head) carry no body.
fn refusal_body(error: &http1::Error) -> Vec<u8> {
    let http1::Error::BodyTooLarge { limit } = error else { return Vec::new() };
    let limit = usize::try_from(*limit).unwrap_or(usize::MAX);
    let wire = Rejection::PayloadTooLarge { limit }
        .to_wire(ProtocolVersion::LATEST_SESSION, TransportKind::StreamableHttp);
    Message::error(None, wire.error).to_vec()
}

#[cfg(test)]
mod tests;
