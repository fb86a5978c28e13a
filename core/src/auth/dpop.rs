//! DPoP (RFC 9449): a P-256 key the client makes for itself, proofs of possession on the
//! token endpoint and on every request that carries a DPoP-bound token, and the nonces
//! servers hand out (`DPoP-Nonce`), kept per server.

use std::time::Instant;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use http::header::{HeaderName, HeaderValue, AUTHORIZATION};
use http::{HeaderMap, Method, Uri};
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use rand_chacha::ChaCha20Rng;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::pkce::random_token;

/// The `DPoP` header.
pub(crate) const DPOP: HeaderName = HeaderName::from_static("dpop");
/// The header a server names its nonce in.
pub(crate) const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// The client's proof-of-possession key and its public JWK.
pub(crate) struct DpopKey {
    key: SigningKey,
    jwk: Value,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey").field("jwk", &self.jwk).finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A fresh key from the flow's CSPRNG.
    pub(crate) fn generate(rng: &mut ChaCha20Rng) -> Self {
        let key = SigningKey::random(rng);
        let point = VerifyingKey::from(&key).to_encoded_point(false);
        let coordinate = |c: Option<&p256::FieldBytes>| {
            URL_SAFE_NO_PAD.encode(c.map(|b| b.as_slice()).unwrap_or_default())
        };
        let jwk = json!({"kty": "EC", "crv": "P-256", "x": coordinate(point.x()), "y": coordinate(point.y())});
        Self { key, jwk }
    }

    /// A proof for `method` on `uri` (query and fragment left out) at `unix`, with the
    /// server's `nonce` and, on a resource request, the access token's hash.
    pub(crate) fn proof(
        &self,
        method: &Method,
        uri: &str,
        unix: u64,
        jti: &str,
        nonce: Option<&str>,
        access_token: Option<&str>,
    ) -> String {
        let htu = uri.split(['?', '#']).next().unwrap_or(uri);
        let mut claims = json!({"jti": jti, "htm": method.as_str(), "htu": htu, "iat": unix});
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        if let Some(token) = access_token {
            claims["ath"] = json!(URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())));
        }
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature: Signature = self.key.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }
}

/// What the HTTP transport puts on each MCP request while its token is DPoP-bound:
/// `Authorization: DPoP <token>` and a fresh proof.
#[derive(Debug)]
pub(crate) struct DpopSigner {
    key: std::sync::Arc<DpopKey>,
    token: String,
    /// The resource server's last nonce.
    pub(crate) nonce: Option<String>,
    rng: ChaCha20Rng,
    clock: Option<(Instant, u64)>,
    /// The latest instant the transport saw (proofs carry whole seconds).
    pub(crate) now: Option<Instant>,
}

impl DpopSigner {
    pub(crate) fn new(
        key: std::sync::Arc<DpopKey>,
        token: String,
        rng: ChaCha20Rng,
        clock: Option<(Instant, u64)>,
    ) -> Self {
        Self { key, token, nonce: None, rng, clock, now: None }
    }

    /// Sets the authorization and a new proof for `method` on `uri` in `headers`.
    pub(crate) fn sign(&mut self, method: &Method, uri: &Uri, headers: &mut HeaderMap) {
        let unix = match (self.clock, self.now) {
            (Some((at, secs)), Some(now)) => secs + now.saturating_duration_since(at).as_secs(),
            (Some((_, secs)), None) => secs,
            _ => 0,
        };
        let jti = random_token(&mut self.rng);
        let url = uri.to_string();
        let proof =
            self.key.proof(method, &url, unix, &jti, self.nonce.as_deref(), Some(&self.token));
        if let Ok(mut value) = HeaderValue::try_from(format!("DPoP {}", self.token)) {
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        if let Ok(value) = HeaderValue::try_from(proof) {
            headers.insert(DPOP, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use p256::ecdsa::signature::Verifier;
    use rand_chacha::rand_core::SeedableRng;

    use super::*;

    #[test]
    fn a_proof_carries_its_key_and_verifies_with_it() {
        let key = DpopKey::generate(&mut ChaCha20Rng::from_seed([1; 32]));
        let uri = "https://as.example/token?x=1";
        let proof = key.proof(&Method::POST, uri, 100, "j", Some("n"), Some("tok"));
        let parts: Vec<&str> = proof.split('.').collect();
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(header["typ"], "dpop+jwt");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        assert_eq!(claims["htu"], "https://as.example/token");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["nonce"], "n");
        assert_eq!(claims["ath"], URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok")));
        let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(VerifyingKey::from(&key.key).verify(input.as_bytes(), &signature).is_ok());
    }
}
