//! How the HTTP client opens its connections on tokio: TCP with `TCP_NODELAY`, then TLS by
//! rustls for `https`. The exchanges themselves are zest-core's
//! [`exchange`](zest_core::runtime::http_client::exchange), polled inside the session's task.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;
use tokio_rustls::TlsConnector;
use zest_core::io::TransportFailure;
use zest_core::runtime::http_client::{self, Dialer, HttpEndpoint, HttpSocket, Target};
use zest_core::runtime::{ConnectError, PollSink};

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

impl Io for tokio_rustls::client::TlsStream<TcpStream> {
    fn tcp(&self) -> &TcpStream {
        self.get_ref().0
    }
}

/// One connection's socket and its read timer (kept across reads, reset only when the
/// deadline moves).
pub(super) struct Socket {
    io: Box<dyn Io>,
    timer: Option<Pin<Box<Sleep>>>,
}

impl PollSink for Socket {
    fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

impl HttpSocket for Socket {
    fn poll_read_until(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
        deadline: Option<Instant>,
    ) -> Poll<Option<io::Result<usize>>> {
        let mut read = ReadBuf::new(buf);
        if let Poll::Ready(done) = Pin::new(&mut self.io).poll_read(cx, &mut read) {
            return Poll::Ready(Some(done.map(|()| read.filled().len())));
        }
        let Some(at) = deadline.map(tokio::time::Instant::from_std) else { return Poll::Pending };
        let timer = self.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
        if timer.deadline() != at {
            timer.as_mut().reset(at);
        }
        timer.as_mut().poll(cx).map(|()| None)
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
pub(super) fn connector(
    endpoint: &HttpEndpoint,
) -> Result<std::sync::Arc<Connector>, ConnectError> {
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
        let io = tokio::time::timeout(self.connect_timeout, open)
            .await
            .map_err(|_| TransportFailure::TimedOut)??;
        Ok(Socket { io, timer: None })
    }

    fn now(&self) -> Instant {
        Instant::now()
    }
}
