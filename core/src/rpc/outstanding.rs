//! Our requests awaiting a response.

use crate::jsonrpc::own_ids::{OwnIdMap, OwnIdSet};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::jsonrpc::RequestId;

/// How many abandoned (timed out or cancelled) ids are remembered, so that their late
/// responses are dropped silently rather than reported as unknown.
const ABANDONED_MEMORY: usize = 4096;

#[derive(Debug)]
pub(crate) struct Pending {
    timeout: Duration,
    deadline: Instant,
    hard_deadline: Instant,
    reset_on_progress: bool,
    /// `initialize` must never be cancelled.
    pub(crate) cancellable: bool,
}

/// What a response's id turned out to be.
#[derive(Debug)]
pub(crate) enum Completion {
    /// A request we were waiting for, now removed from the table.
    Pending,
    /// A request we gave up on: drop the response silently.
    Abandoned,
    /// Never ours (or forgotten long ago): a violation.
    Unknown,
}

#[derive(Debug, Default)]
pub(crate) struct Outstanding {
    next_id: i64,
    pending: OwnIdMap<RequestId, Pending>,
    abandoned: OwnIdSet,
    abandoned_order: VecDeque<RequestId>,
}

impl Outstanding {
    /// The table's room, in entries (for tests of the release).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.pending.capacity()
    }

    /// Frees the table's room once none of our requests is pending.
    pub(crate) fn release_idle_capacity(&mut self) {
        if self.pending.is_empty() {
            self.pending.shrink_to_fit();
        }
    }

    /// Ids from `base` on (a fleet member's range), unless some were given already.
    pub(crate) fn start_ids_at(&mut self, base: i64) {
        self.next_id = self.next_id.max(base);
    }

    pub(crate) fn len(&self) -> usize {
        self.pending.len()
    }

    /// Allocates the next id and starts its clocks.
    pub(crate) fn insert(
        &mut self,
        now: Instant,
        timeout: Duration,
        max_total: Duration,
        reset_on_progress: bool,
        cancellable: bool,
    ) -> RequestId {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        let hard_deadline = now + max_total;
        let pending = Pending {
            timeout,
            deadline: (now + timeout).min(hard_deadline),
            hard_deadline,
            reset_on_progress,
            cancellable,
        };
        self.pending.insert(id.clone(), pending);
        id
    }

    /// Allocates an id for a request that is refused before it is sent, so the caller's
    /// outcome event still names a fresh id.
    pub(crate) fn unsent_id(&mut self) -> RequestId {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        id
    }

    pub(crate) fn complete(&mut self, id: &RequestId) -> Completion {
        if self.pending.remove(id).is_some() {
            return Completion::Pending;
        }
        if self.abandoned.remove(id) {
            return Completion::Abandoned;
        }
        Completion::Unknown
    }

    /// Progress for `id`: restarts the idle timeout if asked, never past the hard deadline.
    /// False when `id` is not pending.
    pub(crate) fn on_progress(&mut self, now: Instant, id: &RequestId) -> bool {
        let Some(p) = self.pending.get_mut(id) else { return false };
        if p.reset_on_progress {
            p.deadline = (now + p.timeout).min(p.hard_deadline);
        }
        true
    }

    /// Removes `id` and remembers it as abandoned. Returns its entry if it was pending.
    pub(crate) fn abandon(&mut self, id: &RequestId) -> Option<Pending> {
        let p = self.pending.remove(id)?;
        if self.abandoned_order.len() == ABANDONED_MEMORY {
            if let Some(old) = self.abandoned_order.pop_front() {
                self.abandoned.remove(&old);
            }
        }
        self.abandoned.insert(id.clone());
        self.abandoned_order.push_back(id.clone());
        Some(p)
    }

    /// Every pending request whose deadline is at or before `now`, in id order, abandoned.
    pub(crate) fn expire(&mut self, now: Instant) -> Vec<(RequestId, Pending)> {
        let mut due: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(id, _)| id.clone())
            .collect();
        due.sort();
        due.into_iter().filter_map(|id| self.abandon(&id).map(|p| (id, p))).collect()
    }

    /// Removes every pending request, in id order.
    pub(crate) fn drain(&mut self) -> Vec<(RequestId, Pending)> {
        let mut all: Vec<(RequestId, Pending)> = self.pending.drain().collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// Moves every deadline `by` later (time the requests spent waiting for a user).
    pub(crate) fn postpone(&mut self, by: Duration) {
        for p in self.pending.values_mut() {
            p.deadline += by;
            p.hard_deadline += by;
        }
    }

    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.pending.values().map(|p| p.deadline).min()
    }
}
