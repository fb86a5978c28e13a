//! The part of an HTTP client runtime that is the same on every executor, sans IO: where a
//! URL connects ([`Target`]), one connection between a socket and the client machine
//! ([`ClientConn`]), and which idle connections to keep for reuse ([`Pool`]).
//!
//! A runtime performs each [`Transmit::Http`](crate::io::Transmit::Http) of the client
//! machine on a connection to the request's [`Target`]: an idle one from the [`Pool`], or a
//! new one (TCP, then TLS when [`Target::tls`]). [`ClientConn::send`] queues the request;
//! the runtime writes every [`ClientConn::poll_transmit`], feeds what it reads to
//! [`ClientConn::handle_data`] (EOF to [`ClientConn::handle_end`]) and hands every
//! [`ClientConn::poll_event`] to the machine on the exchange's stream. Once the response has
//! ended on a connection that [`ClientConn::is_reusable`], the connection goes back to the
//! pool; an aborted exchange's connection is closed. A connection carries one exchange at a
//! time, so an SSE stream (the GET stream, a long POST answer) holds its own connection for
//! as long as it lasts.
//!
//! A connection from the pool may have been closed by the server while it sat idle. The
//! runtime checks each one as it takes it ([`Pool::checkout`] with [`still_open`]: an idle
//! connection with anything to read, an end or a TLS alert, is dead and dropped). A request
//! is sent again only when the server provably did not read it: written with
//! [`ClientConn::send_reused`], its write failed before it was whole
//! ([`ClientConn::handle_write_failed`]); [`ClientConn::take_stale`] then hands it back and
//! the runtime sends it once more on a new connection (with [`ClientConn::send`]). A
//! request written in full whose connection then closes before the answer is never sent
//! again (the server may have run it): its exchange fails. zest-blocking, which performs
//! each exchange on a thread rather than through [`exchange`], keeps the same rule by the
//! same calls.
//!
//! An async runtime writes none of this: [`exchange`] performs one exchange over the
//! runtime's [`Dialer`] (how to open a socket, read it with a deadline, and its clock).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io;
use std::time::{Duration, Instant};

use http::uri::Scheme;
use http::{Request, Uri};

mod endpoint;
mod exchange;
mod outputs;

pub use endpoint::HttpEndpoint;
pub use exchange::{exchange, Connector, Dialer, HttpSocket};
pub use outputs::{HttpClientOutput, HttpClientOutputs};

use super::OwnedEvent;
use crate::http1::{self, ClientConnection, ClientEvent, Config};
use crate::io::{HttpRequest, ResponseHead, StreamId, TransportFailure};

/// Where a URL connects: host, port and whether TLS is spoken.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// The host as written in the URL, lowercase; an IPv6 literal without its brackets.
    pub host: String,
    /// The port: explicit, or 80 (`http`) / 443 (`https`).
    pub port: u16,
    /// `https`: TLS with `host` as the server name.
    pub tls: bool,
}

impl Target {
    /// The target of an absolute `http` or `https` URL. `Err` names what is wrong.
    pub fn from_uri(uri: &Uri) -> Result<Self, String> {
        let tls = match uri.scheme() {
            Some(s) if *s == Scheme::HTTPS => true,
            Some(s) if *s == Scheme::HTTP => false,
            _ => return Err(format!("{uri} is not an absolute http or https url")),
        };
        let host = uri.host().filter(|h| !h.is_empty());
        let Some(host) = host else { return Err(format!("{uri} has no host")) };
        let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        Ok(Self { host, port, tls })
    }

    /// The target of `url`, parsed.
    pub fn parse(url: &str) -> Result<Self, String> {
        let uri: Uri = url.parse().map_err(|e| format!("{url} is not a url: {e}"))?;
        Self::from_uri(&uri)
    }

    /// True when `host` is a loopback name or address.
    pub fn is_loopback(&self) -> bool {
        self.host == "localhost"
            || self.host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "https" } else { "http" };
        if self.host.contains(':') {
            write!(f, "{scheme}://[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{scheme}://{}:{}", self.host, self.port)
        }
    }
}

/// One client connection, speaking the client machine's language: an exchange goes in with
/// [`send`](Self::send), and its response comes out as owned stream events on the
/// exchange's stream (`Head`, `Data`…, then `End` or `Failed`).
#[derive(Debug)]
pub struct ClientConn {
    http: ClientConnection,
    /// The exchange under way.
    stream: Option<StreamId>,
    events: VecDeque<(StreamId, OwnedEvent)>,
    /// The request of an exchange sent on a reused connection, until anything is read back.
    unanswered: Option<HttpRequest>,
    /// Writing that request failed before it was whole: worth one more try elsewhere.
    stale: Option<(StreamId, HttpRequest)>,
}

