//! The HTTP client's connection and session behaviour, written once and run with every
//! client runtime (each against the server of its own runtime where a server is needed):
//! bad options are refused before connecting; a refused connection and a silent server are
//! typed transport errors worded one way; a session the server ended fails the next call
//! with `SessionExpired` and a fresh session then serves; `tools/list_changed` reaches the
//! client on the GET stream.

#[path = "support/clients.rs"]
mod clients;
#[path = "support/served.rs"]
mod served;

use std::time::{Duration, Instant};

use clients::{text, Blocking, Peer, Smol, Tokio};
use serde_json::json;
use served::Served;
use zest_conformance::fixture::content::SIMPLE_TEXT;
use zest_conformance::Runtime;
use zest_core::api::CallError;
use zest_core::client::ServerNotification;
use zest_core::error::RequestError;
use zest_core::http::client::HttpMode;
use zest_core::io::TransportFailure;
use zest_core::runtime::http_client::HttpEndpoint;
use zest_core::runtime::ConnectError;

/// The everything fixture served by the runtime of client `C`.
fn own_server<C: Peer>() -> Served {
    let runtime = Runtime::ALL.into_iter().find(|r| r.name() == C::RUNTIME);
    Served::start(runtime.expect("a runtime of that name"))
}

/// Options no connection could use fail `InvalidConfig` (or, for a certificate that
/// does not parse, a transport error) before anything is sent.
fn bad_options_are_refused<C: Peer>() {
    for bad in [
        HttpEndpoint::new("ftp://127.0.0.1/mcp"),
        HttpEndpoint::new("http://127.0.0.1:1/mcp").header("bad name", "x"),
    ] {
        let outcome = C::try_connect_with(bad, 1024).err();
        assert!(
            matches!(outcome, Some(ConnectError::InvalidConfig(_))),
            "{}: {outcome:?}",
            C::RUNTIME
        );
    }
    let bad = HttpEndpoint::new("http://127.0.0.1:1/mcp").root_certificate(b"not a cert".to_vec());
    let outcome = C::try_connect_with(bad, 1024).err();
    assert!(
        matches!(outcome, Some(ConnectError::InvalidConfig(_) | ConnectError::Transport(_))),
        "{}: {outcome:?}",
        C::RUNTIME
    );
}

/// A server that takes the connection and never answers: the handshake fails `TimedOut`
/// once the read timeout passes.
fn a_silent_server_times_out<C: Peer>() {
    // Never accepted: the kernel completes the handshake and queues the connection, so the
    // request is written and no answer ever comes.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("its address");
    let endpoint = HttpEndpoint::new(format!("http://{addr}/mcp"))
        .mode(HttpMode::StreamableHttp)
        .read_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let outcome = C::try_connect_with(endpoint, 1024).err();
    assert_eq!(
        outcome,
        Some(ConnectError::Transport(TransportFailure::TimedOut)),
        "{}",
        C::RUNTIME
    );
    assert!(started.elapsed() < Duration::from_secs(10), "{}: {:?}", C::RUNTIME, started.elapsed());
    drop(listener);
}

/// Nothing listens on the port: connecting fails with `Refused`, in the same words on
/// every runtime.
fn refused_is_a_clear_transport_error<C: Peer>() {
    // Bind, learn the port, close: nothing listens there now.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.local_addr().expect("its address").port()
    };
    let endpoint = HttpEndpoint::new(format!("http://127.0.0.1:{port}/mcp"));
    let Err(error) = C::try_connect_with(endpoint, 1024) else {
        panic!("{}: connected to a closed port", C::RUNTIME)
    };
    assert!(
        matches!(&error, ConnectError::Transport(TransportFailure::Refused(_))),
        "{}: {error:?}",
        C::RUNTIME
    );
    assert!(
        error.to_string().starts_with("cannot reach the server: connection refused"),
        "{}: {error}",
        C::RUNTIME
    );
}

