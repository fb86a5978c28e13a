//! The HTTP client's connection and session behaviour, written once and run with every
//! client runtime (each against the server of its own runtime where a server is needed):
//! bad options are refused before connecting; custom headers and the bearer token reach the
//! server, and a 401 comes back typed with its challenge; a refused connection and a silent server are
//! typed transport errors worded one way; a session the server ended fails the next call
//! with `SessionExpired` and a fresh session then serves; `tools/list_changed` reaches the
//! client on the GET stream; calls from many threads each get their own answer; without
//! the GET stream, progress and logs arrive on the call's own stream; ten sessions at once
//! lose and duplicate nothing; the legacy HTTP+SSE transport serves calls, progress and
//! sampling; a server shutting down finishes the call in flight, then refuses connections. (The handshake,
//! sampling mid-call and the DELETE on close are in `http_matrix.rs`, for every pairing.)

#[path = "support/clients.rs"]
mod clients;
#[path = "support/served.rs"]
mod served;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use clients::{text, Blocking, Peer, Smol, Tokio};
use serde_json::{json, Value};
use served::Served;
use zest_conformance::fixture::content::{self, LOG_LINES, PROGRESS_STEPS, SIMPLE_TEXT};
use zest_core::api::CallError;
use zest_core::client::ServerNotification;
use zest_core::error::RequestError;
use zest_core::http::client::HttpMode;
use zest_core::io::TransportFailure;
use zest_core::runtime::http_client::HttpEndpoint;
use zest_core::runtime::ConnectError;

/// The everything fixture served by the runtime of client `C`.
fn own_server<C: Peer>() -> Served {
    Served::start(served::runtime_of::<C>())
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

/// A server that records the first request head and answers 401: the head carries the
/// endpoint's headers and token, and the handshake fails `HttpStatus` with the challenge.
fn headers_and_bearer_reach_the_server<C: Peer>() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("its address");
    let recorder = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().expect("the client connects");
        socket.set_read_timeout(Some(Duration::from_secs(30))).expect("a read timeout");
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).expect("the request head");
            assert!(n > 0 && head.len() < 64 * 1024);
            head.extend_from_slice(&buf[..n]);
        }
        let answer = b"HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer realm=\"t\"\r\ncontent-length: 0\r\n\r\n";
        socket.write_all(answer).expect("the answer is written");
        String::from_utf8_lossy(&head).to_ascii_lowercase()
    });
    let endpoint =
        HttpEndpoint::new(format!("http://{addr}/mcp")).header("x-tenant", "blue").bearer("s3cret");
    let outcome = C::try_connect_with(endpoint, 1024).err();
    assert!(
        matches!(&outcome, Some(ConnectError::HttpStatus { status, www_authenticate: Some(c) }) if status.as_u16() == 401 && c.contains("Bearer")),
        "{}: {outcome:?}",
        C::RUNTIME
    );
    let head = recorder.join().expect("the recorder ends");
    assert!(head.contains("x-tenant: blue"), "{}: {head}", C::RUNTIME);
    assert!(head.contains("authorization: bearer s3cret"), "{}: {head}", C::RUNTIME);
}

/// Eight calls at once from eight threads, each asking the client for a sampling answer
/// mid-call, share the connection pool and each get their own answer.
fn concurrent_calls_get_their_own_answers<C: Peer + Sync>() {
    let server = own_server::<C>();
    let client = C::connect(&server.url());
    std::thread::scope(|scope| {
        let calls: Vec<_> = (0..8)
            .map(|i| {
                let client = &client;
                scope
                    .spawn(move || client.call("test_sampling", json!({"prompt": format!("n{i}")})))
            })
            .collect();
        for (i, call) in calls.into_iter().enumerate() {
            let answer = text(&call.join().expect("the call's thread ends"));
            assert_eq!(answer, format!("LLM response: canned: n{i}"), "{}", C::RUNTIME);
        }
    });
    client.close();
    server.shutdown();
}

