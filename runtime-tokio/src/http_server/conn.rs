//! One accepted connection's task: zest-core's
//! [`serve_accepted`](zest_core::runtime::http_server::serve_accepted) over a tokio socket;
//! this supplies the read half, the timer and the shutdown signal.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Sleep;
use zest_core::http1::Config;
use zest_core::runtime::http_server::{serve_accepted, AcceptedIo, StreamIds};

use super::hub::Hub;
use crate::writer;

/// The read half of an accepted socket, its timer and the server's shutdown signal.
struct Accepted {
    reader: OwnedReadHalf,
    timer: Pin<Box<Sleep>>,
    /// Resolves once shutdown has begun; `None` after that.
    stop: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl AcceptedIo for Accepted {
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let mut read = ReadBuf::new(buf);
        Pin::new(&mut self.reader).poll_read(cx, &mut read).map_ok(|()| read.filled().len())
    }

    fn poll_timer(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        let at = tokio::time::Instant::from_std(at);
        if self.timer.deadline() != at {
            self.timer.as_mut().reset(at);
        }
        self.timer.as_mut().poll(cx)
    }

    fn poll_stopping(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(stop) = self.stop.as_mut() else { return Poll::Ready(()) };
        std::task::ready!(stop.as_mut().poll(cx));
        self.stop = None;
        Poll::Ready(())
    }

    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// Serves one connection until it closes, or until shutdown finds it between requests.
pub(super) async fn serve(
    hub: Arc<Hub>,
    socket: TcpStream,
    config: Config,
    ids: Arc<StreamIds>,
    mut stop: watch::Receiver<bool>,
) {
    // Nagle would hold small SSE events and JSON answers back
    // (docs/design-notes.md#latency-tcp_nodelay).
    let _ = socket.set_nodelay(true);
    let (reader, writer) = socket.into_split();
    let stop = Box::pin(async move {
        // Err: the server is gone, which also means it stops.
        let _ = stop.wait_for(|stopping| *stopping).await;
    });
    let timer = Box::pin(tokio::time::sleep_until(tokio::time::Instant::now()));
    let io = Accepted { reader, timer, stop: Some(stop) };
    serve_accepted(hub, io, writer::over(writer), config, ids).await;
}
