//! zest-smol's HTTP client against zest-smol's HTTP server over loopback, where the async
//! API is what is tested: dropping a call's future cancels its handler, the legacy transport
//! found by detection, and handlers that act or panic before their first await still answer
//! once. The behaviour every client runtime shares is checked once in
//! `conformance/tests/http_client_contract.rs`.

mod common;
#[path = "common/http.rs"]
mod http_common;

use std::time::Duration;

use common::run;
use http_common::*;
use serde_json::json;
use smol::future::FutureExt as _;
use smol::Timer;
use zest_smol::core::error::RequestError;
use zest_smol::core::handler::AsyncClientHandlers;
use zest_smol::schema::{CallToolResult, CreateMessageResult};
use zest_smol::{CallError, Client, ClientApi, ClientOptions};

fn options() -> ClientOptions {
    let handlers = AsyncClientHandlers::default().on_sampling(|params| async move {
        let asked = params.messages.len();
        Ok(serde_json::from_value::<CreateMessageResult>(json!({
            "role": "assistant",
            "content": {"type": "text", "text": format!("{asked} message(s) read")},
            "model": "canned"
        }))
        .unwrap())
    });
    ClientOptions::new("zest-smol-http-client-test", "1.0").handlers(handlers)
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect()
}

/// `fut`, or `None` after `secs`.
async fn within<T>(secs: u64, fut: impl std::future::Future<Output = T>) -> Option<T> {
    async { Some(fut.await) }
        .or(async {
            Timer::after(Duration::from_secs(secs)).await;
            None
        })
        .await
}

#[test]
fn dropping_a_call_cancels_its_handler_on_the_server() {
    use std::sync::atomic::Ordering;
    run(60, async {
        let server = server().await;
        let client = Client::connect(&server.url(), options()).await.unwrap();
        let call = client.call_tool("never", json!({}));
        // The call is polled until its handler runs on the server (bounded), then dropped.
        let cut = async { Some(call.await) }
            .or(async {
                let deadline = std::time::Instant::now() + Duration::from_secs(20);
                while NEVER_STARTED.load(Ordering::SeqCst) == 0
                    && std::time::Instant::now() < deadline
                {
                    Timer::after(Duration::from_millis(5)).await;
                }
                None
            })
            .await;
        assert!(cut.is_none(), "never answered: {cut:?}");
        assert_eq!(NEVER_STARTED.load(Ordering::SeqCst), 1, "the handler ran, once");
        // notifications/cancelled reaches the server, which drops the handler's task.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while NEVER_DROPPED.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
            Timer::after(Duration::from_millis(20)).await;
        }
        assert_eq!(NEVER_DROPPED.load(Ordering::SeqCst), 1, "the handler was stopped");
        let echoed = client.call_tool("echo", json!({"text": "still here"})).await.unwrap();
        assert_eq!(text(&echoed), "still here");
        client.close().await.unwrap();
        server.shutdown().await;
    });
}

#[test]
fn legacy_sse_by_detection() {
    run(60, async {
        let server = server().await;
        // Auto mode: the POST to the SSE URL is refused, and the client falls back to GET.
        let url = server.url().replace("/mcp", "/sse");
        let client = Client::connect(&url, options()).await.expect("connect by detection");
        let echoed = client.call_tool("echo", json!({"text": "detected"})).await.unwrap();
        assert_eq!(text(&echoed), "detected");
        client.close().await.unwrap();
        server.shutdown().await;
    });
}

#[test]
fn handlers_that_act_or_panic_before_their_first_await_still_answer_once() {
    run(60, async {
        let server = server().await;
        let client = Client::connect(&server.url(), options()).await.unwrap();
        let eager = within(30, client.call_tool("eager", json!({}))).await;
        assert_eq!(text(&eager.expect("no deadlock").unwrap()), "eager done");
        let boom = client.call_tool("boom", json!({})).await;
        let Err(CallError::Request(RequestError::Remote(error))) = &boom else {
            panic!("expected an internal error, got {boom:?}")
        };
        assert!(error.message.contains("panicked"), "{error:?}");
        let echoed = client.call_tool("echo", json!({"text": "after the panic"})).await.unwrap();
        assert_eq!(text(&echoed), "after the panic");
        client.close().await.unwrap();
        server.shutdown().await;
    });
}
