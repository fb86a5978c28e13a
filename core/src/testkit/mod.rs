//! Test support (feature `testkit`): a virtual clock, an in-memory client+server pair over
//! stdio ([`Pair`]) and over Streamable HTTP ([`HttpPair`]), and [`Faults`] for their links.
//!
//! Everything here is deterministic: time moves only when a test moves it, bytes cross from
//! one machine to the other only when the test pumps (or lets time pass, when the link has
//! latency), and every fault is drawn from a ChaCha20 stream seeded by the test.

mod faults;
mod http;
mod pair;

pub use faults::Faults;
pub use http::HttpPair;
pub use pair::{Pair, Wire};

use std::time::{Duration, Instant};

/// A clock that moves only when told to.
#[derive(Clone, Copy, Debug)]
pub struct VirtualClock {
    now: Instant,
}

impl VirtualClock {
    /// A clock starting at an arbitrary instant.
    #[allow(clippy::disallowed_methods)] // The epoch is the only real clock read; every later instant is virtual.
    pub fn new() -> Self {
        Self { now: Instant::now() }
    }

    /// The current virtual instant.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Moves time forward by `d`.
    pub fn advance(&mut self, d: Duration) -> Instant {
        self.now += d;
        self.now
    }

    /// Moves time to `t`, if it is later.
    pub fn advance_to(&mut self, t: Instant) -> Instant {
        self.now = self.now.max(t);
        self.now
    }
}

impl Default for VirtualClock {
    fn default() -> Self {
        Self::new()
    }
}
