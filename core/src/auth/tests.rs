//! The flow inside a real client machine, against a scripted MCP server and authorization
//! server: every request the client makes is answered by the test's `serve`, in virtual time.

use std::collections::VecDeque;
use std::time::Duration;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use http::header::{HeaderValue, AUTHORIZATION};
use http::{HeaderMap, Method, StatusCode};
use serde_json::{json, Value};

use super::pkce::s256;
use super::*;
use crate::client::{Client, ClientConfig, Event};
use crate::error::{CloseReason, RequestError};
use crate::http::client::{HttpClientConfig, HttpMode};
use crate::io::{
    HttpRequest, Input, Output, Receive, ResponseHead, StreamEvent, StreamId, Transmit,
};
use crate::testkit::VirtualClock;

const MCP: &str = "http://127.0.0.1:9000/mcp";
const ISSUER: &str = "http://127.0.0.1:9100";
const UNIX: u64 = 1_000_000;

/// One answer: status, header fields, body.
type Reply = (u16, Vec<(&'static str, String)>, String);

fn form(body: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

fn field<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn bearer(req: &HttpRequest) -> Option<&str> {
    req.headers.get(AUTHORIZATION)?.to_str().ok()?.strip_prefix("Bearer ")
}

fn json_reply(status: u16, body: Value) -> Reply {
    (status, vec![("content-type", "application/json".into())], body.to_string())
}

/// The MCP server's answer to a POST with a good token (`initialize`, `tools/list`).
fn mcp_ok(req: &HttpRequest) -> Reply {
    let msg: Value = serde_json::from_slice(&req.body).unwrap();
    match msg["method"].as_str() {
        Some("initialize") => json_reply(
            200,
            json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "s", "version": "1"}}}),
        ),
        Some("tools/list") => {
            json_reply(200, json!({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}))
        }
        _ => (202, vec![], String::new()),
    }
}

fn challenge() -> Reply {
    let hint = r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:9000/.well-known/oauth-protected-resource/mcp""#;
    (401, vec![("www-authenticate", hint.to_owned())], String::new())
}

