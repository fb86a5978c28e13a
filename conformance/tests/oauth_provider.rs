//! OAuth against a real authorization server no one here wrote: `oidc-provider` (pinned in
//! tests/peers; scripts/install-peers) on loopback, with dynamic registration, PKCE,
//! resource indicators, rotated refresh tokens, client credentials and 4-second access
//! tokens, in front of the everything fixture protected by OAuth on each runtime (its
//! tokens validated against the provider's JWKS by `jwt_validator`: signature, issuer,
//! expiry; audience and scope by the router).
//!
//! - zest-blocking logs in with the authorization code (registering dynamically, a headless
//!   browser through the provider's login), calls a tool, outlives its access token by
//!   refreshing before expiry, and stores each rotation through the token hook;
//! - zest-tokio starts from cached tokens the server no longer takes: the 401 is answered
//!   by a refresh and the call replayed, with no new login;
//! - zest-smol uses client credentials;
//! - the TypeScript SDK client (with its client-credentials provider, and with an
//!   authorization-code provider that registers and logs in) and the Python SDK client
//!   (client credentials) use the protected fixture on every runtime;
//! - with opaque access tokens, the fixture on every runtime introspects them at the
//!   provider (`introspection_validator`): a zest client with client credentials calls a
//!   tool, an unknown token gets 401.

#[path = "support/browser.rs"]
mod browser;
#[path = "support/fixture_process.rs"]
mod fixture_process;
#[path = "../../tests/support/oidc_provider.rs"]
mod oidc_provider;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use fixture_process::FixtureProcess;
use oidc_provider::Provider;
use serde_json::json;
use zest_conformance::fixture::content::SIMPLE_TEXT;
use zest_core::auth::{ClientCredentials, OAuthConfig, Tokens};
use zest_core::runtime::http_client::HttpEndpoint;

const REDIRECT: &str = "http://127.0.0.1:9/cb";
/// The provider's access-token lifetime, in seconds.
const ACCESS_TTL: u64 = 4;

/// The fixture's tool every run calls, and its answer.
const TOOL: &str = "test_simple_text";

fn text(result: &zest_core::schema::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"].as_str().unwrap_or("").to_owned()
}

#[test]
fn the_zest_client_logs_in_refreshes_and_uses_client_credentials_at_a_real_provider() {
    let provider = Provider::start(ACCESS_TTL);
    let runs = [
        thread::spawn({
            let issuer = provider.issuer.clone();
            move || code_grant_with_rotation(&issuer)
        }),
        thread::spawn({
            let issuer = provider.issuer.clone();
            move || cached_tokens_refused_then_refreshed(&issuer)
        }),
        thread::spawn({
            let issuer = provider.issuer.clone();
            move || client_credentials(&issuer)
        }),
    ];
    for run in runs {
        run.join().expect("no run panicked");
    }
}

/// zest-blocking: dynamic registration, the code grant, and refreshes past the token's life.
fn code_grant_with_rotation(issuer: &str) {
    let fixture = FixtureProcess::serve_http("blocking", &["--oauth-issuer", issuer]);
    let stored: Arc<Mutex<Vec<Tokens>>> = Arc::default();
    let logins = Arc::new(AtomicUsize::new(0));
    let handlers = zest_core::handler::SyncClientHandlers::default()
        .on_authorize({
            let logins = logins.clone();
            move |url| {
                logins.fetch_add(1, Ordering::SeqCst);
                browser::log_in(&url, REDIRECT)
            }
        })
        .on_tokens_changed({
            let stored = stored.clone();
            move |t| stored.lock().unwrap().push(t.clone())
        });
    let endpoint = HttpEndpoint::new(fixture.url.as_str())
        .oauth(OAuthConfig::authorization_code(REDIRECT).client_name("zest oauth test"));
    let options = zest_blocking::ClientOptions::new("oauth-test", "1").handlers(handlers);
    let client = zest_blocking::Client::connect_to(endpoint, options).expect("logged in");
    let api = || zest_blocking::ClientApi::call_tool(&client, TOOL, json!({}));
    assert_eq!(text(&api().unwrap()), SIMPLE_TEXT);
    thread::sleep(Duration::from_secs(ACCESS_TTL + 2));
    assert_eq!(text(&api().unwrap()), SIMPLE_TEXT);
    let _ = client.close();
    assert_eq!(logins.load(Ordering::SeqCst), 1, "one login; the rest were refreshes");
    let stored = stored.lock().unwrap();
    assert!(stored.len() >= 2, "refreshed before expiry: {stored:?}");
    let refresh: Vec<_> = stored.iter().map(|t| t.refresh_token.clone().unwrap()).collect();
    assert_ne!(refresh[0], refresh[1], "the provider rotated the refresh token");
    assert!(stored.iter().all(|t| t.issuer == issuer && t.expires_at.is_some()));
}

