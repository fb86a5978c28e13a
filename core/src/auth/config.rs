//! How an HTTP client authorizes: the grant, who the client is, the tokens it starts with.

use std::fmt;
use std::time::{Duration, Instant};

use super::Tokens;

/// How the client obtains tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grant {
    /// A user authorizes in a browser; the redirect comes back to `redirect_uri` (a loopback
    /// or https URL registered for the client), and the application hands the whole redirect
    /// URL to the client.
    AuthorizationCode {
        /// Where the authorization server sends the user back.
        redirect_uri: String,
    },
    /// Machine to machine, with the pre-registered credentials (RFC 6749 §4.4).
    ClientCredentials,
    /// A JWT the workload already holds (issued by its platform) exchanged for a token
    /// (RFC 7523 §2.1): workload identity federation.
    JwtBearer {
        /// The JWT, presented as `assertion`.
        assertion: String,
    },
    /// Enterprise-managed authorization: the user's ID token from the enterprise identity
    /// provider is exchanged there for an identity assertion grant for this authorization
    /// server (RFC 8693), which is then presented as a JWT bearer grant (RFC 7523) with
    /// the pre-registered credentials. No browser.
    IdentityAssertion {
        /// The identity provider's token endpoint.
        idp_token_endpoint: String,
        /// The user's ID token from the identity provider.
        id_token: String,
        /// This client's id at the identity provider.
        idp_client_id: Option<String>,
    },
}

/// Credentials registered in advance with an authorization server. `Debug` hides the secret.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientCredentials {
    /// The client id.
    pub client_id: String,
    /// The secret of a confidential client.
    pub client_secret: Option<String>,
    /// The issuer they were registered with: shown to no other authorization server. `None`
    /// lets them go to whichever server the resource names.
    pub issuer: Option<String>,
    /// The token endpoint authentication method (`client_secret_basic`,
    /// `client_secret_post`, `private_key_jwt`, `none`); by default the first the server
    /// offers of those that fit (basic before post).
    pub auth_method: Option<String>,
    /// The PKCS#8 PEM of the P-256 key that signs `private_key_jwt` assertions (ES256).
    pub private_key_pem: Option<String>,
}

impl ClientCredentials {
    /// A public client's id.
    pub fn public(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: None,
            issuer: None,
            auth_method: None,
            private_key_pem: None,
        }
    }

    /// A client that authenticates with ES256 assertions signed by the P-256 key in `pem`
    /// (PKCS#8), registered with the server beforehand (`private_key_jwt`).
    pub fn private_key_jwt(client_id: impl Into<String>, pem: impl Into<String>) -> Self {
        Self {
            private_key_pem: Some(pem.into()),
            auth_method: Some("private_key_jwt".into()),
            ..Self::public(client_id)
        }
    }

    /// A confidential client's id and secret.
    pub fn confidential(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        Self { client_secret: Some(secret.into()), ..Self::public(client_id) }
    }

    /// Only for the authorization server with this issuer.
    pub fn for_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Authenticates at the token endpoint with `method`.
    pub fn auth_method(mut self, method: impl Into<String>) -> Self {
        self.auth_method = Some(method.into());
        self
    }
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("issuer", &self.issuer)
            .field("auth_method", &self.auth_method)
            .field("private_key_pem", &self.private_key_pem.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// OAuth 2.1 for an HTTP client ([`HttpClientConfig::oauth`](crate::http::client::HttpClientConfig::oauth)).
/// Build with [`OAuthConfig::authorization_code`] or [`OAuthConfig::client_credentials`].
///
/// Who the client is, in order: `pre_registered` credentials (for the issuer they name), a
/// client metadata document (`client_metadata_url`) when the server accepts one, dynamic
/// registration (as `client_name`, `application_type`) when the server offers it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// How tokens are obtained.
    pub grant: Grant,
    /// Credentials registered in advance.
    pub pre_registered: Option<ClientCredentials>,
    /// An https URL serving this client's metadata document; used as the `client_id` where
    /// the server advertises `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
    /// Register dynamically (RFC 7591) where nothing else identifies the client. Default on.
    pub dynamic_registration: bool,
    /// The name registered dynamically. Default `"zest"`.
    pub client_name: String,
    /// `native` (desktop, CLI, loopback redirect) or `web`. Default `native`.
    pub application_type: String,
    /// Tokens from the application's cache, sent from the first request.
    pub tokens: Option<Tokens>,
    /// Ask for `offline_access` (a refresh token) where the server lists it. Default on.
    pub offline_access: bool,
    /// Bind tokens to a key of the client's (DPoP, RFC 9449) wherever the authorization server
    /// takes ES256 proofs. Default off: tokens are bound only when the resource server's
    /// challenge asks for DPoP (a server that takes only Bearer tokens cannot use bound ones).
    pub dpop: bool,
    /// Processes share the token cache: before refreshing, the client asks the application
    /// for the cache's tokens ([`Event::LoadTokens`](crate::client::Event::LoadTokens)) and
    /// takes them instead when another process already refreshed, so one refresh serves all.
    /// Default off.
    pub shared_cache: bool,
    /// Authorizations tried for one request before giving up (step-up included). Default 3.
    pub max_authorizations: u32,
    /// Refresh this long before the access token expires. Default 60 s.
    pub refresh_margin: Duration,
    /// Seeds `state` and PKCE verifiers; runtimes fill it from the OS.
    pub rng_seed: Option<[u8; 32]>,
    /// The wall clock, as a reading (`unix_secs` at an `Instant`); runtimes fill it in.
    pub clock: Option<(Instant, u64)>,
}