fn server_metadata() -> Value {
    json!({
        "issuer": ISSUER,
        "authorization_endpoint": format!("{ISSUER}/authorize"),
        "token_endpoint": format!("{ISSUER}/token"),
        "registration_endpoint": format!("{ISSUER}/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
    })
}

/// The well-known documents, registration, and an MCP server that wants token `good`.
fn standard(req: &HttpRequest, metadata: &Value) -> Option<Reply> {
    let path = req.uri.path();
    Some(match (req.method.clone(), path) {
        (Method::GET, "/.well-known/oauth-protected-resource/mcp") => json_reply(
            200,
            json!({"resource": MCP, "authorization_servers": [ISSUER], "scopes_supported": ["mcp"]}),
        ),
        (Method::GET, "/.well-known/oauth-authorization-server") => {
            json_reply(200, metadata.clone())
        }
        (Method::POST, "/register") => json_reply(201, json!({"client_id": "dyn-client"})),
        (Method::POST, "/mcp") if bearer(req).is_some_and(|t| t.starts_with("good")) => mcp_ok(req),
        (Method::POST, "/mcp") => challenge(),
        _ => return None,
    })
}

struct Run {
    client: Client,
    clock: VirtualClock,
    requests: Vec<HttpRequest>,
    events: Vec<Event>,
    /// A token cache this client shares with others (`OAuthConfig::shared_cache`).
    cache: Option<Rc<RefCell<Option<Tokens>>>>,
}

impl Run {
    fn new(oauth: OAuthConfig) -> Self {
        let clock = VirtualClock::new();
        let mut http = HttpClientConfig::new(MCP.parse().unwrap());
        http.mode = HttpMode::StreamableHttp;
        http.open_get_stream = false;
        http.headers.insert("x-app", HeaderValue::from_static("custom"));
        let http = http.oauth(oauth.with_entropy([9; 32], clock.now(), UNIX));
        let client =
            Client::new_http(ClientConfig::new("c", "1").session_era(), http, clock.now()).unwrap();
        Self { client, clock, requests: Vec::new(), events: Vec::new(), cache: None }
    }

    /// Answers every request with `serve` and every authorization with `redirect`, until
    /// nothing is left to do.
    fn drive(
        &mut self,
        serve: &mut dyn FnMut(&HttpRequest) -> Reply,
        redirect: &mut dyn FnMut(&str) -> String,
    ) {
        self.drive_with(serve, &mut |url| Some(redirect(url)));
    }

    /// Answers every request with `serve` and leaves the authorization asked for
    /// unanswered; its URL.
    fn drive_until_asked(&mut self, serve: &mut dyn FnMut(&HttpRequest) -> Reply) -> String {
        let mut asked = None;
        self.drive_with(serve, &mut |url| {
            asked = Some(url.to_owned());
            None
        });
        asked.expect("authorization was asked for")
    }

    /// [`drive`](Self::drive), with `redirect` answering `None` to leave an authorization be.
    fn drive_with(
        &mut self,
        serve: &mut dyn FnMut(&HttpRequest) -> Reply,
        redirect: &mut dyn FnMut(&str) -> Option<String>,
    ) {
        let mut opened = VecDeque::new();
        self.drain(&mut opened, redirect);
        while let Some((stream, request)) = opened.pop_front() {
            let (status, fields, body) = serve(&request);
            self.requests.push(request);
            let mut headers = HeaderMap::new();
            for (name, value) in fields {
                headers.insert(name, HeaderValue::try_from(value).unwrap());
            }
            let head = ResponseHead { status: StatusCode::from_u16(status).unwrap(), headers };
            let now = self.clock.now();
            for event in [
                StreamEvent::Head(Box::new(head)),
                StreamEvent::Data(body.as_bytes()),
                StreamEvent::End,
            ] {
                self.client.handle_input(Input::Receive(now, Receive { stream, event }));
                self.drain(&mut opened, redirect);
            }
        }
    }

    /// Takes every output: exchanges to `opened`, authorizations answered at once (unless
    /// `redirect` says `None`).
    fn drain(
        &mut self,
        opened: &mut VecDeque<(StreamId, HttpRequest)>,
        redirect: &mut dyn FnMut(&str) -> Option<String>,
    ) {
        while let Some(out) = self.client.poll_output() {
            match out {
                Output::Transmit(Transmit::Http { stream, request }) => {
                    opened.push_back((stream, *request));
                }
                Output::Transmit(_) => {}
                Output::Event(Event::AuthorizationRequired { url }) => {
                    let back = redirect(&url);
                    self.events.push(Event::AuthorizationRequired { url });
                    if let Some(back) = back {
                        let now = self.clock.advance(Duration::from_secs(30));
                        self.client.authorize(now, &back).unwrap();
                    }
                }
                Output::Event(Event::LoadTokens) => {
                    let cached = self.cache.as_ref().and_then(|c| c.borrow().clone());
                    self.client.cached_tokens(self.clock.now(), cached).unwrap();
                    self.events.push(Event::LoadTokens);
                }
                Output::Event(Event::TokensChanged(t)) => {
                    if let Some(cache) = &self.cache {
                        *cache.borrow_mut() = Some(t.clone());
                    }
                    self.events.push(Event::TokensChanged(t));
                }
                Output::Event(e) => self.events.push(e),
            }
        }
    }

    fn ready(&self) -> bool {
        self.events.iter().any(|e| matches!(e, Event::Ready(_)))
    }

    fn closed(&self) -> Option<&CloseReason> {
        self.events.iter().find_map(|e| match e {
            Event::Closed(reason) => Some(reason),
            _ => None,
        })
    }

    fn to(&self, path: &str) -> Vec<&HttpRequest> {
        self.requests.iter().filter(|r| r.uri.path() == path).collect()
    }
}

/// The authorization server's redirect for `url`: `code`, the same `state`, `iss`.
fn redirect_ok(url: &str) -> String {
    let query = url.split_once('?').unwrap().1;
    let pairs = form(query.as_bytes());
    let state = field(&pairs, "state").unwrap();
    format!("http://127.0.0.1:3000/cb?code=c0de&state={state}&iss={ISSUER}")
}

fn code_flow_serve(
    metadata: Value,
    token_answers: &mut Vec<Reply>,
) -> impl FnMut(&HttpRequest) -> Reply + '_ {
    move |req| {
        if req.uri.path() == "/token" {
            return token_answers.remove(0);
        }
        standard(req, &metadata).unwrap_or_else(|| (404, vec![], String::new()))
    }
}

