//! The client side of one connection: send a request, read its response, repeat.

use std::collections::VecDeque;
use std::mem;
use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};
use http::{header, HeaderValue, Method, Request};
use ureq_proto::client::state::{RecvBody, RecvResponse, SendBody};
use ureq_proto::client::SendRequestResult;
use ureq_proto::client::{Await100Result, Call, RecvBodyResult, RecvResponseResult};
use ureq_proto::BodyMode;

use super::error::{head_error, usage_error};
use super::{
    chunk_position, has_framing_headers, head_window, pump_body, BodyDecoder, ChunkPosition,
    Config, Error, ResponseHead, Transmit, UsageError, MAX_HEADERS,
};

/// What a [`ClientConnection`] learned from the server.
///
/// Per request: one `Head`, any number of `Data`, then one `End`; or a `Failed` at any point,
/// after which the connection is closed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientEvent {
    /// Body bytes, decoded, in order, as soon as they arrive.
    Data(Bytes),
    /// The response is complete. `reusable`: another request may be sent on this connection;
    /// when false a [`Transmit::Close`] has been queued.
    End {
        /// Whether the connection stays open for another request.
        reusable: bool,
    },
    /// The exchange failed; a [`Transmit::Close`] has been queued. Also reported when the
    /// server sends bytes while no request is outstanding ([`Error::UnexpectedData`]).
    Failed(Error),
    /// The final response head. 1xx interim responses are consumed without an event; a
    /// `101 Switching Protocols` is final and ends the exchange without reuse.
    Head(ResponseHead),
}

/// One client connection: requests go out one at a time, each after the previous response
/// ended on a reusable connection.
///
/// Drive it as the [module docs](super) say: after `send_request`, `handle_data`,
/// `handle_end`, `handle_timeout` or `close`, drain `poll_transmit` and `poll_event`, then
/// sleep until `poll_timeout`.
#[derive(Debug)]
pub struct ClientConnection {
    config: Config,
    phase: Phase,
    /// Received bytes not yet consumed.
    rx: BytesMut,
    transmits: VecDeque<Transmit>,
    events: VecDeque<ClientEvent>,
}

/// Where the connection is, named for what it waits for.
#[derive(Debug)]
enum Phase {
    /// No request outstanding; a new one may be sent.
    Idle,
    /// The request is queued; its response head has not arrived in whole.
    AwaitingHead { call: Call<RecvResponse>, deadline: Option<Instant> },
    /// The head arrived; body bytes are decoded as they come.
    ReadingBody { call: Call<RecvBody>, received: u64 },
    /// Closed, failed, or ended without reuse. Received bytes are dropped.
    Closed,
}