impl OAuthConfig {
    fn with_grant(grant: Grant) -> Self {
        Self {
            grant,
            pre_registered: None,
            client_metadata_url: None,
            dynamic_registration: true,
            client_name: "zest".into(),
            application_type: "native".into(),
            tokens: None,
            offline_access: true,
            dpop: false,
            shared_cache: false,
            max_authorizations: 3,
            refresh_margin: Duration::from_secs(60),
            rng_seed: None,
            clock: None,
        }
    }

    /// A user authorizes in a browser and comes back to `redirect_uri`.
    pub fn authorization_code(redirect_uri: impl Into<String>) -> Self {
        Self::with_grant(Grant::AuthorizationCode { redirect_uri: redirect_uri.into() })
    }

    /// Tokens by `grant` (for the grants without a constructor of their own).
    pub fn with(grant: Grant) -> Self {
        Self::with_grant(grant)
    }

    /// Exchanges `assertion`, a JWT the workload holds, for a token (workload identity);
    /// `pre_registered` names the client where the server wants its id.
    pub fn jwt_bearer(assertion: impl Into<String>) -> Self {
        Self::with_grant(Grant::JwtBearer { assertion: assertion.into() })
    }

    /// Machine to machine with `credentials`.
    pub fn client_credentials(credentials: ClientCredentials) -> Self {
        Self { pre_registered: Some(credentials), ..Self::with_grant(Grant::ClientCredentials) }
    }

    /// Uses `credentials` registered in advance.
    pub fn pre_registered(mut self, credentials: ClientCredentials) -> Self {
        self.pre_registered = Some(credentials);
        self
    }

    /// Identifies the client by its metadata document at `url` where the server allows.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Registers dynamically as `name`.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// Starts with `tokens` from the application's cache.
    pub fn tokens(mut self, tokens: Tokens) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// Consults the shared token cache before each refresh (see [`shared_cache`](Self::shared_cache)).
    pub fn shared_cache(mut self) -> Self {
        self.shared_cache = true;
        self
    }

    /// Seeds the flow's randomness and reads the wall clock: what a runtime fills in.
    pub fn with_entropy(mut self, seed: [u8; 32], at: Instant, unix_secs: u64) -> Self {
        self.rng_seed.get_or_insert(seed);
        self.clock.get_or_insert((at, unix_secs));
        self
    }
}
