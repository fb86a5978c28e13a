//! The grants: the authorization request and its redirect (PKCE S256, `state`, RFC 9207
//! `iss`), refresh, client credentials, and the token endpoint's request and answer.

use std::sync::Arc;
use std::time::Instant;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use http::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use http::{Method, StatusCode};

use super::{json_headers, AuthEvent, AuthFlow, Discovered, Identity, Step};
use crate::auth::dpop::{DpopKey, DPOP};
use crate::auth::jwt::{client_assertion, ASSERTION_TYPE};
use crate::auth::pkce::{random_token, Pkce};
use crate::auth::tokens::{decode_token_response, token_failure};
use crate::auth::urls::checked;
use crate::auth::AuthError;

/// The JWT bearer grant type (RFC 7523).
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The token exchange grant type (RFC 8693).
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The identity assertion grant's token type.
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

impl AuthFlow {
    pub(super) fn authorization_request(&mut self, d: &Discovered, redirect_uri: String) {
        let Some(identity) = self.identities.get(&d.issuer).cloned() else { return };
        let Some(endpoint) = d.server.authorization_endpoint.clone() else {
            return self.fail(AuthError::Discovery("no authorization_endpoint".into()));
        };
        if let Err(e) = checked(&endpoint) {
            return self.fail(e);
        }
        let pkce = Pkce::generate(&mut self.rng);
        let state = random_token(&mut self.rng);
        self.scope = self.scope_for(d);
        let mut query = form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &identity.client_id)
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state)
            .append_pair("resource", &self.resource_indicator(d));
        if let Some(scope) = &self.scope {
            query.append_pair("scope", scope);
        }
        let joiner = if endpoint.contains('?') { '&' } else { '?' };
        let url = format!("{endpoint}{joiner}{}", query.finish());
        self.step = Step::Authorizing { state, pkce, issuer: d.issuer.clone(), redirect_uri };
        self.events.push_back(AuthEvent::AuthorizationRequired(url));
    }

    /// The `resource` parameter: the metadata's validated `resource`, else the server's
    /// canonical URL.
    pub(super) fn resource_indicator(&self, d: &Discovered) -> String {
        match &d.resource {
            Some(r) => r.resource.clone(),
            None => self.resource.clone(),
        }
    }

    /// The application's answer to `AuthorizationRequired`: the whole URL the browser was
    /// sent back to. `Err` when no authorization is awaited.
    pub(crate) fn authorize(&mut self, redirect: &str) -> Result<(), ()> {
        let Step::Authorizing { state, pkce, issuer, redirect_uri } =
            std::mem::replace(&mut self.step, Step::Idle)
        else {
            return Err(());
        };
        let query = redirect.split_once('?').map(|(_, q)| q).unwrap_or("");
        let query = query.split('#').next().unwrap_or("");
        let params: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let get = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        if get("state") != Some(state.as_str()) {
            self.fail(AuthError::StateMismatch);
            return Ok(());
        }
        let advertised = self
            .discovered
            .as_ref()
            .is_some_and(|d| d.server.authorization_response_iss_parameter_supported);
        match get("iss") {
            Some(iss) if iss != issuer => {
                let found = Some(iss.to_owned());
                self.fail(AuthError::IssuerCheckFailed { expected: issuer, found });
                return Ok(());
            }
            None if advertised => {
                self.fail(AuthError::IssuerCheckFailed { expected: issuer, found: None });
                return Ok(());
            }
            _ => {}
        }
        if let Some(error) = get("error") {
            self.fail(AuthError::Denied { error: error.to_owned() });
            return Ok(());
        }
        let Some(code) = get("code").map(str::to_owned) else {
            self.fail(AuthError::Malformed("the redirect carries no code".into()));
            return Ok(());
        };
        let Some(d) = self.discovered.clone() else { return Ok(()) };
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "authorization_code")
            .append_pair("code", &code)
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("code_verifier", &pkce.verifier)
            .append_pair("resource", &self.resource_indicator(&d));
        self.token_request(&d, form, false);
        Ok(())
    }

    /// Nobody will authorize: the flow fails with `NeedsUser`.
    pub(crate) fn refuse_authorization(&mut self, why: String) {
        if matches!(self.step, Step::Authorizing { .. }) {
            self.step = Step::Idle;
            self.fail(AuthError::NeedsUser(why));
        }
    }

    pub(super) fn refresh(&mut self, d: &Discovered, refresh_token: &str) {
        self.refreshed = true;
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "refresh_token")
            .append_pair("refresh_token", refresh_token)
            .append_pair("resource", &self.resource_indicator(d));
        if self.identity(d).is_none() {
            // Refreshing needs the client id it was issued to.
            if let Some(tokens) = self.tokens.as_mut() {
                tokens.refresh_token = None;
            }
            return self.after_discovery();
        }
        self.token_request(d, form, true);
    }

    pub(super) fn client_credentials(&mut self, d: &Discovered) {
        if self.identity(d).is_none() {
            return self.fail(AuthError::NoClientIdentity { issuer: d.issuer.clone() });
        }
        self.scope = self.scope_for(d);
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "client_credentials")
            .append_pair("resource", &self.resource_indicator(d));
        if let Some(scope) = &self.scope {
            form.append_pair("scope", scope);
        }
        self.token_request(d, form, false);
    }

    /// Exchanges the workload's JWT for a token (RFC 7523 §2.1).
    pub(super) fn jwt_bearer(&mut self, d: &Discovered, assertion: &str) {
        if self.identity(d).is_none() {
            // The server may know the workload by its assertion alone.
            let anonymous =
                Identity { client_id: String::new(), secret: None, method: None, key: None };
            self.identities.insert(d.issuer.clone(), anonymous);
        }
        self.scope = self.scope_for(d);
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", JWT_BEARER)
            .append_pair("assertion", assertion)
            .append_pair("resource", &self.resource_indicator(d));
        if let Some(scope) = &self.scope {
            form.append_pair("scope", scope);
        }
        self.token_request(d, form, false);
    }

    /// Enterprise-managed authorization, first leg: the identity provider exchanges the
    /// user's ID token for an identity assertion grant naming this server (RFC 8693).
    pub(super) fn exchange(
        &mut self,
        d: &Discovered,
        endpoint: &str,
        id_token: &str,
        idp_client_id: Option<&str>,
    ) {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", TOKEN_EXCHANGE)
            .append_pair("subject_token", id_token)
            .append_pair("subject_token_type", "urn:ietf:params:oauth:token-type:id_token")
            .append_pair("requested_token_type", ID_JAG)
            .append_pair("audience", &d.issuer)
            .append_pair("resource", &self.resource_indicator(d));
        if let Some(id) = idp_client_id {
            form.append_pair("client_id", id);
        }
        let mut headers = json_headers();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/x-www-form-urlencoded"));
        self.step = Step::Exchange;
        self.send(Method::POST, endpoint, headers, Bytes::from(form.finish()));
    }

    /// Second leg: the assertion goes to this server as a JWT bearer grant.
    pub(super) fn exchanged(&mut self, status: StatusCode, body: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Exchanged {
            access_token: String,
            issued_token_type: Option<String>,
        }
        if !status.is_success() {
            return self.fail(token_failure(status.as_u16(), body));
        }
        let answer: Exchanged = match serde_json::from_slice(body) {
            Ok(a) => a,
            Err(e) => return self.fail(AuthError::Malformed(format!("token exchange: {e}"))),
        };
        if answer.issued_token_type.as_deref().is_some_and(|t| t != ID_JAG) {
            let why = "the identity provider issued another kind of token".into();
            return self.fail(AuthError::Malformed(why));
        }
        let Some(d) = self.discovered.clone() else { return };
        self.jwt_bearer(&d, &answer.access_token);
    }

    /// POSTs `form` to the token endpoint, authenticated as the client's method says.
    pub(super) fn token_request(
        &mut self,
        d: &Discovered,
        mut form: form_urlencoded::Serializer<'_, String>,
        refresh: bool,
    ) {
        let Some(endpoint) = d.server.token_endpoint.clone() else {
            return self.fail(AuthError::Discovery("no token_endpoint".into()));
        };
        let Some(identity) = self.identities.get(&d.issuer).cloned() else { return };
        let mut headers = json_headers();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/x-www-form-urlencoded"));
        let method = identity.method.clone().unwrap_or_else(|| match &identity.secret {
            None => "none".into(),
            Some(_) if d.server.offers_auth_method("client_secret_basic") => {
                "client_secret_basic".into()
            }
            Some(_) if d.server.offers_auth_method("client_secret_post") => {
                "client_secret_post".into()
            }
            Some(_) => "client_secret_basic".into(),
        });
        match (method.as_str(), &identity.secret) {
            ("client_secret_basic", Some(secret)) => {
                let encode =
                    |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
                let pair = format!("{}:{}", encode(&identity.client_id), encode(secret));
                let mut value = HeaderValue::try_from(format!("Basic {}", STANDARD.encode(pair)))
                    .unwrap_or_else(|_| HeaderValue::from_static("Basic"));
                value.set_sensitive(true);
                headers.insert(AUTHORIZATION, value);
            }
            ("client_secret_post", Some(secret)) => {
                form.append_pair("client_id", &identity.client_id)
                    .append_pair("client_secret", secret);
            }
            ("private_key_jwt", _) => {
                let Some(pem) = identity.key.as_deref() else {
                    let why = "private_key_jwt needs the client's private key".into();
                    return self.fail(AuthError::Malformed(why));
                };
                let jti = random_token(&mut self.rng);
                let signed =
                    client_assertion(pem, &identity.client_id, &d.issuer, self.last_unix, &jti);
                match signed {
                    Ok(jwt) => {
                        form.append_pair("client_assertion_type", ASSERTION_TYPE)
                            .append_pair("client_assertion", &jwt);
                    }
                    Err(e) => return self.fail(e),
                }
            }
            _ if identity.client_id.is_empty() => {}
            _ => {
                form.append_pair("client_id", &identity.client_id);
            }
        }
        let body = Bytes::from(form.finish());
        if (self.config.dpop || self.rs_wants_dpop) && d.server.offers_dpop() {
            self.token_sent = Some((endpoint.clone(), headers.clone(), body.clone(), refresh));
            self.prove(&endpoint, &mut headers);
        }
        self.step = Step::Token { refresh };
        self.send(Method::POST, &endpoint, headers, body);
    }

    /// Adds a DPoP proof for a POST to `endpoint` (the key made on first use).
    fn prove(&mut self, endpoint: &str, headers: &mut http::HeaderMap) {
        if self.dpop_key.is_none() {
            self.dpop_key = Some(Arc::new(DpopKey::generate(&mut self.rng)));
        }
        let Some(key) = self.dpop_key.clone() else { return };
        let jti = random_token(&mut self.rng);
        let nonce = self.as_nonce.as_deref();
        let proof = key.proof(&Method::POST, endpoint, self.last_unix, &jti, nonce, None);
        if let Ok(value) = HeaderValue::try_from(proof) {
            headers.insert(DPOP, value);
        }
    }

    /// The authorization server wants a DPoP nonce it just named: the token request goes
    /// again, once per nonce. True when it did.
    fn retry_with_nonce(&mut self, status: StatusCode, body: &[u8]) -> bool {
        let offered = self.as_nonce_offered.take();
        let asks = status == StatusCode::BAD_REQUEST
            && serde_json::from_slice::<serde_json::Value>(body)
                .is_ok_and(|v| v["error"] == "use_dpop_nonce");
        let Some(nonce) = offered.filter(|n| asks && self.as_nonce.as_ref() != Some(n)) else {
            return false;
        };
        let Some((endpoint, mut headers, body, refresh)) = self.token_sent.clone() else {
            return false;
        };
        self.as_nonce = Some(nonce);
        self.prove(&endpoint, &mut headers);
        self.step = Step::Token { refresh };
        self.send(Method::POST, &endpoint, headers, body);
        true
    }

    pub(super) fn token_answer(
        &mut self,
        now: Instant,
        refresh: bool,
        status: StatusCode,
        body: &[u8],
    ) {
        let issuer = self.discovered.as_ref().map(|d| d.issuer.clone()).unwrap_or_default();
        if !status.is_success() && self.retry_with_nonce(status, body) {
            return;
        }
        if !status.is_success() {
            let error = token_failure(status.as_u16(), body);
            if refresh && matches!(error, AuthError::Rejected { .. }) {
                // The refresh token is dead: drop it and ask for a fresh grant.
                self.tokens = None;
                return self.after_discovery();
            }
            if matches!(error, AuthError::Rejected { .. }) {
                self.tokens = None;
            }
            return self.fail(error);
        }
        let unix = self.unix(now);
        let previous = self.tokens.as_ref().filter(|t| t.issuer == issuer);
        match decode_token_response(body, &issuer, unix, previous, self.scope.as_deref()) {
            Ok(mut tokens) => {
                let identity = self.identities.get(&issuer);
                tokens.client_id = identity
                    .filter(|i| i.secret.is_none() && i.key.is_none() && !i.client_id.is_empty())
                    .map(|i| i.client_id.clone());
                self.proactive_failed = false;
                self.obtained = Some(unix);
                self.tokens = Some(tokens.clone());
                self.events.push_back(AuthEvent::TokensChanged(tokens));
                self.events.push_back(AuthEvent::Done(Ok(())));
            }
            Err(e) => self.fail(e),
        }
    }
}
