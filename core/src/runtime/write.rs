//! The bookkeeping of one outgoing byte stream, apart from the stream itself.
//!
//! ```text
//!            push(frame)                     close() / finish(deadline)
//!   Open ───────────────▶ Open ─────────────────────────────▶ Closing
//!    │  poll_step: Write(bytes) → handle_written(n)             │ poll_step: Write…, Flush,
//!    │             Flush        → handle_flushed()              │   then Close → handle_closed()
//!    │             Idle (nothing queued)                        ▼
//!    └─ handle_failed() ──────────────────────────────────▶ Done(Failed | Closed | TimedOut)
//!                           handle_timeout(now ≥ deadline) ──▶  (poll_step: Done; drop the sink)
//! ```
//!
//! A runtime's writer is then a small loop: ask [`WriteQueue::poll_step`], perform the step
//! on its sink, report the result with the matching `handle_*`, until the step is
//! [`WriteStep::Idle`] or the sink is not ready. Frames queued in one drain of a machine leave
//! in one write (up to [`WriteQueue::COALESCE_LIMIT`] bytes), and every batch is flushed once
//! written, so a buffering sink passes each frame on at once.

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};

use crate::framing::KEPT_BUFFER_MAX;
use crate::io::TransportFailure;

/// Frames queued for one byte stream, and whether and until when to close it.
///
/// Frames are never split or reordered; a partial write resumes where it stopped. After
/// [`close`](Self::close) or [`finish`](Self::finish), and once the queue is done, frames
/// pushed are dropped (the session is ending; nobody would read them).
#[derive(Debug, Default)]
pub struct WriteQueue {
    /// Unwritten frames, oldest first; the front one may be partly written already. None is
    /// empty.
    frames: VecDeque<Bytes>,
    /// Unwritten bytes across `frames`.
    len: usize,
    /// The largest frame queued since the queue was last empty.
    largest: usize,
    /// Where small frames are joined into one write (its memory is reused once written).
    scratch: BytesMut,
    /// Bytes were written since the sink was last flushed.
    unflushed: bool,
    phase: Phase,
    /// Past this, [`handle_timeout`](Self::handle_timeout) gives up on the rest.
    deadline: Option<Instant>,
    /// Whether written frames' buffers are kept for [`take_spare`](Self::take_spare).
    recycling: bool,
    /// The largest written frame's buffer not yet taken.
    spare: Option<Vec<u8>>,
    /// Bytes the sink has taken since the queue was made.
    taken: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Open,
    /// Close the sink once everything queued is written and flushed.
    Closing,
    Done(WriteEnd),
}

/// What the runtime does next with its sink, from [`WriteQueue::poll_step`].
#[must_use]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteStep {
    /// Close the sink (shut down its write side; for a pipe, dropping it is enough), then call
    /// [`WriteQueue::handle_closed`].
    Close,
    /// The stream is over (closed, failed or given up at the deadline): drop the sink. Every
    /// later step is `Done` too.
    Done,
    /// Flush the sink, then call [`WriteQueue::handle_flushed`].
    Flush,
    /// Nothing to do until a frame is pushed or the queue is closed.
    Idle,
    /// Write these bytes (one frame, or several joined), then report how many the sink took
    /// with [`WriteQueue::handle_written`]. A vectored writer may use
    /// [`WriteQueue::slices`] instead.
    Write(Bytes),
}

/// Whether `bytes` waiting for a peer, the largest message among them `largest` bytes, are
/// more than a connection should hold for it
/// ([`http1::Config::max_backlog_bytes`](crate::http1::Config::max_backlog_bytes)): more than
/// `limit` bytes besides that largest message. One message is never too much, however large
/// (it was produced whole anyway, and a peer that reads gets it), nor is a burst of small
/// ones beside it; what piles up while the peer does not read is.
pub fn backlog_exceeds(bytes: usize, largest: usize, limit: usize) -> bool {
    bytes.saturating_sub(largest) > limit
}

/// How a stream's reader keeps up with what is queued for it, checked after each turn of its
/// loop ([`BacklogWatch::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backlog {
    /// Within the limit: read and serve as usual.
    Clear,
    /// Past the limit ([`backlog_exceeds`]) but the peer took bytes within the last
    /// [`BACKLOG_STALL`](super::BACKLOG_STALL): read nothing more from it (no new work for a
    /// peer that cannot take the answers of the old), and check again by this instant.
    Holding(Instant),
    /// Past the limit, and the peer took nothing for [`BACKLOG_STALL`](super::BACKLOG_STALL):
    /// it is not reading; cut it off ([`not_reading`]).
    Stalled,
}

/// The rule for a peer that does not take what is sent to it: past the limit, a peer that
/// still reads, however slowly, is held (nothing more is read from it until it catches up);
/// one that takes nothing for [`BACKLOG_STALL`](super::BACKLOG_STALL) is cut off. A slow
/// reader of many large answers it asked for at once is thus served, and one that never reads
/// costs at most the limit, the largest message and what its calls under way still answer.
#[derive(Clone, Debug)]
pub struct BacklogWatch {
    limit: usize,
    /// Since when the backlog is past the limit with no byte taken, and the count taken then.
    over: Option<(Instant, u64)>,
}