impl ClientConnection {
    /// A machine for a freshly opened connection.
    pub fn new(config: Config) -> Self {
        Self {
            config,
            phase: Phase::Idle,
            rx: BytesMut::new(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// Queues `request` and its whole body, and starts the header-read deadline at `now`.
    ///
    /// The machine sets `Content-Length` (for a non-empty body, and for an empty `POST`,
    /// `PUT` or `PATCH`); the request MUST NOT carry `Content-Length` or
    /// `Transfer-Encoding`. It MUST have a `Host` header or an absolute URI (whose host and
    /// port become the `Host` header); a `CONNECT` MUST have an authority-form URI. `Expect: 100-continue` is allowed; the body is sent
    /// without waiting. Drain `poll_transmit` afterwards.
    pub fn send_request(
        &mut self,
        now: Instant,
        request: Request<Bytes>,
    ) -> Result<(), UsageError> {
        match self.phase {
            Phase::Idle => {}
            Phase::Closed => return Err(UsageError::Closed),
            Phase::AwaitingHead { .. } | Phase::ReadingBody { .. } => return Err(UsageError::Busy),
        }
        let (mut parts, body) = request.into_parts();
        if has_framing_headers(&parts.headers) {
            return Err(UsageError::FramingHeader);
        }
        if parts.uri.host().is_none() && !parts.headers.contains_key(header::HOST) {
            return Err(UsageError::MissingHost);
        }
        if parts.method == Method::CONNECT && parts.uri.authority().is_none() {
            // ureq-proto writes a CONNECT target from the authority and panics without one.
            return Err(UsageError::InvalidHead { reason: "CONNECT needs host:port".into() });
        }
        let method_needs_body = matches!(parts.method, Method::POST | Method::PUT | Method::PATCH);
        if !body.is_empty() || method_needs_body {
            parts.headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
        }
        let (mut head, call, body_sent) = start_call(Request::from_parts(parts, ()), body.len())?;
        if body_sent && !body.is_empty() {
            if body.len() <= JOINED_BODY_MAX {
                // One write, so one segment: the server reads the whole request at once.
                head.extend_from_slice(&body);
                self.transmits.push_back(Transmit::Write(Bytes::from(head)));
            } else {
                self.transmits.push_back(Transmit::Write(Bytes::from(head)));
                self.transmits.push_back(Transmit::Write(body));
            }
        } else {
            self.transmits.push_back(Transmit::Write(Bytes::from(head)));
        }
        let deadline = now.checked_add(self.config.head_timeout);
        self.phase = Phase::AwaitingHead { call, deadline };
        Ok(())
    }

    /// Feeds bytes read from the connection. Drain `poll_event` (and `poll_transmit`: a
    /// failure or a non-reusable end queues a close) afterwards. Bytes after a close are
    /// dropped.
    pub fn handle_data(&mut self, data: &[u8]) {
        if matches!(self.phase, Phase::Closed) {
            return;
        }
        self.rx.extend_from_slice(data);
        while self.step() {}
    }

    /// Reports that the server closed its side (EOF). Ends a close-delimited body, fails an
    /// exchange that needed more bytes, and queues a close.
    pub fn handle_end(&mut self) {
        match mem::replace(&mut self.phase, Phase::Closed) {
            Phase::Idle => self.transmits.push_back(Transmit::Close),
            Phase::AwaitingHead { .. } => self.fail(Error::ClosedBeforeHead),
            Phase::ReadingBody { call, .. } => {
                if call.body_mode() == BodyMode::CloseDelimited || call.is_ended_chunked() {
                    self.end(true);
                } else {
                    self.fail(Error::ClosedInBody);
                }
            }
            Phase::Closed => {}
        }
    }

    /// Fails the exchange with [`Error::HeadTimeout`] if the response head is still awaited
    /// and `now` is at or after its deadline. Early calls do nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Phase::AwaitingHead { deadline: Some(deadline), .. } = self.phase {
            if now >= deadline {
                self.fail(Error::HeadTimeout);
            }
        }
    }

    /// Abandons the connection: queues a close, reports nothing. Idempotent.
    pub fn close(&mut self) {
        if !matches!(self.phase, Phase::Closed) {
            self.phase = Phase::Closed;
            self.rx.clear();
            self.transmits.push_back(Transmit::Close);
        }
    }

    /// Changes the body limit for bytes decoded from now on, the response under way
    /// included (a `Content-Length` already checked against the old limit is not checked
    /// again). `None` lifts it, for an event stream meant to stay open.
    pub fn set_max_body_bytes(&mut self, limit: Option<u64>) {
        self.config.max_body_bytes = limit;
    }

    /// The next thing to do with the connection. Changes after every command and input.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next event. Changes after `handle_*` calls.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// The header-read deadline while a response head is awaited, else `None`. Changes after
    /// `send_request` and when a head arrives or the connection fails.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.phase {
            Phase::AwaitingHead { deadline, .. } => deadline,
            _ => None,
        }
    }

    /// Whether `send_request` would be accepted now.
    pub fn is_idle(&self) -> bool {
        matches!(self.phase, Phase::Idle)
    }

    /// Whether the connection is closed (by either side, a failure, or a non-reusable end).
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed)
    }

    /// Consumes buffered bytes in the current phase; returns whether to run again.
    fn step(&mut self) -> bool {
        match mem::replace(&mut self.phase, Phase::Closed) {
            Phase::Idle if self.rx.is_empty() => {
                self.phase = Phase::Idle;
                false
            }
            Phase::Idle => {
                self.fail(Error::UnexpectedData);
                false
            }
            Phase::AwaitingHead { call, deadline } if self.rx.is_empty() => {
                self.phase = Phase::AwaitingHead { call, deadline };
                false
            }
            Phase::AwaitingHead { call, deadline } => self.read_head(call, deadline),
            Phase::ReadingBody { call, received } => self.read_body(call, received),
            Phase::Closed => {
                self.rx.clear();
                false
            }
        }
    }

    fn read_head(&mut self, mut call: Call<RecvResponse>, deadline: Option<Instant>) -> bool {
        let max = self.config.max_head_bytes;
        match call.try_response(head_window(&self.rx, max), false) {
            Err(e) => self.fail(head_error(&e, MAX_HEADERS)),
            Ok((0, None)) if self.rx.len() >= max => {
                self.fail(Error::HeadTooLarge { limit: max });
            }
            Ok((0, None)) => self.phase = Phase::AwaitingHead { call, deadline },
            Ok((used, None)) => {
                // A 1xx interim response, consumed; the final head follows.
                self.rx.advance(used);
                self.phase = Phase::AwaitingHead { call, deadline };
                return true;
            }
            Ok((used, Some(response))) => {
                self.rx.advance(used);
                self.events.push_back(ClientEvent::Head(response.into()));
                match call.proceed() {
                    Some(RecvResponseResult::RecvBody(call)) => {
                        let declared = match call.body_mode() {
                            BodyMode::LengthDelimited(n) => n,
                            _ => 0,
                        };
                        match self.config.max_body_bytes {
                            Some(limit) if declared > limit => {
                                self.fail(Error::BodyTooLarge { limit });
                            }
                            _ => self.phase = Phase::ReadingBody { call, received: 0 },
                        }
                    }
                    Some(RecvResponseResult::Redirect(call)) => {
                        self.end(call.proceed().must_close_connection());
                    }
                    Some(RecvResponseResult::Cleanup(call)) => {
                        self.end(call.must_close_connection());
                    }
                    // `try_response` gave a head, so ureq-proto can proceed.
                    None => self.fail(Error::MalformedHead),
                }
                return !self.is_closed();
            }
        }
        false
    }

    fn read_body(&mut self, mut call: Call<RecvBody>, mut received: u64) -> bool {
        let events = &mut self.events;
        let mut emit = |bytes| events.push_back(ClientEvent::Data(bytes));
        match pump_body(&mut call, &mut self.rx, &mut received, &self.config, &mut emit) {
            Err(e) => self.fail(e),
            Ok(false) => self.phase = Phase::ReadingBody { call, received },
            Ok(true) => {
                match call.proceed() {
                    Some(RecvBodyResult::Redirect(call)) => {
                        self.end(call.proceed().must_close_connection());
                    }
                    Some(RecvBodyResult::Cleanup(call)) => self.end(call.must_close_connection()),
                    // The body ended, so ureq-proto can proceed.
                    None => self.fail(Error::MalformedBody),
                }
                return !self.is_closed();
            }
        }
        false
    }

    /// The response ended; keep the connection or close it.
    fn end(&mut self, must_close: bool) {
        self.events.push_back(ClientEvent::End { reusable: !must_close });
        if must_close {
            self.phase = Phase::Closed;
            self.rx.clear();
            self.transmits.push_back(Transmit::Close);
        } else {
            self.phase = Phase::Idle;
        }
    }

    /// The peer failed the exchange: report it and close.
    fn fail(&mut self, error: Error) {
        self.events.push_back(ClientEvent::Failed(error));
        self.phase = Phase::Closed;
        self.rx.clear();
        self.transmits.push_back(Transmit::Close);
    }
}

