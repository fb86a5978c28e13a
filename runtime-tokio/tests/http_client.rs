//! zest-tokio's HTTP client against zest-tokio's HTTP server over loopback, where the async
//! API is what is tested: dropping a call's future cancels its handler, and handlers that act
//! or panic before their first await still answer once. The behaviour every client runtime
//! shares is checked once in `conformance/tests/http_client_contract.rs`.

#[path = "common/http.rs"]
mod http_common;

use std::time::Duration;

use http_common::*;
use serde_json::json;
use zest_tokio::core::error::RequestError;
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::{CallToolResult, CreateMessageResult};
use zest_tokio::{CallError, Client, ClientApi, ClientOptions};

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
    ClientOptions::new("zest-http-client-test", "1.0").handlers(handlers)
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect()
}

#[tokio::test]
async fn dropping_a_call_cancels_its_handler_on_the_server() {
    use std::sync::atomic::Ordering;
    let server = server().await;
    let client = Client::connect(&server.url(), options()).await.unwrap();
    let call = client.call_tool("never", json!({}));
    // The call is polled until its handler runs on the server, then dropped.
    let started = async {
        while NEVER_STARTED.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::select! {
        outcome = call => panic!("the call never ends, yet: {outcome:?}"),
        () = started => {}
        () = tokio::time::sleep(Duration::from_secs(30)) => panic!("the handler never ran"),
    }
    assert_eq!(NEVER_STARTED.load(Ordering::SeqCst), 1, "the handler ran once");
    // notifications/cancelled reaches the server, which aborts the handler's task.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while NEVER_DROPPED.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(NEVER_DROPPED.load(Ordering::SeqCst), 1, "the handler was stopped");
    let echoed = client.call_tool("echo", json!({"text": "still here"})).await.unwrap();
    assert_eq!(text(&echoed), "still here");
    client.close().await.unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_that_act_or_panic_before_their_first_await_still_answer_once() {
    let server = server().await;
    let client = Client::connect(&server.url(), options()).await.unwrap();
    let eager = tokio::time::timeout(Duration::from_secs(5), client.call_tool("eager", json!({})));
    assert_eq!(text(&eager.await.expect("no deadlock").unwrap()), "eager done");
    let boom = client.call_tool("boom", json!({})).await;
    let Err(CallError::Request(RequestError::Remote(error))) = &boom else {
        panic!("expected an internal error, got {boom:?}")
    };
    assert!(error.message.contains("panicked"), "{error:?}");
    let echoed = client.call_tool("echo", json!({"text": "after the panic"})).await.unwrap();
    assert_eq!(text(&echoed), "after the panic");
    client.close().await.unwrap();
    server.shutdown().await;
}
