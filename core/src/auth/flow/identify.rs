//! Who the client is at an issuer (pre-registered, a metadata document URL, or dynamic
//! registration) and which scopes it asks for.

use bytes::Bytes;
use http::header::{HeaderValue, CONTENT_TYPE};
use http::{Method, StatusCode};
use serde::Deserialize;

use super::{json_headers, AuthFlow, Discovered, Grant, Identity, Step};
use crate::auth::{AuthError, ClientCredentials};

impl AuthFlow {
    /// The client's identity at the discovered issuer, without registering.
    pub(super) fn identity(&mut self, d: &Discovered) -> Option<Identity> {
        if let Some(known) = self.identities.get(&d.issuer) {
            return Some(known.clone());
        }
        let fits = |c: &&ClientCredentials| c.issuer.as_ref().is_none_or(|i| *i == d.issuer);
        let identity = if let Some(c) = self.config.pre_registered.as_ref().filter(fits) {
            Identity {
                client_id: c.client_id.clone(),
                secret: c.client_secret.clone(),
                method: c.auth_method.clone(),
                key: c.private_key_pem.clone(),
            }
        } else if let (true, Some(url)) =
            (d.server.client_id_metadata_document_supported, &self.config.client_metadata_url)
        {
            let method = Some("none".into());
            Identity { client_id: url.clone(), secret: None, method, key: None }
        } else if let Some(id) = (self.tokens.as_ref())
            .filter(|t| t.issuer == d.issuer)
            .and_then(|t| t.client_id.clone())
        {
            // Tokens from a cache name the public client they were issued to.
            Identity { client_id: id, secret: None, method: Some("none".into()), key: None }
        } else {
            return None;
        };
        self.identities.insert(d.issuer.clone(), identity.clone());
        Some(identity)
    }

    pub(super) fn register(&mut self, d: &Discovered, redirect_uri: &str) {
        let Some(endpoint) =
            d.server.registration_endpoint.clone().filter(|_| self.config.dynamic_registration)
        else {
            return self.fail(AuthError::NoClientIdentity { issuer: d.issuer.clone() });
        };
        let method = if d.server.offers_auth_method("none") {
            "none"
        } else if d.server.offers_auth_method("client_secret_basic") {
            "client_secret_basic"
        } else {
            "client_secret_post"
        };
        let body = serde_json::json!({
            "client_name": self.config.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": self.config.application_type,
        });
        let mut headers = json_headers();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        self.step = Step::Register;
        self.send(Method::POST, &endpoint, headers, Bytes::from(body.to_string()));
    }

    pub(super) fn registered(&mut self, status: StatusCode, body: &[u8]) {
        #[derive(Deserialize)]
        struct Registration {
            client_id: String,
            client_secret: Option<String>,
            token_endpoint_auth_method: Option<String>,
        }
        #[derive(Deserialize)]
        struct Refusal {
            error: Option<String>,
        }
        if !status.is_success() {
            if status == StatusCode::NOT_FOUND
                && self.discovered.as_ref().is_some_and(|d| d.defaults)
            {
                return self.fail(AuthError::Discovery(
                    "the server refused with 401 but publishes no OAuth metadata (not even the \
                     2025-03-26 defaults): it wants a token some other way"
                        .into(),
                ));
            }
            let error = serde_json::from_slice::<Refusal>(body).ok().and_then(|r| r.error);
            return self.fail(AuthError::Registration { status: status.as_u16(), error });
        }
        let r: Registration = match serde_json::from_slice(body) {
            Ok(r) => r,
            Err(e) => return self.fail(AuthError::Malformed(format!("registration: {e}"))),
        };
        let Some(d) = self.discovered.clone() else { return };
        let identity = Identity {
            client_id: r.client_id,
            secret: r.client_secret,
            method: r.token_endpoint_auth_method,
            key: None,
        };
        self.identities.insert(d.issuer.clone(), identity);
        if let Grant::AuthorizationCode { redirect_uri } = self.config.grant.clone() {
            self.authorization_request(&d, redirect_uri);
        }
    }

    /// The scopes to ask for: the challenge's, else the resource's, else none; plus
    /// `offline_access` where the server lists it.
    pub(super) fn scope_for(&self, d: &Discovered) -> Option<String> {
        let base = self.challenged_scope.clone().or_else(|| {
            let listed = d.resource.as_ref()?.scopes_supported.as_ref()?;
            (!listed.is_empty()).then(|| listed.join(" "))
        });
        let offline = self.config.offline_access
            && matches!(self.config.grant, Grant::AuthorizationCode { .. })
            && d.server.lists_scope("offline_access");
        match (base, offline) {
            (Some(s), true) if !s.split_whitespace().any(|x| x == "offline_access") => {
                Some(format!("{s} offline_access"))
            }
            (None, true) => Some("offline_access".into()),
            (base, _) => base,
        }
    }
}
