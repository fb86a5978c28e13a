//! The router as an OAuth resource server, driven by the scripted HTTP client in virtual
//! time: the metadata document, 401 and 403 with the challenges clients read, expiry and
//! audience, sessions bound to the principal that opened them, the principal in handlers'
//! context.

mod common;
mod router_harness;

use http::{Method, StatusCode};
use router_harness::*;
use serde_json::json;
use zest_core::auth::{Principal, ProtectedResource};
use zest_core::server::Event;
use zest_core::testkit::VirtualClock;

const RESOURCE: &str = "http://localhost/mcp";
const METADATA: &str = "http://localhost/.well-known/oauth-protected-resource/mcp";

/// Tokens: `<subject>-<scope>` for a few subjects; `expired`, `elsewhere` (another
/// audience); anything else is refused.
fn validate(token: &str) -> Result<Principal, String> {
    let mut p = match token {
        "alice-read" => Principal::new("alice", ["mcp:read"]),
        "alice-none" => Principal::new("alice", Vec::<String>::new()),
        "bob-read" => Principal::new("bob", ["mcp:read"]),
        "expired" => Principal::new("alice", ["mcp:read"]),
        "elsewhere" => Principal::new("alice", ["mcp:read"]),
        "ours" => Principal::new("carol", ["mcp:read"]),
        _ => return Err("unknown token".into()),
    };
    match token {
        "expired" => p.expires_at = Some(999),
        "elsewhere" => p.audience = vec!["https://other.example/mcp".into()],
        "ours" => p.audience = vec!["HTTP://LOCALHOST/mcp/".into()],
        _ => p.expires_at = Some(2_000),
    }
    Ok(p)
}

fn protected() -> Http {
    let mut cfg = config();
    let resource = ProtectedResource::new(RESOURCE, "https://as.example", validate)
        .require_scopes(["mcp:read"]);
    cfg.oauth = Some(resource);
    cfg.wall_clock = Some((VirtualClock::new().now(), 1_000));
    Http::new(cfg)
}

#[test]
fn the_metadata_document_is_served_without_a_token() {
    let mut http = protected();
    for path in
        ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
    {
        let stream = http.send(Method::GET, path, &[], b"");
        let a = http.answer(stream);
        assert_eq!(a.status, Some(StatusCode::OK), "{path}");
        assert_eq!(
            a.json(),
            json!({"resource": RESOURCE, "authorization_servers": ["https://as.example"],
                "scopes_supported": ["mcp:read"]})
        );
    }
}

#[test]
fn missing_bad_expired_and_foreign_tokens_get_401_and_scopes_get_403() {
    let mut http = protected();
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    let challenge = |error: Option<&str>| {
        let mut c = format!(r#"Bearer resource_metadata="{METADATA}", scope="mcp:read""#);
        if let Some(e) = error {
            c.push_str(&format!(r#", error="{e}""#));
        }
        c
    };
    for (credential, status, error) in [
        (None, StatusCode::UNAUTHORIZED, None),
        (Some("Basic YWxpY2U="), StatusCode::UNAUTHORIZED, None),
        (Some("Bearer forged"), StatusCode::UNAUTHORIZED, Some("invalid_token")),
        (Some("Bearer expired"), StatusCode::UNAUTHORIZED, Some("invalid_token")),
        (Some("Bearer elsewhere"), StatusCode::UNAUTHORIZED, Some("invalid_token")),
        (Some("Bearer alice-none"), StatusCode::FORBIDDEN, Some("insufficient_scope")),
    ] {
        http.authorization = credential;
        let stream = http.post(None, ping.clone());
        let a = http.answer(stream);
        assert_eq!(a.status, Some(status), "{credential:?}");
        assert_eq!(a.headers["www-authenticate"], challenge(error).as_str(), "{credential:?}");
        let get = http.send(Method::GET, "/sse", &[("accept", "text/event-stream")], b"");
        assert_eq!(http.answer(get).status, Some(status), "legacy SSE too: {credential:?}");
    }
    assert_eq!(http.router.session_count(), 0, "no session was opened");
    http.authorization = None;
    let health = http.send(Method::GET, "/health", &[], b"");
    assert_eq!(http.answer(health).status, Some(StatusCode::OK), "the health check stays open");
    http.authorization = Some("Bearer ours");
    http.handshake(json!({}));
    assert_eq!(http.router.session_count(), 1, "an audience naming this server is accepted");
}

#[test]
fn a_session_serves_only_its_principal_whose_handlers_see_who_asks() {
    let mut http = protected();
    http.authorization = Some("Bearer alice-read");
    let session = http.handshake(json!({}));
    http.authorization = Some("Bearer bob-read");
    let stream = http.post(Some(&session), echo_x(5));
    let a = http.answer(stream);
    assert_eq!(a.status, Some(StatusCode::FORBIDDEN), "another principal's token on the session");
    let get = http.get(&session, None);
    assert_eq!(http.answer(get).status, Some(StatusCode::FORBIDDEN));
    assert!(http.take_calls().is_empty(), "nothing reached a handler");
    http.authorization = Some("Bearer alice-read");
    let stream = http.post(Some(&session), echo_x(6));
    let principal = http.events.iter().find_map(|e| match &e.event {
        Event::Call { context, .. } => context.principal.clone(),
        _ => None,
    });
    let principal = principal.expect("the call carries its principal");
    assert_eq!(principal.subject, "alice");
    assert_eq!(principal.scopes, ["mcp:read"]);
    http.answer_first_call();
    assert_eq!(http.answer(stream).status, Some(StatusCode::OK));
}

#[test]
fn a_tool_that_needs_more_scope_is_refused_with_the_scopes_the_call_needs() {
    let mut cfg = config();
    let resource = ProtectedResource::new(RESOURCE, "https://as.example", validate)
        .require_scopes(["mcp:read"])
        .tool_scopes("echo", ["mcp:write"]);
    cfg.oauth = Some(resource);
    let mut http = Http::new(cfg);
    http.authorization = Some("Bearer alice-read");
    let session = http.handshake(json!({}));
    let stream = http.post(Some(&session), echo_x(7));
    let a = http.answer(stream);
    assert_eq!(a.status, Some(StatusCode::FORBIDDEN));
    assert_eq!(
        a.headers["www-authenticate"],
        format!(
            r#"Bearer resource_metadata="{METADATA}", scope="mcp:read mcp:write", error="insufficient_scope""#
        )
        .as_str()
    );
    assert!(http.take_calls().is_empty(), "the handler never ran");
    let list = http.post(Some(&session), json!({"jsonrpc":"2.0","id":8,"method":"tools/list"}));
    assert_eq!(http.answer(list).status, Some(StatusCode::OK), "other operations go on");
    let meta = http.send(Method::GET, "/.well-known/oauth-protected-resource/mcp", &[], b"");
    assert_eq!(http.answer(meta).json()["scopes_supported"], json!(["mcp:read", "mcp:write"]));
}