#[test]
fn authorization_code_flow_discovers_registers_and_replays_the_refused_initialize() {
    let mut run = Run::new(OAuthConfig::authorization_code("http://127.0.0.1:3000/cb"));
    let token = json!({"access_token": "good-1", "token_type": "Bearer", "expires_in": 3600,
        "refresh_token": "r-1"});
    let mut answers = vec![json_reply(200, token)];
    let mut serve = code_flow_serve(server_metadata(), &mut answers);
    run.drive(&mut serve, &mut redirect_ok);
    assert!(run.ready(), "{:?}", run.events);
    let url = run.events.iter().find_map(|e| match e {
        Event::AuthorizationRequired { url } => Some(url.clone()),
        _ => None,
    });
    let query = form(url.unwrap().split_once('?').unwrap().1.as_bytes());
    assert_eq!(field(&query, "client_id"), Some("dyn-client"));
    assert_eq!(field(&query, "code_challenge_method"), Some("S256"));
    assert_eq!(field(&query, "resource"), Some(MCP));
    assert_eq!(field(&query, "scope"), Some("mcp"));
    let token_request = run.to("/token")[0];
    let body = form(&token_request.body);
    assert_eq!(field(&body, "grant_type"), Some("authorization_code"));
    assert_eq!(field(&body, "resource"), Some(MCP));
    assert_eq!(field(&body, "client_id"), Some("dyn-client"));
    let verifier = field(&body, "code_verifier").unwrap();
    assert_eq!(Some(s256(verifier).as_str()), field(&query, "code_challenge"));
    // Metadata, registration and token requests carry no MCP field and no token.
    for req in run.requests.iter().filter(|r| r.uri.path() != "/mcp") {
        for name in ["authorization", "mcp-protocol-version", "mcp-session-id", "x-app"] {
            let allowed = name == "authorization" && req.uri.path() == "/token";
            assert!(allowed || !req.headers.contains_key(name), "{name} on {}", req.uri);
        }
    }
    let posts = run.to("/mcp");
    assert_eq!(bearer(posts[0]), None);
    assert_eq!(bearer(posts[1]), Some("good-1"), "the refused initialize is replayed");
    assert_eq!(posts[1].body, posts[0].body);
    let changed = run.events.iter().find_map(|e| match e {
        Event::TokensChanged(t) => Some(t.clone()),
        _ => None,
    });
    let tokens = changed.unwrap();
    assert_eq!(tokens.refresh_token.as_deref(), Some("r-1"));
    // Expiry is absolute: the wall clock at the answer (30 s of authorizing) plus 3600.
    assert_eq!(tokens.expires_at, Some(UNIX + 30 + 3600));
    assert_eq!(tokens.issuer, ISSUER);
    assert!(!format!("{:?}", run.events).contains("good-1"));
}

#[test]
fn a_server_without_s256_is_refused_before_any_authorization() {
    let mut run = Run::new(OAuthConfig::authorization_code("http://127.0.0.1:3000/cb"));
    let mut metadata = server_metadata();
    metadata["code_challenge_methods_supported"] = json!(["plain"]);
    let mut answers = vec![];
    run.drive(&mut code_flow_serve(metadata, &mut answers), &mut redirect_ok);
    let expected = AuthError::PkceUnsupported { issuer: ISSUER.into() };
    assert_eq!(run.closed(), Some(&CloseReason::Auth(expected)));
    assert!(run.to("/authorize").is_empty() && run.to("/register").is_empty());
    assert!(!run.events.iter().any(|e| matches!(e, Event::AuthorizationRequired { .. })));
}

