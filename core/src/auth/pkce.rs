//! PKCE with S256 only (RFC 7636 §4): a 256-bit verifier from the flow's CSPRNG, its SHA-256
//! challenge, both base64url without padding.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand_chacha::rand_core::RngCore;
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};

/// A verifier and its S256 challenge. `Debug` hides the verifier.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Pkce {
    pub(crate) verifier: String,
    pub(crate) challenge: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkce").field("challenge", &self.challenge).finish_non_exhaustive()
    }
}

impl Pkce {
    /// A fresh pair: 32 random bytes make a 43-character verifier.
    pub(crate) fn generate(rng: &mut ChaCha20Rng) -> Self {
        let verifier = random_token(rng);
        Self { challenge: s256(&verifier), verifier }
    }
}

/// `BASE64URL(SHA256(ASCII(verifier)))`.
pub(crate) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// 32 random bytes, base64url: a verifier, a `state`, a JWT id.
pub(crate) fn random_token(rng: &mut ChaCha20Rng) -> String {
    let mut bytes = [0u8; 32];
    rng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use rand_chacha::rand_core::SeedableRng;

    use super::*;

    #[test]
    fn rfc7636_appendix_b_vector() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(s256(verifier), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    }

    #[test]
    fn verifiers_are_43_unreserved_characters_and_differ() {
        let mut rng = ChaCha20Rng::from_seed([7; 32]);
        let a = Pkce::generate(&mut rng);
        let b = Pkce::generate(&mut rng);
        assert_ne!(a.verifier, b.verifier);
        assert_eq!(a.verifier.len(), 43);
        assert!(a.verifier.bytes().all(|c| c.is_ascii_alphanumeric() || b"-_".contains(&c)));
        assert_eq!(a.challenge, s256(&a.verifier));
        assert!(!format!("{a:?}").contains(&a.verifier));
    }
}
