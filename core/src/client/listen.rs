//! 2026-07-28 `subscriptions/listen`, client side: that revision has no GET stream and no
//! `resources/subscribe`; a client hears of list changes and resource updates on one
//! long-lived `subscriptions/listen` request instead. Once ready, the client opens one for
//! the lists whose changes the server announces; `resources/subscribe` and
//! `resources/unsubscribe` change its resources and open it again (the old one is
//! cancelled), answered at once as they are in the session era. Its notifications reach the
//! app as the session era's do; its own end is not the app's business. A listen whose
//! exchange breaks is sent again (as any 2026-07-28 request is); one that ends otherwise (the
//! server ended it, or it ran for [`LISTEN_FOR`]) is opened anew at the client's next input,
//! at most [`MAX_REOPENS`] times.
//!
//! [`Event::Ready`] waits for the first listen's acknowledgment (or its end, or
//! `init_timeout`): a change the server makes once the app holds a ready client is never
//! missed, as in the session era, where notifications flow from `initialize` on.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

use super::{Client, Event, Negotiated, ServerNotification};
use crate::error::UsageError;
use crate::jsonrpc::{RawJson, RequestId};
use crate::rpc::RequestOptions;

/// How long a listen may stay open before the client opens it anew.
pub(super) const LISTEN_FOR: Duration = Duration::from_secs(24 * 60 * 60);

/// How many times a session's listen is opened anew after it ended.
pub(super) const MAX_REOPENS: u32 = 16;

/// How many cancelled listens are remembered, so that their ends are not the app's.
const ABANDONED_MEMORY: usize = 8;

/// The listen this client holds open, and what it asks for.
#[derive(Debug, Default)]
pub(super) struct Listening {
    /// The open listen request, if any.
    id: Option<RequestId>,
    /// Resources subscribed to.
    uris: BTreeSet<String>,
    /// Listens cancelled for a new one, whose ends may still come.
    abandoned: Vec<RequestId>,
    /// The listen ended on its own: open it anew at the next input.
    reopen: bool,
    reopened: u32,
    /// `Ready`, held until the first listen is acknowledged or ends, or until the deadline.
    held_ready: Option<(Box<Negotiated>, Instant)>,
}

#[derive(Deserialize)]
struct Uri {
    uri: String,
}

impl Client {
    /// The client is ready in 2026-07-28: `Ready` now, or once the listen it opens is
    /// acknowledged (at the latest after `init_timeout`).
    pub(super) fn ready_and_listen(&mut self, now: Instant, negotiated: Box<Negotiated>) {
        self.listen(now);
        match self.listening.id {
            Some(_) => {
                let until = now + self.config.init_timeout;
                self.listening.held_ready = Some((negotiated, until));
            }
            None => self.events.push_back(Event::Ready(negotiated)),
        }
    }

    /// Lets a held `Ready` out, ahead of what is queued.
    fn release_ready(&mut self) {
        if let Some((negotiated, _)) = self.listening.held_ready.take() {
            self.events.push_front(Event::Ready(negotiated));
        }
    }

    /// The session closed before it was ready for the app: `Ready` never goes out.
    pub(super) fn drop_held_ready(&mut self) {
        self.listening.held_ready = None;
    }

    /// When a held `Ready` goes out regardless.
    pub(super) fn ready_deadline(&self) -> Option<Instant> {
        self.listening.held_ready.as_ref().map(|(_, until)| *until)
    }

    /// A held `Ready` whose deadline passed goes out.
    pub(super) fn release_ready_at(&mut self, now: Instant) {
        if self.ready_deadline().is_some_and(|until| until <= now) {
            self.release_ready();
        }
    }

