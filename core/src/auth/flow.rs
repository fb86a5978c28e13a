//! The authorization flow of one HTTP client: from a challenge (or an expiring token) to a
//! usable access token, through discovery, client identification, the authorization-code
//! boundary and the token endpoint. One exchange at a time; the HTTP transport opens each
//! request this hands it, on its own stream counter, and reports the answer back.
//!
//! ```text
//!  401 ─▶ resource metadata (hint, path-inserted, root; none: 2025-03-26 origin)
//!      ─▶ server metadata (RFC 8414 / OIDC in order; none: /authorize /token /register)
//!      ─▶ refresh (a refresh token for this issuer)      ─▶ token ─▶ Done(Ok)
//!      ─▶ identify (pre-registered, metadata URL, registration)
//!      ─▶ AuthorizationRequired(url) ⇄ authorize(redirect) ─▶ token ─▶ Done(Ok)
//!  403 insufficient_scope ─▶ the same authorization with the union of the scopes
//! ```

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::header::{HeaderValue, ACCEPT};
use http::{HeaderMap, Method, StatusCode};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

mod grants;
mod identify;

use super::challenge::BearerChallenge;
use super::dpop::{DpopKey, DpopSigner, DPOP_NONCE};
use super::metadata::{ResourceMetadata, ServerMetadata};
use super::pkce::Pkce;
use super::urls::{
    canonical_resource, checked, covers_resource, origin, resource_metadata_candidates,
    server_metadata_candidates,
};
use super::{AuthError, Grant, OAuthConfig, Tokens};
use crate::io::{HttpRequest, StreamEvent, StreamId};

/// The largest metadata, registration or token answer read.
const MAX_ANSWER: usize = 256 * 1024;

/// What the flow reports to the transport.
#[derive(Debug)]
pub(crate) enum AuthEvent {
    /// A user must authorize at this URL; answer with [`AuthFlow::authorize`].
    AuthorizationRequired(String),
    /// New tokens, for the application's cache.
    TokensChanged(Tokens),
    /// Before refreshing: what does the shared cache hold? (answer with `cached`)
    LoadTokens,
    /// Tokens another process stored, taken instead of refreshing.
    Adopted(Tokens),
    /// The flow is over: replay what waited (with the new token) or fail it.
    Done(Result<(), AuthError>),
}

/// What discovery found.
#[derive(Clone, Debug)]
struct Discovered {
    resource: Option<ResourceMetadata>,
    issuer: String,
    server: ServerMetadata,
    /// No metadata anywhere: the 2025-03-26 default endpoints, which may not exist.
    defaults: bool,
}

/// A client identity at one issuer.
#[derive(Clone, Debug)]
struct Identity {
    client_id: String,
    secret: Option<String>,
    method: Option<String>,
    /// The PEM of the key that signs `private_key_jwt` assertions.
    key: Option<String>,
}

#[derive(Debug)]
enum Step {
    Idle,
    ResourceMetadata {
        candidates: VecDeque<String>,
    },
    ServerMetadata {
        issuer: String,
        candidates: VecDeque<String>,
        legacy: bool,
        resource: Option<ResourceMetadata>,
    },
    Register,
    Authorizing {
        state: String,
        pkce: Pkce,
        issuer: String,
        redirect_uri: String,
    },
    Token {
        refresh: bool,
    },
    /// The identity provider exchanges the ID token for an identity assertion grant.
    Exchange,
    /// Before a refresh: the application reads the shared cache.
    AwaitCache,
}

/// The answer of the exchange in flight.
#[derive(Debug)]
struct Answer {
    stream: StreamId,
    status: Option<StatusCode>,
    /// The `DPoP-Nonce` the server named.
    nonce: Option<String>,
    body: Vec<u8>,
}

