//! What only zest-smol's in-memory pair has to show (the pair's contract, written once for
//! every runtime, is `conformance/tests/runtime_contract.rs`): it runs under async-std's
//! executor too, with calls from its tasks.

use std::time::Duration;

use serde_json::json;
use smol::Timer;
use zest_smol::core::error::CloseReason;
use zest_smol::{in_memory, ClientApi, Json, Registry, ServerConfig};

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
fn the_pair_works_under_async_std_with_concurrent_calls() {
    async_std::task::block_on(async {
        let registry = Registry::new()
            .tool("add", "Adds", |Add { a, b }| async move { Json(Sum { total: a + b }) });
        let config = ServerConfig::new("in-memory-test", "1.0");
        let (client, server) = in_memory(config, registry).await.unwrap();
        let calls: Vec<_> = (0..64)
            .map(|i| {
                let client = client.clone();
                async_std::task::spawn(async move {
                    client.call_tool("add", json!({"a": i, "b": 1})).await
                })
            })
            .collect();
        for (i, call) in calls.into_iter().enumerate() {
            let result = call.await.unwrap();
            assert_eq!(result.structured_content, Some(json!({"total": i as f64 + 1.0})));
        }
        client.close().await.unwrap();
        let stopped = smol::future::or(server.stopped(), async {
            Timer::after(HANG).await;
            panic!("still waiting after {HANG:?}")
        });
        assert_eq!(stopped.await, CloseReason::TransportEnded);
    });
}