    /// Opens (or opens anew) the listen for what the server announces and the resources
    /// subscribed to; nothing when there is nothing to hear of.
    pub(super) fn listen(&mut self, now: Instant) {
        if let Some(old) = self.listening.id.take() {
            // Cancelling a request the server may already have ended is harmless.
            let wire = self.rounds.wire_of(&old).unwrap_or_else(|| old.clone());
            let _ = self.endpoint.abandon(&wire, "listening anew");
            self.forget_stream_of(&wire);
            if self.listening.abandoned.len() == ABANDONED_MEMORY {
                self.listening.abandoned.remove(0);
            }
            self.listening.abandoned.push(old);
        }
        let Some(negotiated) = self.negotiated() else { return };
        let caps = &negotiated.capabilities;
        let tools = caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true);
        let prompts = caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true);
        let resources = caps.resources.as_ref().and_then(|r| r.list_changed) == Some(true);
        let uris: Vec<&String> = self.listening.uris.iter().collect();
        if !tools && !prompts && !resources && uris.is_empty() {
            return;
        }
        let filter = json!({"notifications": {
            "toolsListChanged": tools,
            "promptsListChanged": prompts,
            "resourcesListChanged": resources,
            "resourceSubscriptions": uris,
        }});
        let params = Some(self.with_protocol_meta(Some(RawJson::from(filter))));
        let opts = RequestOptions::default().timeout(LISTEN_FOR).max_total(LISTEN_FOR);
        // Err only when the client holds too many requests; then there is no listen.
        let method = "subscriptions/listen";
        if let Ok(id) = self.endpoint.request(now, method, params.clone(), &opts, true, None) {
            // Remembered as any 2026-07-28 request: a broken exchange sends it again.
            self.rounds.sent(&id, method, params, &opts, now + LISTEN_FOR);
            self.listening.id = Some(id);
        }
    }

    /// `resources/subscribe` or `resources/unsubscribe` in 2026-07-28: the listen's resources
    /// change and it is opened anew; the call succeeds at once.
    pub(super) fn change_subscriptions(
        &mut self,
        now: Instant,
        subscribe: bool,
        params: Option<&RawJson>,
    ) -> Result<RequestId, UsageError> {
        let uri =
            params.and_then(|p| p.parse::<Uri>().ok()).ok_or(UsageError::ParamsNotAnObject)?;
        // Nothing would ever come: the server does not offer updates of single resources.
        let offered = self.negotiated().and_then(|n| n.capabilities.resources.as_ref());
        if subscribe && offered.and_then(|r| r.subscribe) != Some(true) {
            let method = "resources/subscribe".to_owned();
            return Err(UsageError::CapabilityNotNegotiated { method, capability: "resources" });
        }
        match subscribe {
            true => self.listening.uris.insert(uri.uri),
            false => self.listening.uris.remove(&uri.uri),
        };
        self.listen(now);
        let id = self.endpoint.outstanding.unsent_id();
        self.events
            .push_back(Event::Response { id: id.clone(), result: Ok(RawJson::empty_object()) });
        Ok(id)
    }

    /// True for the end of a listen (its result, or its failure) and for its acknowledgment:
    /// not the app's to see. The current one, ended on its own, is opened anew at the next
    /// input.
    pub(super) fn is_listen_end(&mut self, event: &Event) -> bool {
        if let Event::Notification(ServerNotification::Other(note)) = event {
            // The listen's acknowledgment is the client's business, not the app's.
            let acknowledged = note.method == "notifications/subscriptions/acknowledged";
            if acknowledged {
                self.release_ready();
            }
            return acknowledged;
        }
        let Event::Response { id, .. } = event else { return false };
        if self.listening.id.as_ref() == Some(id) {
            self.release_ready();
            self.listening.id = None;
            self.listening.reopen = self.listening.reopened < MAX_REOPENS && !self.is_closed();
            return true;
        }
        match self.listening.abandoned.iter().position(|a| a == id) {
            Some(at) => {
                self.listening.abandoned.remove(at);
                true
            }
            None => false,
        }
    }

    /// Opens the listen anew if it ended on its own (called with each input).
    pub(super) fn reopen_listen(&mut self, now: Instant) {
        if std::mem::take(&mut self.listening.reopen) && self.is_modern() {
            self.listening.reopened += 1;
            self.listen(now);
        }
    }
}
