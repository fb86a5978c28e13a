//! Tokens as the client keeps them (absolute expiry, so a cache can store them), and the
//! token endpoint's answers (RFC 6749 §5.1, §5.2).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::AuthError;

/// The tokens of one client at one authorization server. `Debug` shows no token.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tokens {
    /// Sent as `Authorization: Bearer …`.
    pub access_token: String,
    /// Used once the access token expires or is refused; kept when a refresh answer has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (or asked for, when the answer did not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The issuer that issued them; tokens are never sent where another issuer protects.
    pub issuer: String,
    /// Bound to the client's DPoP key (`token_type` DPoP): sent with a proof on every request.
    #[serde(default)]
    pub dpop: bool,
    /// The public client they were issued to (a registered or metadata-document id), so that
    /// tokens loaded from a cache can be refreshed without registering again. Never a
    /// confidential client's: its secret is the application's to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
}

impl Tokens {
    /// Tokens an application loads from its cache.
    pub fn new(issuer: impl Into<String>, access_token: impl Into<String>) -> Self {
        Self {
            access_token: access_token.into(),
            refresh_token: None,
            expires_at: None,
            scope: None,
            issuer: issuer.into(),
            dpop: false,
            client_id: None,
        }
    }

    /// Expired at `unix` seconds, or within `margin` seconds of it.
    pub fn expires_within(&self, unix: u64, margin: u64) -> bool {
        self.expires_at.is_some_and(|at| at <= unix.saturating_add(margin))
    }
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<redacted>")
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "<redacted>"))
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("issuer", &self.issuer)
            .field("dpop", &self.dpop)
            .field("client_id", &self.client_id)
            .finish()
    }
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    token_type: Option<String>,
    refresh_token: Option<String>,
    expires_in: Option<serde_json::Value>,
    scope: Option<String>,
}

#[derive(Deserialize)]
struct ErrorResponse {
    error: String,
}

/// Reads a successful token response issued by `issuer` at `unix`; `previous` supplies the
/// refresh token when the answer carries none, and the scope when it names none.
pub(crate) fn decode_token_response(
    body: &[u8],
    issuer: &str,
    unix: u64,
    previous: Option<&Tokens>,
    asked_scope: Option<&str>,
) -> Result<Tokens, AuthError> {
    let r: TokenResponse = serde_json::from_slice(body)
        .map_err(|e| AuthError::Malformed(format!("token response: {e}")))?;
    if let Some(kind) = r.token_type.as_deref() {
        if !kind.eq_ignore_ascii_case("bearer") && !kind.eq_ignore_ascii_case("dpop") {
            return Err(AuthError::Malformed(format!("token_type {kind:?} is not Bearer")));
        }
    }
    if r.access_token.is_empty() {
        return Err(AuthError::Malformed("empty access_token".into()));
    }
    // Some servers send `expires_in` as a string.
    let expires_in = match r.expires_in {
        Some(serde_json::Value::Number(n)) => n.as_u64(),
        Some(serde_json::Value::String(s)) => s.parse().ok(),
        _ => None,
    };
    let dpop = r.token_type.as_deref().is_some_and(|t| t.eq_ignore_ascii_case("dpop"));
    Ok(Tokens {
        dpop,
        access_token: r.access_token,
        refresh_token: r.refresh_token.or_else(|| previous.and_then(|p| p.refresh_token.clone())),
        expires_at: expires_in.map(|secs| unix.saturating_add(secs)),
        scope: r
            .scope
            .or_else(|| asked_scope.map(str::to_owned))
            .or_else(|| previous.and_then(|p| p.scope.clone())),
        issuer: issuer.to_owned(),
        client_id: None,
    })
}

/// Sorts a token endpoint's refusal: 5xx, 429 and unreadable answers are transient; a 4xx
/// with an OAuth `error` is a rejection of the grant.
pub(crate) fn token_failure(status: u16, body: &[u8]) -> AuthError {
    if status >= 500 || status == 429 {
        return AuthError::Transient(format!("the token endpoint answered {status}"));
    }
    match serde_json::from_slice::<ErrorResponse>(body) {
        Ok(e) => AuthError::Rejected { status, error: Some(e.error) },
        Err(_) => AuthError::Rejected { status, error: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_is_absolute_and_a_missing_refresh_token_keeps_the_old_one() {
        let old =
            Tokens { refresh_token: Some("r1".into()), ..Tokens::new("https://as.example", "a0") };
        let body = br#"{"access_token":"a1","token_type":"Bearer","expires_in":"60"}"#;
        let t =
            decode_token_response(body, "https://as.example", 1000, Some(&old), Some("x")).unwrap();
        assert_eq!(t.access_token, "a1");
        assert_eq!(t.refresh_token.as_deref(), Some("r1"));
        assert_eq!(t.expires_at, Some(1060));
        assert_eq!(t.scope.as_deref(), Some("x"));
        assert!(t.expires_within(1030, 30));
        assert!(!t.expires_within(1000, 30));
        let rotated = br#"{"access_token":"a2","token_type":"bearer","refresh_token":"r2"}"#;
        let t = decode_token_response(rotated, "i", 0, Some(&old), None).unwrap();
        assert_eq!(t.refresh_token.as_deref(), Some("r2"));
        let dbg = format!("{t:?}");
        assert!(!dbg.contains("a2") && !dbg.contains("r2"), "{dbg}");
    }

    #[test]
    fn refusals_are_sorted_into_transient_and_rejected() {
        assert!(matches!(token_failure(503, b""), AuthError::Transient(_)));
        assert!(matches!(token_failure(429, b"{}"), AuthError::Transient(_)));
        assert_eq!(
            token_failure(400, br#"{"error":"invalid_grant"}"#),
            AuthError::Rejected { status: 400, error: Some("invalid_grant".into()) }
        );
        assert!(decode_token_response(br#"{"token_type":"Bearer"}"#, "i", 0, None, None).is_err());
        assert!(decode_token_response(
            br#"{"access_token":"a","token_type":"mac"}"#,
            "i",
            0,
            None,
            None
        )
        .is_err());
    }
}
