//! zest-blocking's HTTP client against zest-blocking's HTTP server over loopback: handshake,
//! JSON and SSE answers, progress and logs on the call's stream, a server request mid-call,
//! an expired session, graceful shutdown, and the ways a connection fails.

#[path = "common/http.rs"]
mod http_common;

use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use http_common::*;
use serde_json::json;
use zest_blocking::core::error::RequestError;
use zest_blocking::core::io::TransportFailure;
use zest_blocking::core::RequestOptions;
use zest_blocking::schema::methods::CallTool;
use zest_blocking::schema::CallToolParams;
use zest_blocking::{CallError, Client, ClientApi, ConnectError};

/// Hang guard for waits on another thread.
const GUARD: Duration = Duration::from_secs(30);

#[test]
fn start_and_cancel_a_call_from_another_thread() {
    let server = server();
    let client = Client::connect(&server.url(), options()).unwrap();
    let params = CallToolParams::new("slow", json!({"ms": 60_000}));
    let pending = client.start::<CallTool>(params, RequestOptions::default());
    let cancel = pending.cancel_handle().expect("sent");
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(50));
        cancel.cancel();
    });
    let outcome = pending.wait();
    assert!(matches!(outcome, Err(CallError::Request(RequestError::Cancelled))), "{outcome:?}");
    canceller.join().unwrap();
    let echoed = client.call_tool("echo", json!({"text": "still here"})).unwrap();
    assert_eq!(text(&echoed), "still here");
    client.close().unwrap();
    // The cancelled handler still sleeps on its thread; shutdown waits its grace, then goes.
    server.shutdown();
}

#[test]
fn shutdown_finishes_calls_in_flight_then_stops_accepting() {
    let server = server();
    let url = server.url();
    let client = Client::connect(&url, options()).unwrap();
    // The first progress report proves the handler runs; then shut down.
    let (started_tx, started) = std::sync::mpsc::channel();
    let started_tx = Mutex::new(started_tx);
    let running = {
        let client = client.clone();
        thread::spawn(move || {
            client.call_tool_with_progress("steps", json!({"n": 5}), move |_| {
                let _ = started_tx.lock().unwrap().send(());
            })
        })
    };
    started.recv_timeout(GUARD).expect("the call's handler started");
    server.shutdown();
    let result = running.join().unwrap().expect("the call in flight finished");
    assert_eq!(text(&result), "done after 5 steps");
    let error = Client::connect(&url, options()).unwrap_err();
    assert!(matches!(error, ConnectError::Transport(TransportFailure::Refused(_))), "{error:?}");
}

#[test]
fn a_progress_callback_may_call_the_client_over_http() {
    let server = server();
    let client = Client::connect(&server.url(), options()).unwrap();
    let inner = client.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let result = client
        .call_tool_with_progress("steps", json!({"n": 3}), move |p| {
            let echoed = inner.call_tool("echo", json!({"text": format!("at {}", p.progress)}));
            let _ = tx.send(echoed.map(|r| text(&r).to_owned()));
        })
        .expect("the outer call completes");
    assert_eq!(text(&result), "done after 3 steps");
    let echoed: Vec<String> = rx.try_iter().map(|r| r.expect("the inner call")).collect();
    assert_eq!(echoed, ["at 1", "at 2", "at 3"]);
    client.close().unwrap();
    server.shutdown();
}