impl BodyDecoder for Call<RecvBody> {
    fn read(
        &mut self,
        input: &[u8],
        output: &mut [u8],
    ) -> Result<(usize, usize), ureq_proto::Error> {
        Self::read(self, input, output)
    }

    fn is_done(&self) -> bool {
        self.body_mode() != BodyMode::CloseDelimited && self.can_proceed()
    }

    fn chunk_position(&self) -> Option<ChunkPosition> {
        chunk_position(self.body_mode(), self.is_on_chunk_boundary())
    }
}

/// The largest body copied behind the request head into one write; a larger one is written
/// as it is, after the head.
const JOINED_BODY_MAX: usize = 16 * 1024;

/// Writes the request head and walks ureq-proto's call to where the response is read.
/// Returns the head's bytes, the call, and whether the body belongs on the wire.
fn start_call(
    request: Request<()>,
    body_len: usize,
) -> Result<(Vec<u8>, Call<RecvResponse>, bool), UsageError> {
    let mut call = Call::new(request).map_err(usage_error)?.proceed();
    let mut out = vec![0; 1024];
    let mut used = 0;
    while !call.can_proceed() {
        match call.write(&mut out[used..]) {
            Ok(n) => used += n,
            // A line longer than the room left: grow and retry.
            Err(ureq_proto::Error::OutputOverflow) => out.resize(out.len() * 2, 0),
            Err(e) => return Err(usage_error(e)),
        }
    }
    out.truncate(used);
    let not_ready = || UsageError::InvalidHead { reason: "request cannot be sent".into() };
    let (call, body_sent) = match call.proceed().map_err(usage_error)?.ok_or_else(not_ready)? {
        SendRequestResult::RecvResponse(call) => (call, false),
        SendRequestResult::SendBody(call) => (send_body(call, body_len)?, true),
        SendRequestResult::Await100(call) => match call.proceed().map_err(usage_error)? {
            Await100Result::SendBody(call) => (send_body(call, body_len)?, true),
            Await100Result::RecvResponse(call) => (call, false),
        },
    };
    Ok((out, call, body_sent))
}

/// Accounts for a body the caller will write as-is (it has a `Content-Length`).
fn send_body(mut call: Call<SendBody>, len: usize) -> Result<Call<RecvResponse>, UsageError> {
    call.consume_direct_write(len).map_err(usage_error)?;
    call.proceed()
        .ok_or_else(|| UsageError::InvalidHead { reason: "body length does not match".into() })
}
