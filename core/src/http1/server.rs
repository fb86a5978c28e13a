//! The server side of one accepted connection: read a request, answer it, repeat.

use std::collections::VecDeque;
use std::mem;
use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};
use http::{header, HeaderValue, Method, Request, Response, StatusCode, Version};
use ureq_proto::server::state::{Cleanup, ProvideResponse, RecvBody, RecvRequest, SendBody};
use ureq_proto::server::{RecvRequestResult, Reply, SendResponseResult};
use ureq_proto::BodyMode;

use super::error::{head_error, usage_error};
use super::{
    chunk_position, connection_has, has_framing_headers, head_window, pump_body,
    request_framing_ok, BodyDecoder, ChunkPosition, Config, Error, RequestHead, Transmit,
    UsageError, MAX_HEADERS,
};

/// What a [`ServerConnection`] learned from the client.
///
/// Per request: one `Head`, any number of `Data`, then `End`, after which the caller
/// responds; or a `Failed` at any point.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// Request body bytes, decoded, in order, as soon as they arrive.
    Data(Bytes),
    /// The request is complete; answer it with `send_response` or `send_head`.
    End,
    /// The request failed. If [`Error::status`] is `Some`, no response has started and the
    /// machine waits for [`ServerConnection::reject`] or [`ServerConnection::close`];
    /// otherwise a [`Transmit::Close`] has been queued.
    Failed(Error),
    /// A request head.
    Head(RequestHead),
}

/// One server connection: requests are read one at a time and answered in order.
///
/// Drive it as the [module docs](super) say. A response may start only after the request's
/// `End`; bytes of a next (pipelined) request wait until the response has ended.
#[derive(Debug)]
pub struct ServerConnection {
    config: Config,
    phase: Phase,
    /// Received bytes not yet consumed.
    rx: BytesMut,
    /// The client closed its side; close once the response under way has ended.
    peer_closed: bool,
    transmits: VecDeque<Transmit>,
    events: VecDeque<ServerEvent>,
}

/// Where the connection is, named for what it waits for.
#[derive(Debug)]
enum Phase {
    /// A request head, due by `deadline`.
    AwaitingHead { reply: Reply<RecvRequest>, deadline: Option<Instant> },
    /// The rest of the request body.
    ReadingBody { reply: Reply<RecvBody>, exchange: Exchange, received: u64 },
    /// The caller's response.
    AwaitingResponse { reply: Reply<ProvideResponse>, exchange: Exchange },
    /// More of a streamed response, then `finish`.
    Responding { body: Streamed, exchange: Exchange },
    /// The request failed before any response: `reject` or `close`.
    Failed,
    /// Closed; received bytes are dropped.
    Closed,
}

/// What the request asked for that shapes the response.
#[derive(Debug)]
struct Exchange {
    method: Method,
    /// The client asked to close after this exchange.
    close: bool,
}

/// A streamed response body.
#[derive(Debug)]
enum Streamed {
    /// Chunks go on the wire.
    Chunked(Reply<SendBody>),
    /// The response carries no body (a `HEAD` request, 204, 304): chunks are not sent.
    Absent(Reply<Cleanup>),
}

/// Which body a response head announces.
#[derive(Clone, Copy)]
enum Framing {
    Length(usize),
    Chunked,
}

impl ServerConnection {
    /// A machine for a connection accepted at `now`; its first head is due within
    /// [`Config::head_timeout`].
    pub fn new(config: Config, now: Instant) -> Self {
        let mut connection = Self {
            phase: Phase::Closed,
            rx: BytesMut::new(),
            peer_closed: false,
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            config,
        };
        connection.await_head(now);
        connection
    }

    /// Feeds bytes read from the connection. Drain `poll_event` and `poll_transmit` after.
    pub fn handle_data(&mut self, data: &[u8]) {
        if matches!(self.phase, Phase::Closed | Phase::Failed) {
            return;
        }
        self.rx.extend_from_slice(data);
        while self.step() {}
    }

    /// Reports that the client closed its side (EOF). Between requests this closes the
    /// connection; inside a request it fails it; while a response is due or under way, the
    /// connection closes once that response ends.
    pub fn handle_end(&mut self) {
        self.peer_closed = true;
        match &self.phase {
            Phase::AwaitingHead { .. } if self.rx.is_empty() => self.close(),
            Phase::AwaitingHead { .. } => self.fail_closed(Error::ClosedBeforeHead),
            Phase::ReadingBody { .. } => self.fail_closed(Error::ClosedInBody),
            _ => {}
        }
    }

