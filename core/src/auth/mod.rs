//! OAuth 2.1 for MCP's HTTP transports, client side
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization>), sans IO:
//! time and entropy come in through [`OAuthConfig`], every request goes out as an
//! HTTP exchange of the client's transport, and what the application must do comes back as
//! client events.
//!
//! Turn it on with [`HttpClientConfig::oauth`](crate::http::client::HttpClientConfig::oauth).
//! The transport then keeps each request until its answer's head arrives: a 401 (or a 403
//! `insufficient_scope`) holds every later send, runs the flow and replays the refused
//! requests with the new token, so a call never fails because its token expired.
//!
//! - **Discovery**: the challenge's `resource_metadata`, else the path-inserted and root
//!   well-known URLs (RFC 9728); the metadata's `resource` must name this server. Then the
//!   authorization server's metadata (RFC 8414 and OpenID Connect, in MCP's order), whose
//!   `issuer` must be the issuer exactly. No protected-resource metadata: the 2025-03-26
//!   model (metadata at the server's origin, else `/authorize`, `/token`, `/register`).
//! - **Authorization code** with PKCE S256 only (a server that does not list S256 is
//!   refused), `state`, RFC 9207 `iss` checked, RFC 8707 `resource` on every request. The
//!   client reports [`Event::AuthorizationRequired`](crate::client::Event) with the URL to open;
//!   the application answers with the whole redirect URL
//!   ([`Client::authorize`](crate::client::Client::authorize)).
//! - **Who the client is**: pre-registered credentials, a client metadata document URL, or
//!   dynamic registration, kept per issuer.
//! - **Client credentials** with a secret (`client_secret_basic` or `client_secret_post`).
//! - **Tokens**: absolute expiry; refreshed before they expire and once on a 401; an answer
//!   without a refresh token keeps the old one; every change reported as
//!   [`Event::TokensChanged`](crate::client::Event) for the application's cache.
//!
//! The server side is [`ProtectedResource`] on the router
//! ([`RouterConfig::oauth`](crate::http::server::RouterConfig::oauth)): tokens checked by
//! the application's validator, 401/403 with `WWW-Authenticate`, the metadata document
//! served, sessions bound to the principal that opened them, the principal visible to
//! handlers through their context.
//!
//! Metadata, registration and token requests carry no MCP header, no session id and no MCP
//! token, follow no redirect, and go only to https URLs (or http to a loopback host).

mod challenge;
mod config;
pub(crate) mod dpop;
mod error;
pub(crate) mod flow;
mod jwt;
mod metadata;
mod pkce;
mod resource;
mod tokens;
mod urls;

pub use challenge::{parse_challenges, BearerChallenge, Challenge};
pub use config::{ClientCredentials, Grant, OAuthConfig};
pub use error::{AuthError, AuthErrorKind};
pub use metadata::{ResourceMetadata, ServerMetadata};
pub use resource::{Principal, ProtectedResource, Refusal, TokenValidator};
pub use tokens::Tokens;
pub use urls::canonical_resource;

#[cfg(test)]
mod tests;