impl BacklogWatch {
    /// A watch for `limit` bytes (`max_backlog_bytes`).
    pub fn new(limit: usize) -> Self {
        Self { limit, over: None }
    }

    /// The limit watched.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Where `queue`'s peer stands at `now`.
    pub fn check(&mut self, queue: &WriteQueue, now: Instant) -> Backlog {
        if !queue.is_backlogged(self.limit) {
            self.over = None;
            return Backlog::Clear;
        }
        match self.over {
            Some((since, taken)) if taken == queue.taken() => {
                let until = since + super::BACKLOG_STALL;
                if now >= until {
                    Backlog::Stalled
                } else {
                    Backlog::Holding(until)
                }
            }
            _ => {
                self.over = Some((now, queue.taken()));
                Backlog::Holding(now + super::BACKLOG_STALL)
            }
        }
    }
}

/// Why a peer whose backlog passed `limit` ([`backlog_exceeds`]) was cut off: the failure
/// a runtime feeds the machine (or the connection) for it, in the same words everywhere.
pub fn not_reading(limit: usize) -> TransportFailure {
    TransportFailure::Reset(format!("the peer is not reading: more than {limit} bytes wait for it"))
}

/// How a [`WriteQueue`]'s stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteEnd {
    /// Everything queued was written and the sink closed.
    Closed,
    /// A write, flush or close failed; what was queued is lost.
    Failed,
    /// The drain deadline passed first; what was queued is lost.
    TimedOut,
}

impl WriteQueue {
    /// Consecutive frames are joined into one write up to this many bytes; a frame at least
    /// this large is written on its own, without a copy.
    pub const COALESCE_LIMIT: usize = 64 * 1024;

    /// An empty, open queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty, open queue that keeps the buffer of each large frame once it is written
    /// (at least [`COALESCE_LIMIT`](Self::COALESCE_LIMIT) and at most
    /// [`KEPT_BUFFER_MAX`], the largest one only), for
    /// [`take_spare`](Self::take_spare): a stdio runtime hands it back to its machine
    /// (`recycle`) to encode the next large message into, instead of freeing a MiB-sized
    /// buffer after each and faulting one in again for the next.
    pub fn recycling() -> Self {
        Self { recycling: true, ..Self::default() }
    }

    /// The buffer of a written frame, emptied, if one was kept (see
    /// [`recycling`](Self::recycling)). A frame's buffer is kept only when nothing else
    /// holds its bytes: drop the `Bytes` of a [`WriteStep::Write`] before reporting it.
    pub fn take_spare(&mut self) -> Option<Vec<u8>> {
        self.spare.take()
    }

    /// Queues one frame, unless the queue is closing or done (then the frame is dropped).
    /// Poll [`poll_step`](Self::poll_step) afterwards.
    pub fn push(&mut self, frame: Bytes) {
        if self.phase == Phase::Open && !frame.is_empty() {
            self.len += frame.len();
            self.largest = self.largest.max(frame.len());
            self.frames.push_back(frame);
        }
    }

    /// Closes the sink once everything queued is written and flushed, however long that
    /// takes. Later frames are dropped. Poll [`poll_step`](Self::poll_step) afterwards.
    pub fn close(&mut self) {
        if self.phase == Phase::Open {
            self.phase = Phase::Closing;
        }
    }

    /// Like [`close`](Self::close), but gives up at `deadline`: from then on
    /// [`handle_timeout`](Self::handle_timeout) ends the stream with what is left unwritten.
    /// An earlier deadline set before is kept. The runtime sleeps until
    /// [`poll_timeout`](Self::poll_timeout) while it drains.
    pub fn finish(&mut self, deadline: Instant) {
        self.close();
        if !self.is_done() {
            self.deadline = Some(self.deadline.map_or(deadline, |d| d.min(deadline)));
        }
    }

    /// What to do next. A `Write` hands out the oldest unwritten bytes: the front frame, or
    /// the front frames joined when they are small (see
    /// [`COALESCE_LIMIT`](Self::COALESCE_LIMIT)). Asking again without reporting returns
    /// the same bytes first (possibly with more joined after them).
    pub fn poll_step(&mut self) -> WriteStep {
        match self.phase {
            Phase::Done(_) => WriteStep::Done,
            _ if self.len > 0 => WriteStep::Write(self.coalesce()),
            _ if self.unflushed => WriteStep::Flush,
            Phase::Closing => WriteStep::Close,
            Phase::Open => WriteStep::Idle,
        }
    }

    /// The sink took `n` bytes of what [`poll_step`](Self::poll_step) or
    /// [`slices`](Self::slices) handed out (a count beyond what is queued is taken as all of
    /// it). Poll again afterwards: a flush is due once the queue is empty.
    pub fn handle_written(&mut self, n: usize) {
        let mut n = n.min(self.len);
        self.len -= n;
        self.taken += n as u64;
        if self.len == 0 {
            self.largest = 0;
        }
        self.unflushed |= n > 0;
        while n > 0 {
            let Some(front) = self.frames.front_mut() else { break };
            if front.len() <= n {
                n -= front.len();
                if let Some(written) = self.frames.pop_front() {
                    self.keep(written);
                }
            } else {
                front.advance(n);
                n = 0;
            }
        }
    }

