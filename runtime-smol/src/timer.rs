//! What the client's loop and the connections share: the one timer, and the end of the
//! command queue.

use std::time::Instant;

use smol::channel::Receiver;
use smol::future::FutureExt as _;
use smol::Timer;

/// Closes a driver's command queue and drops what is still in it: every sender then fails
/// at once, and every caller waiting on a queued command sees its reply channel close.
/// (Dropping the receiver alone would leave queued commands in the channel while senders
/// live, and their callers waiting forever.)
pub(crate) fn close_queue<T>(queue: &Receiver<T>) {
    queue.close();
    while queue.try_recv().is_ok() {}
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
    pub(crate) fn poll_fired(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        std::task::ready!(std::pin::Pin::new(&mut self.timer).poll(cx));
        self.armed = None;
        std::task::Poll::Ready(())
    }
}
