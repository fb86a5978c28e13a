//! 2026-07-28 needs no shared state: two fixture processes on different runtimes, given one
//! `--state-key`, behind a loopback proxy that sends each HTTP request to the next process
//! in turn, serve one zest client whose multi-round call lands on both processes.

#[path = "support/fixture_process.rs"]
mod fixture_process;
#[path = "support/proxied_suite.rs"]
mod proxied_suite;
#[path = "support/proxy.rs"]
mod proxy;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fixture_process::FixtureProcess;
use proxied_suite::server_suite_passes;
use proxy::{authority, proxy};
use serde_json::json;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::ElicitResult;
use zest_tokio::{Client, ClientApi, ClientOptions};

/// Far above what any step here takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(30);
const KEY: &str = "5a6573742073686172657320746869732073746174652d7365616c696e67206b";

/// Starts the fixture on `runtime`, sealing with the shared key.
fn fixture(runtime: &str) -> FixtureProcess {
    FixtureProcess::serve_http(runtime, &["--state-key", KEY])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multi_round_call_completes_across_two_processes_that_share_a_key() {
    let started = Instant::now();
    let processes = [fixture("tokio"), fixture("smol")];
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = proxy(processes.iter().map(|p| authority(&p.url)).collect(), seen.clone());
    let handlers = AsyncClientHandlers::default().on_elicitation(|params| async move {
        let asked = serde_json::to_value(&params).unwrap();
        let field = asked["requestedSchema"]["properties"].as_object().unwrap().keys().next();
        let value = match field.map(String::as_str) {
            Some("colour") => "green",
            _ => "Ada",
        };
        let answer = json!({"action": "accept", "content": {field.unwrap(): value}});
        Ok(serde_json::from_value::<ElicitResult>(answer).unwrap())
    });
    let options = ClientOptions::new("round-robin-test", "0")
        .handlers(handlers)
        .with_config(|c| c.prefer_modern());
    let client = tokio::time::timeout(HANG, Client::connect(&url, options)).await.unwrap().unwrap();
    assert_eq!(client.negotiated().protocol_version.as_str(), "2026-07-28");
    let call = client.call_tool("test_input_required_result_multi_round", json!({}));
    let result = tokio::time::timeout(HANG, call).await.unwrap().unwrap();
    assert_eq!(result.content[0].as_text(), Some("Ada likes green"));
    let rounds: Vec<usize> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, body)| body.contains("test_input_required_result_multi_round"))
        .map(|(backend, _)| *backend)
        .collect();
    assert_eq!(rounds.len(), 3, "three rounds: {rounds:?}");
    assert!(rounds.contains(&0) && rounds.contains(&1), "rounds on both processes: {rounds:?}");
    let _ = client.close().await;
    assert!(started.elapsed() < HANG * 2);
}

/// The official 2026-07-28 server suite, every scenario, through the proxy: each request may
/// land on either process, and nothing fails for it but the two list-change checks whose
/// change and listen land on different processes (conformance/testdata/round-robin-baseline.json
/// says why; a listen held by the process that made the change passes them).
#[test]
fn the_2026_server_suite_passes_through_two_processes_behind_a_round_robin_proxy() {
    let processes = [fixture("tokio"), fixture("blocking")];
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = proxy(processes.iter().map(|p| authority(&p.url)).collect(), seen.clone());
    server_suite_passes(&url, "0.2.0-alpha.12@2026-07-28", Some("round-robin-baseline.json"));
    let backends: Vec<usize> = seen.lock().unwrap().iter().map(|(b, _)| *b).collect();
    assert!(backends.contains(&0) && backends.contains(&1), "both processes served");
}