impl ClientConn {
    /// A freshly opened connection, limited by `config` (its `head_timeout` is the read
    /// timeout for a response head).
    pub fn new(config: Config) -> Self {
        Self {
            http: ClientConnection::new(config),
            stream: None,
            events: VecDeque::new(),
            unanswered: None,
            stale: None,
        }
    }

    /// [`send`](Self::send) on a connection taken from the [`Pool`]: should writing the
    /// request fail ([`handle_write_failed`](Self::handle_write_failed); the server dropped
    /// the connection while idle), the failure is not reported and
    /// [`take_stale`](Self::take_stale) returns the request.
    pub fn send_reused(
        &mut self,
        now: Instant,
        stream: StreamId,
        request: HttpRequest,
    ) -> Result<(), TransportFailure> {
        let copy = request.clone();
        self.send(now, stream, request)?;
        self.unanswered = Some(copy);
        Ok(())
    }

    /// The exchange sent with [`send_reused`](Self::send_reused) whose write failed: send it
    /// again on a new connection. Taken once.
    pub fn take_stale(&mut self) -> Option<(StreamId, HttpRequest)> {
        self.stale.take()
    }

    /// Queues `request` as exchange `stream` at `now`. `Err` when the connection is busy or
    /// closed, or the request cannot be written; nothing was sent then.
    pub fn send(
        &mut self,
        now: Instant,
        stream: StreamId,
        request: HttpRequest,
    ) -> Result<(), TransportFailure> {
        let HttpRequest { method, uri, headers, body } = request;
        let mut http = Request::new(body);
        *http.method_mut() = method;
        *http.uri_mut() = uri;
        *http.headers_mut() = headers;
        self.http.send_request(now, http).map_err(|e| TransportFailure::Other(e.to_string()))?;
        self.stream = Some(stream);
        Ok(())
    }

    /// Feeds bytes read from the socket. Drain [`poll_event`](Self::poll_event) and
    /// [`poll_transmit`](Self::poll_transmit) afterwards.
    pub fn handle_data(&mut self, bytes: &[u8]) {
        self.unanswered = None;
        self.http.handle_data(bytes);
        self.pump();
    }

    /// The server closed the connection (EOF). The request was written whole: the exchange
    /// fails, and nothing is sent again.
    pub fn handle_end(&mut self) {
        self.unanswered = None;
        self.http.handle_end();
        self.pump();
    }

    /// Reading the socket failed: the exchange under way fails with `failure`.
    pub fn handle_failed(&mut self, failure: TransportFailure) {
        self.unanswered = None;
        self.fail(failure);
    }

    /// Writing the socket failed: the exchange under way fails with `failure`, or, sent
    /// with [`send_reused`](Self::send_reused) and nothing read back yet, becomes
    /// [stale](Self::take_stale) (the server cannot have read it whole).
    pub fn handle_write_failed(&mut self, failure: TransportFailure) {
        self.fail(failure);
    }

    fn fail(&mut self, failure: TransportFailure) {
        if let Some(stream) = self.stream.take() {
            match self.unanswered.take() {
                Some(request) => self.stale = Some((stream, request)),
                None => self.events.push_back((stream, OwnedEvent::Failed(failure))),
            }
        }
        self.http.close();
    }

    /// Time passed: a response head later than the read timeout fails the exchange with
    /// [`TransportFailure::TimedOut`].
    pub fn handle_timeout(&mut self, now: Instant) {
        self.unanswered = None;
        self.http.handle_timeout(now);
        self.pump();
    }

    /// The next response event, with the stream it belongs to.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<(StreamId, OwnedEvent)> {
        self.events.pop_front()
    }

    /// The next thing to do with the socket: write bytes, or close it.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<http1::Transmit> {
        self.http.poll_transmit()
    }

    /// The read deadline of a response head, while one is awaited.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.http.poll_timeout()
    }

    /// The exchange under way, if any.
    pub fn stream(&self) -> Option<StreamId> {
        self.stream
    }

    /// True when the last response ended and another request may be sent: the connection
    /// may go back to the [`Pool`].
    pub fn is_reusable(&self) -> bool {
        self.stream.is_none() && self.http.is_idle()
    }

    /// True once the connection is closed (either side, a failure, or an end without reuse).
    pub fn is_closed(&self) -> bool {
        self.http.is_closed()
    }

    fn pump(&mut self) {
        while let Some(event) = self.http.poll_event() {
            let Some(stream) = self.stream else { continue };
            let event = match event {
                ClientEvent::Head(head) => {
                    if crate::io::is_event_stream(&head.headers) {
                        // An SSE stream is meant to stay open; the planner bounds each event.
                        self.http.set_max_body_bytes(None);
                    }
                    let head = ResponseHead { status: head.status, headers: head.headers };
                    OwnedEvent::Head(Box::new(head))
                }
                ClientEvent::Data(bytes) => OwnedEvent::Data(bytes),
                ClientEvent::End { .. } => {
                    self.stream = None;
                    OwnedEvent::End
                }
                ClientEvent::Failed(error) => {
                    self.stream = None;
                    OwnedEvent::Failed(failure(error))
                }
            };
            self.events.push_back((stream, event));
        }
    }
}

