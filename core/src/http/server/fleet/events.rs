//! The router's [`EventStore`] in a fleet: answer-stream events kept in the [`Fleet`].

use std::sync::Arc;

use bytes::Bytes;

use super::{Fleet, FleetKey};
use crate::http::server::{EventStore, SessionId};

/// Keeps a fleet router's answer-stream events in the fleet's store, so that any member can
/// replay them. A store that fails loses the event (the stream itself goes on); a session's
/// events end with it ([`Fleet::remove`]) or expire with it.
#[derive(Debug)]
pub struct FleetEvents(pub Arc<dyn Fleet>);

impl EventStore for FleetEvents {
    fn store(&mut self, session: &SessionId, stream: u64, seq: u64, event: Bytes) {
        let _ = self.0.store_event(&FleetKey::of(session), stream, seq, &event);
    }

    fn replay(&self, session: &SessionId, stream: u64, after: u64) -> Vec<Bytes> {
        self.0.replay(&FleetKey::of(session), stream, after).unwrap_or_default()
    }

    fn forget_stream(&mut self, session: &SessionId, stream: u64) {
        let _ = self.0.forget_stream(&FleetKey::of(session), stream);
    }

    /// A process's copy of a session went (idle here, or ended): the fleet's events stay
    /// until the session ends everywhere ([`Fleet::remove`]) or expires.
    fn forget_session(&mut self, _session: &SessionId) {}
}
