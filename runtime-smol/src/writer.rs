//! The write half of a session, driven by the session's own loop (no writer task).
//!
//! The frames of one drain are queued into one buffer ([`Writer::send`]) and written with one
//! write as soon as the drain is over ([`Writer::try_progress`], which never waits). What the
//! sink does not take at once (a peer that stops reading fills the pipe) is written later
//! from the loop's race, beside reading ([`Writer::progress`]): writing never stops the loop
//! from reading (the classic pipe deadlock), and a frame costs no channel and no task hop.
//! Every batch is flushed once written, so a buffering sink passes each frame on at once.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use smol::io::AsyncWrite;

/// Past this capacity an emptied queue gives its memory back (after a huge frame).
const KEEP_CAPACITY: usize = 64 * 1024;

/// The sink and the bytes queued for it.
pub(crate) struct Writer<W> {
    /// `None` once closed or failed: later frames are dropped.
    sink: Option<W>,
    queue: Vec<u8>,
    /// How much of `queue` the sink has taken.
    written: usize,
    /// Bytes were written since the last flush.
    unflushed: bool,
    /// Close the sink once the queue is written.
    closing: bool,
    /// A write failure not yet reported by [`progress`](Self::progress).
    failure: Option<io::Error>,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    pub(crate) fn new(sink: W) -> Self {
        Self {
            sink: Some(sink),
            queue: Vec::new(),
            written: 0,
            unflushed: false,
            closing: false,
            failure: None,
        }
    }

    /// Queues one frame. After [`close`](Self::close) or a write failure it is dropped (the
    /// failure is reported once, by [`progress`](Self::progress)).
    pub(crate) fn send(&mut self, frame: &Bytes) {
        if self.sink.is_some() && !self.closing {
            self.queue.extend_from_slice(frame);
        }
    }

    /// Closes the sink once what is queued is written.
    pub(crate) fn close(&mut self) {
        self.closing = true;
    }

    /// True while [`progress`](Self::progress) has something to do: bytes to write, a flush
    /// or a close pending, or a failure to report. The loop waits on it only then.
    pub(crate) fn busy(&self) -> bool {
        self.failure.is_some()
            || (self.sink.is_some()
                && (self.written < self.queue.len() || self.unflushed || self.closing))
    }

    /// Writes what the sink takes without waiting; the rest is left to
    /// [`progress`](Self::progress), and so is a failure.
    pub(crate) fn try_progress(&mut self) {
        if self.busy() && self.failure.is_none() {
            let mut cx = Context::from_waker(Waker::noop());
            if let Poll::Ready(Err(e)) = self.poll_work(&mut cx) {
                self.failure = Some(e);
            }
        }
    }

    /// Writes, flushes and closes as far as the sink allows. Resolves with `Err` once when
    /// writing failed (the sink is dropped then), with `Ok` when there is nothing left to do;
    /// pends while the sink is not ready. Cancel-safe.
    pub(crate) async fn progress(&mut self) -> io::Result<()> {
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        poll_fn(|cx| self.poll_work(cx)).await
    }

    /// Writes what is queued, then closes the sink; on a write failure the sink is dropped
    /// (closed) with bytes unwritten. Not bounded in time: the caller bounds it if it must.
    pub(crate) async fn finish(&mut self) {
        self.closing = true;
        self.failure = None;
        // A failure ends the attempt like success does: the sink is dropped below either way.
        let _ = poll_fn(|cx| self.poll_work(cx)).await;
        self.sink = None;
    }

    fn poll_work(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(sink) = self.sink.as_mut() else { return Poll::Ready(Ok(())) };
        let outcome = poll_sink(
            Pin::new(sink),
            cx,
            &self.queue,
            &mut self.written,
            &mut self.unflushed,
            self.closing,
        );
        if self.written == self.queue.len() {
            self.queue.clear();
            self.written = 0;
            if self.queue.capacity() > KEEP_CAPACITY {
                self.queue = Vec::new();
            }
        }
        match outcome {
            Poll::Ready(Ok(())) if self.closing => {
                self.sink = None;
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => {
                self.sink = None;
                Poll::Ready(Err(e))
            }
            other => other,
        }
    }
}

/// Writes `queue[written..]`, then flushes, then (when `closing`) closes the sink.
fn poll_sink<W: AsyncWrite>(
    mut sink: Pin<&mut W>,
    cx: &mut Context<'_>,
    queue: &[u8],
    written: &mut usize,
    unflushed: &mut bool,
    closing: bool,
) -> Poll<io::Result<()>> {
    while *written < queue.len() {
        match sink.as_mut().poll_write(cx, &queue[*written..]) {
            Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
            Poll::Ready(Ok(n)) => {
                *written += n;
                *unflushed = true;
            }
            Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        }
    }
    if *unflushed {
        std::task::ready!(sink.as_mut().poll_flush(cx))?;
        *unflushed = false;
    }
    if closing {
        std::task::ready!(sink.as_mut().poll_close(cx))?;
    }
    Poll::Ready(Ok(()))
}
