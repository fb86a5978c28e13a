//! How the client fixture authorizes in the suite's `auth/*` scenarios, through zest's
//! public API only: an [`OAuthConfig`] built from the scenario's context, and the headless
//! helper as the authorization handler (the suite's authorization server redirects at once).

use serde_json::Value;
use zest_core::api::CallError;
use zest_core::auth::{ClientCredentials, Grant, OAuthConfig};
use zest_core::runtime::ConnectError;

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
    let Some(id) = text("client_id") else { return config };
    // Workload identity: the platform's JWT is the grant.
    if let Some(jwt) = text("valid_jwt") {
        return OAuthConfig::jwt_bearer(jwt).pre_registered(ClientCredentials::public(id));
    }
    // Enterprise-managed: the SSO ID token is exchanged at the identity provider first.
    if let (Some(endpoint), Some(id_token)) = (text("idp_token_endpoint"), text("idp_id_token")) {
        let grant = Grant::IdentityAssertion {
            idp_token_endpoint: endpoint,
            id_token,
            idp_client_id: text("idp_client_id"),
        };
        let secret = text("client_secret").unwrap_or_default();
        return OAuthConfig::with(grant)
            .pre_registered(ClientCredentials::confidential(id, secret));
    }
    let mut credentials = match (text("private_key_pem"), text("client_secret")) {
        (Some(pem), _) => ClientCredentials::private_key_jwt(id, pem),
        (None, Some(secret)) => ClientCredentials::confidential(id, secret),
        (None, None) => ClientCredentials::public(id),
    };
    if let Some(issuer) = text("issuer") {
        credentials = credentials.for_issuer(issuer);
    }
    if name.contains("client-credentials") {
        OAuthConfig::client_credentials(credentials)
    } else {
        config.pre_registered(credentials)
    }
}

/// The OAuth refusal scenario `name` must end in, as `AuthError::code` names it; `None`
/// where the flow must succeed. The runner checks the client's stderr for
/// [`refusal_line`]`(code)`, so a client that fails for another reason does not pass.
pub fn expected_refusal(name: &str) -> Option<&'static str> {
    Some(match name.strip_prefix("auth/")? {
        "resource-mismatch" => "resource_mismatch",
        "metadata-issuer-mismatch" => "issuer_mismatch",
        "scope-retry-limit" => "too_many_attempts",
        "iss-supported-missing" | "iss-wrong-issuer" | "iss-unexpected" | "iss-normalized" => {
            "issuer_check_failed"
        }
        _ => return None,
    })
}

/// The line the client prints when authorization failed with `code`.
pub fn refusal_line(code: &str) -> String {
    format!("refused: {code}")
}

/// A failed call's words, with the refusal line when OAuth failed.
pub fn describe_call(error: &CallError) -> String {
    match error.auth() {
        Some(auth) => format!("{error}\n{}", refusal_line(auth.code())),
        None => error.to_string(),
    }
}

/// A failed connection's words, with the refusal line when OAuth failed.
pub fn describe_connect(error: &ConnectError) -> String {
    match error.auth() {
        Some(auth) => format!("{error}\n{}", refusal_line(auth.code())),
        None => error.to_string(),
    }
}
