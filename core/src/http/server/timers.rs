//! Which sessions have a deadline, and the soonest one, found without a scan of every
//! session: a min-heap of deadlines beside each session's current one. A deadline that
//! changes pushes a new entry; entries no longer current are dropped when they reach the
//! top, and the heap is rebuilt when they outnumber the current ones.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

use super::SessionId;

/// The sessions' deadlines. After every change the heap's top is current.
#[derive(Debug, Default)]
pub(super) struct Timers {
    current: HashMap<SessionId, Instant>,
    heap: BinaryHeap<Reverse<(Instant, SessionId)>>,
}

impl Timers {
    /// `id`'s machine has deadline `at` now (`None`: none).
    pub(super) fn set(&mut self, id: &SessionId, at: Option<Instant>) {
        match at {
            Some(at) => {
                if self.current.insert(id.clone(), at) != Some(at) {
                    self.heap.push(Reverse((at, id.clone())));
                }
            }
            None => {
                self.current.remove(id);
            }
        }
        self.tidy();
    }

    /// The soonest deadline of any session.
    pub(super) fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// The sessions whose deadline is due at `now`; they are forgotten until set again.
    pub(super) fn take_due(&mut self, now: Instant) -> Vec<SessionId> {
        let mut due = Vec::new();
        while let Some(Reverse((at, _))) = self.heap.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((at, id))) = self.heap.pop() else { break };
            if self.current.get(&id) == Some(&at) {
                self.current.remove(&id);
                due.push(id);
            }
        }
        self.tidy();
        due
    }

    /// Sessions with a deadline.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.current.len()
    }

    /// Drops entries that are not current from the top, and rebuilds a heap mostly made of
    /// them.
    fn tidy(&mut self) {
        if self.heap.len() > 2 * self.current.len() + 64 {
            self.heap = self.current.iter().map(|(id, at)| Reverse((*at, id.clone()))).collect();
        }
        while let Some(Reverse((at, id))) = self.heap.peek() {
            if self.current.get(id) == Some(at) {
                break;
            }
            self.heap.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::testkit::VirtualClock;

    fn id(n: u8) -> SessionId {
        SessionId(format!("{n:032x}"))
    }

    #[test]
    fn the_soonest_current_deadline_is_next_and_due_ones_are_taken_once() {
        let t0 = VirtualClock::new().now();
        let at = |s| t0 + Duration::from_secs(s);
        let mut timers = Timers::default();
        timers.set(&id(1), Some(at(5)));
        timers.set(&id(2), Some(at(3)));
        timers.set(&id(3), Some(at(9)));
        assert_eq!(timers.next(), Some(at(3)));
        // A deadline that moves later leaves its old entry behind; it is never next.
        timers.set(&id(2), Some(at(7)));
        assert_eq!(timers.next(), Some(at(5)));
        timers.set(&id(1), None);
        assert_eq!(timers.next(), Some(at(7)));
        assert_eq!(timers.take_due(at(6)), Vec::<SessionId>::new());
        assert_eq!(timers.take_due(at(8)), [id(2)]);
        assert_eq!(timers.take_due(at(8)), Vec::<SessionId>::new(), "taken once");
        assert_eq!(timers.next(), Some(at(9)));
        assert_eq!(timers.len(), 1);
    }

    #[test]
    fn entries_left_behind_do_not_pile_up() {
        let t0 = VirtualClock::new().now();
        let mut timers = Timers::default();
        for step in 0..10_000u64 {
            timers.set(&id(1), Some(t0 + Duration::from_millis(step)));
        }
        assert!(timers.heap.len() <= 2 * timers.len() + 64, "{}", timers.heap.len());
        assert_eq!(timers.next(), Some(t0 + Duration::from_millis(9_999)));
    }
}