#[test]
fn a_wrong_state_or_issuer_in_the_redirect_is_refused_and_no_code_is_redeemed() {
    for (back, expected) in [
        (
            format!("http://127.0.0.1:3000/cb?code=c&state=forged&iss={ISSUER}"),
            AuthError::StateMismatch,
        ),
        (
            String::from("http://127.0.0.1:3000/cb?code=c&state=STATE&iss=https://evil.example"),
            AuthError::IssuerCheckFailed {
                expected: ISSUER.into(),
                found: Some("https://evil.example".into()),
            },
        ),
        (
            String::from("http://127.0.0.1:3000/cb?code=c&state=STATE"),
            AuthError::IssuerCheckFailed { expected: ISSUER.into(), found: None },
        ),
    ] {
        let mut run = Run::new(OAuthConfig::authorization_code("http://127.0.0.1:3000/cb"));
        let mut answers = vec![];
        let mut redirect = |url: &str| {
            let state = redirect_ok(url)
                .split("state=")
                .nth(1)
                .unwrap()
                .split('&')
                .next()
                .unwrap()
                .to_owned();
            back.replace("STATE", &state)
        };
        run.drive(&mut code_flow_serve(server_metadata(), &mut answers), &mut redirect);
        assert_eq!(run.closed(), Some(&CloseReason::Auth(expected.clone())));
        assert!(run.to("/token").is_empty(), "{expected:?}: a code was redeemed");
    }
}

/// A client with cached tokens the server no longer takes, and a refresh token.
fn cached(refresh: &str) -> OAuthConfig {
    let mut tokens = Tokens::new(ISSUER, "stale");
    tokens.refresh_token = Some(refresh.into());
    OAuthConfig::authorization_code("http://127.0.0.1:3000/cb")
        .pre_registered(ClientCredentials::public("app"))
        .tokens(tokens)
}

#[test]
fn a_refused_token_is_refreshed_once_and_a_missing_refresh_token_keeps_the_old_one() {
    let mut run = Run::new(cached("r-1"));
    let answer = json!({"access_token": "good-2", "token_type": "Bearer", "expires_in": 60});
    let mut answers = vec![json_reply(200, answer)];
    run.drive(&mut code_flow_serve(server_metadata(), &mut answers), &mut redirect_ok);
    assert!(run.ready(), "{:?}", run.events);
    assert!(run.to("/authorize").is_empty() && run.to("/register").is_empty());
    let body = form(&run.to("/token")[0].body);
    assert_eq!(field(&body, "grant_type"), Some("refresh_token"));
    assert_eq!(field(&body, "refresh_token"), Some("r-1"));
    assert_eq!(field(&body, "resource"), Some(MCP));
    assert_eq!(field(&body, "client_id"), Some("app"));
    let posts = run.to("/mcp");
    assert_eq!(bearer(posts[0]), Some("stale"));
    assert_eq!(bearer(posts[1]), Some("good-2"));
    let Some(Event::TokensChanged(tokens)) =
        run.events.iter().find(|e| matches!(e, Event::TokensChanged(_)))
    else {
        panic!("no TokensChanged");
    };
    assert_eq!(tokens.refresh_token.as_deref(), Some("r-1"), "kept when not rotated");

    let mut rotated = Run::new(cached("r-1"));
    let answer = json!({"access_token": "good-3", "token_type": "Bearer", "refresh_token": "r-2"});
    let mut answers = vec![json_reply(200, answer)];
    rotated.drive(&mut code_flow_serve(server_metadata(), &mut answers), &mut redirect_ok);
    let stored = rotated.events.iter().find_map(|e| match e {
        Event::TokensChanged(t) => t.refresh_token.clone(),
        _ => None,
    });
    assert_eq!(stored.as_deref(), Some("r-2"), "a rotated refresh token replaces the old one");
}

