//! The router's side of a fleet (see the parent module): sessions found in and saved to the
//! store, client messages carried to the member they belong to, and the fleet-wide
//! standalone stream.

use std::sync::Arc;
use std::time::Instant;

use http::HeaderMap;
use rand_chacha::rand_core::RngCore;

use super::{member_of, request_id_base, Fleet, FleetKey, FleetMessage, STANDALONE_STREAM};
use crate::error::Rejection;
use crate::http::server::streams::{Slot, SlotKind, SseStream};
use crate::http::server::{Exchange, Router, SessionId};
use crate::io::StreamId;
use crate::jsonrpc::Message;
use crate::rpc::Incoming;
use crate::server::Session;

/// What a router knows of one of its sessions' place in the fleet.
#[derive(Debug)]
pub(in crate::http::server) struct FleetSlot {
    pub(in crate::http::server) key: FleetKey,
    /// The session's `revision` last saved.
    saved: u64,
}

/// Where a client message of a fleet session is handled.
enum Destination {
    Here,
    /// A response to a request member `to` sent, or (`None`) a cancellation of a request
    /// any member may be serving.
    Member(Option<u32>),
}

/// Stands in for the exchange a message carried from another member arrived on: such
/// messages (responses, cancellations) are never answered.
const FROM_THE_FLEET: StreamId = StreamId(u64::MAX);

fn unavailable(e: super::FleetError) -> Rejection {
    Rejection::StoreUnavailable(e.0)
}

impl<H: Clone> Router<H> {
    fn fleet(&self) -> Option<Arc<dyn Fleet>> {
        self.config.fleet.clone()
    }

    /// A session opened or taken up here joins the fleet: its request ids and stream
    /// numbers are this member's (stream numbers from a random point, so that a copy taken
    /// up again never repeats one).
    pub(in crate::http::server) fn join_fleet(&mut self, id: &SessionId) {
        let Some(fleet) = self.fleet() else { return };
        let Some(slot) = self.sessions.get_mut(id) else { return };
        if slot.kind != SlotKind::Stateful {
            return;
        }
        let member = fleet.member();
        slot.machine.start_ids_at(request_id_base(member));
        slot.next_stream = (u64::from(member) << 32) | u64::from(self.rng.next_u32() >> 4);
        let key = FleetKey::of(id);
        let saved = slot.machine.revision;
        slot.fleet = Some(FleetSlot { key: key.clone(), saved });
        self.fleet_keys.insert(key, id.clone());
    }

    /// The session a Streamable HTTP request names. In a fleet the store says whether it
    /// lives (refreshing its time to live) and what it is now; a session this process has
    /// no copy of is taken up from it.
    pub(in crate::http::server) fn find(
        &mut self,
        now: Instant,
        header: &str,
    ) -> Result<SessionId, Rejection> {
        let Some(fleet) = self.fleet() else { return self.known(header) };
        let id = SessionId(header.to_owned());
        if self.sessions.get(&id).is_some_and(|slot| slot.fleet.is_none()) {
            return Ok(id);
        }
        let Some(saved) = fleet.load(&FleetKey::of(&id)).map_err(unavailable)? else {
            if self.sessions.contains_key(&id) {
                self.close_session(now, &id);
            }
            return Err(Rejection::UnknownSession);
        };
        if let Some(slot) = self.sessions.get_mut(&id) {
            slot.machine.refresh(&saved);
            if let Some(f) = slot.fleet.as_mut() {
                f.saved = slot.machine.revision;
            }
            return Ok(id);
        }
        if self.sessions.len() >= self.config.max_sessions {
            return Err(Rejection::TooManySessions);
        }
        let machine = Session::restored(self.shared.clone(), now, &saved, 0);
        self.sessions.insert(id.clone(), Box::new(Slot::new(machine, SlotKind::Stateful, now)));
        self.join_fleet(&id);
        if self.next_sweep.is_none() {
            self.next_sweep = Some(now + self.sweep_every());
        }
        Ok(id)
    }

