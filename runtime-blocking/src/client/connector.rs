//! Performing the client machine's HTTP exchanges on threads: `std::net::TcpStream` (and
//! rustls for `https`) through zest-core's [`ClientConn`], reused from a keep-alive [`Pool`].
//! A waiting caller performs its own exchange: a JSON answer whole, an event stream until it
//! ends or, once the caller's answer is in, as far as it has come; every other
//! exchange, and the rest of a stream that outlives its caller's answer, runs on a thread of
//! its own (which reads it for as long as it lasts). Responses go to the session
//! as owned stream events. An exchange is cut by shutting its socket down, which ends the
//! blocked read.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zest_core::http1::{self, Config};
use zest_core::io::{HttpRequest, StreamId, TransportFailure};
use zest_core::runtime::http_client::{ClientConn, HttpEndpoint, Pool, Target};
use zest_core::runtime::{ConnectError, OwnedEvent};

use crate::link::lock;
use crate::read_timeout::ReadTimeout;

/// How often a caller reading an event stream looks whether its answer came by another way
/// (its timeout, the session's end), since it cannot be woken from a blocked read.
const GLANCE: Duration = Duration::from_millis(10);

/// The size of a connection's read buffer.
const READ_BUF: usize = 32 * 1024;

/// Where an exchange reports its events: all that one read brought at a time (they are
/// taken out of the list), of one stream; false once nobody wants more.
pub(crate) type Emit<'a> = dyn FnMut(StreamId, &mut Vec<OwnedEvent>) -> bool + 'a;

/// Reports one event through `emit`.
fn emit_one(emit: &mut Emit<'_>, stream: StreamId, event: OwnedEvent) -> bool {
    emit(stream, &mut vec![event])
}

/// Whether the caller performing an exchange has its answer.
pub(crate) type Answered<'a> = Option<&'a dyn Fn() -> bool>;

/// A socket, plain or TLS.
enum Io {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Io {
    fn tcp(&self) -> &TcpStream {
        match self {
            Self::Plain(s) => s,
            Self::Tls(s) => &s.sock,
        }
    }
}

impl Read for Io {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Plain(s) => s.read(buf),
            Self::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Io {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Plain(s) => s.write(buf),
            Self::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Plain(s) => s.flush(),
            Self::Tls(s) => s.flush(),
        }
    }
}

/// One open connection, with the buffer its responses are read into (kept for the next
/// exchange: zeroing 32 KiB per call cost more than the call's own parsing).
struct Conn {
    io: Io,
    http: ClientConn,
    buf: Vec<u8>,
    timeout: ReadTimeout,
    /// A second handle on the socket, which an exchange's [`AbortCell`] shuts it down with
    /// (made once per connection, not per exchange).
    cut: Option<Arc<TcpStream>>,
}

impl Conn {
    fn new(io: Io, config: &Config) -> Self {
        let (buf, timeout) = (vec![0u8; READ_BUF], ReadTimeout::default());
        let cut = io.tcp().try_clone().ok().map(Arc::new);
        Self { io, http: ClientConn::new(config.clone()), buf, timeout, cut }
    }
}

/// Cuts one exchange from another thread: set before or after its socket exists.
#[derive(Default)]
pub(crate) struct AbortCell(Mutex<(bool, Option<Arc<TcpStream>>)>);