#[test]
fn refresh_failures_are_transient_or_fall_back_to_a_new_authorization() {
    let mut run = Run::new(cached("r-1"));
    let mut answers = vec![(503, vec![], String::from("busy"))];
    run.drive(&mut code_flow_serve(server_metadata(), &mut answers), &mut redirect_ok);
    let Some(CloseReason::Auth(error)) = run.closed() else { panic!("{:?}", run.events) };
    assert_eq!(error.kind(), AuthErrorKind::Transient, "{error}");

    let mut run = Run::new(cached("r-dead"));
    let good = json!({"access_token": "good-4", "token_type": "Bearer"});
    let mut answers =
        vec![json_reply(400, json!({"error": "invalid_grant"})), json_reply(200, good)];
    run.drive(&mut code_flow_serve(server_metadata(), &mut answers), &mut redirect_ok);
    assert!(run.ready(), "{:?}", run.events);
    let grants: Vec<String> = (run.to("/token").iter())
        .map(|r| field(&form(&r.body), "grant_type").unwrap().to_owned())
        .collect();
    assert_eq!(grants, ["refresh_token", "authorization_code"]);
}

#[test]
fn an_oauth_url_that_is_not_https_or_loopback_is_never_fetched() {
    let mut run = Run::new(OAuthConfig::authorization_code("http://127.0.0.1:3000/cb"));
    let mut serve = |req: &HttpRequest| {
        let hint = r#"Bearer resource_metadata="http://metadata.example.com/prm""#;
        if req.uri.path() == "/mcp" {
            return (401, vec![("www-authenticate", hint.to_owned())], String::new());
        }
        (404, vec![], String::new())
    };
    run.drive(&mut serve, &mut redirect_ok);
    assert!(matches!(run.closed(), Some(CloseReason::Auth(AuthError::InsecureUrl { .. }))));
    assert_eq!(run.requests.len(), 1, "only the MCP POST went out");
}

#[test]
fn a_401_in_the_middle_of_a_session_replays_the_call_once_with_the_new_token() {
    let mut run = Run::new(cached("r-1"));
    let mut answers = vec![
        json_reply(200, json!({"access_token": "good-a", "token_type": "Bearer"})),
        json_reply(200, json!({"access_token": "good-b", "token_type": "Bearer"})),
    ];
    let revoked = Cell::new(false);
    let metadata = server_metadata();
    let mut serve = |req: &HttpRequest| {
        if req.uri.path() == "/token" {
            return answers.remove(0);
        }
        // Token `good-a` stops working once the session is up.
        if revoked.get() && bearer(req) == Some("good-a") {
            return challenge();
        }
        standard(req, &metadata).unwrap()
    };
    run.drive(&mut serve, &mut redirect_ok);
    assert!(run.ready());
    revoked.set(true);
    let id = run.client.request(run.clock.now(), "tools/list", None, Default::default()).unwrap();
    run.drive(&mut serve, &mut redirect_ok);
    let outcome = run.events.iter().find_map(|e| match e {
        Event::Response { id: got, result } if *got == id => Some(result.clone()),
        _ => None,
    });
    assert!(matches!(outcome, Some(Ok(_))), "{outcome:?}");
    let lists: Vec<_> = (run.to("/mcp").into_iter())
        .filter(|r| String::from_utf8_lossy(&r.body).contains("tools/list"))
        .map(|r| bearer(r).unwrap().to_owned())
        .collect();
    assert_eq!(lists, ["good-a", "good-b"]);
    assert!(!run
        .events
        .iter()
        .any(|e| matches!(e, Event::Response { result: Err(RequestError::Auth(_)), .. })));
}

