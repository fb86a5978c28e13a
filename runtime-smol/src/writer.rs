//! zest-core's [`Writer`](zest_core::runtime::Writer) over a smol (futures-io) sink: the
//! session's loop writes through it (see zest-core for the contract); this crate supplies
//! only the sink and the timer that bounds [`finish`].

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use smol::io::AsyncWrite;
use smol::Timer;
use zest_core::runtime::PollSink;

/// A futures-io `AsyncWrite` as zest-core's [`PollSink`].
pub(crate) struct Sink<W>(W);

impl<W: AsyncWrite + Unpin> PollSink for Sink<W> {
    fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_close(cx)
    }
}

/// The writer of a session or connection over the sink `W`.
pub(crate) type Writer<W> = zest_core::runtime::Writer<Sink<W>>;

/// A writer over `sink`; [`recycling`] for stdio (it keeps large frames' buffers).
pub(crate) fn over<W: AsyncWrite + Unpin>(sink: W) -> Writer<W> {
    Writer::new(Sink(sink))
}

/// A writer over `sink` that keeps each large frame's buffer for the machine to reuse.
pub(crate) fn recycling<W: AsyncWrite + Unpin>(sink: W) -> Writer<W> {
    Writer::recycling(Sink(sink))
}

/// Writes what is queued and closes the sink, giving up at `deadline`.
pub(crate) async fn finish<W: AsyncWrite + Unpin>(writer: &mut Writer<W>, deadline: Instant) {
    writer
        .finish(deadline, |at| async move {
            Timer::at(at).await;
        })
        .await;
}

/// A futures-io `AsyncRead` as zest-core's [`PollRead`](zest_core::runtime::PollRead).
pub(crate) struct Source<R>(pub(crate) R);

impl<R: smol::io::AsyncRead + Unpin> zest_core::runtime::PollRead for Source<R> {
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}