impl AbortCell {
    /// Cuts the exchange: its socket is shut down and nothing more of it is reported.
    pub(crate) fn abort(&self) {
        let mut cell = lock(&self.0);
        cell.0 = true;
        if let Some(socket) = cell.1.take() {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }

    fn is_aborted(&self) -> bool {
        lock(&self.0).0
    }

    /// Notes the socket the exchange runs on (a handle that can shut it down); false if it
    /// was aborted already.
    fn attach(&self, socket: Option<&Arc<TcpStream>>) -> bool {
        let mut cell = lock(&self.0);
        if !cell.0 {
            cell.1 = socket.cloned();
        }
        !cell.0
    }

    fn detach(&self) {
        lock(&self.0).1 = None;
    }
}

/// What a session asks of its connector. A trait object, made only by [`connector`] (for
/// `connect_to`): a program that never connects over HTTP links none of the exchange
/// code, nor TLS.
pub(crate) trait Exchanger: Send + Sync {
    /// Performs one exchange and reports its response on `stream` through `emit` (which
    /// returns false once nobody wants more), on a pooled connection or a new one: the
    /// stale-connection rule is [`ClientConn`]'s, as on every runtime. With `answered` (a caller
    /// performs it), a response that is an event stream is read until it ends or, once
    /// `answered()`, as far as it has come (its end, as a rule); then the [`Rest`] is returned,
    /// to be read on another thread: the caller never waits for a stream the server keeps open.
    fn exchange(
        self: Arc<Self>,
        stream: StreamId,
        request: HttpRequest,
        abort: &AbortCell,
        emit: &mut Emit<'_>,
        answered: Answered<'_>,
    ) -> Option<Rest>;
    /// Drops every idle connection.
    fn clear(&self);
}

impl Exchanger for Connector {
    fn exchange(
        self: Arc<Self>,
        stream: StreamId,
        request: HttpRequest,
        abort: &AbortCell,
        emit: &mut Emit<'_>,
        answered: Answered<'_>,
    ) -> Option<Rest> {
        let target = match Target::from_uri(&request.uri) {
            Ok(target) => target,
            Err(why) => return fail(emit, abort, stream, TransportFailure::Other(why)),
        };
        let pooled =
            lock(&self.pool).checkout(Instant::now(), &target, |c| zest_net::is_open(c.io.tcp()));
        let reused = pooled.is_some();
        let conn = match pooled.map_or_else(|| self.connect(&target), Ok) {
            Ok(conn) => conn,
            Err(failure) => return fail(emit, abort, stream, failure),
        };
        let mut ran = run(conn, stream, request, abort, emit, reused, answered);
        if let Ran::Stale(request) = ran {
            if abort.is_aborted() {
                return None;
            }
            ran = match self.connect(&target) {
                Ok(conn) => run(conn, stream, *request, abort, emit, false, answered),
                Err(failure) => return fail(emit, abort, stream, failure),
            };
        }
        match ran {
            Ran::Done(conn) => checkin(&self, target, conn),
            Ran::Streaming(mut conn) => {
                return Some(Box::new(move |abort, emit| {
                    let ended = pump(&mut conn, abort, emit, None);
                    let conn = reusable(*conn, abort, ended);
                    checkin(&self, target, conn);
                }))
            }
            // A fresh connection is never stale; should it be, the exchange is dropped.
            Ran::Stale(_) => {}
        }
        None
    }

