//! The resource-server side: what an MCP server protected by OAuth checks on every request
//! (RFC 6750, RFC 9728, MCP 2025-11-25 §Authorization), and the protected-resource metadata
//! it serves. The router calls it right after the Host and Origin checks.
//!
//! ```text
//!  no token ─▶ 401  WWW-Authenticate: Bearer resource_metadata="…", scope="…"
//!  token the validator refuses, expired, for another audience ─▶ 401 error="invalid_token"
//!  token without the required scopes ─▶ 403 error="insufficient_scope", scope="…"
//!  a session opened by another principal ─▶ 403
//! ```

use std::fmt;
use std::sync::Arc;

use http::header::AUTHORIZATION;
use http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};

use super::ResourceMetadata;

/// Who a valid token speaks for, as the application's validator found it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Principal {
    /// The subject (`sub`): sessions are bound to it.
    pub subject: String,
    /// The client the token was issued to, if known.
    pub client_id: Option<String>,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// The audiences the token names; when not empty, must include this server's resource.
    pub audience: Vec<String>,
    /// When it expires, in seconds since the Unix epoch.
    pub expires_at: Option<u64>,
}

impl Principal {
    /// A principal with `subject` and `scopes`, no audience, no expiry.
    pub fn new(
        subject: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            subject: subject.into(),
            scopes: scopes.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// Whether every scope of `needed` was granted.
    pub fn has_scopes(&self, needed: &[String]) -> bool {
        needed.iter().all(|n| self.scopes.iter().any(|s| s == n))
    }
}

/// Checks a bearer token: the principal it speaks for, or why it is refused (never echoed
/// to the client). Synchronous: local JWT validation, or a cache of introspection results.
pub type TokenValidator = Arc<dyn Fn(&str) -> Result<Principal, String> + Send + Sync>;

/// An MCP server protected by OAuth: its resource identifier, the authorization servers
/// that issue its tokens, the scopes every request needs, and how tokens are validated.
#[derive(Clone)]
#[non_exhaustive]
pub struct ProtectedResource {
    /// This server's canonical URL (`https://mcp.example.com/mcp`): the audience its tokens
    /// must name, and the `resource` of its metadata.
    pub resource: String,
    /// Issuers of the authorization servers it trusts.
    pub authorization_servers: Vec<String>,
    /// Scopes listed in the metadata (what a client asks for at first).
    pub scopes_supported: Vec<String>,
    /// Scopes every request needs; a token without them gets 403 `insufficient_scope`.
    pub required_scopes: Vec<String>,
    /// Further scopes a `tools/call` of the named tool needs (on top of `required_scopes`);
    /// without them the call gets 403 `insufficient_scope` naming every scope it needs.
    pub tool_scopes: Vec<(String, Vec<String>)>,
    /// The token check.
    pub validator: TokenValidator,
}

impl fmt::Debug for ProtectedResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProtectedResource")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("required_scopes", &self.required_scopes)
            .finish_non_exhaustive()
    }
}

/// Why a request is refused, as the router answers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// 401, or 403 for missing scopes and another principal's session.
    pub status: StatusCode,
    /// The `WWW-Authenticate` value.
    pub challenge: String,
    /// The OAuth error code for the body (`invalid_token`, `insufficient_scope`), if any.
    pub error: Option<&'static str>,
}