/// With the GET stream off, a call's progress and log records come on its own stream.
fn progress_and_logs_on_the_calls_stream<C: Peer>() {
    let server = own_server::<C>();
    let mut endpoint = HttpEndpoint::new(server.url());
    endpoint.open_get_stream = false;
    let client = C::connect_to(endpoint);
    let (done, progress) = client.call_with_progress("test_tool_with_progress", json!({}));
    assert_eq!(text(&done), text(&content::progress_done()), "{}", C::RUNTIME);
    assert_eq!(progress, PROGRESS_STEPS, "{}", C::RUNTIME);
    let logged = client.call("test_tool_with_logging", json!({}));
    assert_eq!(text(&logged), text(&content::logging_done()), "{}", C::RUNTIME);
    let logs: Vec<Value> = client.logs(LOG_LINES.len()).into_iter().map(|m| m.data).collect();
    assert_eq!(logs, LOG_LINES.map(Value::from), "{}", C::RUNTIME);
    client.close();
    server.shutdown();
}

/// Ten sessions at once, twenty calls each: every answer is the one asked for, and every
/// session ends with its DELETE.
fn many_sessions_lose_and_duplicate_nothing<C: Peer>() {
    const SESSIONS: usize = 10;
    const CALLS: usize = 20;
    let server = own_server::<C>();
    let url = server.url();
    std::thread::scope(|scope| {
        let sessions: Vec<_> = (0..SESSIONS)
            .map(|s| {
                let url = &url;
                scope.spawn(move || {
                    let client = C::connect(url);
                    let answers: Vec<_> = (0..CALLS)
                        .map(|c| {
                            let tag = format!("{s}-{c}");
                            let result = client.call("test_sampling", json!({"prompt": tag}));
                            (format!("LLM response: canned: {tag}"), text(&result))
                        })
                        .collect();
                    client.close();
                    answers
                })
            })
            .collect();
        for session in sessions {
            let answers = session.join().expect("the session's thread ends");
            assert_eq!(answers.len(), CALLS, "{}", C::RUNTIME);
            for (asked, answered) in answers {
                assert_eq!(asked, answered, "{}", C::RUNTIME);
            }
        }
    });
    assert_eq!(server.session_count(), 0, "{}: every session ended with DELETE", C::RUNTIME);
    server.shutdown();
}

/// Over the legacy HTTP+SSE transport (`/sse`): a call, a call with progress, and a call
/// that asks the client for a sampling answer.
fn the_legacy_transport_end_to_end<C: Peer>() {
    let server = own_server::<C>();
    let endpoint = HttpEndpoint::new(server.url().replace("/mcp", "/sse")).legacy_sse();
    let client = C::connect_to(endpoint);
    assert_eq!(text(&client.call("test_simple_text", json!({}))), SIMPLE_TEXT, "{}", C::RUNTIME);
    let (done, progress) = client.call_with_progress("test_tool_with_progress", json!({}));
    assert_eq!(text(&done), text(&content::progress_done()), "{}", C::RUNTIME);
    assert_eq!(progress, PROGRESS_STEPS, "{}", C::RUNTIME);
    let sampled = client.call("test_sampling", json!({"prompt": "legacy"}));
    assert_eq!(text(&sampled), "LLM response: canned: legacy", "{}", C::RUNTIME);
    client.close();
    server.shutdown();
}