    /// Reports what a non-blocking write of a [`WriteStep::Write`]'s bytes returned: `Ok(n)`
    /// is [`handle_written`](Self::handle_written); `Interrupted` wrote nothing (poll again);
    /// `Ok(0)` (a sink that takes nothing) and any other error are returned as the failure
    /// that ends the stream, for the runtime to report and then call
    /// [`handle_failed`](Self::handle_failed).
    pub fn handle_write_result(&mut self, result: io::Result<usize>) -> io::Result<()> {
        match result {
            Ok(0) => Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                self.handle_written(n);
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The sink was flushed.
    pub fn handle_flushed(&mut self) {
        self.unflushed = false;
    }

    /// The sink was closed: the stream is over ([`WriteEnd::Closed`]).
    pub fn handle_closed(&mut self) {
        self.end(WriteEnd::Closed);
    }

    /// Writing, flushing or closing failed: the stream is over and what is queued is dropped
    /// ([`WriteEnd::Failed`]). Reporting the failure to the machine is the runtime's.
    pub fn handle_failed(&mut self) {
        self.end(WriteEnd::Failed);
    }

    /// Time passed. Once the deadline set by [`finish`](Self::finish) is reached, the stream
    /// is over with what is left unwritten ([`WriteEnd::TimedOut`]); earlier, nothing
    /// happens.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.deadline.is_some_and(|d| now >= d) && !self.is_done() {
            self.end(WriteEnd::TimedOut);
        }
    }

    /// The drain deadline, while the queue is not done. Set by [`finish`](Self::finish) and
    /// cleared when the stream ends.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadline
    }

    /// Fills `dst` with the unwritten frames, oldest first, for a vectored write; returns how
    /// many slices it filled. Report the write with [`handle_written`](Self::handle_written).
    pub fn slices<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        if self.is_done() {
            return 0;
        }
        let mut filled = 0;
        for (slot, frame) in dst.iter_mut().zip(&self.frames) {
            *slot = IoSlice::new(frame);
            filled += 1;
        }
        filled
    }

    /// True when what waits unwritten is too much for a peer that is not reading it
    /// ([`backlog_exceeds`] with `limit`; the largest frame is the largest queued since the
    /// queue was last empty).
    pub fn is_backlogged(&self, limit: usize) -> bool {
        backlog_exceeds(self.len, self.largest, limit)
    }

    /// Bytes the sink has taken since the queue was made (see [`BacklogWatch`]).
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Unwritten bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no byte waits to be written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True while [`poll_step`](Self::poll_step) has work: bytes to write, a flush or a close
    /// due. A runtime waits on its sink only then.
    pub fn is_busy(&self) -> bool {
        match self.phase {
            Phase::Done(_) => false,
            Phase::Closing => true,
            Phase::Open => self.len > 0 || self.unflushed,
        }
    }

    /// True when the queue was asked to close (or is done).
    pub fn is_closing(&self) -> bool {
        self.phase != Phase::Open
    }

    /// True once the stream is over; see [`ended`](Self::ended).
    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done(_))
    }

    /// How the stream ended, once it has.
    pub fn ended(&self) -> Option<WriteEnd> {
        match self.phase {
            Phase::Done(end) => Some(end),
            _ => None,
        }
    }

    fn end(&mut self, end: WriteEnd) {
        if !self.is_done() {
            self.phase = Phase::Done(end);
        }
        self.frames.clear();
        self.len = 0;
        self.largest = 0;
        self.unflushed = false;
        self.deadline = None;
    }

    /// Keeps a written frame's buffer when recycling, it is large and nothing else holds it.
    fn keep(&mut self, written: Bytes) {
        if !self.recycling {
            return;
        }
        let largest = self.spare.as_ref().map_or(Self::COALESCE_LIMIT - 1, Vec::capacity);
        if let Ok(buf) = written.try_into_mut() {
            let mut buf = Vec::from(buf);
            if buf.capacity() > largest && buf.capacity() <= KEPT_BUFFER_MAX {
                buf.clear();
                self.spare = Some(buf);
            }
        }
    }

    /// The front frame, with the small frames after it joined on when it is small too.
    fn coalesce(&mut self) -> Bytes {
        let mut count = 0;
        let mut total = 0;
        for frame in &self.frames {
            if count > 0 && total + frame.len() > Self::COALESCE_LIMIT {
                break;
            }
            total += frame.len();
            count += 1;
        }
        if count > 1 {
            self.scratch.reserve(total);
            for frame in self.frames.drain(..count) {
                self.scratch.extend_from_slice(&frame);
            }
            self.frames.push_front(self.scratch.split().freeze());
        }
        // Invariant: `coalesce` is called only when `len > 0`, so a frame is queued.
        self.frames.front().cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