impl ProtectedResource {
    /// `resource`, protected by the authorization server `issuer`, tokens checked by
    /// `validator`.
    pub fn new(
        resource: impl Into<String>,
        issuer: impl Into<String>,
        validator: impl Fn(&str) -> Result<Principal, String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            resource: resource.into(),
            authorization_servers: vec![issuer.into()],
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            tool_scopes: Vec::new(),
            validator: Arc::new(validator),
        }
    }

    /// Calling tool `name` also needs `scopes` (listed as supported too).
    pub fn tool_scopes(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
        for s in &scopes {
            if !self.scopes_supported.contains(s) {
                self.scopes_supported.push(s.clone());
            }
        }
        self.tool_scopes.push((name.into(), scopes));
        self
    }

    /// The refusal of a call of `tool` by `principal`, when it lacks a scope the tool needs.
    pub fn tool_refusal(&self, tool: &str, principal: &Principal) -> Option<Refusal> {
        let (_, extra) = self.tool_scopes.iter().find(|(name, _)| name == tool)?;
        if principal.has_scopes(extra) {
            return None;
        }
        let mut needed = self.required_scopes.clone();
        needed.extend(extra.iter().filter(|s| !self.required_scopes.contains(s)).cloned());
        let error = Some("insufficient_scope");
        Some(Refusal {
            status: StatusCode::FORBIDDEN,
            challenge: self.challenge(error, &needed),
            error,
        })
    }

    /// Every request needs `scopes` (also listed as supported).
    pub fn require_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        for s in &self.required_scopes {
            if !self.scopes_supported.contains(s) {
                self.scopes_supported.push(s.clone());
            }
        }
        self
    }

    /// The metadata document (RFC 9728).
    pub fn metadata(&self) -> ResourceMetadata {
        ResourceMetadata {
            resource: self.resource.clone(),
            authorization_servers: self.authorization_servers.clone(),
            scopes_supported: (!self.scopes_supported.is_empty())
                .then(|| self.scopes_supported.clone()),
        }
    }

    /// The path the metadata is served at on this server: the well-known prefix with the
    /// resource's path inserted.
    pub fn metadata_path(&self) -> String {
        let path = self
            .resource
            .parse::<http::Uri>()
            .map(|u| u.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        format!("/.well-known/oauth-protected-resource{path}")
    }

    /// The absolute URL of the metadata, for challenges.
    fn metadata_url(&self) -> String {
        match self.resource.parse::<http::Uri>() {
            Ok(u) if u.authority().is_some() => format!(
                "{}://{}{}",
                u.scheme_str().unwrap_or("https"),
                u.authority().map_or("", |a| a.as_str()),
                self.metadata_path()
            ),
            _ => self.metadata_path(),
        }
    }

    fn challenge(&self, error: Option<&str>, scope: &[String]) -> String {
        let mut out = format!(r#"Bearer resource_metadata="{}""#, self.metadata_url());
        if !scope.is_empty() {
            out.push_str(&format!(r#", scope="{}""#, scope.join(" ")));
        }
        if let Some(error) = error {
            out.push_str(&format!(r#", error="{error}""#));
        }
        out
    }

    fn refuse(&self, status: StatusCode, error: Option<&'static str>) -> Refusal {
        Refusal { status, challenge: self.challenge(error, &self.required_scopes), error }
    }

    /// Checks the request's bearer token at wall-clock `unix` (`None`: expiry unchecked).
    pub fn check(&self, headers: &HeaderMap, unix: Option<u64>) -> Result<Arc<Principal>, Refusal> {
        let value = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
        let token = value.and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        });
        let Some(token) = token.filter(|t| !t.is_empty()) else {
            return Err(self.refuse(StatusCode::UNAUTHORIZED, None));
        };
        let invalid = || self.refuse(StatusCode::UNAUTHORIZED, Some("invalid_token"));
        let principal = (self.validator)(token).map_err(|_| invalid())?;
        if principal.expires_at.zip(unix).is_some_and(|(at, now)| at <= now) {
            return Err(invalid());
        }
        let for_us = principal.audience.is_empty()
            || principal.audience.iter().any(|a| super::urls::same_resource(a, &self.resource));
        if !for_us {
            return Err(invalid());
        }
        if !principal.has_scopes(&self.required_scopes) {
            return Err(self.refuse(StatusCode::FORBIDDEN, Some("insufficient_scope")));
        }
        Ok(Arc::new(principal))
    }

    /// The answer to a request that names a session `owner` opened, from `principal`.
    pub fn other_principal(&self) -> Refusal {
        self.refuse(StatusCode::FORBIDDEN, Some("invalid_token"))
    }
}
