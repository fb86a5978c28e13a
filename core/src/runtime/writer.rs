//! The write half of a session or connection, driven by the session's own loop (no writer
//! task): [`WriteQueue`] says what to write, flush or close next; [`Writer`] performs it on
//! the runtime's async sink, seen through [`PollSink`].
//!
//! The frames of one drain leave in one write as soon as the drain is over
//! ([`Writer::try_progress`], which never waits). What the sink does not take at once (a peer
//! that stops reading fills the pipe) is written later from the loop's race, beside reading
//! ([`Writer::progress`]): writing never stops the loop from reading (the classic pipe
//! deadlock), and a frame costs no channel and no task hop.

use std::future::{poll_fn, Future};
use std::io;
use std::pin::pin;
use std::task::{ready, Context, Poll, Waker};
use std::time::Instant;

use bytes::Bytes;

use super::{Backlog, BacklogWatch, WriteQueue, WriteStep};

/// A runtime's async byte sink (a pipe, a socket, a TLS stream), as poll functions: each
/// runtime implements it for a wrapper of its own `AsyncWrite`.
pub trait PollSink {
    /// Writes some of `buf`; `Ok(0)` means the sink is closed.
    fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>>;
    /// Passes on what the sink buffers.
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    /// Closes (shuts down) the sink: the peer reads the end of the stream.
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
}

/// A runtime's async byte source (a child's stdout, the read half of a stream), as a poll
/// function: each runtime implements it for a wrapper of its own `AsyncRead`.
pub trait PollRead {
    /// Reads some bytes into `buf`; `Ok(0)` is the end of the stream.
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>>;
}

/// The sink and the bytes queued for it.
#[derive(Debug)]
pub struct Writer<S> {
    /// `None` once closed, failed or given up: later frames are dropped.
    sink: Option<S>,
    queue: WriteQueue,
    /// A write failure not yet reported by [`progress`](Self::progress).
    failure: Option<io::Error>,
}

impl<S: PollSink> Writer<S> {
    /// A writer over `sink`.
    pub fn new(sink: S) -> Self {
        Self { sink: Some(sink), queue: WriteQueue::new(), failure: None }
    }

    /// A writer that keeps each large frame's buffer once written, for
    /// [`take_spare`](Self::take_spare) (stdio: the machine encodes the next one into it).
    pub fn recycling(sink: S) -> Self {
        Self { sink: Some(sink), queue: WriteQueue::recycling(), failure: None }
    }

    /// A written frame's buffer to hand back to the machine (`recycle`), if one was kept.
    pub fn take_spare(&mut self) -> Option<Vec<u8>> {
        self.queue.take_spare()
    }

    /// Queues one frame. After [`close`](Self::close) or a write failure it is dropped (the
    /// failure is reported once, by [`progress`](Self::progress)).
    pub fn send(&mut self, frame: Bytes) {
        self.queue.push(frame);
    }

    /// Closes the sink (for a child: its stdin) once what is queued is written.
    pub fn close(&mut self) {
        self.queue.close();
    }

    /// True while [`progress`](Self::progress) has something to do: bytes to write, a flush
    /// or a close pending, or a failure to report. The loop waits on it only then.
    pub fn busy(&self) -> bool {
        self.failure.is_some() || (self.sink.is_some() && self.queue.is_busy())
    }

    /// True when more than `limit` bytes wait unwritten besides the largest frame among
    /// them ([`WriteQueue::is_backlogged`]).
    pub fn is_backlogged(&self, limit: usize) -> bool {
        self.queue.is_backlogged(limit)
    }

    /// Where the peer stands against `watch`'s limit at `now` ([`BacklogWatch::check`]).
    pub fn backlog(&self, watch: &mut BacklogWatch, now: Instant) -> Backlog {
        watch.check(&self.queue, now)
    }

    /// Gives up: what is queued is dropped, and so is the sink (closing it).
    pub fn abandon(&mut self) {
        self.queue.handle_failed();
        self.sink = None;
        self.failure = None;
    }

    /// Writes what the sink takes without waiting; the rest is left to
    /// [`progress`](Self::progress), and so is a failure.
    pub fn try_progress(&mut self) {
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
    pub async fn progress(&mut self) -> io::Result<()> {
        poll_fn(|cx| self.poll_progress(cx)).await
    }

    /// [`progress`](Self::progress) as a poll function, for a loop that polls several
    /// sources at once.
    pub fn poll_progress(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(e) = self.failure.take() {
            return Poll::Ready(Err(e));
        }
        self.poll_work(cx)
    }

    /// Writes what is queued, then closes the sink, giving up at `deadline` (when the future
    /// `sleep_until(deadline)` of the runtime's timer resolves); on a write failure or past
    /// the deadline the sink is dropped (closed) with bytes unwritten.
    pub async fn finish<F: Future<Output = ()>>(
        &mut self,
        deadline: Instant,
        sleep_until: impl FnOnce(Instant) -> F,
    ) {
        self.queue.finish(deadline);
        self.failure = None;
        if let Some(at) = self.queue.poll_timeout() {
            let mut timer = pin!(sleep_until(at));
            let timed_out = poll_fn(|cx| {
                // A failure ends the attempt like success does: the sink is dropped below.
                if self.poll_work(cx).is_ready() {
                    return Poll::Ready(false);
                }
                timer.as_mut().poll(cx).map(|()| true)
            })
            .await;
            if timed_out {
                self.queue.handle_timeout(at);
            }
        }
        self.sink = None;
    }

    /// Performs the queue's steps until it is idle or done, or the sink is not ready.
    fn poll_work(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let Some(sink) = self.sink.as_mut() else { return Poll::Ready(Ok(())) };
            let step = match self.queue.poll_step() {
                WriteStep::Write(bytes) => {
                    let written = ready!(sink.poll_write(cx, &bytes));
                    // The queue can keep a written frame's buffer only if we let go of it.
                    drop(bytes);
                    self.queue.handle_write_result(written)
                }
                WriteStep::Flush => {
                    ready!(sink.poll_flush(cx)).map(|()| self.queue.handle_flushed())
                }
                WriteStep::Close => {
                    ready!(sink.poll_close(cx)).map(|()| self.queue.handle_closed())
                }
                WriteStep::Idle => return Poll::Ready(Ok(())),
                WriteStep::Done => {
                    self.sink = None;
                    return Poll::Ready(Ok(()));
                }
            };
            if let Err(e) = step {
                self.queue.handle_failed();
                self.sink = None;
                return Poll::Ready(Err(e));
            }
        }
    }
}

#[cfg(test)]
mod tests;
