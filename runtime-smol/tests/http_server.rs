//! zest-smol's HTTP server where its executor matters: serving under async-std, and a tool
//! done at its first poll answered with JSON, one that waits with SSE. What every server
//! runtime answers to raw requests is checked once in
//! `conformance/tests/http_server_contract.rs`.

mod common;
#[path = "common/http.rs"]
mod http_common;
#[path = "../../tests/support/load.rs"]
mod load;

use common::run;
use http::{Method, StatusCode};
use http_common::*;
use serde_json::json;

#[test]
fn serves_and_connects_under_async_std_too() {
    use zest_smol::{Client, ClientApi, ClientOptions};
    async_std::task::block_on(async {
        let server = server().await;
        let r = raw(&server, Method::GET, "/health", &[], b"").await;
        assert_eq!(r.status, StatusCode::OK);
        let client = Client::connect(&server.url(), ClientOptions::new("async-std", "1"))
            .await
            .expect("connect from async-std");
        let echoed = client.call_tool("echo", json!({"text": "async-std"})).await.unwrap();
        assert_eq!(echoed.content[0].as_text(), Some("async-std"));
        client.close().await.unwrap();
        server.shutdown().await;
    });
}

#[test]
fn a_tool_done_at_its_first_poll_is_answered_with_json_and_one_that_waits_with_sse() {
    run(60, async {
        let server = server().await;
        let addr = server.local_addr();
        let (quick, waits) = smol::unblock(move || load::quick_and_slow_calls(addr)).await;
        assert_eq!(quick.headers["content-type"], "application/json");
        let answer: serde_json::Value = serde_json::from_slice(&quick.body).unwrap();
        assert_eq!(answer["result"]["content"][0]["text"], "quick");
        assert_eq!(waits.headers["content-type"], "text/event-stream");
        let body = String::from_utf8_lossy(&waits.body);
        assert!(body.contains("done after 1 steps"), "{body}");
        server.shutdown().await;
    });
}
