//! The introspection validator against a recording introspection endpoint on loopback:
//! what it sends (the token in a form, the server's credentials by HTTP Basic), what it
//! makes of the answers, and what it caches.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use zest_net::{introspection_validator, Introspection};

/// `Basic base64("rs-id:rs secret")`, the id and secret form-encoded first.
const CREDENTIALS: &str = "Basic cnMtaWQ6cnMrc2VjcmV0";

struct Endpoint {
    url: String,
    asked: Arc<AtomicUsize>,
    forms: Arc<Mutex<Vec<String>>>,
}

/// Answers every POST: 401 without the right credentials; active for `good` and `stale`
/// (expired an hour ago), from `other-issuer` for `foreign`, inactive otherwise.
fn endpoint() -> Endpoint {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/introspect", listener.local_addr().unwrap());
    let asked = Arc::new(AtomicUsize::new(0));
    let forms = Arc::new(Mutex::new(Vec::new()));
    let (counter, seen) = (asked.clone(), forms.clone());
    thread::spawn(move || {
        for stream in listener.incoming().take(100) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut length, mut authorized) = (0, false);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                // Field names are case-insensitive (RFC 9110); the value is compared exactly.
                if let Some((name, value)) = line.split_once(':') {
                    let basic = name.eq_ignore_ascii_case("authorization");
                    authorized |= basic && value.trim() == CREDENTIALS;
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let form = String::from_utf8(body).unwrap();
            counter.fetch_add(1, Ordering::SeqCst);
            seen.lock().unwrap().push(form.clone());
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
            let answer = match form.split('&').next().unwrap_or("") {
                _ if !authorized => None,
                "token=good" => {
                    Some(json!({"active": true, "sub": "ada", "scope": "mcp:read mcp:write",
                    "aud": "http://127.0.0.1/mcp", "exp": now + 3600, "iss": "https://as.example"}))
                }
                "token=stale" => Some(json!({"active": true, "sub": "ada", "exp": now - 3600})),
                "token=foreign" => {
                    Some(json!({"active": true, "sub": "eve", "iss": "https://other.example"}))
                }
                _ => Some(json!({"active": false})),
            };
            let (status, body) = match answer {
                Some(a) => ("200 OK", a.to_string()),
                None => ("401 Unauthorized", r#"{"error":"invalid_client"}"#.to_owned()),
            };
            let reply = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    Endpoint { url, asked, forms }
}

fn config(endpoint: &Endpoint) -> Introspection {
    let mut config = Introspection::new(&endpoint.url, "rs-id", "rs secret");
    config.issuer = Some("https://as.example".into());
    config
}

#[test]
fn an_active_token_names_its_principal_and_is_asked_about_once() {
    let endpoint = endpoint();
    let validate = introspection_validator(config(&endpoint));
    let principal = validate("good").expect("active");
    assert_eq!(principal.subject, "ada");
    assert_eq!(principal.scopes, ["mcp:read", "mcp:write"]);
    assert_eq!(principal.audience, ["http://127.0.0.1/mcp"]);
    assert!(principal.expires_at.is_some());
    assert_eq!(validate("good").unwrap().subject, "ada");
    assert_eq!(endpoint.asked.load(Ordering::SeqCst), 1, "the second check came from the cache");
    let forms = endpoint.forms.lock().unwrap();
    assert_eq!(forms[0], "token=good&token_type_hint=access_token");
}

#[test]
fn inactive_tokens_are_refused_and_remembered_briefly() {
    let endpoint = endpoint();
    let validate = introspection_validator(config(&endpoint));
    for _ in 0..3 {
        assert_eq!(validate("revoked").unwrap_err(), "the token is not active");
    }
    assert_eq!(endpoint.asked.load(Ordering::SeqCst), 1);
    // With nothing kept, every check asks again.
    let mut uncached = config(&endpoint);
    uncached.cache_inactive = Duration::ZERO;
    uncached.cache_active = Duration::ZERO;
    let validate = introspection_validator(uncached);
    validate("revoked").unwrap_err();
    validate("good").unwrap();
    validate("good").unwrap();
    assert_eq!(endpoint.asked.load(Ordering::SeqCst), 4);
}

#[test]
fn an_expired_token_is_not_kept_and_the_router_sees_its_expiry() {
    let endpoint = endpoint();
    let validate = introspection_validator(config(&endpoint));
    // Active by the endpoint's word, but past `exp`: kept for no time, so asked twice; the
    // principal carries the expiry, which the router refuses.
    let principal = validate("stale").unwrap();
    validate("stale").unwrap();
    assert!(principal.expires_at.is_some());
    assert_eq!(endpoint.asked.load(Ordering::SeqCst), 2);
}

#[test]
fn a_foreign_issuer_or_refused_credentials_fail_and_are_asked_again() {
    let endpoint = endpoint();
    let validate = introspection_validator(config(&endpoint));
    let foreign = validate("foreign").unwrap_err();
    assert!(foreign.contains("other.example"), "{foreign}");
    let mut wrong = config(&endpoint);
    wrong.client_secret = "guess".into();
    let validate = introspection_validator(wrong.clone());
    for _ in 0..2 {
        let refused = validate("good").unwrap_err();
        assert!(refused.contains("introspection failed: the endpoint answered 401"), "{refused}");
    }
    assert_eq!(endpoint.asked.load(Ordering::SeqCst), 3, "failures are not cached");
    assert!(!format!("{wrong:?}").contains("guess"), "the secret stays out of Debug");
}
