//! The one timer of a session's loop, for zest-core's hosts (`poll_timer`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::time::Sleep;

/// A tokio sleep re-armed only when the deadline changes.
pub(crate) struct Timer(Pin<Box<Sleep>>);

impl Default for Timer {
    fn default() -> Self {
        Self(Box::pin(tokio::time::sleep(Duration::ZERO)))
    }
}

impl Timer {
    /// Resolves at `at` (re-arming costs a trip to the timer wheel: skipped when unchanged).
    pub(crate) fn poll_at(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        let at = tokio::time::Instant::from_std(at);
        if self.0.deadline() != at {
            self.0.as_mut().reset(at);
        }
        self.0.as_mut().poll(cx)
    }
}