    fn clear(&self) {
        lock(&self.pool).clear();
    }
}

/// The connector of a session with `endpoint`: checks its trust roots and builds the TLS
/// settings.
pub(crate) fn connector(endpoint: &HttpEndpoint) -> Result<Arc<dyn Exchanger>, ConnectError> {
    let tls = zest_net::tls_client_config(endpoint)?;
    Ok(Arc::new(Connector {
        tls,
        config: endpoint.connection_config(),
        connect_timeout: endpoint.connect_timeout,
        pool: Mutex::new(endpoint.pool()),
    }))
}

/// Opens and reuses connections for one session.
struct Connector {
    tls: Arc<rustls::ClientConfig>,
    config: Config,
    connect_timeout: Duration,
    pool: Mutex<Pool<Conn>>,
}

impl Connector {
    /// A new connection to `target`: TCP with `TCP_NODELAY`, then TLS for `https`, all
    /// within the connect timeout.
    fn connect(&self, target: &Target) -> Result<Conn, TransportFailure> {
        let deadline = Instant::now() + self.connect_timeout;
        let refused = |e: io::Error| match e.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => TransportFailure::TimedOut,
            _ => zest_net::refused(target, &e),
        };
        let addrs = (target.host.as_str(), target.port).to_socket_addrs().map_err(refused)?;
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
        let mut tcp = None;
        for addr in addrs {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(TransportFailure::TimedOut);
            }
            match TcpStream::connect_timeout(&addr, left) {
                Ok(s) => {
                    tcp = Some(s);
                    break;
                }
                Err(e) => last = e,
            }
        }
        let tcp = tcp.ok_or_else(|| refused(last))?;
        // Nagle would hold each small request back (docs/design-notes.md#latency-tcp_nodelay).
        let _ = tcp.set_nodelay(true);
        if !target.tls {
            return Ok(Conn::new(Io::Plain(tcp), &self.config));
        }
        let name = zest_net::tls_server_name(target)?;
        let session = rustls::ClientConnection::new(self.tls.clone(), name)
            .map_err(|e| TransportFailure::Tls(format!("{target}: {e}")))?;
        let mut stream = rustls::StreamOwned::new(session, tcp);
        while stream.conn.is_handshaking() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(TransportFailure::TimedOut);
            }
            let _ = stream.sock.set_read_timeout(Some(left));
            let _ = stream.sock.set_write_timeout(Some(left));
            if let Err(e) = stream.conn.complete_io(&mut stream.sock) {
                return Err(match e.kind() {
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
                        TransportFailure::TimedOut
                    }
                    _ => zest_net::tls_failed(target, &e),
                });
            }
        }
        let _ = stream.sock.set_write_timeout(None);
        Ok(Conn::new(Io::Tls(Box::new(stream)), &self.config))
    }
}

/// Reports that exchange `stream` failed, unless it was cut.
fn fail(
    emit: &mut Emit<'_>,
    abort: &AbortCell,
    stream: StreamId,
    failure: TransportFailure,
) -> Option<Rest> {
    if !abort.is_aborted() {
        emit_one(emit, stream, OwnedEvent::Failed(failure));
    }
    None
}

