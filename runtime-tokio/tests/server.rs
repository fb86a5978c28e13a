//! `serve` over in-memory streams on tokio alone, with the test playing the client line by
//! line: handlers run concurrently, and dropping the served future stops its handlers. What
//! `serve` does on every runtime is in `conformance/tests/stdio_server.rs`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;
use zest_tokio::core::error::CloseReason;
use zest_tokio::core::server::ServerConfig;
use zest_tokio::schema::{CallToolResult, Tool};
use zest_tokio::{serve, Registry};

/// The client side of an in-memory session.
struct Peer {
    to_server: WriteHalf<DuplexStream>,
    from_server: Lines<BufReader<ReadHalf<DuplexStream>>>,
}

impl Peer {
    async fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.to_server.write_all(&line).await.expect("the server reads");
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.from_server.next_line())
            .await
            .expect("a message within 30 s")
            .expect("readable")
            .expect("not EOF");
        serde_json::from_str(&line).expect("the server writes JSON")
    }

    async fn call(&mut self, id: u64, tool: &str, arguments: Value) {
        let params = json!({"name": tool, "arguments": arguments, "_meta": {"progressToken": id}});
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
    }
}

/// Starts `serve` on one end of a duplex pipe and performs the handshake on the other.
async fn start(registry: Registry) -> (Peer, JoinHandle<CloseReason>) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(theirs);
    let config = ServerConfig::new("duplex-test", "0");
    let server = tokio::spawn(serve(config, registry, server_read, server_write));
    let (read, write) = tokio::io::split(ours);
    let mut peer = Peer { to_server: write, from_server: BufReader::new(read).lines() };
    peer.send(json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "duplex-peer", "version": "0"}
        }
    }))
    .await;
    let init = peer.recv().await;
    assert_eq!(init["result"]["serverInfo"]["name"], "duplex-test", "{init}");
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    (peer, server)
}

fn tool(name: &str) -> Tool {
    Tool::new(name, name, json!({"type": "object"}))
}

fn ms(p: &zest_tokio::schema::CallToolParams) -> u64 {
    p.arguments.as_ref().and_then(|a| a.get("ms")).and_then(Value::as_u64).unwrap_or(0)
}

fn sleeper(registry: &mut Registry) {
    registry.raw_tool(tool("sleep"), |_, p| async move {
        tokio::time::sleep(Duration::from_millis(ms(&p))).await;
        Ok(CallToolResult::text(format!("slept {} ms", ms(&p))))
    });
}

async fn end(mut peer: Peer, server: JoinHandle<CloseReason>) {
    peer.to_server.shutdown().await.unwrap();
    drop(peer.to_server);
    assert_eq!(server.await.unwrap(), CloseReason::TransportEnded);
    // Everything written before the end was flushed; then the stream closes.
    while let Ok(Some(_)) = peer.from_server.next_line().await {}
}

#[tokio::test]
async fn handlers_run_concurrently() {
    let gate = Arc::new(Notify::new());
    let mut registry = Registry::default();
    sleeper(&mut registry);
    let held = gate.clone();
    registry.raw_tool(tool("gated"), move |_, _| {
        let held = held.clone();
        async move {
            held.notified().await;
            Ok(CallToolResult::text("let through"))
        }
    });
    let (mut peer, server) = start(registry).await;
    // Call 1 is let through only once call 2 has been answered: with one handler at a time
    // nothing would ever be answered, and recv's guard fails the test.
    peer.call(1, "gated", json!({})).await;
    peer.call(2, "sleep", json!({"ms": 1})).await;
    assert_eq!(peer.recv().await["id"], 2, "the quick call overtakes the held one");
    gate.notify_one();
    assert_eq!(peer.recv().await["id"], 1);
    end(peer, server).await;
}

#[tokio::test]
async fn dropping_the_served_future_stops_its_handlers_and_fails_their_reports() {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (stopped_tx, stopped) = tokio::sync::oneshot::channel::<()>();
    let stopped_tx = Arc::new(std::sync::Mutex::new(Some(stopped_tx)));
    let mut registry = Registry::default();
    registry.raw_tool(tool("stuck"), move |ctx, _| {
        let started_tx = started_tx.clone();
        // Dropped with the handler's future: the receiver then sees the sender gone.
        let guard = stopped_tx.lock().unwrap().take();
        async move {
            let _guard = guard;
            let _ = started_tx.send(ctx.clone());
            std::future::pending::<()>().await;
            Ok(CallToolResult::text("never"))
        }
    });
    let (mut peer, server) = start(registry).await;
    peer.call(1, "stuck", json!({})).await;
    let ctx = tokio::time::timeout(Duration::from_secs(30), started.recv()).await.unwrap().unwrap();
    server.abort();
    assert!(server.await.unwrap_err().is_cancelled());
    let gone = tokio::time::timeout(Duration::from_secs(30), stopped).await;
    assert!(gone.expect("the handler is stopped with its session").is_err());
    // A context that outlives its session is told so at once, not left waiting.
    let late = tokio::time::timeout(Duration::from_secs(30), ctx.progress(1.0, None, None)).await;
    assert!(late.expect("a report after the session answers at once").is_err());
}
