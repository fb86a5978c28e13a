//! Who may use an HTTP server the command offers (`zest serve --http`, `zest bridge --http`):
//! anyone who reaches it (loopback and an allowed Origin), only requests that carry one
//! bearer token, or only OAuth access tokens from one issuer.

use std::io;
use std::net::TcpListener;

use zest_blocking::{serve_http_with, HttpConfig, HttpServer, Registry, ServerConfig};

/// The check every request (all but `/health`) passes before it is served.
#[derive(Clone, Debug, Default)]
pub(crate) struct Guard {
    /// The token every request must carry as `Authorization: Bearer`.
    pub(crate) bearer_token: Option<String>,
    /// The authorization server whose JWT access tokens every request must carry, and the
    /// scopes they must grant.
    pub(crate) oauth: Option<(String, Vec<String>)>,
}

impl Guard {
    /// Serves `registry` over HTTP on `addr` behind this guard.
    pub(crate) fn serve(
        &self,
        addr: &str,
        config: ServerConfig,
        registry: Registry,
    ) -> io::Result<HttpServer> {
        let mut http = HttpConfig::new();
        http.router.bearer_token.clone_from(&self.bearer_token);
        let Some((issuer, scopes)) = &self.oauth else {
            return serve_http_with(addr, config, http, registry);
        };
        // Bound first: the resource URL tokens must name has the port really bound
        // (`127.0.0.1:0` included).
        let listener = TcpListener::bind(addr)?;
        let resource = format!("http://{}/mcp", listener.local_addr()?);
        let validator = zest_blocking::jwt_validator(issuer, None).map_err(io::Error::other)?;
        let protected = zest_blocking::ProtectedResource::new(resource, issuer.clone(), validator)
            .require_scopes(scopes.iter().cloned());
        http.router.oauth = Some(protected);
        HttpServer::start(listener, config, http, registry)
    }
}
