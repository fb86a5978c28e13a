//! Requests refused for want of authorization: parked while the OAuth flow runs (later sends
//! wait in `held`), then replayed with the new token or failed with the flow's error.

use http::header::{HeaderValue, AUTHORIZATION, WWW_AUTHENTICATE};
use http::StatusCode;

use super::{Body, Exchange, Parked, Role, Streamable};
use crate::auth::{AuthError, BearerChallenge};
use crate::error::RequestError;
use crate::http::client::PlannerEvent;
use crate::io::{ResponseHead, Transmit};
use crate::rpc::OutgoingKind;

/// A 401, or a 403 whose challenge asks for more scope.
pub(super) fn wants_auth(head: &ResponseHead) -> bool {
    match head.status {
        StatusCode::UNAUTHORIZED => true,
        StatusCode::FORBIDDEN => {
            let values = head.headers.get_all(WWW_AUTHENTICATE);
            BearerChallenge::find(values.iter().filter_map(|v| v.to_str().ok()))
                .is_some_and(|c| c.insufficient_scope())
        }
        _ => false,
    }
}

impl Streamable {
    /// The first parked refusal the flow has not heard of yet.
    pub(in crate::http::client) fn next_challenge(&mut self) -> Option<&Parked> {
        let parked = self.parked.iter_mut().find(|p| !p.reported)?;
        parked.reported = true;
        Some(parked)
    }

    /// Whether a POST was accepted since the last call.
    pub(in crate::http::client) fn take_accepted(&mut self) -> bool {
        std::mem::take(&mut self.accepted)
    }

    /// Holds later sends (a flow started before any refusal: a refresh).
    pub(in crate::http::client) fn hold(&mut self) {
        self.auth_hold = true;
    }

    /// The flow succeeded: every parked request goes again with `token`, then what waited.
    pub(in crate::http::client) fn replay_parked(&mut self, token: Option<&HeaderValue>) {
        for parked in std::mem::take(&mut self.parked) {
            let mut request = parked.replay;
            match (&mut self.common.dpop, token) {
                // A bound token goes with a fresh proof (a proof is good for one request).
                (Some(signer), _) => {
                    signer.sign(&request.method, &request.uri, &mut request.headers)
                }
                (None, Some(value)) => drop(request.headers.insert(AUTHORIZATION, value.clone())),
                (None, None) => drop(request.headers.remove(AUTHORIZATION)),
            }
            let stream = self.common.next_stream();
            if let Some(id) = &parked.request {
                self.owed.insert(id.clone(), stream);
            }
            let ex = Exchange {
                role: Role::Post { request: parked.request, initialize: parked.initialize },
                session: self.session.as_ref().map(|_| self.generation),
                body: Body::Head,
                refused: None,
                replay: Some(request.clone()),
            };
            self.exchanges.insert(stream, ex);
            self.common.transmits.push_back(Transmit::Http { stream, request });
        }
        self.release_held();
    }

    /// The flow failed: every parked request, and every request that waited, fails with it.
    pub(in crate::http::client) fn fail_parked(
        &mut self,
        error: &AuthError,
        up: &mut Vec<PlannerEvent>,
    ) {
        let failed = RequestError::Auth(error.clone());
        for parked in std::mem::take(&mut self.parked) {
            if let Some(id) = parked.request {
                self.owed.remove(&id);
                up.push(PlannerEvent::Failed { id, error: failed.clone() });
            }
        }
        self.auth_hold = false;
        for (out, _) in std::mem::take(&mut self.held) {
            if let OutgoingKind::Request { id, .. } = out.kind {
                up.push(PlannerEvent::Failed { id, error: failed.clone() });
            }
        }
    }

    /// Sends what waited for the flow (a refresh that failed for now sends it with the old
    /// token: a refusal starts the flow again).
    pub(in crate::http::client) fn release_held(&mut self) {
        self.auth_hold = false;
        if self.opening_get {
            return;
        }
        for (out, marks) in std::mem::take(&mut self.held) {
            self.send(out, &marks);
        }
    }
}