/// Once the call's handler has reported progress, the server shuts down: the call still
/// gets its whole answer, and a new connection is refused.
fn shutdown_finishes_the_call_in_flight<C: Peer + Sync>() {
    let server = own_server::<C>();
    let url = server.url();
    let client = C::connect(&url);
    let (started_tx, started) = std::sync::mpsc::channel();
    let started_tx = std::sync::Mutex::new(started_tx);
    std::thread::scope(|scope| {
        let running = scope.spawn(|| {
            let on_progress = Box::new(move |_| {
                let _ = started_tx.lock().unwrap().send(());
            });
            client.try_call_reporting("test_tool_with_progress", json!({}), on_progress)
        });
        started.recv_timeout(Duration::from_secs(30)).expect("the call's handler started");
        server.shutdown();
        let result = running.join().expect("the call's thread ends");
        let result = result.unwrap_or_else(|e| panic!("{}: {e}", C::RUNTIME));
        assert_eq!(text(&result), text(&content::progress_done()), "{}", C::RUNTIME);
    });
    let outcome = C::try_connect_with(HttpEndpoint::new(url), 1024).err();
    assert!(
        matches!(outcome, Some(ConnectError::Transport(TransportFailure::Refused(_)))),
        "{}: {outcome:?}",
        C::RUNTIME
    );
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
    // Until the client's new session is up (two round trips in the background); bounded.
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
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
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut announced = false;
    // A change made before the GET stream is open reaches nobody: change again each second
    // without an announcement, until the deadline.
    while !announced && Instant::now() < deadline {
        server.add_tool("late");
        let slice = deadline.saturating_duration_since(Instant::now()).min(Duration::from_secs(1));
        let until = Instant::now() + slice;
        while let Some(note) =
            client.notification_within(until.saturating_duration_since(Instant::now()))
        {
            if matches!(note, ServerNotification::ToolListChanged) {
                announced = true;
                break;
            }
        }
        // The slice's rest, should the queue have ended early.
        if !announced {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
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

#[test]
fn custom_headers_and_the_bearer_token_reach_the_server_on_tokio() {
    headers_and_bearer_reach_the_server::<Tokio>();
}

#[test]
fn custom_headers_and_the_bearer_token_reach_the_server_on_smol() {
    headers_and_bearer_reach_the_server::<Smol>();
}

#[test]
fn custom_headers_and_the_bearer_token_reach_the_server_on_blocking() {
    headers_and_bearer_reach_the_server::<Blocking>();
}

#[test]
fn concurrent_calls_each_get_their_own_answer_on_tokio() {
    concurrent_calls_get_their_own_answers::<Tokio>();
}

#[test]
fn progress_and_logs_arrive_on_the_calls_stream_on_tokio() {
    progress_and_logs_on_the_calls_stream::<Tokio>();
}

#[test]
fn concurrent_calls_each_get_their_own_answer_on_smol() {
    concurrent_calls_get_their_own_answers::<Smol>();
}

#[test]
fn progress_and_logs_arrive_on_the_calls_stream_on_smol() {
    progress_and_logs_on_the_calls_stream::<Smol>();
}

#[test]
fn concurrent_calls_each_get_their_own_answer_on_blocking() {
    concurrent_calls_get_their_own_answers::<Blocking>();
}

#[test]
fn progress_and_logs_arrive_on_the_calls_stream_on_blocking() {
    progress_and_logs_on_the_calls_stream::<Blocking>();
}

#[test]
fn many_sessions_in_parallel_lose_and_duplicate_nothing_on_tokio() {
    many_sessions_lose_and_duplicate_nothing::<Tokio>();
}

#[test]
fn the_legacy_sse_transport_end_to_end_on_tokio() {
    the_legacy_transport_end_to_end::<Tokio>();
}

#[test]
fn many_sessions_in_parallel_lose_and_duplicate_nothing_on_smol() {
    many_sessions_lose_and_duplicate_nothing::<Smol>();
}

#[test]
fn the_legacy_sse_transport_end_to_end_on_smol() {
    the_legacy_transport_end_to_end::<Smol>();
}

#[test]
fn many_sessions_in_parallel_lose_and_duplicate_nothing_on_blocking() {
    many_sessions_lose_and_duplicate_nothing::<Blocking>();
}

#[test]
fn the_legacy_sse_transport_end_to_end_on_blocking() {
    the_legacy_transport_end_to_end::<Blocking>();
}

#[test]
fn shutdown_finishes_calls_in_flight_then_stops_accepting_on_tokio() {
    shutdown_finishes_the_call_in_flight::<Tokio>();
}

#[test]
fn shutdown_finishes_calls_in_flight_then_stops_accepting_on_smol() {
    shutdown_finishes_the_call_in_flight::<Smol>();
}

#[test]
fn shutdown_finishes_calls_in_flight_then_stops_accepting_on_blocking() {
    shutdown_finishes_the_call_in_flight::<Blocking>();
}
