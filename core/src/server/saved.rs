//! A session as a fleet of routers shares it ([`SavedSession`]): taken from a session that
//! served a client message, and made again, on another process, from what was saved.

use std::sync::Arc;
use std::time::Instant;

use super::{Session, Shared};
use crate::auth::Principal;
use crate::http::server::SavedSession;
use crate::lifecycle::rules::ServerPhase;

impl<H: Clone> Session<H> {
    /// What a fleet keeps of this session, once `initialize` came.
    pub(crate) fn saved(&self) -> Option<SavedSession> {
        let info = self.session.as_deref()?.clone();
        Some(SavedSession {
            ready: self.phase == ServerPhase::Ready,
            info,
            log_level: self.log_level,
            subscriptions: self.subscriptions.clone(),
            subject: self.principal.as_ref().map(|p| p.subject.clone()),
        })
    }

    /// A session made from what a fleet kept of it, sending requests with ids from
    /// `id_base` on.
    pub(crate) fn restored(
        shared: Arc<Shared<H>>,
        now: Instant,
        saved: &SavedSession,
        id_base: i64,
    ) -> Self {
        let mut session = Self::with_shared(shared, now);
        session.endpoint.outstanding.start_ids_at(id_base);
        session.refresh(saved);
        session
    }

    /// Takes up what another process of the fleet changed (the client set a log level,
    /// subscribed, sent `initialized` there).
    pub(crate) fn refresh(&mut self, saved: &SavedSession) {
        if self.phase == ServerPhase::Closed {
            return;
        }
        self.phase =
            if saved.ready { ServerPhase::Ready } else { ServerPhase::AwaitingInitialized };
        if self.session.as_deref() != Some(&saved.info) {
            self.session = Some(Arc::new(saved.info.clone()));
        }
        self.log_level = saved.log_level;
        self.subscriptions.clone_from(&saved.subscriptions);
        let same_subject = self.principal.as_ref().map(|p| &p.subject) == saved.subject.as_ref();
        if !same_subject {
            self.principal = saved.subject.clone().map(|subject| {
                Arc::new(Principal {
                    subject,
                    client_id: None,
                    scopes: Vec::new(),
                    audience: Vec::new(),
                    expires_at: None,
                })
            });
        }
    }

    /// Requests this session sends from now on have ids from `base` on.
    pub(crate) fn start_ids_at(&mut self, base: i64) {
        self.endpoint.outstanding.start_ids_at(base);
    }
}
