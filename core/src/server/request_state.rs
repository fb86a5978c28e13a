//! 2026-07-28 `requestState`: the answers a call's earlier rounds received, handed to the
//! client to echo byte for byte on its retry. The client is not trusted with it
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>): the state
//! is sealed with HMAC-SHA256 under a server key, bound to the request it was issued for
//! (method and a digest of its params), dated, and bounded in size.
//!
//! ```text
//!  state = base64url(payload) "." base64url(HMAC-SHA256(key, base64url(payload)))
//!  payload = {"m": method, "d": digest of the params, "exp": unix seconds,
//!             "a": {key: answer}, "k": [keys asked in the round it ends]}
//! ```
//!
//! Processes that share the key (and roughly agree on the time) accept each other's states,
//! so a retry may land on any of them.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::Rejection;
use crate::jsonrpc::RawJson;

/// The secret that seals request states. Every process that may receive a retry needs the
/// same key.
#[derive(Clone, PartialEq, Eq)]
pub struct RequestStateKey([u8; 32]);

impl RequestStateKey {
    /// A key from 32 secret bytes (from the OS's entropy, or shared by a fleet).
    pub fn new(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }
}

impl fmt::Debug for RequestStateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RequestStateKey(<secret>)")
    }
}

/// How a server seals and checks request states (`ServerConfig::request_state`). The
/// runtimes fill it in when the app leaves it out: a fresh key and the wall clock.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestStateConfig {
    /// The sealing key.
    pub key: RequestStateKey,
    /// The wall clock, as core cannot read one: at this `Instant` it was this many seconds
    /// after the Unix epoch.
    pub clock: (Instant, u64),
    /// How long a state is accepted after it was issued (default 10 minutes).
    pub max_age: Duration,
    /// The largest state issued or accepted, in bytes (default 256 KiB).
    pub max_bytes: usize,
}

impl RequestStateConfig {
    /// Sealing with `key`, the wall clock reading `unix_secs` at `at`, default limits.
    pub fn new(key: RequestStateKey, at: Instant, unix_secs: u64) -> Self {
        Self {
            key,
            clock: (at, unix_secs),
            max_age: Duration::from_secs(600),
            max_bytes: 256 * 1024,
        }
    }

    fn unix_secs(&self, now: Instant) -> u64 {
        let (at, secs) = self.clock;
        secs + now.saturating_duration_since(at).as_secs()
    }

    fn mac(&self, payload: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key.0).expect("any key length");
        mac.update(payload.as_bytes());
        mac
    }

    /// The state carrying `answers` for a retry of the request `bound` names, which may
    /// answer the keys `asked` (and no others).
    pub(crate) fn seal(
        &self,
        now: Instant,
        bound: &Binding,
        answers: &BTreeMap<String, Value>,
        asked: Vec<&String>,
    ) -> Result<String, Rejection> {
        let exp = self.unix_secs(now) + self.max_age.as_secs();
        let (m, d) = (bound.method.clone(), bound.digest.clone());
        let payload = Payload { m, d, exp, a: answers, k: asked };
        let json = serde_json::to_vec(&payload).unwrap_or_default();
        let payload = URL_SAFE_NO_PAD.encode(json);
        let tag = URL_SAFE_NO_PAD.encode(self.mac(&payload).finalize().into_bytes());
        let state = format!("{payload}.{tag}");
        if state.len() > self.max_bytes {
            let why =
                format!("the answers so far exceed the {}-byte request state", self.max_bytes);
            return Err(Rejection::Internal(why));
        }
        Ok(state)
    }

    /// The answers `state` carries and the keys the retry may answer, if it is one this
    /// server (or one sharing its key) issued for the request `bound` names, and it has not
    /// expired.
    pub(crate) fn open(
        &self,
        now: Instant,
        bound: &Binding,
        state: &str,
    ) -> Result<Opened, Rejection> {
        let refuse = |why: &str| Err(Rejection::InvalidParams(format!("requestState {why}")));
        if state.len() > self.max_bytes {
            return refuse("is larger than this server issues");
        }
        let Some((payload, tag)) = state.split_once('.') else {
            return refuse("failed its integrity check");
        };
        let tag = URL_SAFE_NO_PAD.decode(tag).unwrap_or_default();
        if self.mac(payload).verify_slice(&tag).is_err() {
            return refuse("failed its integrity check");
        }
        let json = URL_SAFE_NO_PAD.decode(payload).unwrap_or_default();
        let Ok(opened) = serde_json::from_slice::<Opened>(&json) else {
            return refuse("failed its integrity check");
        };
        if opened.m != bound.method || opened.d != bound.digest {
            return refuse("was issued for another request");
        }
        if self.unix_secs(now) > opened.exp {
            return refuse("has expired");
        }
        Ok(opened)
    }
}

#[derive(Serialize)]
struct Payload<'a> {
    m: String,
    d: String,
    exp: u64,
    a: &'a BTreeMap<String, Value>,
    k: Vec<&'a String>,
}

/// What a checked state holds.
#[derive(Deserialize)]
pub(crate) struct Opened {
    m: String,
    d: String,
    exp: u64,
    /// The answers of earlier rounds.
    #[serde(rename = "a")]
    pub(crate) answers: BTreeMap<String, Value>,
    /// The keys the round it ended asked: the only ones the retry may answer.
    #[serde(rename = "k", default)]
    pub(crate) asked: Vec<String>,
}

/// The request a state belongs to: its method and a digest of its params without `_meta`,
/// `inputResponses` and `requestState` (so every retry of one call has the same binding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    method: String,
    digest: String,
}

impl Binding {
    /// The request `method` with `params`, from `principal` (OAuth's subject, when the
    /// router checks tokens): state sealed for one principal does not open for another.
    pub(crate) fn new(method: &str, params: Option<&RawJson>, principal: Option<&str>) -> Self {
        let mut params = params.and_then(|p| p.parse::<Value>().ok()).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut params {
            for key in ["_meta", "inputResponses", "requestState"] {
                map.remove(key);
            }
        }
        // serde_json's maps are sorted: the text is the same for the same params.
        let text = serde_json::to_string(&params).unwrap_or_default();
        let mut digest = Sha256::new().chain_update(method).chain_update(b"\n").chain_update(text);
        if let Some(subject) = principal {
            digest = digest.chain_update(b"\nprincipal\n").chain_update(subject);
        }
        let digest = URL_SAFE_NO_PAD.encode(digest.finalize());
        Self { method: method.to_owned(), digest }
    }
}

/// A call's binding, worked out only when a state is sealed for it or opened: most calls
/// never ask the client, and the digest reads every byte of the params.
#[derive(Clone, Debug)]
pub(crate) enum LazyBinding {
    /// Worked out already.
    Ready(Binding),
    /// What it is worked out from.
    Pending { method: String, params: Option<RawJson>, principal: Option<String> },
}

impl LazyBinding {
    /// The binding, worked out now if it was not.
    pub(crate) fn get(&self) -> Binding {
        match self {
            Self::Ready(binding) => binding.clone(),
            Self::Pending { method, params, principal } => {
                Binding::new(method, params.as_ref(), principal.as_deref())
            }
        }
    }
}

#[cfg(test)]
mod tests;