/// zest-tokio: tokens from a cache, expired without the client knowing; the server's 401 is
/// answered by a refresh and the call goes through.
fn cached_tokens_refused_then_refreshed(issuer: &str) {
    let fixture = FixtureProcess::serve_http("tokio", &["--oauth-issuer", issuer]);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let logins = Arc::new(AtomicUsize::new(0));
    let stored: Arc<Mutex<Vec<Tokens>>> = Arc::default();
    let connect = |tokens: Option<Tokens>| {
        let logins = logins.clone();
        let stored = stored.clone();
        let handlers = zest_core::handler::AsyncClientHandlers::default()
            .on_authorize(move |url| {
                logins.fetch_add(1, Ordering::SeqCst);
                async move {
                    let login = move || browser::log_in(&url, REDIRECT);
                    tokio::task::spawn_blocking(login).await.map_err(|e| e.to_string())?
                }
            })
            .on_tokens_changed(move |t| stored.lock().unwrap().push(t.clone()));
        let mut oauth = OAuthConfig::authorization_code(REDIRECT)
            .pre_registered(ClientCredentials::public("zest-app"));
        if let Some(tokens) = tokens {
            oauth = oauth.tokens(tokens);
        }
        let endpoint = HttpEndpoint::new(fixture.url.as_str()).oauth(oauth);
        let options = zest_tokio::ClientOptions::new("oauth-test", "1").handlers(handlers);
        rt.block_on(zest_tokio::Client::connect_to(endpoint, options)).expect("connected")
    };
    let first = connect(None);
    let call = |c: &zest_tokio::Client| {
        rt.block_on(zest_tokio::ClientApi::call_tool(c, TOOL, json!({}))).unwrap()
    };
    assert_eq!(text(&call(&first)), SIMPLE_TEXT);
    let _ = rt.block_on(first.close());
    let mut cached = stored.lock().unwrap().last().cloned().expect("tokens were stored");
    // A cache that did not keep the expiry: the client learns from the server's 401.
    cached.expires_at = None;
    thread::sleep(Duration::from_secs(ACCESS_TTL + 1));
    let second = connect(Some(cached.clone()));
    assert_eq!(text(&call(&second)), SIMPLE_TEXT);
    let _ = rt.block_on(second.close());
    assert_eq!(logins.load(Ordering::SeqCst), 1, "the refresh token spared a second login");
    let last = stored.lock().unwrap().last().cloned().unwrap();
    assert_ne!(last.access_token, cached.access_token);
    assert_ne!(last.refresh_token, cached.refresh_token, "rotated, and stored");
}

/// zest-smol: client credentials for the pre-registered `machine` client.
fn client_credentials(issuer: &str) {
    let fixture = FixtureProcess::serve_http("smol", &["--oauth-issuer", issuer]);
    let credentials = ClientCredentials::confidential("machine", "machine-secret");
    let endpoint =
        HttpEndpoint::new(fixture.url.as_str()).oauth(OAuthConfig::client_credentials(credentials));
    let options = zest_smol::ClientOptions::new("oauth-test", "1");
    let client =
        smol::block_on(zest_smol::Client::connect_to(endpoint, options)).expect("connected");
    let call = zest_smol::ClientApi::call_tool(&client, TOOL, json!({}));
    assert_eq!(text(&smol::block_on(call).unwrap()), SIMPLE_TEXT);
    let _ = smol::block_on(client.close());
}

/// Runs a peer client script against `url`; its JSON line.
fn peer_client(program: &Path, script: &str, url: &str, issuer: &str) -> serde_json::Value {
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers");
    let output = std::process::Command::new(program)
        .arg(peers.join(script))
        .args([url, issuer])
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("the peer client runs");
    let line = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{script} against {url}: {line}");
    serde_json::from_str(line.lines().last().unwrap_or_default()).expect("one JSON line")
}

#[test]
fn the_typescript_and_python_sdk_clients_use_a_protected_zest_server_on_every_runtime() {
    let provider = Provider::start(ACCESS_TTL);
    let node = oidc_provider::node22();
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/.venv/bin/python");
    for runtime in ["tokio", "smol", "blocking"] {
        let fixture = FixtureProcess::serve_http(runtime, &["--oauth-issuer", &provider.issuer]);
        for (program, script) in [(&node, "ts_oauth_client.mjs"), (&python, "py_oauth_client.py")] {
            let seen = peer_client(program, script, &fixture.url, &provider.issuer);
            assert_eq!(seen["text"], SIMPLE_TEXT, "{script} on {runtime}: {seen}");
            assert!(seen["tools"].as_u64().unwrap_or(0) > 0, "{script} on {runtime}: {seen}");
        }
    }
}

