//! What only zest-blocking's in-memory pair has to show (the pair's contract, written once
//! for every runtime, is `conformance/tests/runtime_contract.rs`): calls from many threads
//! share one pair.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::json;
use zest_blocking::core::error::CloseReason;
use zest_blocking::{in_memory, ClientApi, Json, Registry, ServerConfig};

/// Far above what any step here takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(30);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    total: f64,
}

#[test]
fn concurrent_calls_from_many_threads_share_the_pair() {
    let registry = Registry::new().tool("add", "Adds", |Add { a, b }| Json(Sum { total: a + b }));
    let (client, server) = in_memory(ServerConfig::new("in-memory-test", "1.0"), registry).unwrap();
    let calls: Vec<_> = (0..64)
        .map(|i| {
            let client = client.clone();
            thread::spawn(move || client.call_tool("add", json!({"a": i, "b": 1})))
        })
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        let result = call.join().unwrap().unwrap();
        assert_eq!(result.structured_content, Some(json!({"total": i as f64 + 1.0})));
    }
    client.close().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || tx.send(server.stopped()));
    assert_eq!(rx.recv_timeout(HANG).expect("stopped in time"), CloseReason::TransportEnded);
}
