//! zest-smol driven from async-std's executor: nothing in the crate needs smol's `block_on`.

mod common;

use std::time::Duration;

use serde_json::json;
use zest_smol::{Client, ClientApi, ClientOptions};

#[test]
fn spawn_call_close_round_trip_under_async_std() {
    let (cmd, _) = common::fixture_cmd(&[]);
    let outcome =
        async_std::task::block_on(async_std::future::timeout(Duration::from_secs(30), async {
            let options = ClientOptions::new("zest-smol-async-std", "0.1.0")
                .handlers(common::canned_sampling());
            let client = Client::spawn(cmd, options).await.unwrap();
            let pid = client.pid();
            assert_eq!(client.negotiated().server_info.name, "zest-smol-fixture");

            let echo = client.call_tool("echo", json!({"text": "from async-std"})).await.unwrap();
            assert_eq!(echo.content[0].as_text(), Some("from async-std"));
            let sampled = client.call_tool("sample", json!({"prompt": "ping"})).await.unwrap();
            assert_eq!(sampled.content[0].as_text(), Some("canned: ping"));
            // An async-std timer racing a 60 s call: dropping the call's future cancels it
            // (else the fixture would not exit cleanly at close below).
            let long = client.call_tool("long_running", json!({"steps": 1200, "step_ms": 50}));
            let raced = async_std::future::timeout(Duration::from_millis(200), long).await;
            assert!(raced.is_err(), "the long call was cut short by the timeout");
            client.ping().await.unwrap();

            let status = client.close().await.unwrap();
            assert!(status.success(), "{status:?}");
            assert!(!common::process_exists(pid), "reaped");
        }));
    outcome.expect("the round trip finished within 30 s");
}
