//! Where and how a runtime's HTTP client reaches an MCP server: the planner's settings plus
//! the connection's (timeouts, trust roots, keep-alive), as plain data every runtime reads
//! the same way.

use std::time::Duration;

use http::header::{HeaderName, HeaderValue};
use http::{HeaderMap, Uri};

use super::{Pool, Target};
use crate::auth::OAuthConfig;
use crate::http::client::{HttpClientConfig, HttpMode};
use crate::http1;
use crate::runtime::ConnectError;

/// An MCP server over HTTP and how to talk to it. Build with [`HttpEndpoint::new`] and the
/// builder methods; nothing is checked until the runtime connects (then a bad value is
/// [`ConnectError::InvalidConfig`]).
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpEndpoint {
    /// The MCP endpoint (Streamable HTTP) or SSE endpoint (legacy), `http://` or `https://`.
    pub url: String,
    /// Which transport: detection (default), Streamable HTTP only, or legacy HTTP+SSE.
    pub mode: HttpMode,
    /// Extra header fields sent on every request, in order.
    pub headers: Vec<(String, String)>,
    /// A static access token, sent as `Authorization: Bearer <token>`; never printed.
    pub bearer: Option<String>,
    /// Open the standalone GET stream after the handshake. Default on.
    pub open_get_stream: bool,
    /// How long a TCP connect and TLS handshake may take. Default 10 s.
    pub connect_timeout: Duration,
    /// How long a response head may take once the request is sent. Default 30 s.
    pub read_timeout: Duration,
    /// Trust the webpki (Mozilla) roots for https. Default on.
    pub webpki_roots: bool,
    /// Further trusted roots, DER-encoded X.509 certificates.
    pub root_certificates: Vec<Vec<u8>>,
    /// Idle keep-alive connections kept per host. Default [`Pool::DEFAULT_MAX_IDLE`].
    pub max_idle_per_host: usize,
    /// How long an idle connection is kept. Default [`Pool::DEFAULT_IDLE_TIMEOUT`].
    pub idle_timeout: Duration,
    /// OAuth 2.1 (see [`crate::auth`]); the runtime seeds it from the OS. Default none.
    pub oauth: Option<OAuthConfig>,
}

impl HttpEndpoint {
    /// Default [`connect_timeout`](Self::connect_timeout).
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default [`read_timeout`](Self::read_timeout).
    pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(30);

    /// `url` with every default.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            mode: HttpMode::Auto,
            headers: Vec::new(),
            bearer: None,
            open_get_stream: true,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            read_timeout: Self::DEFAULT_READ_TIMEOUT,
            webpki_roots: true,
            root_certificates: Vec::new(),
            max_idle_per_host: Pool::<()>::DEFAULT_MAX_IDLE,
            idle_timeout: Pool::<()>::DEFAULT_IDLE_TIMEOUT,
            oauth: None,
        }
    }

    /// Sends `name: value` on every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends `Authorization: Bearer <token>` on every request.
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// Authorizes with OAuth 2.1 as `oauth` says: a 401 runs the flow, and the requests it
    /// refused go again with the new token. Set the client handlers' `on_authorize` for the
    /// authorization-code grant.
    pub fn oauth(mut self, oauth: OAuthConfig) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Chooses the transport (see [`HttpMode`]).
    pub fn mode(mut self, mode: HttpMode) -> Self {
        self.mode = mode;
        self
    }

    /// Speaks legacy HTTP+SSE (2024-11-05): `url` is the SSE endpoint.
    pub fn legacy_sse(self) -> Self {
        self.mode(HttpMode::LegacySse)
    }

    /// Sets the connect (and TLS handshake) timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets how long a response head may take.
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// Trusts one more root certificate (DER).
    pub fn root_certificate(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.root_certificates.push(der.into());
        self
    }

    /// Trusts only the roots added with [`root_certificate`](Self::root_certificate).
    pub fn without_webpki_roots(mut self) -> Self {
        self.webpki_roots = false;
        self
    }

    /// The URL, checked: an absolute `http` or `https` URL with a host.
    pub fn uri(&self) -> Result<Uri, ConnectError> {
        let uri: Uri = self
            .url
            .parse()
            .map_err(|e| ConnectError::InvalidConfig(format!("{} is not a url: {e}", self.url)))?;
        Target::from_uri(&uri).map_err(ConnectError::InvalidConfig)?;
        Ok(uri)
    }

    /// The planner's settings, checked.
    pub fn http_config(&self) -> Result<HttpClientConfig, ConnectError> {
        let mut config = HttpClientConfig::new(self.uri()?);
        config.mode = self.mode;
        config.bearer = self.bearer.clone();
        config.open_get_stream = self.open_get_stream;
        config.oauth = self.oauth.clone();
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let bad =
                |what: &str| ConnectError::InvalidConfig(format!("header {name}: bad {what}"));
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad("name"))?;
            let value = HeaderValue::from_str(value).map_err(|_| bad("value"))?;
            headers.append(name, value);
        }
        config.headers = headers;
        Ok(config)
    }

    /// The limits of each connection: the read timeout bounds a response head; bodies are
    /// bounded by the planner (JSON bodies and SSE events).
    pub fn connection_config(&self) -> http1::Config {
        http1::Config {
            head_timeout: self.read_timeout,
            max_body_bytes: None,
            ..http1::Config::default()
        }
    }

    /// The keep-alive pool this endpoint asks for.
    pub fn pool<C>(&self) -> Pool<C> {
        Pool::new(self.max_idle_per_host, self.idle_timeout)
    }
}

impl std::fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEndpoint")
            .field("url", &self.url)
            .field("mode", &self.mode)
            .field("headers", &self.headers)
            .field("bearer", &self.bearer.as_ref().map(|_| "<redacted>"))
            .field("open_get_stream", &self.open_get_stream)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("webpki_roots", &self.webpki_roots)
            .field("root_certificates", &self.root_certificates.len())
            .field("max_idle_per_host", &self.max_idle_per_host)
            .field("idle_timeout", &self.idle_timeout)
            .field("oauth", &self.oauth)
            .finish()
    }
}

impl From<&str> for HttpEndpoint {
    fn from(url: &str) -> Self {
        Self::new(url)
    }
}

impl From<String> for HttpEndpoint {
    fn from(url: String) -> Self {
        Self::new(url)
    }
}
