//! One HTTP client exchange, from a pooled or new connection to the end of its response,
//! written once for every async runtime: the runtime supplies only how to open a socket
//! ([`Dialer`]), how to read it with a deadline and how to tell an idle socket is still open
//! ([`HttpSocket`]), and its clock.
//!
//! The stale-connection rule is [`ClientConn`]'s: a request sent on a pooled connection is
//! sent again, once, on a new one only when writing it failed before anything was read
//! back; a request that was written whole is never sent twice.

use std::future::{poll_fn, Future};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Instant;

use crate::http1::{self, Config};
use crate::io::{HttpRequest, StreamId, TransportFailure};
use crate::runtime::{ExchangeEvents, OwnedEvent, PollSink};

use super::{ClientConn, HttpEndpoint, Pool, Target};

/// An open connection's socket (plain or TLS) as the exchange sees it.
pub trait HttpSocket: PollSink + Send + Unpin + 'static {
    /// Reads into `buf`; resolves `None` instead once `deadline` has passed, never earlier
    /// (without a deadline, never). `Ok(0)` is the end of the stream.
    fn poll_read_until(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
        deadline: Option<Instant>,
    ) -> Poll<Option<io::Result<usize>>>;

    /// True while an idle socket still looks open: the server has neither closed it nor sent
    /// anything unasked (see [`super::still_open`]).
    fn is_open(&self) -> bool;
}

/// How a runtime opens connections, and its clock.
pub trait Dialer: Send + Sync + 'static {
    /// The socket of one connection.
    type Socket: HttpSocket;

    /// Opens a connection to `target`: TCP with `TCP_NODELAY`, then TLS for `https`, all
    /// within the endpoint's connect timeout.
    fn dial(
        &self,
        target: &Target,
    ) -> impl Future<Output = Result<Self::Socket, TransportFailure>> + Send;

    /// The runtime's clock.
    fn now(&self) -> Instant;
}

/// One open connection: its socket, its HTTP/1.1 state, and its read buffer (pooled with
/// it, so an exchange on a reused connection allocates and zeroes no buffer).
struct Conn<S> {
    io: S,
    http: ClientConn,
    buf: Box<[u8]>,
}

/// Bytes read from a connection at once.
const READ_BUF: usize = 32 * 1024;

/// Opens and reuses the connections of one session.
pub struct Connector<D: Dialer> {
    dialer: D,
    config: Config,
    pool: Mutex<Pool<Conn<D::Socket>>>,
}

impl<D: Dialer> Connector<D> {
    /// A connector for `endpoint`'s connection limits and pool, opening with `dialer`.
    pub fn new(dialer: D, endpoint: &HttpEndpoint) -> Arc<Self> {
        let pool = Mutex::new(endpoint.pool());
        Arc::new(Self { dialer, config: endpoint.connection_config(), pool })
    }

    /// Drops every idle connection.
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> MutexGuard<'_, Pool<Conn<D::Socket>>> {
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn connect(&self, target: &Target) -> Result<Conn<D::Socket>, TransportFailure> {
        let io = self.dialer.dial(target).await?;
        Ok(Conn { io, http: ClientConn::new(self.config.clone()), buf: vec![0; READ_BUF].into() })
    }
}

/// Performs one exchange and reports its response on `stream`, on a pooled connection or a
/// new one (see the module's stale-connection rule); the connection goes back to the pool
/// when its response ended reusable.
pub async fn exchange<D: Dialer>(
    connector: Arc<Connector<D>>,
    stream: StreamId,
    request: HttpRequest,
    events: ExchangeEvents,
) {
    let fail = |failure| {
        // The session may be gone; then nobody waits for this exchange.
        let _ = events.send((stream, OwnedEvent::Failed(failure)));
    };
    let target = match Target::from_uri(&request.uri) {
        Ok(target) => target,
        Err(why) => return fail(TransportFailure::Other(why)),
    };
    let now = connector.dialer.now();
    let pooled = connector.lock().checkout(now, &target, |c| c.io.is_open());
    let (mut conn, sent) = match pooled {
        Some(mut conn) => {
            let sent = conn.http.send_reused(now, stream, request);
            (conn, sent)
        }
        None => match connector.connect(&target).await {
            Ok(mut conn) => {
                let sent = conn.http.send(connector.dialer.now(), stream, request);
                (conn, sent)
            }
            Err(failure) => return fail(failure),
        },
    };
    if let Err(failure) = sent {
        return fail(failure);
    }
    let conn = match run(&mut conn, &events).await {
        Ran::Done(reusable) => reusable.then_some(conn),
        Ran::Stale(stream, request) => {
            let mut fresh = match connector.connect(&target).await {
                Ok(fresh) => fresh,
                Err(failure) => return fail(failure),
            };
            if let Err(failure) = fresh.http.send(connector.dialer.now(), stream, *request) {
                return fail(failure);
            }
            match run(&mut fresh, &events).await {
                Ran::Done(reusable) => reusable.then_some(fresh),
                // A fresh connection is never stale; should it be, the exchange is dropped.
                Ran::Stale(..) => None,
            }
        }
    };
    if let Some(conn) = conn {
        // A connection that no longer fits is closed by dropping it.
        drop(connector.lock().checkin(connector.dialer.now(), target, conn));
    }
}

/// How [`run`] ended.
enum Ran {
    /// The exchange ended (reported); true when the connection can be reused.
    Done(bool),
    /// The connection was stale: nothing was reported; send this again elsewhere.
    Stale(StreamId, Box<HttpRequest>),
}

/// Writes the exchange queued on `conn` and forwards its response until it ends.
async fn run<S: HttpSocket>(conn: &mut Conn<S>, events: &ExchangeEvents) -> Ran {
    loop {
        while let Some(t) = conn.http.poll_transmit() {
            let written = match t {
                // A TLS stream may keep the end of a write in its buffer: the flush sends it.
                http1::Transmit::Write(bytes) => write_all(&mut conn.io, &bytes).await,
                http1::Transmit::Close => poll_fn(|cx| conn.io.poll_close(cx)).await,
            };
            if let Err(e) = written {
                conn.http.handle_write_failed(TransportFailure::Reset(e.to_string()));
            }
        }
        if let Some((stream, request)) = conn.http.take_stale() {
            return Ran::Stale(stream, Box::new(request));
        }
        while let Some((s, event)) = conn.http.poll_event() {
            let end = matches!(event, OwnedEvent::End | OwnedEvent::Failed(_));
            if events.send((s, event)).is_err() {
                // The session is over: nobody reads the rest.
                return Ran::Done(false);
            }
            if end {
                return Ran::Done(conn.http.is_reusable());
            }
        }
        let deadline = conn.http.poll_timeout();
        let Conn { io, http, buf } = conn;
        match poll_fn(|cx| io.poll_read_until(cx, buf, deadline)).await {
            // The deadline passed (a socket that says so without one times out too).
            None => match deadline {
                Some(at) => http.handle_timeout(at),
                None => http.handle_failed(TransportFailure::TimedOut),
            },
            Some(Ok(0)) => http.handle_end(),
            Some(Ok(n)) => http.handle_data(&buf[..n]),
            Some(Err(e)) => http.handle_failed(TransportFailure::Reset(e.to_string())),
        }
    }
}

/// Writes all of `bytes`, then flushes.
async fn write_all<S: PollSink>(io: &mut S, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match poll_fn(|cx| io.poll_write(cx, bytes)).await {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    poll_fn(|cx| io.poll_flush(cx)).await
}
