//! Opaque access tokens checked with the authorization server's introspection endpoint
//! (RFC 7662), for servers protected by OAuth whose tokens are not JWTs:
//! [`introspection_validator`] makes the validator a
//! [`ProtectedResource`](zest_core::auth::ProtectedResource) takes.
//!
//! The server authenticates to the endpoint with its own client id and secret (HTTP Basic).
//! Answers are cached by a SHA-256 digest of the token (the token itself is not kept): an
//! active token until its `exp` or for [`Introspection::cache_active`] (60 s by default),
//! whichever comes first, so a token revoked at the authorization server is refused within
//! that time; an inactive one for [`Introspection::cache_inactive`] (10 s). The cache holds
//! [`Introspection::max_entries`] tokens at most (expired ones go first, then all).
//!
//! The validator is synchronous, as the router asks: a token not in the cache costs one
//! blocking POST (bounded by a 10 s timeout) on the thread that checks it; on zest-tokio and
//! zest-smol that is an executor thread, once per token per cache period. The audience, the
//! expiry and the scopes are then checked by the router, as for JWTs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};
use zest_core::auth::Principal;

/// Where and how tokens are introspected. Build with [`Introspection::new`].
#[derive(Clone)]
#[non_exhaustive]
pub struct Introspection {
    /// The authorization server's `introspection_endpoint`.
    pub endpoint: String,
    /// This server's client id at the authorization server.
    pub client_id: String,
    /// Its secret (never shown in `Debug` output).
    pub client_secret: String,
    /// The issuer an answer's `iss` must equal, when the answer has one.
    pub issuer: Option<String>,
    /// How long an active token's answer is kept (never past its `exp`). Default 60 s.
    pub cache_active: Duration,
    /// How long an inactive token's answer is kept. Default 10 s.
    pub cache_inactive: Duration,
    /// Most tokens kept. Default 10,000.
    pub max_entries: usize,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl Introspection {
    /// The endpoint and this server's credentials, with every default.
    pub fn new(endpoint: &str, client_id: &str, client_secret: &str) -> Self {
        Self {
            endpoint: endpoint.to_owned(),
            client_id: client_id.to_owned(),
            client_secret: client_secret.to_owned(),
            issuer: None,
            cache_active: Duration::from_secs(60),
            cache_inactive: Duration::from_secs(10),
            max_entries: 10_000,
        }
    }

    /// The `introspection_endpoint` `issuer` publishes in its metadata (blocking: call it
    /// before serving), answers checked to come from `issuer`.
    pub fn discover(issuer: &str, client_id: &str, client_secret: &str) -> Result<Self, String> {
        let endpoint = super::jwks::issuer_metadata_field(issuer, "introspection_endpoint")?;
        let mut config = Self::new(&endpoint, client_id, client_secret);
        config.issuer = Some(issuer.to_owned());
        Ok(config)
    }
}

type Verdict = Result<Principal, String>;

/// Answers by token digest, each with the moment it stops counting.
type Cache = Mutex<HashMap<[u8; 32], (Verdict, Instant)>>;

/// A validator that introspects each token it has not seen lately (see the module docs).
pub fn introspection_validator(
    introspection: Introspection,
) -> impl Fn(&str) -> Result<Principal, String> + Send + Sync + 'static {
    let cache: Arc<Cache> = Arc::default();
    move |token: &str| {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let now = Instant::now();
        if let Some((verdict, _)) = lock(&cache).get(&key).filter(|(_, until)| *until > now) {
            return verdict.clone();
        }
        let (verdict, keep) = match introspect(&introspection, token) {
            Ok(Some(principal)) => {
                let keep = match principal.expires_at.map(seconds_left) {
                    Some(left) => left.min(introspection.cache_active),
                    None => introspection.cache_active,
                };
                (Ok(principal), keep)
            }
            Ok(None) => (Err("the token is not active".to_owned()), introspection.cache_inactive),
            // The endpoint could not answer: refuse this time, ask again next time.
            Err(why) => return Err(format!("introspection failed: {why}")),
        };
        let mut cache = lock(&cache);
        if cache.len() >= introspection.max_entries {
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= introspection.max_entries {
                cache.clear();
            }
        }
        cache.insert(key, (verdict.clone(), now + keep));
        verdict
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The time until `exp` (Unix seconds) from now on the wall clock; zero once past.
fn seconds_left(exp: u64) -> Duration {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    Duration::from_secs(exp.saturating_sub(now))
}

/// One introspection: the principal of an active token, `None` for an inactive one.
fn introspect(config: &Introspection, token: &str) -> Result<Option<Principal>, String> {
    let form = form_urlencoded::Serializer::new(String::new())
        .append_pair("token", token)
        .append_pair("token_type_hint", "access_token")
        .finish();
    // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined.
    let encode = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encode(&config.client_id), encode(&config.client_secret));
    let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair));
    let (status, body) = super::fetch::post_form(&config.endpoint, Some(&basic), &form)?;
    if status != 200 {
        return Err(format!("the endpoint answered {status}"));
    }
    let answer: Value = serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}"))?;
    if answer.get("active").and_then(Value::as_bool) != Some(true) {
        return Ok(None);
    }
    let issuer = answer.get("iss").and_then(Value::as_str);
    if let (Some(expected), Some(got)) = (config.issuer.as_deref(), issuer) {
        if expected != got {
            return Err(format!("the token was issued by {got}, not {expected}"));
        }
    }
    Ok(Some(super::jwks::principal(&answer)))
}
