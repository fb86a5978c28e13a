//! Performing the client machine's HTTP exchanges: TCP (and TLS for `https`) connections
//! through zest-core's [`ClientConn`], reused from a keep-alive [`Pool`]. Each exchange
//! is a future the session's task polls; its response goes back as owned stream events.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_rustls::TlsConnector;
use rustls::pki_types::ServerName;
use smol::future::FutureExt as _;
use smol::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use smol::net::TcpStream;
use smol::Timer;
use zest_core::http1::{self, Config};
use zest_core::io::{HttpRequest, StreamId, TransportFailure};
use zest_core::runtime::http_client::{ClientConn, HttpEndpoint, Pool, Target};
use zest_core::runtime::{ConnectError, ExchangeEvents, OwnedEvent};

use crate::wire::Alarm;

/// A socket, plain or TLS.
trait Io: AsyncRead + AsyncWrite + Send + Unpin {
    /// The TCP socket under it.
    fn tcp(&self) -> &TcpStream;
}

impl Io for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

impl Io for futures_rustls::client::TlsStream<TcpStream> {
    fn tcp(&self) -> &TcpStream {
        self.get_ref().0
    }
}

/// One open connection.
pub(super) struct Conn {
    io: Box<dyn Io>,
    http: ClientConn,
    /// Where responses are read into; pooled with the connection, so an exchange on a
    /// reused connection allocates and zeroes no buffer.
    buf: Box<[u8]>,
    /// The read timeout, kept across reads and exchanges: a new timer per read would wake
    /// the reactor thread once per exchange (async-io notifies it of every timer inserted).
    alarm: Alarm,
}

/// Bytes read from a connection at once.
const READ_BUF: usize = 32 * 1024;

/// Opens and reuses connections for one session.
pub(super) struct Connector {
    tls: TlsConnector,
    config: Config,
    connect_timeout: Duration,
    pool: Mutex<Pool<Conn>>,
}

impl Connector {
    /// Checks the endpoint's trust roots and builds the TLS settings.
    pub(super) fn new(endpoint: &HttpEndpoint) -> Result<Arc<Self>, ConnectError> {
        let tls = zest_net::tls_client_config(endpoint)?;
        Ok(Arc::new(Self {
            tls: TlsConnector::from(tls),
            config: endpoint.connection_config(),
            connect_timeout: endpoint.connect_timeout,
            pool: Mutex::new(endpoint.pool()),
        }))
    }

    /// Drops every idle connection.
    pub(super) fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pool<Conn>> {
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new connection to `target`: TCP with `TCP_NODELAY`, then TLS for `https`, all within
    /// the connect timeout.
    async fn connect(&self, target: &Target) -> Result<Conn, TransportFailure> {
        let open = async {
            let tcp = TcpStream::connect((target.host.as_str(), target.port))
                .await
                .map_err(|e| TransportFailure::Refused(format!("{target}: {e}")))?;
            // Nagle would hold each small request back (docs/design-notes.md#latency-tcp_nodelay).
            let _ = tcp.set_nodelay(true);
            if !target.tls {
                return Ok(Box::new(tcp) as Box<dyn Io>);
            }
            let name = ServerName::try_from(target.host.clone())
                .map_err(|e| TransportFailure::Tls(format!("{}: {e}", target.host)))?;
            let stream = self
                .tls
                .connect(name, tcp)
                .await
                .map_err(|e| TransportFailure::Tls(format!("{target}: {}", tls_reason(&e))))?;
            Ok(Box::new(stream) as Box<dyn Io>)
        };
        let timeout = async {
            Timer::after(self.connect_timeout).await;
            Err(TransportFailure::TimedOut)
        };
        let io = open.or(timeout).await?;
        let http = ClientConn::new(self.config.clone());
        Ok(Conn { io, http, buf: vec![0; READ_BUF].into(), alarm: Alarm::default() })
    }
}

/// What a rustls failure says, without the io wrapping.
fn tls_reason(e: &io::Error) -> String {
    match e.get_ref() {
        Some(inner) => inner.to_string(),
        None => e.to_string(),
    }
}

/// Performs one exchange and reports its response on `stream`. A reused connection whose
/// write fails (the server dropped it while idle; zest-core's [`ClientConn::take_stale`]
/// says so) is replaced by a new one, once.
pub(super) async fn exchange(
    connector: Arc<Connector>,
    stream: StreamId,
    request: HttpRequest,
    events: ExchangeEvents,
) {
    let fail = |failure| {
        // The driver may be gone; then nobody waits for this exchange.
        let _ = events.send((stream, OwnedEvent::Failed(failure)));
    };
    let target = match Target::from_uri(&request.uri) {
        Ok(target) => target,
        Err(why) => return fail(TransportFailure::Other(why)),
    };
    let pooled =
        connector.lock().checkout(Instant::now(), &target, |c| zest_net::is_open(c.io.tcp()));
    let (mut conn, sent) = match pooled {
        Some(mut conn) => {
            let sent = conn.http.send_reused(Instant::now(), stream, request);
            (conn, sent)
        }
        None => match connector.connect(&target).await {
            Ok(mut conn) => {
                let sent = conn.http.send(Instant::now(), stream, request);
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
            if let Err(failure) = fresh.http.send(Instant::now(), stream, *request) {
                return fail(failure);
            }
            match run(&mut fresh, &events).await {
                Ran::Done(reusable) => reusable.then_some(fresh),
                // Unreachable: a fresh connection is never stale.
                Ran::Stale(..) => None,
            }
        }
    };
    if let Some(conn) = conn {
        // A connection that no longer fits is closed by dropping it.
        drop(connector.lock().checkin(Instant::now(), target, conn));
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
async fn run(conn: &mut Conn, events: &ExchangeEvents) -> Ran {
    loop {
        while let Some(t) = conn.http.poll_transmit() {
            let written = match t {
                http1::Transmit::Write(bytes) => match conn.io.write_all(&bytes).await {
                    // TLS keeps what the socket did not take yet: push it out.
                    Ok(()) => conn.io.flush().await,
                    Err(e) => Err(e),
                },
                http1::Transmit::Close => conn.io.close().await,
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
        // An early alarm is harmless: the connection ignores a timeout before its deadline.
        conn.alarm.arm(conn.http.poll_timeout());
        let Conn { io, buf, alarm, .. } = conn;
        let read = async { Some(io.read(buf).await) };
        let late = async {
            alarm.fired().await;
            None
        };
        match read.or(late).await {
            None => conn.http.handle_timeout(Instant::now()),
            Some(Ok(0)) => conn.http.handle_end(),
            Some(Ok(n)) => conn.http.handle_data(&conn.buf[..n]),
            Some(Err(e)) => conn.http.handle_failed(TransportFailure::Reset(e.to_string())),
        }
    }
}