/// Whether an idle connection taken from the [`Pool`] is still open, from a peek at its
/// socket that does not wait (`recv` with `MSG_PEEK | MSG_DONTWAIT`): open only when there
/// is nothing to read. An end, a TLS alert or stray bytes on an idle HTTP/1.1 connection
/// all mean the server is done with it.
pub fn still_open(peek: io::Result<usize>) -> bool {
    matches!(peek, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}

/// What an HTTP/1.1 error means to the machine.
fn failure(error: http1::Error) -> TransportFailure {
    match error {
        http1::Error::HeadTimeout => TransportFailure::TimedOut,
        http1::Error::BodyTooLarge { limit } => {
            TransportFailure::TooLarge { limit: usize::try_from(limit).unwrap_or(usize::MAX) }
        }
        e @ (http1::Error::ClosedBeforeHead | http1::Error::ClosedInBody) => {
            TransportFailure::Reset(e.to_string())
        }
        e => TransportFailure::Other(e.to_string()),
    }
}

/// Idle keep-alive connections by [`Target`], each kept until it has been idle for
/// `idle_timeout` (servers close idle connections too; a connection they closed would fail
/// the next request). At most `max_idle` per target; the oldest goes first.
#[derive(Debug)]
pub struct Pool<C> {
    idle: HashMap<Target, VecDeque<(C, Instant)>>,
    max_idle: usize,
    idle_timeout: Duration,
}

impl<C> Pool<C> {
    /// Default most idle connections kept per target.
    pub const DEFAULT_MAX_IDLE: usize = 32;
    /// Default time an idle connection is kept.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(20);

    /// An empty pool.
    pub fn new(max_idle: usize, idle_timeout: Duration) -> Self {
        Self { idle: HashMap::new(), max_idle, idle_timeout }
    }

    /// The most recently used idle connection to `target` that has not outlived the idle
    /// timeout at `now` and is `open` (see [`still_open`]); `None`: open a new one. Expired
    /// and closed ones are dropped.
    pub fn checkout(
        &mut self,
        now: Instant,
        target: &Target,
        mut open: impl FnMut(&C) -> bool,
    ) -> Option<C> {
        let queue = self.idle.get_mut(target)?;
        let timeout = self.idle_timeout;
        let found = loop {
            match queue.pop_back() {
                Some((conn, since))
                    if now.saturating_duration_since(since) < timeout && open(&conn) =>
                {
                    break Some(conn)
                }
                Some(_) => continue,
                None => break None,
            }
        };
        queue.retain(|(_, since)| now.saturating_duration_since(*since) < timeout);
        if queue.is_empty() {
            self.idle.remove(target);
        }
        found
    }

    /// Keeps `conn` (whose last response ended reusable) for reuse from `now`. Returns the
    /// connection that no longer fits (the oldest), for the runtime to close.
    pub fn checkin(&mut self, now: Instant, target: Target, conn: C) -> Option<C> {
        if self.max_idle == 0 {
            return Some(conn);
        }
        let queue = self.idle.entry(target).or_default();
        queue.push_back((conn, now));
        (queue.len() > self.max_idle).then(|| queue.pop_front().map(|(c, _)| c)).flatten()
    }

    /// Idle connections held now.
    pub fn len(&self) -> usize {
        self.idle.values().map(VecDeque::len).sum()
    }

    /// True when no connection is held.
    pub fn is_empty(&self) -> bool {
        self.idle.is_empty()
    }

    /// Drops every idle connection.
    pub fn clear(&mut self) {
        self.idle.clear();
    }
}

impl<C> Default for Pool<C> {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_IDLE, Self::DEFAULT_IDLE_TIMEOUT)
    }
}

#[cfg(test)]
mod tests;
