//! [`MemoryFleet`]: a fleet store in memory, for routers in one address space (tests,
//! simulations) and as the reference for what a shared store does.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;

use super::{Fleet, FleetError, FleetKey, FleetMessage, SavedSession};

/// Events kept per stream, as a shared store bounds them.
const KEPT_PER_STREAM: usize = 256;

/// One member's handle on an in-memory fleet store. [`join`](Self::join) makes another
/// member on the same store; what a member is sent waits in its inbox
/// ([`take_messages`](Self::take_messages)) until the test hands it to its router. Sessions
/// do not expire (there is no clock here).
#[derive(Clone, Debug)]
pub struct MemoryFleet {
    member: u32,
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    members: u32,
    /// When set, every call fails (the store is unreachable).
    down: bool,
    sessions: HashMap<FleetKey, SavedSession>,
    events: HashMap<(FleetKey, u64), VecDeque<(u64, Bytes)>>,
    standalone: HashMap<FleetKey, Standalone>,
    inboxes: HashMap<u32, Vec<FleetMessage>>,
}

#[derive(Debug, Default)]
struct Standalone {
    last: u64,
    delivered: u64,
    kept: VecDeque<(u64, Bytes)>,
}

impl MemoryFleet {
    /// A new store, and its first member (number 1).
    pub fn new() -> Self {
        let state = State { members: 1, ..State::default() };
        Self { member: 1, state: Arc::new(Mutex::new(state)) }
    }

    /// Another member of the same store.
    pub fn join(&self) -> Self {
        let mut state = self.lock();
        state.members += 1;
        Self { member: state.members, state: self.state.clone() }
    }

    /// What this member was sent, oldest first, taken out of its inbox.
    pub fn take_messages(&self) -> Vec<FleetMessage> {
        self.lock().inboxes.remove(&self.member).unwrap_or_default()
    }

    /// Makes every call of every member fail (`true`) or work again (`false`).
    pub fn set_down(&self, down: bool) {
        self.lock().down = down;
    }

    /// Sessions the store holds.
    pub fn session_count(&self) -> usize {
        self.lock().sessions.len()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The state, unless the store is down.
    fn up(&self) -> Result<MutexGuard<'_, State>, FleetError> {
        let state = self.lock();
        if state.down {
            return Err(FleetError("the in-memory store is down".into()));
        }
        Ok(state)
    }
}

impl Default for MemoryFleet {
    fn default() -> Self {
        Self::new()
    }
}

impl State {
    fn post(&mut self, to: Option<u32>, message: &FleetMessage) {
        let members: Vec<u32> = match to {
            Some(member) => vec![member],
            None => (1..=self.members).collect(),
        };
        for member in members {
            self.inboxes.entry(member).or_default().push(message.clone());
        }
    }
}

impl Fleet for MemoryFleet {
    fn member(&self) -> u32 {
        self.member
    }

    fn save(&self, key: &FleetKey, session: &SavedSession) -> Result<(), FleetError> {
        self.up()?.sessions.insert(key.clone(), session.clone());
        Ok(())
    }

    fn load(&self, key: &FleetKey) -> Result<Option<SavedSession>, FleetError> {
        Ok(self.up()?.sessions.get(key).cloned())
    }

    fn remove(&self, key: &FleetKey) -> Result<(), FleetError> {
        let mut state = self.up()?;
        state.sessions.remove(key);
        state.standalone.remove(key);
        state.events.retain(|(k, _), _| k != key);
        state.post(None, &FleetMessage::Ended { session: key.clone() });
        Ok(())
    }

    fn sessions(&self) -> Result<Vec<(FleetKey, SavedSession)>, FleetError> {
        let state = self.up()?;
        Ok(state.sessions.iter().map(|(k, s)| (k.clone(), s.clone())).collect())
    }

    fn send(&self, to: Option<u32>, message: &FleetMessage) -> Result<(), FleetError> {
        self.up()?.post(to, message);
        Ok(())
    }

    fn store_event(
        &self,
        key: &FleetKey,
        stream: u64,
        seq: u64,
        event: &Bytes,
    ) -> Result<(), FleetError> {
        let mut state = self.up()?;
        let kept = state.events.entry((key.clone(), stream)).or_default();
        kept.push_back((seq, event.clone()));
        if kept.len() > KEPT_PER_STREAM {
            kept.pop_front();
        }
        Ok(())
    }

    fn replay(&self, key: &FleetKey, stream: u64, after: u64) -> Result<Vec<Bytes>, FleetError> {
        let state = self.up()?;
        let Some(kept) = state.events.get(&(key.clone(), stream)) else { return Ok(Vec::new()) };
        Ok(kept.iter().filter(|(seq, _)| *seq > after).map(|(_, e)| e.clone()).collect())
    }

    fn forget_stream(&self, key: &FleetKey, stream: u64) -> Result<(), FleetError> {
        self.up()?.events.remove(&(key.clone(), stream));
        Ok(())
    }

    fn append_standalone(&self, key: &FleetKey, json: &[u8]) -> Result<u64, FleetError> {
        let mut state = self.up()?;
        let stream = state.standalone.entry(key.clone()).or_default();
        stream.last += 1;
        let seq = stream.last;
        stream.kept.push_back((seq, Bytes::copy_from_slice(json)));
        if stream.kept.len() > KEPT_PER_STREAM {
            stream.kept.pop_front();
        }
        state.post(None, &FleetMessage::Standalone { session: key.clone() });
        Ok(seq)
    }

    fn standalone_after(
        &self,
        key: &FleetKey,
        after: Option<u64>,
    ) -> Result<(u64, Vec<(u64, Bytes)>), FleetError> {
        let state = self.up()?;
        let Some(stream) = state.standalone.get(key) else {
            return Ok((after.unwrap_or(0), Vec::new()));
        };
        let after = after.unwrap_or(stream.delivered);
        Ok((after, stream.kept.iter().filter(|(seq, _)| *seq > after).cloned().collect()))
    }

    fn delivered(&self, key: &FleetKey, seq: u64) -> Result<(), FleetError> {
        let mut state = self.up()?;
        let stream = state.standalone.entry(key.clone()).or_default();
        stream.delivered = stream.delivered.max(seq);
        Ok(())
    }
}