/// A client-credentials token for `machine`, asked with `params` (form-encoded).
fn machine_token(issuer: &str, params: &str) -> String {
    let basic = "Basic bWFjaGluZTptYWNoaW5lLXNlY3JldA=="; // machine:machine-secret
    let form = format!("grant_type=client_credentials&{params}");
    let headers = [("authorization", basic), ("content-type", "application/x-www-form-urlencoded")];
    let (status, _, body) = browser::post(&format!("{issuer}/token"), &headers, &form).unwrap();
    assert_eq!(status, 200, "{body}");
    serde_json::from_str::<serde_json::Value>(&body).unwrap()["access_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Missing, expired, foreign-audience and under-scoped tokens get the exact refusals, with
/// the challenge that tells a client where to log in, on every runtime.
#[test]
fn bad_tokens_get_the_exact_401_and_403_on_every_runtime() {
    let provider = Provider::start(ACCESS_TTL);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let fixtures: Vec<FixtureProcess> = ["tokio", "smol", "blocking"]
        .iter()
        .map(|rt| FixtureProcess::serve_http(rt, &["--oauth-issuer", &provider.issuer]))
        .collect();
    let escape = |s: &str| s.replace(':', "%3A").replace('/', "%2F");
    // Expired by the time they are used.
    let expired: Vec<String> = (fixtures.iter())
        .map(|f| {
            let params = format!("scope=mcp%3Aread&resource={}", escape(&f.url));
            machine_token(&provider.issuer, &params)
        })
        .collect();
    thread::sleep(Duration::from_secs(ACCESS_TTL + 1));
    for (fixture, expired) in fixtures.iter().zip(&expired) {
        let other = "scope=mcp%3Aread&resource=http%3A%2F%2F127.0.0.1%3A1%2Fother";
        let foreign = &machine_token(&provider.issuer, other);
        let own = format!("resource={}", escape(&fixture.url));
        let unscoped = &machine_token(&provider.issuer, &own);
        let metadata = fixture.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
        let challenge = |error: Option<&str>| {
            let mut c = format!(r#"Bearer resource_metadata="{metadata}", scope="mcp:read""#);
            if let Some(e) = error {
                c.push_str(&format!(r#", error="{e}""#));
            }
            c
        };
        let bearer = |t: &str| format!("Bearer {t}");
        for (token, status, error) in [
            (None, 401, None),
            (Some(expired), 401, Some("invalid_token")),
            (Some(foreign), 401, Some("invalid_token")),
            (Some(unscoped), 403, Some("insufficient_scope")),
        ] {
            let authorization = token.map(|t| bearer(t));
            let mut headers = vec![
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ];
            if let Some(a) = &authorization {
                headers.push(("authorization", a));
            }
            let (got, www, body) = browser::post(&fixture.url, &headers, ping).unwrap();
            assert_eq!(got, status, "{}: {body}", fixture.url);
            assert_eq!(www.as_deref(), Some(challenge(error).as_str()), "{}", fixture.url);
        }
    }
}

#[test]
fn opaque_tokens_are_introspected_at_the_provider_on_every_runtime() {
    let provider = Provider::start_opaque(60);
    for runtime in ["tokio", "smol", "blocking"] {
        let args =
            ["--oauth-issuer", &provider.issuer, "--oauth-introspect", "resource-server:rs-secret"];
        let fixture = FixtureProcess::serve_http(runtime, &args);
        let credentials = ClientCredentials::confidential("machine", "machine-secret");
        let endpoint = HttpEndpoint::new(fixture.url.as_str())
            .oauth(OAuthConfig::client_credentials(credentials));
        let options = zest_blocking::ClientOptions::new("introspected", "1");
        let client = zest_blocking::Client::connect_to(endpoint, options).expect("connected");
        let called = zest_blocking::ClientApi::call_tool(&client, TOOL, json!({}));
        assert_eq!(text(&called.expect("the call")), SIMPLE_TEXT, "on {runtime}");
        let _ = client.close();
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let headers = [
            ("authorization", "Bearer not-a-token-the-provider-issued"),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        let (status, _, _) = browser::post(&fixture.url, &headers, ping).unwrap();
        assert_eq!(status, 401, "an unknown opaque token on {runtime}");
    }
}