#[derive(Debug)]
pub(crate) struct AuthFlow {
    config: OAuthConfig,
    server: http::Uri,
    resource: String,
    rng: ChaCha20Rng,
    clock: Option<(Instant, u64)>,
    tokens: Option<Tokens>,
    discovered: Option<Discovered>,
    identities: HashMap<String, Identity>,
    step: Step,
    /// The scopes asked for in the last authorization.
    scope: Option<String>,
    /// The scopes the challenge that started this flow named.
    challenged_scope: Option<String>,
    /// The flow refreshes once it knows the token endpoint.
    refresh_next: bool,
    /// The shared cache was read in this flow.
    cache_checked: bool,
    /// The resource server's challenge asked for DPoP.
    pub(super) rs_wants_dpop: bool,
    /// A refresh was tried since the server last accepted a request: a refusal now asks
    /// for a new grant instead.
    refreshed: bool,
    /// A refresh before expiry failed for these tokens: wait for a refusal instead.
    proactive_failed: bool,
    /// When the current tokens were obtained (wall clock), if this flow obtained them.
    pub(super) obtained: Option<u64>,
    /// The wall clock at the last input, for the claims of assertions.
    pub(super) last_unix: u64,
    /// The DPoP key, once tokens are bound to one.
    pub(super) dpop_key: Option<Arc<DpopKey>>,
    /// The authorization server's DPoP nonce in use, and the one its last answer offered.
    pub(super) as_nonce: Option<String>,
    pub(super) as_nonce_offered: Option<String>,
    /// The last token request, to send again with a new nonce.
    pub(super) token_sent: Option<(String, HeaderMap, Bytes, bool)>,
    authorizations: u32,
    answer: Option<Answer>,
    outbox: Option<Box<HttpRequest>>,
    events: VecDeque<AuthEvent>,
}

impl AuthFlow {
    pub(crate) fn new(config: OAuthConfig, server: http::Uri) -> Self {
        let rng = ChaCha20Rng::from_seed(config.rng_seed.unwrap_or_default());
        Self {
            resource: canonical_resource(&server),
            server,
            rng,
            clock: config.clock,
            tokens: config.tokens.clone(),
            discovered: None,
            identities: HashMap::new(),
            step: Step::Idle,
            scope: None,
            challenged_scope: None,
            refresh_next: false,
            cache_checked: false,
            rs_wants_dpop: false,
            refreshed: false,
            proactive_failed: false,
            obtained: None,
            last_unix: 0,
            dpop_key: None,
            as_nonce: None,
            as_nonce_offered: None,
            token_sent: None,
            authorizations: 0,
            answer: None,
            outbox: None,
            events: VecDeque::new(),
            config,
        }
    }

    /// The signer of requests that carry the current DPoP-bound token, if it is one.
    pub(crate) fn dpop_signer(&mut self) -> Option<DpopSigner> {
        let tokens = self.tokens.as_ref().filter(|t| t.dpop)?;
        let key = self.dpop_key.clone()?;
        let mut seed = [0u8; 32];
        self.rng.fill_bytes(&mut seed);
        let rng = ChaCha20Rng::from_seed(seed);
        Some(DpopSigner::new(key, tokens.access_token.clone(), rng, self.clock))
    }

    /// The application's answer to `LoadTokens`: tokens of this issuer that are not ours
    /// and not expired are taken instead of refreshing. `Err` when none was asked for.
    pub(crate) fn cached(&mut self, cached: Option<Tokens>) -> Result<(), ()> {
        if !matches!(self.step, Step::AwaitCache) {
            return Err(());
        }
        self.step = Step::Idle;
        let issuer = self.discovered.as_ref().map(|d| d.issuer.as_str()).unwrap_or_default();
        let ours = self.tokens.as_ref().map(|t| t.access_token.as_str());
        let newer = cached.filter(|t| {
            t.issuer == issuer
                && Some(t.access_token.as_str()) != ours
                && !t.expires_within(self.last_unix, 0)
        });
        match newer {
            Some(tokens) => {
                self.refresh_next = false;
                self.obtained = None;
                self.tokens = Some(tokens.clone());
                self.events.push_back(AuthEvent::Adopted(tokens));
                self.events.push_back(AuthEvent::Done(Ok(())));
            }
            None => self.after_discovery(),
        }
        Ok(())
    }

    /// The access token to send, if any.
    pub(crate) fn access_token(&self) -> Option<&str> {
        self.tokens.as_ref().map(|t| t.access_token.as_str())
    }

    /// True while a flow runs (sends are held).
    pub(crate) fn running(&self) -> bool {
        !matches!(self.step, Step::Idle)
    }

    fn unix(&self, now: Instant) -> u64 {
        let (at, secs) = self.clock.unwrap_or((now, 0));
        secs + now.saturating_duration_since(at).as_secs()
    }

    /// An MCP request got through: the authorization count starts over.
    pub(crate) fn accepted(&mut self) {
        self.authorizations = 0;
        self.refreshed = false;
    }