/// The server ends every session: the next call fails `SessionExpired`, then (once the
/// client has started a new session) calls are answered again by exactly one session.
fn an_expired_session_is_typed_then_replaced<C: Peer>() {
    let server = own_server::<C>();
    let client = C::connect(&server.url());
    client.ping();
    server.close_sessions();
    let first = client.try_call("test_simple_text", json!({}));
    assert!(
        matches!(first, Err(CallError::Request(RequestError::SessionExpired))),
        "{}: {first:?}",
        C::RUNTIME
    );
    let mut answered = None;
    for _ in 0..50 {
        match client.try_call("test_simple_text", json!({})) {
            Ok(result) => {
                answered = Some(text(&result));
                break;
            }
            Err(CallError::Request(RequestError::SessionExpired)) => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("{}: {e}", C::RUNTIME),
        }
    }
    assert_eq!(answered.as_deref(), Some(SIMPLE_TEXT), "{}: a fresh session answered", C::RUNTIME);
    assert_eq!(server.session_count(), 1, "{}", C::RUNTIME);
    client.close();
    server.shutdown();
}

/// A tool added while the client is connected is announced on the GET stream, and the
/// next `tools/list` has it.
fn list_changed_arrives_on_the_get_stream<C: Peer>() {
    let server = own_server::<C>();
    let client = C::connect(&server.url());
    // The GET stream opens after the handshake; a ping round trip lets it settle.
    client.ping();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut announced = false;
    for attempt in 0..50 {
        if attempt % 10 == 0 {
            server.add_tool("late");
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match client.notification_within(left) {
            Some(ServerNotification::ToolListChanged) => {
                announced = true;
                break;
            }
            Some(_) => continue,
            None => break,
        }
    }
    assert!(announced, "{}: tools/list_changed reached the client", C::RUNTIME);
    assert!(client.tool_names().iter().any(|t| t == "late"), "{}", C::RUNTIME);
    client.close();
    server.shutdown();
}

#[test]
fn a_refused_connection_is_a_clear_transport_error_on_tokio() {
    refused_is_a_clear_transport_error::<Tokio>();
}

#[test]
fn a_refused_connection_is_a_clear_transport_error_on_smol() {
    refused_is_a_clear_transport_error::<Smol>();
}

#[test]
fn a_refused_connection_is_a_clear_transport_error_on_blocking() {
    refused_is_a_clear_transport_error::<Blocking>();
}

#[test]
fn an_expired_session_fails_typed_then_a_new_one_serves_on_tokio() {
    an_expired_session_is_typed_then_replaced::<Tokio>();
}

#[test]
fn an_expired_session_fails_typed_then_a_new_one_serves_on_smol() {
    an_expired_session_is_typed_then_replaced::<Smol>();
}

#[test]
fn an_expired_session_fails_typed_then_a_new_one_serves_on_blocking() {
    an_expired_session_is_typed_then_replaced::<Blocking>();
}

#[test]
fn list_changed_arrives_on_the_get_stream_on_tokio() {
    list_changed_arrives_on_the_get_stream::<Tokio>();
}

#[test]
fn list_changed_arrives_on_the_get_stream_on_smol() {
    list_changed_arrives_on_the_get_stream::<Smol>();
}

#[test]
fn list_changed_arrives_on_the_get_stream_on_blocking() {
    list_changed_arrives_on_the_get_stream::<Blocking>();
}

#[test]
fn bad_options_are_refused_before_connecting_on_tokio() {
    bad_options_are_refused::<Tokio>();
}

#[test]
fn a_server_that_never_answers_times_out_on_tokio() {
    a_silent_server_times_out::<Tokio>();
}

#[test]
fn bad_options_are_refused_before_connecting_on_smol() {
    bad_options_are_refused::<Smol>();
}

#[test]
fn a_server_that_never_answers_times_out_on_smol() {
    a_silent_server_times_out::<Smol>();
}

#[test]
fn bad_options_are_refused_before_connecting_on_blocking() {
    bad_options_are_refused::<Blocking>();
}

#[test]
fn a_server_that_never_answers_times_out_on_blocking() {
    a_silent_server_times_out::<Blocking>();
}
