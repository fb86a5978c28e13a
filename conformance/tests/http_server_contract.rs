//! The HTTP server's answers to raw requests, written once and run on every server runtime
//! (each serving the everything fixture): `/health`, `initialize` with a session id and a
//! JSON answer, bad requests with their exact status and a JSON-RPC error, an oversized body
//! with 413 naming the limit, a foreign `Host` with 403 and an unknown path with 404, a
//! head sent too slowly with 408 while other connections are served.

#[path = "support/clients.rs"]
mod clients;
#[path = "../../tests/support/load.rs"]
mod load;
#[path = "support/served.rs"]
mod served;

use std::net::SocketAddr;
use std::time::Duration;

use http::{Method, StatusCode};
use load::{Raw, RawConn, POST_HEADERS};
use serde_json::{json, Value};
use served::Served;
use zest_conformance::Runtime;
use zest_tokio::HttpConfig;

/// One request on a new connection, its answer read whole.
fn raw(addr: SocketAddr, method: Method, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Raw {
    RawConn::connect(addr).exchange_at(method, path, headers, body)
}

/// The answer's body as JSON, `null` if it is not.
fn json_of(r: &Raw) -> Value {
    serde_json::from_slice(&r.body).unwrap_or(Value::Null)
}

/// An `initialize` request body.
fn initialize_body() -> Vec<u8> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}
    });
    serde_json::to_vec(&body).expect("JSON")
}

fn health_answers_ok(runtime: Runtime) {
    let server = Served::start(runtime);
    let r = raw(server.local_addr(), Method::GET, "/health", &[], b"");
    assert_eq!(r.status, StatusCode::OK, "{runtime}");
    assert_eq!(json_of(&r), json!({"status": "ok"}), "{runtime}");
    server.shutdown();
}

fn initialize_gets_a_session_id_and_json(runtime: Runtime) {
    let server = Served::start(runtime);
    let r = raw(server.local_addr(), Method::POST, "/mcp", POST_HEADERS, &initialize_body());
    assert_eq!(r.status, StatusCode::OK, "{runtime}: {:?}", String::from_utf8_lossy(&r.body));
    let id = r.headers.get("mcp-session-id").expect("a session id").to_str().expect("ASCII");
    assert_eq!(id.len(), 32, "{runtime}: {id}");
    assert_eq!(json_of(&r)["result"]["serverInfo"]["name"], "zest-conformance-everything");
    server.shutdown();
}

/// What is wrong, the header fields, the body, the status expected.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Vec<u8>, StatusCode);

fn bad_requests_get_their_status_and_a_jsonrpc_error(runtime: Runtime) {
    let server = Served::start(runtime);
    let init = initialize_body();
    let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_vec();
    let json_only = [("content-type", "application/json"), ("accept", "application/json")];
    let text_body =
        [("content-type", "text/plain"), ("accept", "application/json, text/event-stream")];
    let unknown_session = [("mcp-session-id", "0123456789abcdef0123456789abcdef")];
    let cases: Vec<Case<'_>> = vec![
        ("wrong accept", json_only.to_vec(), init.clone(), StatusCode::NOT_ACCEPTABLE),
        (
            "wrong content-type",
            text_body.to_vec(),
            init.clone(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        ("bad json", POST_HEADERS.to_vec(), b"{not json".to_vec(), StatusCode::BAD_REQUEST),
        ("missing session", POST_HEADERS.to_vec(), list.clone(), StatusCode::BAD_REQUEST),
        ("unknown session", [POST_HEADERS, &unknown_session].concat(), list, StatusCode::NOT_FOUND),
        (
            "foreign origin",
            [POST_HEADERS, &[("origin", "https://evil.example")]].concat(),
            init.clone(),
            StatusCode::FORBIDDEN,
        ),
        (
            "unsupported version",
            [POST_HEADERS, &[("mcp-protocol-version", "1999-01-01")]].concat(),
            init,
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (what, headers, body, status) in cases {
        let r = raw(server.local_addr(), Method::POST, "/mcp", &headers, &body);
        assert_eq!(r.status, status, "{runtime}, {what}: {}", String::from_utf8_lossy(&r.body));
        let error = &json_of(&r)["error"];
        assert!(
            error["code"].is_i64() && error["message"].is_string(),
            "{runtime}, {what}: {error}"
        );
    }
    server.shutdown();
}

fn an_oversized_body_gets_413(runtime: Runtime) {
    let mut http = HttpConfig::new();
    http.router.max_body = 1024;
    let server = Served::start_with(runtime, http);
    let mut body = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"pad\":\"".to_vec();
    body.extend(std::iter::repeat_n(b'x', 4096));
    body.extend_from_slice(b"\"}}");
    let r = raw(server.local_addr(), Method::POST, "/mcp", POST_HEADERS, &body);
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{runtime}");
    let error = &json_of(&r)["error"];
    assert_eq!(error["code"], -32600, "{runtime}: {error}");
    assert!(error["message"].as_str().unwrap_or_default().contains("1024"), "{runtime}: {error}");
    server.shutdown();
}

fn a_foreign_host_gets_403_and_an_unknown_path_404(runtime: Runtime) {
    let server = Served::start(runtime);
    let r = raw(server.local_addr(), Method::GET, "/health", &[("host", "evil.example")], b"");
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{runtime}");
    let r = raw(server.local_addr(), Method::GET, "/nowhere", &[], b"");
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{runtime}");
    server.shutdown();
}

/// A head trickling in a byte every 100 ms gets 408 once the head deadline passes, and a
/// request on another connection is served meanwhile.
fn a_head_sent_too_slowly_gets_408_and_does_not_stop_others(runtime: Runtime) {
    let mut http = HttpConfig::new();
    http.http1.head_timeout = Duration::from_secs(1);
    let server = Served::start_with(runtime, http);
    let addr = server.local_addr();
    let slow = std::thread::spawn(move || load::slow_head(addr, Duration::from_millis(100)));
    let r = raw(addr, Method::GET, "/health", &[], b"");
    assert_eq!(r.status, StatusCode::OK, "{runtime}: served beside the trickling connection");
    let answer = slow.join().expect("the slow client's thread");
    assert!(answer.starts_with("HTTP/1.1 408 "), "{runtime}: {answer}");
    server.shutdown();
}

macro_rules! on_every_runtime {
    ($($check:ident),* $(,)?) => {
        $(mod $check {
            use super::Runtime;

            #[test]
            fn tokio() {
                super::$check(Runtime::Tokio);
            }

            #[test]
            fn smol() {
                super::$check(Runtime::Smol);
            }

            #[test]
            fn blocking() {
                super::$check(Runtime::Blocking);
            }
        })*
    };
}

on_every_runtime!(
    health_answers_ok,
    initialize_gets_a_session_id_and_json,
    bad_requests_get_their_status_and_a_jsonrpc_error,
    an_oversized_body_gets_413,
    a_foreign_host_gets_403_and_an_unknown_path_404,
    a_head_sent_too_slowly_gets_408_and_does_not_stop_others,
);
