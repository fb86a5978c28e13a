//! The legacy HTTP+SSE transport (2024-11-05): a GET opens the session's one stream and
//! names the endpoint; POSTs to it carry the session in the query and get 202; every
//! message the session sends goes on the stream, and the session ends with it.

use std::time::Instant;

use http::{HeaderMap, StatusCode};

use super::streams::SlotKind;
use super::{Exchange, Router, SessionId};
use crate::error::Rejection;
use crate::framing::sse;
use crate::io::{RequestHead, StreamId};
use crate::rpc::Incoming;

impl<H: Clone> Router<H> {
    pub(super) fn open_legacy(&mut self, now: Instant, stream: StreamId) {
        let kind = SlotKind::Legacy { carried_by: Some(stream) };
        let id = match self.open_session(now, kind) {
            Ok(id) => id,
            Err(rejection) => return self.refuse(stream, None, &rejection),
        };
        self.exchanges.insert(stream, Exchange::Carrying(id.clone()));
        self.wire.open_sse(stream, HeaderMap::new());
        let endpoint = format!("{}?sessionId={id}", self.config.legacy_messages_path);
        if let Ok(event) = sse::encode_event(None, Some("endpoint"), &endpoint) {
            self.wire.write(stream, event);
        }
        if let Some(slot) = self.sessions.get_mut(&id) {
            slot.flush_legacy_backlog(&mut self.wire);
        }
    }

    pub(super) fn legacy_session(&self, head: &RequestHead) -> Result<SessionId, Rejection> {
        let query = head.uri.query().unwrap_or("");
        let value = query.split('&').find_map(|pair| pair.strip_prefix("sessionId="));
        self.known(value.ok_or(Rejection::MissingSession)?)
    }

    pub(super) fn legacy_post(
        &mut self,
        now: Instant,
        stream: StreamId,
        id: &SessionId,
        body: &[u8],
    ) {
        let incoming = Incoming::decode(body);
        if let Incoming::Invalid(e) = &incoming {
            return self.refuse(stream, e.id().cloned(), &Rejection::Decode(e.clone()));
        }
        let Some(slot) = self.sessions.get_mut(id) else {
            return self.refuse(stream, None, &Rejection::UnknownSession);
        };
        slot.last_active = now;
        slot.machine.handle_decoded(now, stream, incoming);
        self.wire.respond(stream, StatusCode::ACCEPTED, HeaderMap::new());
        self.wire.close(stream);
        self.flush(id);
    }
}