    /// Fails the request with [`Error::HeadTimeout`] if a head is awaited and `now` is at or
    /// after its deadline (the caller may then `reject` with 408, or `close`). Early calls do
    /// nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Phase::AwaitingHead { deadline: Some(deadline), .. } = self.phase {
            if now >= deadline {
                self.fail_open(Error::HeadTimeout);
            }
        }
    }

    /// Queues a complete response with `Content-Length` (omitted for 204 and 304). For a
    /// `HEAD` request the body is not sent; its length is still announced.
    ///
    /// The response MUST NOT carry `Content-Length` or `Transfer-Encoding`; its status line
    /// always says HTTP/1.1. A `Connection: close` is added when the client asked to close.
    /// After it the machine awaits the next head (deadline from `now`), or queues a close.
    /// Drain `poll_transmit` and `poll_event` after. Should ureq-proto refuse a head these
    /// checks let through, the error is returned and the connection is closed.
    pub fn send_response(
        &mut self,
        now: Instant,
        response: Response<Bytes>,
    ) -> Result<(), UsageError> {
        let (parts, body) = response.into_parts();
        let (reply, exchange) = self.take_request(parts, Framing::Length(body.len()))?;
        match reply {
            SendResponseResult::SendBody(mut reply) => {
                if reply.consume_direct_write(body.len()).is_err() || !reply.is_finished() {
                    // `Content-Length` was set to `body.len()`, so this cannot happen.
                    self.close();
                    return Err(UsageError::InvalidHead { reason: "body length mismatch".into() });
                }
                if !body.is_empty() {
                    self.transmits.push_back(Transmit::Write(body));
                }
                self.end_response(now, reply.proceed().must_close_connection());
            }
            SendResponseResult::Cleanup(reply) => {
                if !body.is_empty() && exchange.method != Method::HEAD {
                    // Unreachable: 204, 304 and CONNECT 2xx with a body were refused.
                    self.close();
                    return Err(UsageError::BodyNotAllowed);
                }
                self.end_response(now, reply.must_close_connection());
            }
        }
        Ok(())
    }

    /// Queues the head of a streamed response (`Transfer-Encoding: chunked`, for SSE); its
    /// body follows with `send_data` and ends with `finish`. Same rules as `send_response`.
    /// HTTP/1.0 clients cannot decode chunks: answer them with `send_response`.
    pub fn send_head(&mut self, response: Response<()>) -> Result<(), UsageError> {
        let (parts, ()) = response.into_parts();
        let (reply, exchange) = self.take_request(parts, Framing::Chunked)?;
        let body = match reply {
            SendResponseResult::SendBody(reply) => Streamed::Chunked(reply),
            SendResponseResult::Cleanup(reply) => Streamed::Absent(reply),
        };
        self.phase = Phase::Responding { body, exchange };
        Ok(())
    }

    /// Queues one chunk of a streamed response. An empty chunk is ignored (it would end
    /// the stream); for a `HEAD` request the chunk is dropped.
    pub fn send_data(&mut self, data: Bytes) -> Result<(), UsageError> {
        let Phase::Responding { body, exchange } = &mut self.phase else {
            return Err(self.not_streaming());
        };
        let reply = match body {
            Streamed::Chunked(reply) => reply,
            Streamed::Absent(_) if data.is_empty() || exchange.method == Method::HEAD => {
                return Ok(());
            }
            Streamed::Absent(_) => return Err(UsageError::BodyNotAllowed),
        };
        if data.is_empty() {
            return Ok(());
        }
        let mut out = vec![0; data.len() + 16 * (data.len() / 8192 + 1)];
        let (mut read, mut written) = (0, 0);
        while read < data.len() {
            match reply.write(&data[read..], &mut out[written..]) {
                Ok((0, _)) => out.resize(out.len() * 2, 0),
                Ok((i, o)) => (read, written) = (read + i, written + o),
                Err(e) => return Err(usage_error(e)),
            }
        }
        out.truncate(written);
        self.transmits.push_back(Transmit::Write(Bytes::from(out)));
        Ok(())
    }

    /// Ends a streamed response. After it the machine awaits the next head (deadline from
    /// `now`), or queues a close. Drain `poll_transmit` and `poll_event` after.
    pub fn finish(&mut self, now: Instant) -> Result<(), UsageError> {
        if !matches!(self.phase, Phase::Responding { .. }) {
            return Err(self.not_streaming());
        }
        let Phase::Responding { body, .. } = mem::replace(&mut self.phase, Phase::Closed) else {
            return Err(UsageError::NotStreaming);
        };
        let must_close = match body {
            Streamed::Absent(reply) => reply.must_close_connection(),
            Streamed::Chunked(mut reply) => {
                let mut out = [0; 8];
                match reply.write(&[], &mut out) {
                    Ok((_, n)) if reply.is_finished() => {
                        self.transmits
                            .push_back(Transmit::Write(Bytes::copy_from_slice(&out[..n])));
                        reply.proceed().must_close_connection()
                    }
                    // Eight bytes always hold the last chunk, `0\r\n\r\n`.
                    _ => true,
                }
            }
        };
        self.end_response(now, must_close);
        Ok(())
    }

    /// Answers the current request with `status`, an empty body and `Connection: close`, then
    /// queues a close. Allowed until a response has started, also after a `Failed` event
    /// (see [`Error::status`] for the status to pick).
    pub fn reject(&mut self, status: StatusCode) -> Result<(), UsageError> {
        self.reject_with_json(status, &[])
    }

    /// [`reject`](Self::reject) with `json` as an `application/json` body (none when empty):
    /// for a JSON-RPC error that says why.
    pub fn reject_with_json(&mut self, status: StatusCode, json: &[u8]) -> Result<(), UsageError> {
        match self.phase {
            Phase::Closed => return Err(UsageError::Closed),
            Phase::Responding { .. } => return Err(UsageError::Busy),
            _ if status.is_informational() => return Err(UsageError::NotFinal),
            _ => {}
        }
        let reason = status.canonical_reason().unwrap_or("Unknown");
        let kind = if json.is_empty() { "" } else { "content-type: application/json\r\n" };
        let head = format!(
            "HTTP/1.1 {} {reason}\r\n{kind}content-length: {}\r\nconnection: close\r\n\r\n",
            status.as_str(),
            json.len()
        );
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(json);
        self.transmits.push_back(Transmit::Write(Bytes::from(bytes)));
        self.close();
        Ok(())
    }

    /// Abandons the connection: queues a close, reports nothing. Idempotent.
    pub fn close(&mut self) {
        if !matches!(self.phase, Phase::Closed) {
            self.phase = Phase::Closed;
            self.rx.clear();
            self.transmits.push_back(Transmit::Close);
        }
    }

    /// The next thing to do with the connection. Changes after every command and input.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next event. Changes after `handle_*` calls and after a response ends (a
    /// pipelined request may be waiting).
    #[must_use]
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }

    /// The header-read deadline while a request head is awaited, else `None`. Changes when a
    /// head arrives, when a response ends, and on failure.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.phase {
            Phase::AwaitingHead { deadline, .. } => deadline,
            _ => None,
        }
    }

    /// Whether the connection is closed (a close is queued or done).
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed)
    }

    /// Consumes buffered bytes in the current phase; returns whether to run again.
    fn step(&mut self) -> bool {
        match mem::replace(&mut self.phase, Phase::Closed) {
            Phase::AwaitingHead { reply, deadline } if !self.rx.is_empty() => {
                self.read_head(reply, deadline)
            }
            Phase::ReadingBody { reply, exchange, received } if !self.rx.is_empty() => {
                self.read_body(reply, exchange, received)
            }
            phase @ (Phase::AwaitingResponse { .. } | Phase::Responding { .. })
                if self.rx.len() > self.config.max_head_bytes =>
            {
                self.phase = phase;
                self.fail_closed(Error::PipelineTooLarge { limit: self.config.max_head_bytes });
                false
            }
            phase => {
                self.phase = phase;
                false
            }
        }
    }

    fn read_head(&mut self, mut reply: Reply<RecvRequest>, deadline: Option<Instant>) -> bool {
        let max = self.config.max_head_bytes;
        let request = match reply.try_request(head_window(&self.rx, max)) {
            Err(e) => {
                self.fail_open(head_error(&e, MAX_HEADERS));
                return false;
            }
            Ok((_, None)) if self.rx.len() >= max => {
                self.fail_open(Error::HeadTooLarge { limit: max });
                return false;
            }
            Ok((_, None)) => {
                self.phase = Phase::AwaitingHead { reply, deadline };
                return false;
            }
            Ok((used, Some(request))) => {
                self.rx.advance(used);
                request
            }
        };
        if !request_framing_ok(&request) {
            self.fail_open(Error::MalformedHead);
            return false;
        }
        let exchange = Exchange { method: request.method().clone(), close: wants_close(&request) };
        let declares_chunked = request.headers().contains_key(header::TRANSFER_ENCODING);
        self.events.push_back(ServerEvent::Head(request.into()));
        match reply.proceed() {
            Some(RecvRequestResult::ProvideResponse(reply)) => {
                self.events.push_back(ServerEvent::End);
                self.phase = Phase::AwaitingResponse { reply, exchange };
            }
            Some(RecvRequestResult::RecvBody(reply)) => {
                self.start_body(reply, exchange, declares_chunked, None);
            }
            Some(RecvRequestResult::Send100(reply)) => {
                let mut out = [0; 64];
                match reply.accept(&mut out) {
                    Ok((n, reply)) => {
                        let go_ahead = Bytes::copy_from_slice(&out[..n]);
                        self.start_body(reply, exchange, declares_chunked, Some(go_ahead));
                    }
                    // 64 bytes always hold `HTTP/1.1 100 Continue\r\n\r\n`.
                    Err(_) => self.fail_open(Error::MalformedHead),
                }
            }
            // `try_request` gave a head, so ureq-proto can proceed.
            None => self.fail_open(Error::MalformedHead),
        }
        true
    }

    /// Enters the body of a request, or skips it when it is empty or too large.
    fn start_body(
        &mut self,
        mut reply: Reply<RecvBody>,
        exchange: Exchange,
        declares_chunked: bool,
        go_ahead: Option<Bytes>,
    ) {
        match (reply.body_mode(), self.config.max_body_bytes) {
            (BodyMode::Chunked, _) if !declares_chunked => {
                // RFC 9112 §6.3: a request without Content-Length or Transfer-Encoding has no
                // body, but ureq-proto reads one for POST, PUT and PATCH: end it at once.
                let ended = reply.read(b"0\r\n\r\n", &mut []).is_ok();
                self.end_body(reply, exchange, ended);
            }
            (BodyMode::LengthDelimited(n), Some(limit)) if n > limit => {
                self.fail_open(Error::BodyTooLarge { limit });
            }
            _ => {
                if let Some(bytes) = go_ahead {
                    self.transmits.push_back(Transmit::Write(bytes));
                }
                self.phase = Phase::ReadingBody { reply, exchange, received: 0 };
            }
        }
    }

    fn read_body(
        &mut self,
        mut reply: Reply<RecvBody>,
        exchange: Exchange,
        mut received: u64,
    ) -> bool {
        let events = &mut self.events;
        let mut emit = |bytes| events.push_back(ServerEvent::Data(bytes));
        match pump_body(&mut reply, &mut self.rx, &mut received, &self.config, &mut emit) {
            Err(e) => {
                self.fail_open(e);
                false
            }
            Ok(false) => {
                self.phase = Phase::ReadingBody { reply, exchange, received };
                false
            }
            Ok(true) => {
                self.end_body(reply, exchange, true);
                true
            }
        }
    }

    /// The request body has ended (if `ended` holds): report it and await the response.
    fn end_body(&mut self, reply: Reply<RecvBody>, exchange: Exchange, ended: bool) {
        // `proceed` panics unless the body has ended; check first.
        if !ended || !reply.is_ended() {
            self.fail_open(Error::MalformedBody);
            return;
        }
        match reply.proceed() {
            Ok(reply) => {
                self.events.push_back(ServerEvent::End);
                self.phase = Phase::AwaitingResponse { reply, exchange };
            }
            Err(_) => self.fail_open(Error::MalformedBody),
        }
    }

    /// Checks that a response may start now, completes its head, and queues the head.
    fn take_request(
        &mut self,
        mut parts: http::response::Parts,
        framing: Framing,
    ) -> Result<(SendResponseResult, Exchange), UsageError> {
        let Phase::AwaitingResponse { exchange, .. } = &self.phase else {
            return Err(match self.phase {
                Phase::Closed => UsageError::Closed,
                Phase::Responding { .. } => UsageError::Busy,
                _ => UsageError::NoRequest,
            });
        };
        complete_head(&mut parts, exchange, framing)?;
        let Phase::AwaitingResponse { reply, exchange } =
            mem::replace(&mut self.phase, Phase::Closed)
        else {
            return Err(UsageError::NoRequest);
        };
        match write_head(reply, Response::from_parts(parts, ())) {
            Ok((head, reply)) => {
                self.transmits.push_back(Transmit::Write(head));
                Ok((reply, exchange))
            }
            Err(e) => {
                // ureq-proto consumed the request; the connection cannot go on.
                self.close();
                Err(usage_error(e))
            }
        }
    }

    /// The response is queued in whole: close, or await the next request.
    fn end_response(&mut self, now: Instant, must_close: bool) {
        if must_close || self.peer_closed {
            self.phase = Phase::Failed;
            self.close();
        } else {
            self.await_head(now);
            while self.step() {}
        }
    }

    fn await_head(&mut self, now: Instant) {
        self.phase = match Reply::new() {
            Ok(reply) => {
                Phase::AwaitingHead { reply, deadline: now.checked_add(self.config.head_timeout) }
            }
            Err(_) => Phase::Closed,
        };
    }

    fn not_streaming(&self) -> UsageError {
        match self.phase {
            Phase::Closed => UsageError::Closed,
            _ => UsageError::NotStreaming,
        }
    }

    /// The request failed; the caller may still `reject` it.
    fn fail_open(&mut self, error: Error) {
        self.events.push_back(ServerEvent::Failed(error));
        self.phase = Phase::Failed;
        self.rx.clear();
    }

    /// The request failed where no answer can follow: report it and close.
    fn fail_closed(&mut self, error: Error) {
        self.events.push_back(ServerEvent::Failed(error));
        self.phase = Phase::Failed;
        self.close();
    }
}

