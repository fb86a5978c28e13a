//! The metadata documents discovery reads: protected-resource metadata (RFC 9728) and
//! authorization-server metadata (RFC 8414, or OpenID Connect Discovery; the fields MCP uses).
//! Unknown fields are ignored; a field of the wrong type makes the document unusable.

use serde::{Deserialize, Serialize};

/// RFC 9728 protected-resource metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceMetadata {
    /// The resource identifier; must name the MCP server (RFC 9728 §3.3).
    pub resource: String,
    /// Issuers of the authorization servers that protect it; the first is used.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// The scopes a client may ask for at first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
}

/// Authorization-server metadata (RFC 8414 §2; OpenID Connect Discovery §3).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerMetadata {
    /// Must equal the issuer the document was found from, exactly.
    pub issuer: String,
    /// Where the user authorizes (authorization code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes, refresh tokens and credentials become tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// Dynamic client registration (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Scopes the server knows (`offline_access` is asked for only when listed here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// PKCE methods; zest refuses a server that does not list `S256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Token endpoint client authentication methods (default `client_secret_basic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Grants the server issues tokens for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// The server accepts a URL `client_id` naming a client metadata document.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// RFC 9207: authorization responses carry `iss`.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// RFC 9449: the algorithms the server accepts in DPoP proofs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// The 2025-03-26 defaults for a server without metadata: `/authorize`, `/token` and
    /// `/register` at `base` (the MCP server's origin).
    pub(crate) fn fallback(base: &str) -> Self {
        Self {
            issuer: base.to_owned(),
            authorization_endpoint: Some(format!("{base}/authorize")),
            token_endpoint: Some(format!("{base}/token")),
            registration_endpoint: Some(format!("{base}/register")),
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            ..Self::default()
        }
    }

    /// Lists S256 among its PKCE methods.
    pub(crate) fn supports_s256(&self) -> bool {
        (self.code_challenge_methods_supported.iter().flatten()).any(|m| m == "S256")
    }

    /// Whether token endpoint authentication `method` is offered (absent list: only
    /// `client_secret_basic`, RFC 8414 §2).
    pub(crate) fn offers_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(list) => list.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }

    /// Whether the server takes ES256 DPoP proofs.
    pub(crate) fn offers_dpop(&self) -> bool {
        (self.dpop_signing_alg_values_supported.iter().flatten()).any(|a| a == "ES256")
    }

    /// Whether scope `name` is listed.
    pub(crate) fn lists_scope(&self, name: &str) -> bool {
        self.scopes_supported.iter().flatten().any(|s| s == name)
    }
}
