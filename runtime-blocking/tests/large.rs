//! Large messages over stdio with a real server process: a 16 MiB tool result reaches the
//! caller under the default limits, and a response over the client's configured limit fails
//! its own call at once with the typed too-large error while the session goes on.

mod common;

use std::time::Duration;

use serde_json::json;
use zest_blocking::core::error::RequestError;
use zest_blocking::{CallError, Client, ClientApi, ClientOptions, StdioCommand};

const MIB: usize = 1024 * 1024;

#[test]
fn a_sixteen_mib_result_arrives_with_the_defaults() {
    let client = common::spawn_fixture(&[]);
    let text = "x".repeat(16 * MIB);
    let result = client.call_tool("echo", json!({ "text": text })).expect("answered");
    assert_eq!(result.content[0].as_text().map(str::len), Some(16 * MIB));
    client.close().expect("closes");
}

#[test]
fn a_response_over_the_limit_fails_its_call_at_once_and_nothing_else() {
    let command = StdioCommand::new(common::fixture())
        .shutdown_grace(Duration::from_millis(300))
        .on_stderr(|_| {});
    let mut options = ClientOptions::new("zest-blocking-large", "0.0.0");
    options.config.max_message = MIB;
    // With the default 60 s timeout: had the answer been dropped, the call would time out.
    let client = Client::spawn(command, options).expect("the fixture starts");
    let big = client.call_tool("echo", json!({ "text": "y".repeat(2 * MIB) }));
    assert_eq!(big.unwrap_err(), CallError::Request(RequestError::TooLarge { limit: MIB }));
    let small = client.call_tool("echo", json!({ "text": "still here" })).expect("answered");
    assert_eq!(small.content[0].as_text(), Some("still here"));
    client.close().expect("closes");
}
