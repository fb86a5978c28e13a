//! JWT access tokens validated against the issuer's published keys (JWKS), for servers
//! protected by OAuth: [`jwt_validator`] makes the validator a
//! [`ProtectedResource`](zest_core::auth::ProtectedResource) takes.
//!
//! The keys are fetched when the validator is made (blocking: make it before serving) and
//! again, on a thread of their own and at most once a minute, when a token names a key id
//! not among them (the issuer rotated its keys); that token is refused meanwhile, and the
//! client's next try finds the new key. The signature (RS256/384/512, PS256/384/512,
//! ES256/384, EdDSA), the issuer and the expiry (30 s leeway) are checked here; the audience
//! and the scopes by the router.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{decode, decode_header, DecodingKey, Validation};
use serde_json::Value;
use zest_core::auth::Principal;

/// How often an unknown key id may send the validator to the issuer again.
const REFETCH_EVERY: Duration = Duration::from_secs(60);

struct Keys {
    set: JwkSet,
    fetched: Instant,
    fetching: bool,
}

/// A validator for JWTs from `issuer`, whose keys are at `jwks_uri` (`None`: read from the
/// issuer's metadata, OpenID Connect then RFC 8414). `Err` when the keys cannot be fetched.
pub fn jwt_validator(
    issuer: &str,
    jwks_uri: Option<&str>,
) -> Result<impl Fn(&str) -> Result<Principal, String> + Send + Sync + 'static, String> {
    let jwks_uri = match jwks_uri {
        Some(uri) => uri.to_owned(),
        None => discover_jwks_uri(issuer)?,
    };
    let set = fetch_keys(&jwks_uri)?;
    let keys = Arc::new(Mutex::new(Keys { set, fetched: Instant::now(), fetching: false }));
    let issuer = issuer.to_owned();
    Ok(move |token: &str| validate(token, &issuer, &jwks_uri, &keys))
}

fn discover_jwks_uri(issuer: &str) -> Result<String, String> {
    issuer_metadata_field(issuer, "jwks_uri")
}

/// A URL the issuer's metadata names under `field` (OpenID Connect, then RFC 8414).
pub(crate) fn issuer_metadata_field(issuer: &str, field: &str) -> Result<String, String> {
    let base = issuer.trim_end_matches('/');
    for url in [
        format!("{base}/.well-known/openid-configuration"),
        format!("{base}/.well-known/oauth-authorization-server"),
    ] {
        if let Ok((200, body)) = super::fetch::get(&url) {
            let metadata: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
            if let Some(uri) = metadata[field].as_str() {
                return Ok(uri.to_owned());
            }
        }
    }
    Err(format!("{issuer} publishes no {field}"))
}

fn fetch_keys(jwks_uri: &str) -> Result<JwkSet, String> {
    match super::fetch::get(jwks_uri)? {
        (200, body) => serde_json::from_slice(&body).map_err(|e| format!("{jwks_uri}: {e}")),
        (status, _) => Err(format!("{jwks_uri} answered {status}")),
    }
}

fn validate(
    token: &str,
    issuer: &str,
    jwks_uri: &str,
    keys: &Arc<Mutex<Keys>>,
) -> Result<Principal, String> {
    let header = decode_header(token).map_err(|e| format!("not a JWT: {e}"))?;
    let kid = header.kid.clone().unwrap_or_default();
    let jwk = {
        let guard = keys.lock().map_err(|_| "the key cache is poisoned")?;
        guard.set.find(&kid).cloned()
    };
    let Some(jwk) = jwk else {
        refetch(keys, jwks_uri);
        return Err(format!("unknown key id {kid:?}"));
    };
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| format!("unusable key: {e}"))?;
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[issuer]);
    validation.validate_aud = false;
    validation.leeway = 30;
    validation.set_required_spec_claims(&["exp", "iss"]);
    let claims = decode::<Value>(token, &key, &validation).map_err(|e| e.to_string())?.claims;
    Ok(principal(&claims))
}

/// Fetches the keys again on a thread of its own, unless a fetch runs or ran recently.
fn refetch(keys: &Arc<Mutex<Keys>>, jwks_uri: &str) {
    let Ok(mut guard) = keys.lock() else { return };
    if guard.fetching || guard.fetched.elapsed() < REFETCH_EVERY {
        return;
    }
    guard.fetching = true;
    drop(guard);
    let (keys, uri) = (keys.clone(), jwks_uri.to_owned());
    std::thread::spawn(move || {
        let fetched = fetch_keys(&uri);
        if let Ok(mut guard) = keys.lock() {
            if let Ok(set) = fetched {
                guard.set = set;
            }
            guard.fetched = Instant::now();
            guard.fetching = false;
        }
    });
}

/// The principal a token's claims name: `sub` (else `client_id`), `scope`, `aud`, `exp`.
pub fn principal(claims: &Value) -> Principal {
    let text = |key: &str| claims.get(key).and_then(Value::as_str).map(str::to_owned);
    let subject = text("sub").or_else(|| text("client_id")).unwrap_or_default();
    let scopes = text("scope").unwrap_or_default();
    let mut principal = Principal::new(subject, scopes.split_whitespace());
    principal.client_id = text("client_id");
    principal.expires_at = claims.get("exp").and_then(Value::as_u64);
    principal.audience = match claims.get("aud") {
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).map(Into::into).collect(),
        _ => Vec::new(),
    };
    principal
}
