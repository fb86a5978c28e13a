//! OAuth on the router: the protected-resource metadata document, the bearer token check of
//! every other request, and the rule that a session answers only the principal that opened
//! it. Runs right after the Host and Origin checks, before a body is read.

use std::sync::Arc;
use std::time::Instant;

use http::header::{HeaderValue, WWW_AUTHENTICATE};
use http::{HeaderMap, Method, StatusCode};
use serde_json::json;

use super::{session_header, Router, SessionId};
use crate::auth::{Principal, Refusal};
use crate::io::{RequestHead, StreamId};
use crate::jsonrpc::Message;
use crate::rpc::Incoming;

impl<H: Clone> Router<H> {
    /// With OAuth configured: answers the metadata document, or refuses the request, and
    /// then returns `Err`; else who the request comes from (`None` without OAuth).
    pub(super) fn authorize(
        &mut self,
        now: Instant,
        stream: StreamId,
        head: &RequestHead,
    ) -> Result<Option<Arc<Principal>>, ()> {
        let Some(resource) = self.config.oauth.as_ref() else { return Ok(None) };
        let path = head.uri.path();
        let metadata_path = resource.metadata_path();
        let well_known = path == metadata_path || path == "/.well-known/oauth-protected-resource";
        if head.method == Method::GET && well_known {
            let body = serde_json::to_vec(&resource.metadata()).unwrap_or_default();
            self.wire.json(stream, StatusCode::OK, HeaderMap::new(), body);
            return Err(());
        }
        let unix = (self.config.wall_clock)
            .map(|(at, secs)| secs + now.saturating_duration_since(at).as_secs());
        let refusal = match resource.check(&head.headers, unix) {
            Ok(principal) => {
                let owner = session_header(&head.headers)
                    .and_then(|id| self.owner_of(&SessionId(id.to_owned())));
                match owner {
                    Some(owner) if owner != principal.subject => resource.other_principal(),
                    _ => return Ok(Some(principal)),
                }
            }
            Err(refusal) => refusal,
        };
        self.refuse_oauth(stream, &refusal);
        Err(())
    }

    /// A `tools/call` (alone or in a batch) of a tool that needs scopes the principal lacks.
    pub(super) fn tool_refusal(
        &self,
        incoming: &Incoming,
        principal: Option<&Principal>,
    ) -> Option<Refusal> {
        let (resource, principal) = (self.config.oauth.as_ref()?, principal?);
        let refusal = |m: &Message| match m {
            Message::Request(r) if r.method == "tools/call" => {
                #[derive(serde::Deserialize)]
                struct Named {
                    name: String,
                }
                let named: Named = r.params.as_ref()?.parse().ok()?;
                resource.tool_refusal(&named.name, principal)
            }
            _ => None,
        };
        match incoming {
            Incoming::Message(m) => refusal(m),
            Incoming::Batch(items) => items.iter().flatten().find_map(refusal),
            Incoming::Invalid(_) | Incoming::Line(_) => None,
        }
    }

    pub(super) fn refuse_oauth(&mut self, stream: StreamId, refusal: &Refusal) {
        let mut headers = HeaderMap::new();
        if let Ok(value) = HeaderValue::try_from(refusal.challenge.as_str()) {
            headers.insert(WWW_AUTHENTICATE, value);
        }
        let error = refusal.error.unwrap_or("invalid_request");
        let body = json!({"error": error}).to_string().into_bytes();
        self.wire.json(stream, refusal.status, headers, body);
    }
}
