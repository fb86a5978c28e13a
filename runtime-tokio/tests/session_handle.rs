//! The server handle on tokio alone: logs the handle sends while the session's loop cannot
//! run (a current-thread runtime in a burst) are queued up to `BROADCAST_QUEUE` and the rest
//! dropped. What the handle does on every runtime is in
//! `conformance/tests/session_handle.rs`.

use std::time::Duration;

use serde_json::json;
use zest_tokio::core::client::ServerNotification;
use zest_tokio::core::server::BROADCAST_QUEUE;
use zest_tokio::schema::LoggingLevel;
use zest_tokio::{in_memory, Registry, ServerConfig, ServerHandle};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

/// A log record: whatever the session was sent before comes first.
fn marker(handle: &ServerHandle) {
    handle.log_as("marker", LoggingLevel::Info, json!("marker"));
}

fn is_marker(n: &ServerNotification) -> bool {
    matches!(n, ServerNotification::LoggingMessage(m) if m.logger.as_deref() == Some("marker"))
}

#[tokio::test]
async fn stdio_logs_past_the_broadcast_queue_are_dropped_while_the_loop_is_behind() {
    // The session era: the handle's logs outside a request are that era's.
    let config = ServerConfig::new("handle-test", "1.0").session_era();
    let registry = Registry::new().tool("echo", "Echoes", |Text { text }| async move { text });
    let (client, server) = in_memory(config, registry).await.unwrap();
    let rx = client.notifications();
    let handle = server.handle();
    // On this one-thread runtime the session's loop cannot run during the burst.
    for i in 0..5_000 {
        handle.log(LoggingLevel::Info, json!(i));
    }
    let mut seen = 0;
    'marked: for _ in 0..50 {
        marker(&handle);
        let wait = async {
            loop {
                let n = rx.recv().await.expect("the session is open");
                if is_marker(&n) {
                    return;
                }
                seen += 1;
            }
        };
        if tokio::time::timeout(Duration::from_millis(100), wait).await.is_ok() {
            break 'marked;
        }
    }
    assert_eq!(seen, BROADCAST_QUEUE, "the first ones queued, the rest dropped");
    client.close().await.unwrap();
    server.stopped().await;
}
