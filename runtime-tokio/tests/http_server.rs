//! zest-tokio's HTTP server where its executor decides the answer's form: a tool done at its
//! first poll is answered with JSON, one that waits with SSE. What every server runtime
//! answers to raw requests is checked once in `conformance/tests/http_server_contract.rs`.

#[path = "common/http.rs"]
mod http_common;
#[path = "../../tests/support/load.rs"]
mod load;

use http_common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_done_at_its_first_poll_is_answered_with_json_and_one_that_waits_with_sse() {
    let server = server().await;
    let addr = server.local_addr();
    let calls = tokio::task::spawn_blocking(move || load::quick_and_slow_calls(addr));
    let (quick, waits) = calls.await.unwrap();
    assert_eq!(quick.headers["content-type"], "application/json");
    let answer: serde_json::Value = serde_json::from_slice(&quick.body).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "quick");
    assert_eq!(waits.headers["content-type"], "text/event-stream");
    let body = String::from_utf8_lossy(&waits.body);
    assert!(body.contains("done after 1 steps"), "{body}");
    server.shutdown().await;
}
