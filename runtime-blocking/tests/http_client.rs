//! zest-blocking's HTTP client against zest-blocking's HTTP server over loopback, where the
//! threaded API is what is tested: a call started on one thread and cancelled from another,
//! and a progress callback that calls the client. The behaviour every client runtime shares
//! is checked once in `conformance/tests/http_client_contract.rs`.

#[path = "common/http.rs"]
mod http_common;

use std::thread;
use std::time::Duration;

use http_common::*;
use serde_json::json;
use zest_blocking::core::error::RequestError;
use zest_blocking::core::RequestOptions;
use zest_blocking::schema::methods::CallTool;
use zest_blocking::schema::CallToolParams;
use zest_blocking::{CallError, Client, ClientApi};

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