/// The rest of an exchange whose response is an event stream (its head reported, the
/// connection still attached to the exchange's [`AbortCell`]): reads and reports it until
/// it ends. Boxed, so that the session neither calls nor drops connection code (see
/// [`Exchanger`]).
pub(crate) type Rest = Box<dyn FnOnce(&AbortCell, &mut Emit<'_>) + Send>;

/// Hands a connection that can carry another exchange back to the pool.
fn checkin(connector: &Connector, target: Target, conn: Option<Box<Conn>>) {
    if let Some(conn) = conn {
        // A connection that no longer fits is closed by dropping it.
        drop(lock(&connector.pool).checkin(Instant::now(), target, *conn));
    }
}

/// How [`run`] ended.
enum Ran {
    /// The exchange ended (reported); the connection when it can be reused.
    Done(Option<Box<Conn>>),
    /// The response is an event stream that outlived its caller's answer (see [`Rest`]).
    Streaming(Box<Conn>),
    /// The reused connection was stale: nothing reported; send this again elsewhere.
    Stale(Box<HttpRequest>),
}

/// How [`pump`] ended.
enum Ended {
    /// The exchange ended (reported); true when the connection can be reused.
    Done(bool),
    /// The response is an event stream that outlived its caller's answer.
    Streaming,
    /// The reused connection was stale: nothing reported.
    Stale(Box<HttpRequest>),
}

/// Sends `request` on `conn` (taken from the pool when `reused`) and forwards the response
/// until it ends (or, with `answered`, until an event stream outlives the caller's answer).
fn run(
    mut conn: Conn,
    stream: StreamId,
    request: HttpRequest,
    abort: &AbortCell,
    emit: &mut Emit<'_>,
    reused: bool,
    answered: Answered<'_>,
) -> Ran {
    if !abort.attach(conn.cut.as_ref()) {
        return Ran::Done(None);
    }
    let now = Instant::now();
    let sent = if reused {
        conn.http.send_reused(now, stream, request)
    } else {
        conn.http.send(now, stream, request)
    };
    if let Err(failure) = sent {
        emit_one(emit, stream, OwnedEvent::Failed(failure));
        abort.detach();
        return Ran::Done(None);
    }
    match pump(&mut conn, abort, emit, answered) {
        Ended::Streaming => Ran::Streaming(Box::new(conn)),
        Ended::Stale(request) => {
            abort.detach();
            Ran::Stale(request)
        }
        ended => Ran::Done(reusable(conn, abort, ended)),
    }
}

/// Detaches the exchange's connection from its abort cell; the connection when it can carry
/// another exchange.
fn reusable(conn: Conn, abort: &AbortCell, ended: Ended) -> Option<Box<Conn>> {
    abort.detach();
    if matches!(ended, Ended::Done(true)) && !abort.is_aborted() {
        return Some(Box::new(conn));
    }
    None
}

/// The exchange's loop: writes what the request still has to send, reads and reports the
/// response (see [`Exchanger::exchange`] for `answered`).
fn pump(conn: &mut Conn, abort: &AbortCell, emit: &mut Emit<'_>, answered: Answered<'_>) -> Ended {
    let mut streaming = false;
    let mut batch = (StreamId::STDIO, Vec::new());
    loop {
        while let Some(t) = conn.http.poll_transmit() {
            let written = match t {
                http1::Transmit::Write(bytes) => {
                    conn.io.write_all(&bytes).and_then(|()| conn.io.flush())
                }
                http1::Transmit::Close => conn.io.tcp().shutdown(Shutdown::Write),
            };
            if let Err(e) = written {
                conn.http.handle_write_failed(TransportFailure::Reset(e.to_string()));
            }
        }
        if let Some((_, request)) = conn.http.take_stale() {
            return Ended::Stale(Box::new(request));
        }
        // What one read brought is reported at once: one turn of the session, not one each.
        let mut last = false;
        while !last {
            let Some((s, event)) = conn.http.poll_event() else { break };
            last = matches!(event, OwnedEvent::End | OwnedEvent::Failed(_));
            streaming |= is_event_stream(&event);
            if batch.0 != s && !batch.1.is_empty() && !emit(batch.0, &mut batch.1) {
                return Ended::Done(false);
            }
            batch.0 = s;
            batch.1.push(event);
        }
        if !batch.1.is_empty() && (abort.is_aborted() || !emit(batch.0, &mut batch.1)) {
            // Cut, or the session is over: nobody reads the rest.
            return Ended::Done(false);
        }
        if last {
            return Ended::Done(conn.http.is_reusable());
        }
        let deadline = conn.http.poll_timeout();
        // A caller reads a stream only until its answer is in (whichever way it came), and
        // then only what has come already.
        let caller = answered.filter(|_| streaming);
        let has_answer = caller.is_some_and(|answered| answered());
        let read = if has_answer {
            let _ = conn.io.tcp().set_nonblocking(true);
            let read = conn.io.read(&mut conn.buf);
            let _ = conn.io.tcp().set_nonblocking(false);
            read
        } else {
            let until = deadline.map(|at| {
                at.saturating_duration_since(Instant::now()).max(Duration::from_millis(1))
            });
            let wait = until.into_iter().chain(caller.map(|_| GLANCE)).min();
            conn.timeout.set(conn.io.tcp(), wait);
            conn.io.read(&mut conn.buf)
        };
        match read {
            Ok(0) => conn.http.handle_end(),
            Ok(n) => conn.http.handle_data(&conn.buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                let now = Instant::now();
                if deadline.is_some_and(|at| at <= now) {
                    conn.http.handle_timeout(now);
                } else if has_answer || caller.is_some_and(|answered| answered()) {
                    return Ended::Streaming;
                }
            }
            Err(e) => conn.http.handle_failed(TransportFailure::Reset(e.to_string())),
        }
    }
}

/// Whether `event` is the head of an event-stream response.
fn is_event_stream(event: &OwnedEvent) -> bool {
    matches!(event, OwnedEvent::Head(head) if zest_core::io::is_event_stream(&head.headers))
}
