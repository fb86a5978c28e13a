//! How the HTTP client opens its connections on smol: TCP with `TCP_NODELAY`, then TLS by
//! rustls for `https`. The exchanges themselves are zest-core's
//! [`exchange`](zest_core::runtime::http_client::exchange), polled inside the session's task.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_rustls::TlsConnector;
use smol::future::FutureExt as _;
use smol::io::{AsyncRead, AsyncWrite};
use smol::net::TcpStream;
use smol::Timer;
use zest_core::io::TransportFailure;
use zest_core::runtime::http_client::{self, Dialer, HttpEndpoint, HttpSocket, Target};
use zest_core::runtime::{ConnectError, PollSink};

use crate::timer::Alarm;

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

/// One connection's socket and its read timeout, kept across reads and exchanges: a new
/// timer per read would wake the reactor thread once per exchange (async-io notifies it of
/// every timer inserted).
pub(super) struct Socket {
    io: Box<dyn Io>,
    alarm: Alarm,
}

impl PollSink for Socket {
    fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_close(cx)
    }
}

impl HttpSocket for Socket {
    fn poll_read_until(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
        deadline: Option<Instant>,
    ) -> Poll<Option<io::Result<usize>>> {
        if let Poll::Ready(read) = Pin::new(&mut self.io).poll_read(cx, buf) {
            return Poll::Ready(Some(read));
        }
        let Some(at) = deadline else { return Poll::Pending };
        loop {
            // The alarm may go off early (it is re-armed only for an earlier deadline).
            self.alarm.arm(Some(at));
            std::task::ready!(self.alarm.poll_fired(cx));
            if Instant::now() >= at {
                return Poll::Ready(None);
            }
        }
    }

    fn is_open(&self) -> bool {
        zest_net::is_open(self.io.tcp())
    }
}

/// Opens connections for one session.
pub(super) struct Tcp {
    tls: TlsConnector,
    connect_timeout: Duration,
}

/// The connector of one HTTP client session.
pub(super) type Connector = http_client::Connector<Tcp>;

/// Checks the endpoint's trust roots and builds the TLS settings.
pub(super) fn connector(endpoint: &HttpEndpoint) -> Result<Arc<Connector>, ConnectError> {
    let tls = TlsConnector::from(zest_net::tls_client_config(endpoint)?);
    Ok(Connector::new(Tcp { tls, connect_timeout: endpoint.connect_timeout }, endpoint))
}

impl Dialer for Tcp {
    type Socket = Socket;

    async fn dial(&self, target: &Target) -> Result<Socket, TransportFailure> {
        let open = async {
            let tcp = TcpStream::connect((target.host.as_str(), target.port))
                .await
                .map_err(|e| zest_net::refused(target, &e))?;
            // Nagle would hold each small request back (docs/design-notes.md#latency-tcp_nodelay).
            let _ = tcp.set_nodelay(true);
            if !target.tls {
                return Ok(Box::new(tcp) as Box<dyn Io>);
            }
            let name = zest_net::tls_server_name(target)?;
            let stream = self.tls.connect(name, tcp).await;
            Ok(Box::new(stream.map_err(|e| zest_net::tls_failed(target, &e))?) as Box<dyn Io>)
        };
        let timeout = async {
            Timer::after(self.connect_timeout).await;
            Err(TransportFailure::TimedOut)
        };
        Ok(Socket { io: open.or(timeout).await?, alarm: Alarm::default() })
    }

    fn now(&self) -> Instant {
        Instant::now()
    }
}