    /// When to refresh before the access token expires, if it can be.
    pub(crate) fn refresh_at(&self) -> Option<Instant> {
        let (at, secs) = self.clock?;
        let tokens = self.tokens.as_ref().filter(|t| t.refresh_token.is_some())?;
        if self.proactive_failed {
            return None;
        }
        let due = tokens.expires_at?.saturating_sub(self.margin());
        at.checked_add(std::time::Duration::from_secs(due.saturating_sub(secs)))
    }

    /// How long before expiry to refresh: the configured margin, but at most half the
    /// lifetime of tokens this flow obtained (short-lived tokens are not refreshed at once).
    fn margin(&self) -> u64 {
        let configured = self.config.refresh_margin.as_secs();
        let lifetime = (self.tokens.as_ref().and_then(|t| t.expires_at))
            .zip(self.obtained)
            .map(|(expires, obtained)| expires.saturating_sub(obtained));
        lifetime.map_or(configured, |l| configured.min(l / 2))
    }

    /// A refresh before expiry failed: the next refusal decides.
    pub(crate) fn no_proactive_refresh(&mut self) {
        self.proactive_failed = true;
    }

    /// Before a send: starts a refresh when the token is about to expire. True when a flow
    /// now runs.
    pub(crate) fn before_send(&mut self, now: Instant) -> bool {
        if self.running() {
            return true;
        }
        let margin = self.margin();
        let unix = self.unix(now);
        self.last_unix = unix;
        let due = self.tokens.as_ref().is_some_and(|t| {
            t.refresh_token.is_some() && t.expires_within(unix, margin) && self.clock.is_some()
        });
        if due {
            self.cache_checked = false;
            self.refresh_next = true;
            self.challenged_scope = None;
            self.start();
        }
        self.running()
    }

    /// The server refused a request that carried `sent` as its token. Starts the flow, or
    /// ends it at once when a newer token already exists.
    pub(crate) fn challenged(
        &mut self,
        status: StatusCode,
        challenge: Option<BearerChallenge>,
        sent: Option<&str>,
    ) {
        if self.running() {
            return;
        }
        let current = self.access_token();
        if current.is_some() && current != sent {
            // Another flow already replaced the token this request was sent with.
            self.events.push_back(AuthEvent::Done(Ok(())));
            return;
        }
        let challenge = challenge.unwrap_or_default();
        self.rs_wants_dpop |= challenge.dpop;
        let step_up = status == StatusCode::FORBIDDEN;
        if step_up && !challenge.insufficient_scope() {
            let error = AuthError::Rejected { status: 403, error: challenge.error };
            self.events.push_back(AuthEvent::Done(Err(error)));
            return;
        }
        self.challenged_scope = challenge.scope.clone();
        self.cache_checked = false;
        if step_up {
            // The union of what was asked before and what the server wants now.
            let mut scopes: Vec<String> = Vec::new();
            for s in [
                self.scope.as_deref(),
                self.tokens.as_ref().and_then(|t| t.scope.as_deref()),
                challenge.scope.as_deref(),
            ]
            .into_iter()
            .flatten()
            .flat_map(str::split_whitespace)
            {
                if !scopes.iter().any(|have| have == s) {
                    scopes.push(s.to_owned());
                }
            }
            self.challenged_scope = (!scopes.is_empty()).then(|| scopes.join(" "));
            if self.discovered.is_some() {
                self.refresh_next = false;
                return self.after_discovery();
            }
        }
        // A 401 on a token that can be refreshed: refresh once before asking anyone.
        self.refresh_next = !step_up
            && !self.refreshed
            && self.tokens.as_ref().is_some_and(|t| t.refresh_token.is_some());
        if self.refresh_next && self.discovered.is_some() {
            return self.after_discovery();
        }
        self.discovered = None;
        match challenge.resource_metadata {
            Some(hint) => match checked(&hint) {
                Ok(_) => {
                    let mut candidates = VecDeque::from([hint]);
                    candidates.extend(resource_metadata_candidates(&self.server));
                    self.step = Step::ResourceMetadata { candidates };
                    self.next_candidate();
                }
                Err(e) => self.fail(e),
            },
            None => self.start(),
        }
    }

    /// Discovery from the well-known URLs.
    fn start(&mut self) {
        if self.discovered.is_some() {
            return self.after_discovery();
        }
        let candidates = resource_metadata_candidates(&self.server).into();
        self.step = Step::ResourceMetadata { candidates };
        self.next_candidate();
    }

