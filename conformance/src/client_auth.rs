//! How the client fixture authorizes in the suite's `auth/*` scenarios, through zest's
//! public API only: an [`OAuthConfig`] built from the scenario's context, and the headless
//! helper as the authorization handler (the suite's authorization server redirects at once).

use serde_json::Value;
use zest_core::auth::{ClientCredentials, OAuthConfig};

/// Where the fixture says the browser comes back to; the suite's server does not check it.
pub const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The fixture's client metadata document URL, as the suite expects (`basic-cimd`).
pub const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The OAuth settings for scenario `name` with the suite's `context`.
pub fn oauth_config(name: &str, context: &Value) -> OAuthConfig {
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut config = OAuthConfig::authorization_code(REDIRECT_URI).client_name("zest-conformance");
    // The suite fetches a client metadata document URL at the end of this one scenario;
    // registering instead keeps every request on loopback.
    if name != "auth/offline-access-scope" {
        config = config.client_metadata_url(CLIENT_METADATA_URL);
    }
    if let Some(id) = text("client_id") {
        let mut credentials = match text("client_secret") {
            Some(secret) => ClientCredentials::confidential(id, secret),
            None => ClientCredentials::public(id),
        };
        if let Some(issuer) = text("issuer") {
            credentials = credentials.for_issuer(issuer);
        }
        config = if name.contains("client-credentials") {
            OAuthConfig::client_credentials(credentials)
        } else {
            config.pre_registered(credentials)
        };
    }
    config
}
