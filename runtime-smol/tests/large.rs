//! Large messages over stdio with a real server process: a 16 MiB tool result reaches the
//! caller under the default limits, and a response over the client's configured limit fails
//! its own call at once with the typed too-large error while the session goes on.

mod common;

use common::{fixture_cmd, run};
use serde_json::json;
use zest_smol::core::error::RequestError;
use zest_smol::{CallError, ClientApi, ClientOptions};

const MIB: usize = 1024 * 1024;

#[test]
fn a_sixteen_mib_result_arrives_with_the_defaults() {
    run(120, async {
        let (command, _stderr) = fixture_cmd(&[]);
        let options = ClientOptions::new("zest-smol-large", "0.0.0");
        let client = zest_smol::Client::spawn(command, options).await.expect("starts");
        let text = "x".repeat(16 * MIB);
        let result = client.call_tool("echo", json!({ "text": text })).await.expect("answered");
        assert_eq!(result.content[0].as_text().map(str::len), Some(16 * MIB));
        client.close().await.expect("closes");
    });
}

#[test]
fn a_response_over_the_limit_fails_its_call_at_once_and_nothing_else() {
    run(120, async {
        let (command, _stderr) = fixture_cmd(&[]);
        let mut options = ClientOptions::new("zest-smol-large", "0.0.0");
        options.config.max_message = MIB;
        // With the default 60 s timeout: had the answer been dropped, the call would time out.
        let client = zest_smol::Client::spawn(command, options).await.expect("starts");
        let big = client.call_tool("echo", json!({ "text": "y".repeat(2 * MIB) })).await;
        assert_eq!(big.unwrap_err(), CallError::Request(RequestError::TooLarge { limit: MIB }));
        let small = client.call_tool("echo", json!({ "text": "still here" })).await;
        assert_eq!(small.expect("answered").content[0].as_text(), Some("still here"));
        client.close().await.expect("closes");
    });
}
