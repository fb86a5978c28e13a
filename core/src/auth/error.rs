//! Why an OAuth flow failed, as one typed error the application can match. No message
//! carries a token, a secret, a code or a verifier.

use std::fmt;

/// Why authorization failed. [`AuthError::kind`] sorts each into what to do next.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// No usable metadata: what was tried and why it failed.
    Discovery(String),
    /// The protected-resource metadata names another resource than the server's URL
    /// (RFC 9728 §3.3): no authorization request is made.
    ResourceMismatch {
        /// The server's canonical URL.
        expected: String,
        /// The metadata's `resource`.
        found: String,
    },
    /// The authorization-server metadata's `issuer` is not the issuer it was found from.
    IssuerMismatch {
        /// The issuer used to find the document.
        expected: String,
        /// The document's `issuer`.
        found: String,
    },
    /// The authorization server does not list S256 PKCE; the spec forbids going on.
    PkceUnsupported {
        /// The issuer.
        issuer: String,
    },
    /// No way to identify the client to this authorization server: no pre-registered
    /// credentials, no client metadata document it accepts, no registration endpoint.
    NoClientIdentity {
        /// The issuer.
        issuer: String,
    },
    /// Dynamic registration was refused.
    Registration {
        /// The HTTP status.
        status: u16,
        /// The server's `error` code, if it sent one.
        error: Option<String>,
    },
    /// An OAuth URL that is neither https nor http to a loopback host, or not a URL.
    InsecureUrl {
        /// The URL.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// The redirect's `state` is missing or not the one sent.
    StateMismatch,
    /// The redirect's `iss` is missing though the server advertises it, or differs from
    /// the issuer (RFC 9207); its `error` fields, if any, are not trusted.
    IssuerCheckFailed {
        /// The recorded issuer.
        expected: String,
        /// The `iss` received, if any.
        found: Option<String>,
    },
    /// The user or the authorization server declined (`error` in the redirect).
    Denied {
        /// The `error` code.
        error: String,
    },
    /// The token endpoint refused the grant (`invalid_grant`, `invalid_client` …): the
    /// token is dropped.
    Rejected {
        /// The status.
        status: u16,
        /// The `error` code, if any.
        error: Option<String>,
    },
    /// A failure worth retrying later: a 5xx or 429, or the exchange broke.
    Transient(String),
    /// A user must authorize, and nobody answers authorization requests (no handler, or it
    /// gave up).
    NeedsUser(String),
    /// The server kept refusing after the bounded number of authorizations.
    TooManyAttempts {
        /// Authorizations tried.
        attempts: u32,
    },
    /// A response that does not fit its format (a token response without `access_token` …).
    Malformed(String),
}

/// What an application does about an [`AuthError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthErrorKind {
    /// Try again later; the credentials are kept.
    Transient,
    /// A user must log in again.
    NeedsUser,
    /// The server or its metadata cannot be trusted or used; retrying will not help.
    Refused,
}

impl AuthError {
    /// A stable name for the variant (`issuer_check_failed` …), for logs and scripts.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Discovery(_) => "discovery",
            Self::ResourceMismatch { .. } => "resource_mismatch",
            Self::IssuerMismatch { .. } => "issuer_mismatch",
            Self::PkceUnsupported { .. } => "pkce_unsupported",
            Self::NoClientIdentity { .. } => "no_client_identity",
            Self::Registration { .. } => "registration",
            Self::InsecureUrl { .. } => "insecure_url",
            Self::StateMismatch => "state_mismatch",
            Self::IssuerCheckFailed { .. } => "issuer_check_failed",
            Self::Denied { .. } => "denied",
            Self::Rejected { .. } => "rejected",
            Self::Transient(_) => "transient",
            Self::NeedsUser(_) => "needs_user",
            Self::TooManyAttempts { .. } => "too_many_attempts",
            Self::Malformed(_) => "malformed",
        }
    }

    /// What to do about it.
    pub fn kind(&self) -> AuthErrorKind {
        match self {
            Self::Transient(_) => AuthErrorKind::Transient,
            Self::NeedsUser(_) | Self::Denied { .. } | Self::Rejected { .. } => {
                AuthErrorKind::NeedsUser
            }
            _ => AuthErrorKind::Refused,
        }
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Discovery(why) => write!(f, "oauth discovery failed: {why}"),
            Self::ResourceMismatch { expected, found } => write!(
                f,
                "the protected-resource metadata is for {found:?}, not this server ({expected:?})"
            ),
            Self::IssuerMismatch { expected, found } => write!(
                f,
                "the authorization-server metadata names issuer {found:?}, not {expected:?}"
            ),
            Self::PkceUnsupported { issuer } => {
                write!(f, "authorization server {issuer} does not support S256 PKCE")
            }
            Self::NoClientIdentity { issuer } => write!(
                f,
                "no client credentials for {issuer}, which offers neither client metadata \
                 documents nor dynamic registration"
            ),
            Self::Registration { status, error } => {
                write!(f, "client registration refused with status {status}")?;
                error.iter().try_for_each(|e| write!(f, " ({e})"))
            }
            Self::InsecureUrl { url, why } => write!(f, "refusing oauth url {url:?}: {why}"),
            Self::StateMismatch => f.write_str("the authorization response's state does not match"),
            Self::IssuerCheckFailed { expected, found: Some(found) } => {
                write!(f, "the authorization response came from issuer {found:?}, not {expected:?}")
            }
            Self::IssuerCheckFailed { expected, found: None } => {
                write!(f, "the authorization response lacks the iss that {expected} advertises")
            }
            Self::Denied { error } => write!(f, "authorization denied: {error}"),
            Self::Rejected { status, error } => {
                write!(f, "the token endpoint refused the grant with status {status}")?;
                error.iter().try_for_each(|e| write!(f, " ({e})"))
            }
            Self::Transient(why) => write!(f, "authorization failed for now: {why}"),
            Self::NeedsUser(why) => write!(f, "a user must authorize: {why}"),
            Self::TooManyAttempts { attempts } => {
                write!(f, "still refused after {attempts} authorizations")
            }
            Self::Malformed(why) => write!(f, "malformed oauth response: {why}"),
        }
    }
}

impl std::error::Error for AuthError {}