    /// The next HTTP request to open, once.
    pub(crate) fn take_request(&mut self) -> Option<Box<HttpRequest>> {
        self.outbox.take()
    }

    /// The transport opened the request as `stream`.
    pub(crate) fn opened(&mut self, stream: StreamId) {
        self.answer = Some(Answer { stream, status: None, nonce: None, body: Vec::new() });
    }

    /// Whether `stream` is the flow's exchange.
    pub(crate) fn owns(&self, stream: StreamId) -> bool {
        self.answer.as_ref().is_some_and(|a| a.stream == stream)
    }

    pub(crate) fn poll_event(&mut self) -> Option<AuthEvent> {
        self.events.pop_front()
    }

    /// What the runtime reported on the flow's exchange.
    pub(crate) fn receive(&mut self, now: Instant, event: StreamEvent<'_>) {
        self.last_unix = self.unix(now);
        let Some(answer) = self.answer.as_mut() else { return };
        match event {
            StreamEvent::Head(head) => {
                answer.status = Some(head.status);
                let nonce = head.headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok());
                answer.nonce = nonce.map(str::to_owned);
            }
            StreamEvent::Data(bytes) => {
                if answer.body.len() + bytes.len() > MAX_ANSWER {
                    self.answer = None;
                    return self.fail(AuthError::Malformed("an oauth answer is too large".into()));
                }
                answer.body.extend_from_slice(bytes);
            }
            StreamEvent::End => {
                let Some(answer) = self.answer.take() else { return };
                let status = answer.status.unwrap_or(StatusCode::BAD_GATEWAY);
                if answer.nonce.is_some() {
                    self.as_nonce_offered = answer.nonce;
                }
                self.answered(now, status, &answer.body);
            }
            StreamEvent::Failed(why) => {
                self.answer = None;
                self.fail(AuthError::Transient(format!("an oauth request failed: {why}")));
            }
            StreamEvent::Accept(_) => {}
        }
    }

    fn answered(&mut self, now: Instant, status: StatusCode, body: &[u8]) {
        match std::mem::replace(&mut self.step, Step::Idle) {
            Step::Idle | Step::Authorizing { .. } | Step::AwaitCache => {}
            Step::ResourceMetadata { candidates } => {
                self.step = Step::ResourceMetadata { candidates };
                self.resource_metadata(status, body);
            }
            Step::ServerMetadata { issuer, candidates, legacy, resource } => {
                self.step = Step::ServerMetadata { issuer, candidates, legacy, resource };
                self.server_metadata(status, body);
            }
            Step::Register => self.registered(status, body),
            Step::Token { refresh } => self.token_answer(now, refresh, status, body),
            Step::Exchange => self.exchanged(status, body),
        }
    }

    fn next_candidate(&mut self) {
        let next = match &mut self.step {
            Step::ResourceMetadata { candidates } => candidates.pop_front(),
            Step::ServerMetadata { candidates, .. } => candidates.pop_front(),
            _ => return,
        };
        match next {
            Some(url) => self.get(&url),
            None => self.candidates_exhausted(),
        }
    }

    fn candidates_exhausted(&mut self) {
        match std::mem::replace(&mut self.step, Step::Idle) {
            // No protected-resource metadata: the 2025-03-26 model, metadata at the origin.
            Step::ResourceMetadata { .. } => {
                let issuer = origin(&self.server);
                let url = format!("{issuer}/.well-known/oauth-authorization-server");
                let candidates = VecDeque::from([url]);
                self.step =
                    Step::ServerMetadata { issuer, candidates, legacy: true, resource: None };
                self.next_candidate();
            }
            Step::ServerMetadata { issuer, legacy: true, .. } => {
                let server = ServerMetadata::fallback(&issuer);
                let defaults = true;
                self.discovered = Some(Discovered { resource: None, issuer, server, defaults });
                self.after_discovery();
            }
            Step::ServerMetadata { issuer, .. } => self.fail(AuthError::Discovery(format!(
                "no authorization-server metadata found for {issuer}"
            ))),
            _ => {}
        }
    }

    fn resource_metadata(&mut self, status: StatusCode, body: &[u8]) {
        let parsed = status.is_success().then(|| serde_json::from_slice::<ResourceMetadata>(body));
        let Some(Ok(metadata)) = parsed else { return self.next_candidate() };
        if !covers_resource(&metadata.resource, &self.resource) {
            return self.fail(AuthError::ResourceMismatch {
                expected: self.resource.clone(),
                found: metadata.resource,
            });
        }
        let Some(issuer) = metadata.authorization_servers.first().cloned() else {
            return self.fail(AuthError::Discovery(
                "the protected-resource metadata names no authorization server".into(),
            ));
        };
        let issuer_uri = match checked(&issuer) {
            Ok(uri) => uri,
            Err(e) => return self.fail(e),
        };
        let candidates = server_metadata_candidates(&issuer_uri).into();
        let resource = Some(metadata);
        self.step = Step::ServerMetadata { issuer, candidates, legacy: false, resource };
        self.next_candidate();
    }

    fn server_metadata(&mut self, status: StatusCode, body: &[u8]) {
        let parsed = status.is_success().then(|| serde_json::from_slice::<ServerMetadata>(body));
        let Some(Ok(server)) = parsed else { return self.next_candidate() };
        let Step::ServerMetadata { mut issuer, resource, legacy, .. } =
            std::mem::replace(&mut self.step, Step::Idle)
        else {
            return;
        };
        // In the 2025-03-26 model the document was found from the server's origin, not from
        // an issuer: its `issuer` names the server from then on.
        if legacy {
            issuer.clone_from(&server.issuer);
        } else if server.issuer != issuer {
            return self.fail(AuthError::IssuerMismatch { expected: issuer, found: server.issuer });
        }
        self.discovered = Some(Discovered { resource, issuer, server, defaults: false });
        self.after_discovery();
    }

    /// Discovery is done: refresh, or identify the client and authorize.
    fn after_discovery(&mut self) {
        let Some(d) = self.discovered.clone() else { return };
        // Tokens of another issuer are never shown to this one's resource.
        if self.tokens.as_ref().is_some_and(|t| t.issuer != d.issuer && !t.issuer.is_empty()) {
            self.tokens = None;
            self.refresh_next = false;
        }
        let refreshable = self.tokens.as_ref().is_some_and(|t| t.refresh_token.is_some());
        if self.refresh_next && refreshable && self.config.shared_cache && !self.cache_checked {
            // Another process may have refreshed already: look before refreshing.
            self.cache_checked = true;
            self.step = Step::AwaitCache;
            self.events.push_back(AuthEvent::LoadTokens);
            return;
        }
        if std::mem::take(&mut self.refresh_next) {
            if let Some(refresh) = self.tokens.as_ref().and_then(|t| t.refresh_token.clone()) {
                return self.refresh(&d, &refresh);
            }
        }
        if self.authorizations >= self.config.max_authorizations {
            let attempts = self.authorizations;
            return self.fail(AuthError::TooManyAttempts { attempts });
        }
        self.authorizations += 1;
        match self.config.grant.clone() {
            Grant::ClientCredentials => self.client_credentials(&d),
            Grant::JwtBearer { assertion } => self.jwt_bearer(&d, &assertion),
            Grant::IdentityAssertion { idp_token_endpoint, id_token, idp_client_id } => {
                self.exchange(&d, &idp_token_endpoint, &id_token, idp_client_id.as_deref());
            }
            Grant::AuthorizationCode { redirect_uri } => {
                if !d.server.supports_s256() {
                    return self.fail(AuthError::PkceUnsupported { issuer: d.issuer });
                }
                match self.identity(&d) {
                    Some(_) => self.authorization_request(&d, redirect_uri),
                    None => self.register(&d, &redirect_uri),
                }
            }
        }
    }

    fn get(&mut self, url: &str) {
        match checked(url) {
            Ok(_) => self.send(Method::GET, url, json_headers(), Bytes::new()),
            Err(e) => self.fail(e),
        }
    }

    fn send(&mut self, method: Method, url: &str, headers: HeaderMap, body: Bytes) {
        let uri = match checked(url) {
            Ok(uri) => uri,
            Err(e) => return self.fail(e),
        };
        self.outbox = Some(Box::new(HttpRequest { method, uri, headers, body }));
    }

    fn fail(&mut self, error: AuthError) {
        self.step = Step::Idle;
        self.outbox = None;
        self.events.push_back(AuthEvent::Done(Err(error)));
    }
}

fn json_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    headers
}
