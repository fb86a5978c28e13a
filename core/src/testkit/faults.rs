//! Faults for the testkit's links, deterministic from a seed: latency, reordering of
//! independent streams, loss of HTTP exchanges and disconnects in the middle of an SSE event.
//!
//! A [`Link`] is one direction of a simulated connection: what is sent on it becomes due at
//! `now + latency` and is delivered, by the pair that owns it, once time reaches that instant.
//! Within one stream order is always kept (a hop is never due before the one sent before it
//! on the same stream); across streams it is kept too unless [`Faults::reorder`] is on. Every
//! random choice comes from a ChaCha20 stream seeded by [`Faults::seed`], so a failing case
//! replays exactly.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::io::StreamId;

/// What can go wrong on a pair's link. [`Faults::none`] (the default) is a perfect link:
/// everything arrives at once, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Faults {
    /// Seeds every random choice; the same seed and the same commands give the same run.
    pub seed: u64,
    /// The shortest time a hop (a frame, an HTTP head, a body chunk, an end) takes.
    pub min_latency: Duration,
    /// The longest; each hop's latency is drawn uniformly between the two.
    pub max_latency: Duration,
    /// Hops of different streams may overtake each other (HTTP only; a pipe has one stream).
    pub reorder: bool,
    /// HTTP: exchanges lost, per mille. A lost exchange is cut (both sides see it fail) at a
    /// random point of its life: before the request arrives, before the head, mid-body.
    pub loss_per_mille: u16,
    /// HTTP: response body chunks split inside, per mille, the exchange cut after the first
    /// part (a disconnect in the middle of an SSE event). The first chunk of an exchange is
    /// spared: a stream cut before the client saw any event id cannot be resumed, by design,
    /// and [`loss_per_mille`](Self::loss_per_mille) covers that case.
    pub split_per_mille: u16,
}

impl Faults {
    /// A perfect link.
    pub fn none() -> Self {
        Self {
            seed: 0,
            min_latency: Duration::ZERO,
            max_latency: Duration::ZERO,
            reorder: false,
            loss_per_mille: 0,
            split_per_mille: 0,
        }
    }

    /// A perfect link whose later faults draw from `seed`.
    pub fn seeded(seed: u64) -> Self {
        Self { seed, ..Self::none() }
    }

    /// Each hop takes between `min` and `max`.
    pub fn latency(mut self, min: Duration, max: Duration) -> Self {
        self.min_latency = min;
        self.max_latency = max.max(min);
        self
    }

    /// Hops of different streams may overtake each other.
    pub fn reorder(mut self, on: bool) -> Self {
        self.reorder = on;
        self
    }

    /// `per_mille` of exchanges are cut at a random point.
    pub fn loss(mut self, per_mille: u16) -> Self {
        self.loss_per_mille = per_mille;
        self
    }

    /// `per_mille` of response body chunks (after an exchange's first) are split and cut.
    pub fn split(mut self, per_mille: u16) -> Self {
        self.split_per_mille = per_mille;
        self
    }
}

impl Default for Faults {
    fn default() -> Self {
        Self::none()
    }
}

/// The seeded dice every fault is drawn from.
#[derive(Debug)]
pub(super) struct Dice {
    pub(super) faults: Faults,
    rng: ChaCha20Rng,
}

impl Dice {
    pub(super) fn new(faults: Faults) -> Self {
        Self { rng: ChaCha20Rng::seed_from_u64(faults.seed), faults }
    }

    /// A latency from the configured range.
    pub(super) fn latency(&mut self) -> Duration {
        let (min, max) = (self.faults.min_latency, self.faults.max_latency);
        let span = u64::try_from((max.saturating_sub(min)).as_micros()).unwrap_or(u64::MAX);
        if span == 0 {
            return min;
        }
        min + Duration::from_micros(self.rng.next_u64() % (span + 1))
    }

    /// True `per_mille` times in a thousand.
    pub(super) fn chance(&mut self, per_mille: u16) -> bool {
        per_mille > 0 && self.rng.next_u32() % 1000 < u32::from(per_mille)
    }

    /// A number in `0..n` (`n > 0`).
    pub(super) fn below(&mut self, n: u32) -> u32 {
        self.rng.next_u32() % n.max(1)
    }
}

/// One direction of a link: hops waiting to become due, in delivery order.
#[derive(Debug)]
pub(super) struct Link<T> {
    queue: BTreeMap<(Instant, u64), (StreamId, T)>,
    sent: u64,
    /// The instant the last hop of each stream is due, so later ones never overtake it.
    last_of_stream: HashMap<StreamId, Instant>,
    /// The instant the last hop of any stream is due, for a link that keeps global order.
    last: Option<Instant>,
}

impl<T> Default for Link<T> {
    fn default() -> Self {
        Self { queue: BTreeMap::new(), sent: 0, last_of_stream: HashMap::new(), last: None }
    }
}

impl<T> Link<T> {
    /// Queues `item` on `stream`, due after `latency` but never before what went earlier on
    /// the same stream (nor, unless `reorder`, before anything that went earlier).
    pub(super) fn send(
        &mut self,
        now: Instant,
        latency: Duration,
        reorder: bool,
        stream: StreamId,
        item: T,
    ) {
        let mut due = now + latency;
        if let Some(&last) = self.last_of_stream.get(&stream) {
            due = due.max(last);
        }
        if !reorder {
            due = self.last.map_or(due, |last| due.max(last));
        }
        self.last_of_stream.insert(stream, due);
        self.last = Some(self.last.map_or(due, |last| last.max(due)));
        self.sent += 1;
        self.queue.insert((due, self.sent), (stream, item));
    }

    /// When the next hop is due.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.queue.keys().next().map(|(due, _)| *due)
    }

    /// The next hop due by `now`.
    pub(super) fn pop_due(&mut self, now: Instant) -> Option<(StreamId, T)> {
        let (&key, _) = self.queue.iter().next().filter(|((due, _), _)| *due <= now)?;
        // `last_of_stream` keeps the entry: it is at most `now`, so it holds nothing back.
        self.queue.remove(&key)
    }

    /// Drops every hop of `stream` still in flight; true if there was one.
    pub(super) fn drop_stream(&mut self, stream: StreamId) -> bool {
        let before = self.queue.len();
        self.queue.retain(|_, (s, _)| *s != stream);
        self.last_of_stream.remove(&stream);
        before != self.queue.len()
    }

    /// Forgets a stream that ended (keeps the link's own memory bounded).
    pub(super) fn forget(&mut self, stream: StreamId) {
        if !self.queue.values().any(|(s, _)| *s == stream) {
            self.last_of_stream.remove(&stream);
        }
    }

    /// Drops everything in flight, returning it in delivery order.
    pub(super) fn drain(&mut self) -> Vec<(StreamId, T)> {
        self.last_of_stream.clear();
        std::mem::take(&mut self.queue).into_values().collect()
    }

    /// True when nothing is in flight.
    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}
