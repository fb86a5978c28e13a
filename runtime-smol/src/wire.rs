//! What the client and server drivers share besides the [`Writer`](crate::writer::Writer):
//! one read, the one timer, the end of the command queue, and panic-safe handler answers.

use std::io;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use smol::channel::Receiver;
use smol::future::{CatchUnwind, FutureExt as _};
use smol::io::{AsyncRead, AsyncReadExt as _};
use smol::Timer;
use zest_core::error::Rejection;
use zest_core::handler::BoxFuture;
use zest_core::io::{Input, Receive, StreamEvent, StreamId, TransportFailure};
use zest_core::jsonrpc::{ErrorObject, RawJson};

/// Closes a driver's command queue and drops what is still in it: every sender then fails
/// at once, and every caller waiting on a queued command sees its reply channel close.
/// (Dropping the receiver alone would leave queued commands in the channel while senders
/// live, and their callers waiting forever.)
pub(crate) fn close_queue<T>(queue: &Receiver<T>) {
    queue.close();
    while queue.try_recv().is_ok() {}
}

/// A handler's future with its panics caught; [`answer_of`] makes its outcome an answer.
pub(crate) type Answering = CatchUnwind<AssertUnwindSafe<HandlerFuture>>;

type HandlerFuture = BoxFuture<'static, Result<RawJson, ErrorObject>>;

/// Wraps a handler's future so that a panic can be answered (see [`answer_of`]).
pub(crate) fn answering(handler: HandlerFuture) -> Answering {
    AssertUnwindSafe(handler).catch_unwind()
}

/// Turns a panic into an internal-error answer: a panicking handler must neither leave its
/// request unanswered nor take the session down.
pub(crate) fn answer_of(
    outcome: std::thread::Result<Result<RawJson, ErrorObject>>,
) -> Result<RawJson, ErrorObject> {
    match outcome {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-string payload".to_owned());
            Err(Rejection::Internal(format!("the handler panicked: {what}")).to_jsonrpc())
        }
    }
}

/// Runs a handler's future to its answer, a panic included (see [`answer_of`]).
pub(crate) async fn answer(handler: HandlerFuture) -> Result<RawJson, ErrorObject> {
    answer_of(answering(handler).await)
}

/// The driver's one timer, for the machine's `poll_timeout`.
///
/// It is re-armed only when the machine wants to wake earlier than it would, or after it
/// fired: firing early is harmless (the machine ignores early timeouts), and this spares a
/// reactor registration per request, whose deadline moves with every call.
pub(crate) struct Alarm {
    timer: Timer,
    armed: Option<Instant>,
}

impl Default for Alarm {
    fn default() -> Self {
        Self { timer: Timer::never(), armed: None }
    }
}

impl Alarm {
    /// Makes sure the alarm goes off no later than `deadline`.
    pub(crate) fn arm(&mut self, deadline: Option<Instant>) {
        if let Some(t) = deadline {
            if self.armed.is_none_or(|armed| t < armed) {
                self.timer.set_at(t);
                self.armed = Some(t);
            }
        }
    }

    /// Resolves when the alarm goes off; it is then disarmed until the next [`arm`](Self::arm).
    pub(crate) async fn fired(&mut self) {
        std::future::poll_fn(|cx| self.poll_fired(cx)).await;
    }

    /// [`fired`](Self::fired) as a poll function.
    pub(crate) fn poll_fired(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        std::task::ready!(std::pin::Pin::new(&mut self.timer).poll(cx));
        self.armed = None;
        std::task::Poll::Ready(())
    }
}

/// What one read from the peer means for the machine.
pub(crate) enum ReadOutcome {
    Data(usize),
    End,
    Failed(TransportFailure),
}

impl ReadOutcome {
    /// The input to feed for this outcome (`buf` holds the bytes read).
    pub(crate) fn input<'a>(&'a self, now: Instant, buf: &'a [u8]) -> Input<'a> {
        let event = match self {
            Self::Data(n) => StreamEvent::Data(&buf[..*n]),
            Self::End => StreamEvent::End,
            Self::Failed(why) => StreamEvent::Failed(why.clone()),
        };
        Input::Receive(now, Receive { stream: StreamId::STDIO, event })
    }
}

/// Reads once, retrying on `Interrupted`.
pub(crate) async fn read_some<R: AsyncRead + Unpin>(reader: &mut R, buf: &mut [u8]) -> ReadOutcome {
    loop {
        match reader.read(buf).await {
            Ok(0) => return ReadOutcome::End,
            Ok(n) => return ReadOutcome::Data(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return ReadOutcome::Failed(TransportFailure::Reset(format!("read failed: {e}")))
            }
        }
    }
}
