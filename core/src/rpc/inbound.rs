//! The peer's requests awaiting our response.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::io::StreamId;
use crate::jsonrpc::RequestId;
use crate::schema::{LoggingLevel, ProgressToken};

/// How many cancelled inbound ids are remembered so that a late `respond` is dropped quietly.
const CANCELLED_MEMORY: usize = 4096;

/// One request the peer sent that we have not answered yet.
#[derive(Debug, Clone)]
pub(crate) struct InboundEntry {
    /// The stream the request arrived on: its reply and what is related to it go there.
    pub(crate) stream: StreamId,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) last_progress: Option<f64>,
    /// For `tools/call`: the tool's name, to check structured output on the way out.
    pub(crate) tool: Option<String>,
    /// A 2026-07-28 request: it stands alone, and its result says so.
    pub(crate) stateless: Option<StatelessEntry>,
    /// A 2026-07-28 call that may ask the client: its run's asks, and the request its
    /// `requestState` is bound to.
    pub(crate) round: Option<Box<RoundEntry>>,
}

/// A 2026-07-28 call's round, as its answer needs it.
#[derive(Debug, Clone)]
pub(crate) struct RoundEntry {
    pub(crate) round: std::sync::Arc<crate::server::Round>,
    pub(crate) binding: crate::server::LazyBinding,
}

/// What a 2026-07-28 request carried and its answer needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StatelessEntry {
    /// Its result may be cached (`ttlMs`, `cacheScope`): `resources/read`.
    pub(crate) cacheable: bool,
    /// The least severe log level the request asked for; none: no logs for it.
    pub(crate) log_level: Option<LoggingLevel>,
}

impl InboundEntry {
    pub(crate) fn new(stream: StreamId, progress_token: Option<ProgressToken>) -> Self {
        Self {
            stream,
            progress_token,
            last_progress: None,
            tool: None,
            stateless: None,
            round: None,
        }
    }
}

/// What `finish` found.
#[derive(Debug)]
pub(crate) enum Finished {
    Active(InboundEntry),
    /// The peer cancelled it: send nothing.
    Cancelled,
    Unknown,
}

#[derive(Debug, Default)]
pub(crate) struct Inbound {
    active: HashMap<RequestId, InboundEntry>,
    cancelled: HashSet<RequestId>,
    cancelled_order: VecDeque<RequestId>,
}

impl Inbound {
    /// The table's room, in entries (for tests of the release).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.active.capacity()
    }

    /// Frees the table's room once no request is in flight (an idle session keeps none).
    pub(crate) fn release_idle_capacity(&mut self) {
        if self.active.is_empty() {
            self.active.shrink_to_fit();
        }
    }

    /// Registers a new inbound request. False if the id is already in flight.
    pub(crate) fn begin(&mut self, id: &RequestId, entry: InboundEntry) -> bool {
        if self.active.contains_key(id) {
            return false;
        }
        self.forget_cancelled(id);
        self.active.insert(id.clone(), entry);
        true
    }

    pub(crate) fn finish(&mut self, id: &RequestId) -> Finished {
        if let Some(e) = self.active.remove(id) {
            return Finished::Active(e);
        }
        if self.forget_cancelled(id) {
            return Finished::Cancelled;
        }
        Finished::Unknown
    }

    /// How many requests are in progress.
    pub(crate) fn len(&self) -> usize {
        self.active.len()
    }

    /// The stream an active request arrived on.
    pub(crate) fn stream_of(&self, id: &RequestId) -> Option<StreamId> {
        self.active.get(id).map(|e| e.stream)
    }

    pub(crate) fn get_mut(&mut self, id: &RequestId) -> Option<&mut InboundEntry> {
        self.active.get_mut(id)
    }

    /// The peer cancelled `id`. True if it was active.
    pub(crate) fn cancel(&mut self, id: &RequestId) -> bool {
        if self.active.remove(id).is_none() {
            return false;
        }
        if self.cancelled_order.len() == CANCELLED_MEMORY {
            if let Some(old) = self.cancelled_order.pop_front() {
                self.cancelled.remove(&old);
            }
        }
        self.cancelled.insert(id.clone());
        self.cancelled_order.push_back(id.clone());
        true
    }

    /// Drops every active entry (the session closed), returning their ids.
    pub(crate) fn drain(&mut self) -> Vec<RequestId> {
        let mut ids: Vec<RequestId> = self.active.drain().map(|(id, _)| id).collect();
        ids.sort();
        ids
    }

    /// Marks every active request cancelled (its answer is then dropped quietly), returning
    /// their ids in order.
    pub(crate) fn cancel_all(&mut self) -> Vec<RequestId> {
        let ids = self.drain();
        for id in &ids {
            if self.cancelled_order.len() == CANCELLED_MEMORY {
                if let Some(old) = self.cancelled_order.pop_front() {
                    self.cancelled.remove(&old);
                }
            }
            self.cancelled.insert(id.clone());
            self.cancelled_order.push_back(id.clone());
        }
        ids
    }

    fn forget_cancelled(&mut self, id: &RequestId) -> bool {
        self.cancelled.remove(id)
    }
}