    /// The OAuth subject a session answers: its copy's here, or in a fleet what the store
    /// says of a session this process holds no copy of (`None`: nobody yet, or no session).
    pub(in crate::http::server) fn owner_of(&self, id: &SessionId) -> Option<String> {
        if let Some(slot) = self.sessions.get(id) {
            return slot.machine.principal().map(|p| p.subject.clone());
        }
        let fleet = self.fleet()?;
        // A store that fails here fails the request a moment later, when it is looked up.
        fleet.load(&FleetKey::of(id)).ok().flatten()?.subject
    }

    /// Saves a fleet session whose client changed what the fleet shares of it.
    pub(in crate::http::server) fn save_changed(
        &mut self,
        id: &SessionId,
    ) -> Result<(), Rejection> {
        let Some(fleet) = self.fleet() else { return Ok(()) };
        let Some(slot) = self.sessions.get_mut(id) else { return Ok(()) };
        let Some(f) = slot.fleet.as_mut() else { return Ok(()) };
        if slot.machine.revision == f.saved {
            return Ok(());
        }
        let Some(saved) = slot.machine.saved() else { return Ok(()) };
        fleet.save(&f.key, &saved).map_err(unavailable)?;
        f.saved = slot.machine.revision;
        Ok(())
    }

    /// Carries the messages of a POST that belong to other members there (responses to
    /// their requests; cancellations go to every member, this one included, since any may
    /// serve the request). What is left for this session, if anything.
    pub(in crate::http::server) fn carry_to_members(
        &mut self,
        id: &SessionId,
        incoming: Incoming,
    ) -> Result<Option<Incoming>, Rejection> {
        let Some(fleet) = self.fleet() else { return Ok(Some(incoming)) };
        let Some(key) = self.sessions.get(id).and_then(|s| s.fleet.as_ref()).map(|f| &f.key) else {
            return Ok(Some(incoming));
        };
        let member = fleet.member();
        let carry = |message: &Message| match destination(message, member) {
            Destination::Here => Ok(false),
            Destination::Member(to) => {
                let json = String::from_utf8_lossy(&message.to_vec()).into_owned();
                let message = FleetMessage::FromClient { session: key.clone(), json };
                fleet.send(to, &message).map(|()| true).map_err(unavailable)
            }
        };
        match incoming {
            Incoming::Message(message) => {
                Ok(if carry(&message)? { None } else { Some(Incoming::Message(message)) })
            }
            Incoming::Batch(items) => {
                let mut kept = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Ok(message) if carry(&message)? => {}
                        item => kept.push(item),
                    }
                }
                Ok((!kept.is_empty()).then_some(Incoming::Batch(kept)))
            }
            other => Ok(Some(other)),
        }
    }

    /// Takes in what another member of the fleet sent (see
    /// [`Broadcast::Fleet`](crate::server::Broadcast::Fleet)); then drain the router.
    pub fn handle_fleet(&mut self, now: Instant, message: FleetMessage) {
        let Some(id) = self.fleet_keys.get(message.session()).cloned() else { return };
        match message {
            FleetMessage::FromClient { json, .. } => {
                let Some(slot) = self.sessions.get_mut(&id) else { return };
                slot.machine.handle_frame(now, FROM_THE_FLEET, json.as_bytes());
                self.flush(&id);
            }
            FleetMessage::Standalone { .. } => self.write_standalone(&id),
            FleetMessage::Ended { .. } => self.close_session(now, &id),
        }
    }

    /// Appends a fleet session's standalone messages to the store; the member carrying its
    /// GET stream writes them (this one at once, when it does).
    pub(in crate::http::server) fn append_standalone(&mut self, id: &SessionId, all: Vec<Vec<u8>>) {
        let Some(fleet) = self.fleet() else { return };
        let Some(key) = self.sessions.get(id).and_then(|s| s.fleet.as_ref()).map(|f| &f.key) else {
            return;
        };
        for json in all {
            // A store that fails loses the message: the session goes on without it.
            let _ = fleet.append_standalone(key, &json);
        }
        self.write_standalone(id);
    }

    /// Writes what the store holds for a fleet session's standalone stream, if this member
    /// carries it.
    fn write_standalone(&mut self, id: &SessionId) {
        let Some(fleet) = self.fleet() else { return };
        let Some(slot) = self.sessions.get_mut(id) else { return };
        let (Some(f), Some(logical)) = (slot.fleet.as_ref(), slot.standalone.as_mut()) else {
            return;
        };
        if logical.carried_by.is_none() {
            return;
        }
        let Ok((_, events)) = fleet.standalone_after(&f.key, Some(logical.seq())) else { return };
        if let Some(&(last, _)) = events.last() {
            for (seq, json) in events {
                logical.send_numbered(seq, &json, &mut self.wire);
            }
            let _ = fleet.delivered(&f.key, last);
        }
    }

    /// A GET for a fleet session: opens its standalone stream here (or, with `resume_after`,
    /// resumes it) and writes what the store holds for it: after `resume_after`, or what
    /// no GET stream was given yet.
    pub(in crate::http::server) fn carry_standalone(
        &mut self,
        id: &SessionId,
        stream: StreamId,
        resume_after: Option<u64>,
    ) {
        let Some(fleet) = self.fleet() else { return };
        let Some(slot) = self.sessions.get_mut(id) else { return };
        let Some(f) = slot.fleet.as_ref() else { return };
        let (after, events) = match fleet.standalone_after(&f.key, resume_after) {
            Ok(found) => found,
            Err(e) => return self.refuse(stream, None, &unavailable(e)),
        };
        let primes = slot.primes();
        if let Some(old) = slot.standalone.take().and_then(|l| l.carried_by) {
            self.exchanges.remove(&old);
            self.wire.close(old);
        }
        self.wire.open_sse(stream, HeaderMap::new());
        let mut logical = SseStream::resumed(STANDALONE_STREAM, after, stream);
        if primes && resume_after.is_none() {
            logical.prime(&mut self.wire, self.config.retry);
        }
        if let Some(&(last, _)) = events.last() {
            for (seq, json) in events {
                logical.send_numbered(seq, &json, &mut self.wire);
            }
            let _ = fleet.delivered(&f.key, last);
        }
        slot.standalone = Some(logical);
        self.exchanges.insert(stream, Exchange::Carrying(id.clone()));
    }

    /// Ends a fleet session everywhere (`DELETE`); other sessions need nothing.
    pub(in crate::http::server) fn leave_fleet(&mut self, id: &SessionId) -> Result<(), Rejection> {
        let Some(fleet) = self.fleet() else { return Ok(()) };
        let Some(f) = self.sessions.get(id).and_then(|s| s.fleet.as_ref()) else { return Ok(()) };
        fleet.remove(&f.key).map_err(unavailable)
    }

    /// Keeps the sessions this member carries streams of alive in the store (a client that
    /// only listens sends no request that would).
    pub(in crate::http::server) fn refresh_carried(&mut self) {
        let Some(fleet) = self.fleet() else { return };
        for slot in self.sessions.values() {
            if let (Some(f), false) = (slot.fleet.as_ref(), slot.is_idle()) {
                let _ = fleet.load(&f.key);
            }
        }
    }

    /// Runs `f` on every session of the fleet: this process's copies, and the others made
    /// from the store for the moment, their standalone messages appended to the store.
    pub(in crate::http::server) fn each_fleet_session(
        &mut self,
        now: Instant,
        fleet: &dyn Fleet,
        f: &mut dyn FnMut(&mut Session<H>),
    ) {
        // A store that fails loses the broadcast for the sessions it holds.
        let all = fleet.sessions().unwrap_or_default();
        for (key, saved) in all {
            if let Some(id) = self.fleet_keys.get(&key).cloned() {
                if let Some(slot) = self.sessions.get_mut(&id) {
                    slot.machine.refresh(&saved);
                    f(&mut slot.machine);
                    self.touched.push(id);
                }
                continue;
            }
            let mut machine = Session::restored(self.shared.clone(), now, &saved, 0);
            f(&mut machine);
            while let Some(out) = machine.poll_outgoing() {
                let _ = fleet.append_standalone(&key, &out.json);
            }
        }
    }
}

/// Where a client message of a fleet session is handled.
fn destination(message: &Message, member: u32) -> Destination {
    match message {
        Message::Response(r) => match r.id.as_ref().and_then(member_of) {
            Some(owner) if owner != member => Destination::Member(Some(owner)),
            _ => Destination::Here,
        },
        Message::Notification(n) if n.method == "notifications/cancelled" => {
            Destination::Member(None)
        }
        _ => Destination::Here,
    }
}
