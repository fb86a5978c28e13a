//! One accepted connection's task: zest-core's
//! [`serve_accepted`](zest_core::runtime::http_server::serve_accepted) over a smol socket;
//! this supplies the read half, the timer and the shutdown signal.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use smol::channel::Receiver;
use smol::io::AsyncRead;
use smol::net::TcpStream;
use zest_core::http1::Config;
use zest_core::runtime::http_server::{serve_accepted, AcceptedIo, StreamIds};

use super::hub::Hub;
use super::stopping;
use crate::timer::Alarm;
use crate::writer;

/// The read half of an accepted socket, its timer and the server's shutdown signal.
struct Accepted {
    reader: TcpStream,
    alarm: Alarm,
    /// Resolves once shutdown has begun; `None` after that.
    stop: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl AcceptedIo for Accepted {
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.reader).poll_read(cx, buf)
    }

    fn poll_timer(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        // It may go off early (re-armed only for an earlier deadline): that is allowed here.
        self.alarm.arm(Some(at));
        self.alarm.poll_fired(cx)
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
    stop: Receiver<()>,
) {
    // Nagle would hold small SSE events and JSON answers back
    // (docs/design-notes.md#latency-tcp_nodelay).
    let _ = socket.set_nodelay(true);
    let stop = Box::pin(async move { stopping(&stop).await });
    let io = Accepted { reader: socket.clone(), alarm: Alarm::default(), stop: Some(stop) };
    serve_accepted(hub, io, writer::over(socket), config, ids).await;
}
