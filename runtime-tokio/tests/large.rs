//! Large messages over stdio with a real server process: a 16 MiB tool result reaches the
//! caller under the default limits, and a response over the client's configured limit fails
//! its own call at once with the typed too-large error while the session goes on.

mod common;

use serde_json::json;
use zest_tokio::core::error::RequestError;
use zest_tokio::{CallError, ClientApi, ClientOptions};

const MIB: usize = 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sixteen_mib_result_arrives_with_the_defaults() {
    let options = ClientOptions::new("zest-tokio-large", "0.0.0");
    let client =
        zest_tokio::Client::spawn(common::fixture_command(&[]), options).await.expect("starts");
    let text = "x".repeat(16 * MIB);
    let result = client.call_tool("echo", json!({ "text": text })).await.expect("answered");
    assert_eq!(result.content[0].as_text().map(str::len), Some(16 * MIB));
    client.close().await.expect("closes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_over_the_limit_fails_its_call_at_once_and_nothing_else() {
    let mut options = ClientOptions::new("zest-tokio-large", "0.0.0");
    options.config.max_message = MIB;
    // With the default 60 s timeout: had the answer been dropped, the call would time out.
    let client =
        zest_tokio::Client::spawn(common::fixture_command(&[]), options).await.expect("starts");
    let big = client.call_tool("echo", json!({ "text": "y".repeat(2 * MIB) })).await;
    assert_eq!(big.unwrap_err(), CallError::Request(RequestError::TooLarge { limit: MIB }));
    let small = client.call_tool("echo", json!({ "text": "still here" })).await.expect("answered");
    assert_eq!(small.content[0].as_text(), Some("still here"));
    client.close().await.expect("closes");
}
