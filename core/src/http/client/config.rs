//! How an HTTP client session is configured.

use std::fmt;
use std::time::Duration;

use http::header::{HeaderValue, AUTHORIZATION};
use http::{HeaderMap, Uri};

use crate::auth::OAuthConfig;
use crate::error::UsageError;

/// Which HTTP transport to speak.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpMode {
    /// Back-compat detection
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#backwards-compatibility>):
    /// POST `initialize` as Streamable HTTP; on 400,
    /// 404 or 405 fall back to legacy HTTP+SSE (GET the same URL, await `event: endpoint`).
    /// 401 and 403 never fall back: the session closes with the status and challenge.
    #[default]
    Auto,
    /// Only legacy HTTP+SSE (2024-11-05 servers): `url` is the SSE endpoint.
    LegacySse,
    /// Only Streamable HTTP (2025-03-26 and later): `url` is the MCP endpoint.
    StreamableHttp,
}

/// How a [`Client`](crate::client::Client) speaks to an MCP server over HTTP. Build with
/// [`HttpClientConfig::new`] and adjust fields.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpClientConfig {
    /// The MCP endpoint (Streamable HTTP) or the SSE endpoint (legacy): an absolute `http` or
    /// `https` URL.
    pub url: Uri,
    /// Which transport. Default [`HttpMode::Auto`].
    pub mode: HttpMode,
    /// Extra header fields sent on every MCP request (POST, GET, DELETE). The transport's own
    /// fields (`Accept`, `Content-Type`, `Mcp-Session-Id`, `MCP-Protocol-Version`,
    /// `Last-Event-ID`, and `Authorization` when [`bearer`](Self::bearer) is set) win over
    /// these.
    pub headers: HeaderMap,
    /// A static access token, sent as `Authorization: Bearer <token>` on every request. Never
    /// printed by `Debug`.
    pub bearer: Option<String>,
    /// Open the standalone GET stream with `notifications/initialized`, for server requests
    /// and notifications outside any call; what is sent after it waits until that stream has
    /// its answer. A 405 answer turns it off. Default on.
    pub open_get_stream: bool,
    /// When the server ends the session (404 to a request carrying the session id), start a new
    /// one with a fresh `initialize`; otherwise the client closes. Default on.
    pub reinitialize_on_expiry: bool,
    /// Reconnections (GET with `Last-Event-ID`) tried for one SSE stream in a row without
    /// progress, before the requests it owes fail with `StreamLost`. Default 3.
    pub max_resume_attempts: u32,
    /// The wait before reconnecting when the server sent no `retry`. Default 1 s.
    pub default_retry: Duration,
    /// The longest `retry` honoured; larger values are cut to it. Default 60 s.
    pub max_retry: Duration,
    /// OAuth 2.1: a 401 (or 403 `insufficient_scope`) runs the flow and replays the refused
    /// requests with the new token (Streamable HTTP; see [`crate::auth`]). Default none.
    pub oauth: Option<OAuthConfig>,
}

impl HttpClientConfig {
    /// A config for `url` with every default.
    pub fn new(url: Uri) -> Self {
        Self {
            url,
            mode: HttpMode::Auto,
            headers: HeaderMap::new(),
            bearer: None,
            open_get_stream: true,
            reinitialize_on_expiry: true,
            max_resume_attempts: 3,
            default_retry: Duration::from_secs(1),
            max_retry: Duration::from_secs(60),
            oauth: None,
        }
    }

    /// Authorizes with OAuth 2.1 as `oauth` says.
    pub fn oauth(mut self, oauth: OAuthConfig) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Checks the URL and the token, and folds the token into the fields every request sends.
    pub(super) fn base_headers(&self) -> Result<HeaderMap, UsageError> {
        let scheme_ok = matches!(self.url.scheme_str(), Some("http" | "https"));
        if !scheme_ok || self.url.host().is_none() {
            return Err(UsageError::InvalidConfig(format!(
                "the url must be an absolute http or https url, not {}",
                self.url
            )));
        }
        let mut headers = self.headers.clone();
        if let Some(token) = &self.bearer {
            let mut value = HeaderValue::try_from(format!("Bearer {token}")).map_err(|_| {
                UsageError::InvalidConfig("the bearer token is not a valid header value".into())
            })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(headers)
    }
}

impl fmt::Debug for HttpClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClientConfig")
            .field("url", &self.url)
            .field("mode", &self.mode)
            .field("headers", &self.headers)
            .field("bearer", &self.bearer.as_ref().map(|_| "<redacted>"))
            .field("open_get_stream", &self.open_get_stream)
            .field("reinitialize_on_expiry", &self.reinitialize_on_expiry)
            .field("max_resume_attempts", &self.max_resume_attempts)
            .field("default_retry", &self.default_retry)
            .field("max_retry", &self.max_retry)
            .field("oauth", &self.oauth)
            .finish()
    }
}