impl BodyDecoder for Reply<RecvBody> {
    fn read(
        &mut self,
        input: &[u8],
        output: &mut [u8],
    ) -> Result<(usize, usize), ureq_proto::Error> {
        Self::read(self, input, output)
    }

    fn is_done(&self) -> bool {
        self.is_ended()
    }

    fn chunk_position(&self) -> Option<ChunkPosition> {
        chunk_position(self.body_mode(), self.is_on_chunk_boundary())
    }
}

/// Whether the client asked to close the connection after this exchange.
fn wants_close(request: &Request<()>) -> bool {
    let headers = request.headers();
    connection_has(headers, "close")
        || (request.version() == Version::HTTP_10 && !connection_has(headers, "keep-alive"))
}

/// Adds the framing and connection headers to a response head, or refuses it.
fn complete_head(
    parts: &mut http::response::Parts,
    exchange: &Exchange,
    framing: Framing,
) -> Result<(), UsageError> {
    let status = parts.status;
    if status.is_informational() {
        return Err(UsageError::NotFinal);
    }
    if has_framing_headers(&parts.headers) {
        return Err(UsageError::FramingHeader);
    }
    let no_body = status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
        || (exchange.method == Method::CONNECT && status.is_success());
    match framing {
        Framing::Length(n) if no_body && n > 0 => return Err(UsageError::BodyNotAllowed),
        _ if no_body => {}
        Framing::Length(n) => {
            parts.headers.insert(header::CONTENT_LENGTH, HeaderValue::from(n));
        }
        Framing::Chunked => {
            parts.headers.insert(header::TRANSFER_ENCODING, HeaderValue::from_static("chunked"));
        }
    }
    if exchange.close && !connection_has(&parts.headers, "close") {
        parts.headers.append(header::CONNECTION, HeaderValue::from_static("close"));
    }
    parts.version = Version::HTTP_11;
    Ok(())
}

/// Hands the response head to ureq-proto and writes it out.
fn write_head(
    reply: Reply<ProvideResponse>,
    response: Response<()>,
) -> Result<(Bytes, SendResponseResult), ureq_proto::Error> {
    let mut reply = reply.provide(response)?;
    let mut out = vec![0; 1024];
    let mut used = 0;
    while !reply.is_finished() {
        match reply.write(&mut out[used..]) {
            Ok(n) => used += n,
            // A line longer than the room left: grow and retry.
            Err(ureq_proto::Error::OutputOverflow) => out.resize(out.len() * 2, 0),
            Err(e) => return Err(e),
        }
    }
    out.truncate(used);
    Ok((Bytes::from(out), reply.proceed()))
}
