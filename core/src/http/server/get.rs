//! The GET stream of a session (opened, or resumed with `Last-Event-ID`) and DELETE.

use std::time::Instant;

use http::{HeaderMap, StatusCode};

use super::streams::SseStream;
use super::{checks, session_header, Exchange, Router, SessionId, STANDALONE_STREAM};
use crate::error::Rejection;
use crate::io::{RequestHead, StreamId};

impl<H: Clone> Router<H> {
    pub(super) fn get(&mut self, now: Instant, stream: StreamId, head: &RequestHead) {
        if let Err(rejection) = checks::check_get_media(&head.headers) {
            return self.refuse(stream, None, &rejection);
        }
        if self.config.sessionless || self.speaks_stateless(head) {
            return self.refuse(stream, None, &Rejection::HttpMethodNotAllowed);
        }
        let id = match session_header(&head.headers) {
            Some(h) => match self.find(now, h) {
                Ok(id) => id,
                Err(rejection) => return self.refuse(stream, None, &rejection),
            },
            None => return self.refuse(stream, None, &Rejection::MissingSession),
        };
        let Some(slot) = self.sessions.get_mut(&id) else { return };
        slot.last_active = now;
        let last = head.headers.get("last-event-id").and_then(|v| v.to_str().ok());
        let resumed = last.and_then(SseStream::parse_event_id);
        if slot.fleet.is_some() {
            // A fleet session's standalone stream is the fleet's: opened or resumed here,
            // from the store. Answer streams are resumed as below.
            match resumed {
                None if last.is_none() => return self.carry_standalone(&id, stream, None),
                Some((STANDALONE_STREAM, seq)) => {
                    return self.carry_standalone(&id, stream, Some(seq));
                }
                _ => {}
            }
        }
        if let Some(last) = last {
            return self.resume(&id, stream, last);
        }
        if slot.standalone.as_ref().is_some_and(|l| l.carried_by.is_some()) {
            return self.refuse(stream, None, &Rejection::StreamConflict);
        }
        self.exchanges.insert(stream, Exchange::Carrying(id.clone()));
        slot.open_standalone(&id, stream, &mut self.wire, self.config.retry);
    }

    /// A GET with `Last-Event-ID`: replays what the stream missed, then carries it on if it
    /// is still open.
    fn resume(&mut self, id: &SessionId, stream: StreamId, last: &str) {
        let Some(slot) = self.sessions.get_mut(id) else { return };
        self.wire.open_sse(stream, HeaderMap::new());
        let Some((number, seq)) = SseStream::parse_event_id(last) else {
            return self.wire.close(stream);
        };
        for event in self.wire.store.replay(id, number, seq) {
            self.wire.write(stream, event);
        }
        let standalone = slot.answers.values().all(|a| a.logical.number != number);
        let answer = slot.answers.iter_mut().find(|(_, a)| a.logical.number == number);
        let logical = match answer {
            Some((&origin, a)) if a.finished => {
                // This replay may be cut short too: the events stay a while (see `Slot`).
                slot.answers.remove(&origin);
                slot.written_whole(number);
                return self.wire.close(stream);
            }
            Some((_, a)) => &mut a.logical,
            None => match &mut slot.standalone {
                Some(l) if l.number == number => l,
                _ => return self.wire.close(stream),
            },
        };
        if let Some(old) = logical.carried_by.replace(stream) {
            self.exchanges.remove(&old);
            self.wire.close(old);
        }
        self.exchanges.insert(stream, Exchange::Carrying(id.clone()));
        if standalone {
            slot.flush_standalone_backlog(id, &mut self.wire);
        }
    }

    pub(super) fn delete(&mut self, now: Instant, stream: StreamId, head: &RequestHead) {
        if self.config.sessionless || self.speaks_stateless(head) {
            return self.refuse(stream, None, &Rejection::HttpMethodNotAllowed);
        }
        let id = match session_header(&head.headers) {
            Some(h) => match self.find(now, h) {
                Ok(id) => id,
                Err(rejection) => return self.refuse(stream, None, &rejection),
            },
            None => return self.refuse(stream, None, &Rejection::MissingSession),
        };
        if let Err(rejection) = self.leave_fleet(&id) {
            return self.refuse(stream, None, &rejection);
        }
        self.close_session(now, &id);
        self.wire.respond(stream, StatusCode::OK, HeaderMap::new());
        self.wire.close(stream);
    }

    /// A 2026-07-28 request (by its `MCP-Protocol-Version`): that revision has no GET
    /// stream and no session to delete.
    fn speaks_stateless(&self, head: &RequestHead) -> bool {
        let supported = &self.shared.config.supported_versions;
        checks::version_header(&head.headers, supported)
            .is_ok_and(|v| v.is_some_and(|v| v.is_stateless()))
    }
}
