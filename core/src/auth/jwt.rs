//! ES256 JWTs the client signs: `private_key_jwt` client assertions (RFC 7523 §2.2), with a
//! P-256 key from PKCS#8 PEM and deterministic signatures (RFC 6979), so nothing here needs
//! entropy but the `jti` the flow passes in.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::DecodePrivateKey;
use serde_json::{json, Value};

use super::AuthError;

/// The `client_assertion_type` of a JWT client assertion.
pub(crate) const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// `client_id`'s assertion for the authorization server `audience` (its issuer), valid five
/// minutes from `unix`.
pub(crate) fn client_assertion(
    pem: &str,
    client_id: &str,
    audience: &str,
    unix: u64,
    jti: &str,
) -> Result<String, AuthError> {
    let claims = json!({
        "iss": client_id, "sub": client_id, "aud": audience,
        "iat": unix, "exp": unix + 300, "jti": jti,
    });
    sign_es256(pem, &claims)
}

/// `claims` as a compact JWT signed with the P-256 key in `pem`.
pub(crate) fn sign_es256(pem: &str, claims: &Value) -> Result<String, AuthError> {
    let key = SigningKey::from_pkcs8_pem(pem)
        .map_err(|_| AuthError::Malformed("the private key is not a PKCS#8 P-256 PEM".into()))?;
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"ES256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let input = format!("{header}.{payload}");
    let signature: Signature = key.sign(input.as_bytes());
    Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes())))
}

#[cfg(test)]
mod tests {
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;

    use super::*;

    /// A P-256 key made for this test only.
    const PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgLik+Sr50KXftwzx1
0lSL43ldPjmuMYe9betOBiunVBqhRANCAAQ3R2jUSRi7J/K9D6bwusaAdGDaQYs1
W9K39MgFpxfDpQ6ZGsafZhEZj5ChIetGwtBkqwGHx4xuisekAKdnCu5d
-----END PRIVATE KEY-----";

    #[test]
    fn the_assertion_is_a_verifiable_es256_jwt_with_the_rfc_7523_claims() {
        let jwt = client_assertion(PEM, "svc", "https://as.example", 1_000, "j1").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "svc");
        assert_eq!(claims["sub"], "svc");
        assert_eq!(claims["aud"], "https://as.example");
        assert_eq!(claims["exp"], 1_300);
        let key = SigningKey::from_pkcs8_pem(PEM).unwrap();
        let verifying = VerifyingKey::from(&key);
        let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(verifying.verify(input.as_bytes(), &signature).is_ok());
        assert!(matches!(sign_es256("not a key", &claims), Err(AuthError::Malformed(_))));
    }
}
