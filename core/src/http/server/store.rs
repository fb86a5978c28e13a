//! Where SSE events wait for a client that lost its stream: the [`EventStore`] trait and a
//! bounded in-memory default.

use std::collections::{HashMap, VecDeque};
use std::fmt;

use bytes::Bytes;

use super::SessionId;

/// Keeps the SSE events a session sent, so a client that lost a stream can resume it with
/// `Last-Event-ID` and get what it missed, exactly once.
///
/// Streams are numbered per session (`stream`), events per stream (`seq`, from 1). The
/// router calls [`store`](Self::store) for every event before it writes it, and
/// [`replay`](Self::replay) when a client resumes. An implementation MAY forget events (it
/// is bounded); a resume then yields what is left. A store shared by a fleet of servers
/// (Redis, say) implements the same four calls.
pub trait EventStore: fmt::Debug + Send {
    /// Keeps event `seq` of `stream` of `session`.
    fn store(&mut self, session: &SessionId, stream: u64, seq: u64, event: Bytes);
    /// The events of `stream` after `seq`, oldest first.
    fn replay(&self, session: &SessionId, stream: u64, after: u64) -> Vec<Bytes>;
    /// `stream` was written whole a while ago (one to two sweeps of the router's idle expiry,
    /// so that a client whose connection broke before the last bytes arrived could still
    /// resume): its events are no longer needed.
    fn forget_stream(&mut self, session: &SessionId, stream: u64);
    /// The session ended.
    fn forget_session(&mut self, session: &SessionId);
    /// How many events the store holds for all sessions, if it can tell cheaply (for
    /// metrics and leak checks); `None` by default.
    fn events_held(&self) -> Option<usize> {
        None
    }
}

/// The default [`EventStore`]: per session, the newest events up to a count and a byte
/// budget, oldest dropped first. An idle session with nothing to replay holds nothing.
#[derive(Debug)]
pub struct MemoryEventStore {
    max_events: usize,
    max_bytes: usize,
    sessions: HashMap<SessionId, Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    events: VecDeque<(u64, u64, Bytes)>,
    bytes: usize,
}

impl MemoryEventStore {
    /// A store keeping, per session, at most `max_events` events and `max_bytes` bytes.
    pub fn new(max_events: usize, max_bytes: usize) -> Self {
        Self { max_events, max_bytes, sessions: HashMap::new() }
    }

    /// Events held for `session`.
    pub fn held(&self, session: &SessionId) -> usize {
        self.sessions.get(session).map_or(0, |k| k.events.len())
    }
}

impl Default for MemoryEventStore {
    /// 256 events and 1 MiB per session: what a client that lost a stream for a few seconds
    /// needs, and at most 10 GiB for 10,000 sessions that all hold that much at once. A
    /// stream written whole is forgotten soon after, so most sessions hold little.
    fn default() -> Self {
        Self::new(256, 1 << 20)
    }
}

impl EventStore for MemoryEventStore {
    fn store(&mut self, session: &SessionId, stream: u64, seq: u64, event: Bytes) {
        if self.max_events == 0 || event.len() > self.max_bytes {
            return;
        }
        let kept = self.sessions.entry(session.clone()).or_default();
        kept.bytes += event.len();
        kept.events.push_back((stream, seq, event));
        while kept.events.len() > self.max_events || kept.bytes > self.max_bytes {
            if let Some((_, _, old)) = kept.events.pop_front() {
                kept.bytes -= old.len();
            }
        }
    }

    fn replay(&self, session: &SessionId, stream: u64, after: u64) -> Vec<Bytes> {
        let Some(kept) = self.sessions.get(session) else { return Vec::new() };
        kept.events
            .iter()
            .filter(|(s, seq, _)| *s == stream && *seq > after)
            .map(|(_, _, e)| e.clone())
            .collect()
    }

    fn forget_stream(&mut self, session: &SessionId, stream: u64) {
        let Some(kept) = self.sessions.get_mut(session) else { return };
        kept.events.retain(|(s, _, _)| *s != stream);
        kept.bytes = kept.events.iter().map(|(_, _, e)| e.len()).sum();
        if kept.events.is_empty() {
            self.sessions.remove(session);
        }
    }

    fn forget_session(&mut self, session: &SessionId) {
        self.sessions.remove(session);
    }

    fn events_held(&self) -> Option<usize> {
        Some(self.sessions.values().map(|k| k.events.len()).sum())
    }
}