#[test]
fn tokens_are_refreshed_before_they_expire_and_short_lived_ones_not_at_once() {
    let mut run = Run::new(OAuthConfig::authorization_code("http://127.0.0.1:3000/cb"));
    let token = |n: u32| {
        json_reply(
            200,
            json!({"access_token": format!("good-{n}"), "token_type": "Bearer",
                "expires_in": 20, "refresh_token": format!("r-{n}")}),
        )
    };
    let mut answers = vec![token(1), token(2), token(3)];
    let mut serve = code_flow_serve(server_metadata(), &mut answers);
    run.drive(&mut serve, &mut redirect_ok);
    assert!(run.ready());
    let start = run.clock.now();
    // A 20-second token is refreshed at half its life, not at once (the margin is 60 s).
    let at = run.client.poll_timeout().expect("a refresh deadline");
    assert_eq!(at - start, Duration::from_secs(10), "refresh at half the lifetime");
    for round in 0..2 {
        let now = run.clock.advance_to(run.client.poll_timeout().unwrap());
        run.client.handle_input(Input::Timeout(now));
        run.drive(&mut serve, &mut redirect_ok);
        let next = run.client.poll_timeout().expect("the next refresh deadline");
        assert_eq!(next - now, Duration::from_secs(10), "round {round}: no refresh loop");
    }
    let grants: Vec<String> = (run.to("/token").iter())
        .map(|r| field(&form(&r.body), "grant_type").unwrap().to_owned())
        .collect();
    assert_eq!(grants, ["authorization_code", "refresh_token", "refresh_token"]);
    let refreshed_with: Vec<_> = (run.to("/token").iter().skip(1))
        .map(|r| field(&form(&r.body), "refresh_token").unwrap().to_owned())
        .collect();
    assert_eq!(refreshed_with, ["r-1", "r-2"], "each refresh uses the rotated token");
}

#[test]
fn two_clients_sharing_a_cache_refresh_once() {
    let cache = Rc::new(RefCell::new(None));
    let mut stale = Tokens::new(ISSUER, "stale");
    stale.refresh_token = Some("r-0".into());
    *cache.borrow_mut() = Some(stale.clone());
    let start = |cache: &Rc<RefCell<Option<Tokens>>>| {
        let mut run = Run::new(cached("r-0").shared_cache());
        run.cache = Some(cache.clone());
        run
    };
    let mut answers = vec![json_reply(
        200,
        json!({"access_token": "good-1", "token_type": "Bearer", "refresh_token": "r-1"}),
    )];
    let token_requests = Cell::new(0);
    let metadata = server_metadata();
    let mut serve = |req: &HttpRequest| {
        if req.uri.path() == "/token" {
            token_requests.set(token_requests.get() + 1);
            return answers.remove(0);
        }
        standard(req, &metadata).unwrap()
    };
    let mut first = start(&cache);
    first.drive(&mut serve, &mut redirect_ok);
    assert!(first.ready(), "{:?}", first.events);
    let mut second = start(&cache);
    second.drive(&mut serve, &mut redirect_ok);
    assert!(second.ready(), "{:?}", second.events);
    assert_eq!(token_requests.get(), 1, "the second client took the first one's refresh");
    let posts = second.to("/mcp");
    assert_eq!(bearer(posts[0]), Some("stale"));
    assert_eq!(bearer(posts[1]), Some("good-1"), "replayed with the cached token");
    assert!(second.events.contains(&Event::LoadTokens));
    assert_eq!(cache.borrow().as_ref().unwrap().refresh_token.as_deref(), Some("r-1"));
}

#[test]
fn time_a_user_spends_authorizing_does_not_count_against_requests() {
    let mut run = Run::new(OAuthConfig::authorization_code("http://127.0.0.1:3000/cb"));
    let token = json!({"access_token": "good-1", "token_type": "Bearer"});
    let mut answers = vec![json_reply(200, token)];
    let mut serve = code_flow_serve(server_metadata(), &mut answers);
    let clock_before = run.clock.now();
    // The user takes ten minutes, far past `initialize`'s deadline.
    let url = run.drive_until_asked(&mut serve);
    assert_eq!(run.client.poll_timeout(), None, "no deadline runs while the user authorizes");
    let now = run.clock.advance(Duration::from_secs(600));
    run.client.handle_input(Input::Timeout(now));
    run.client.authorize(now, &redirect_ok(&url)).unwrap();
    run.drive(&mut serve, &mut redirect_ok);
    assert!(run.ready(), "initialize survived the wait: {:?}", run.events);
    assert!(run.clock.now() - clock_before >= Duration::from_secs(600));
}
