//! `serve` over an in-process socket pair, with the test playing the client in raw JSON lines:
//! progress and log ordering, a handler asking the client (sampling), a cancelled handler
//! dropped, and the close reason returned at EOF.

mod common;

use std::net::Shutdown;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use smol::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use smol::net::unix::UnixStream;
use zest_smol::core::error::CloseReason;
use zest_smol::core::server::ServerConfig;
use zest_smol::schema::{
    CallToolResult, CreateMessageParams, LoggingLevel, Role, SamplingContent, SamplingMessage, Tool,
};
use zest_smol::{serve, PeerApi, Registry, RequestContext};

/// Set when dropped: shows that a handler's future was dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[derive(Clone, Default)]
struct Held {
    ctx: Arc<Mutex<Option<RequestContext>>>,
    dropped: Arc<AtomicBool>,
}

/// The schema of a tool that takes no arguments.
fn object() -> Value {
    json!({"type": "object"})
}

fn registry(held: Held) -> Registry {
    let mut r = Registry::default();
    r.raw_tool(
        Tool::new("chatty", "logs, then reports progress twice", object()),
        |ctx, _| async move {
            ctx.log(LoggingLevel::Info, json!("hello")).await.unwrap();
            ctx.progress(1.0, Some(2.0), None).await.unwrap();
            ctx.progress(2.0, Some(2.0), Some("done".into())).await.unwrap();
            Ok(CallToolResult::text(format!("ok {}", ctx.request_id())))
        },
    );
    r.raw_tool(Tool::new("boom", "panics", object()), |_, _| async move {
        panic!("boom at the handler");
    });
    r.raw_tool(Tool::new("ask", "asks the client's model", object()), |ctx, _| async move {
        let params = CreateMessageParams {
            messages: vec![SamplingMessage::new(Role::User, SamplingContent::text("2+2?"))],
            max_tokens: 10,
            ..Default::default()
        };
        let answer = ctx.create_message(params).await.expect("the client answers");
        Ok(CallToolResult::text(answer.content.as_slice()[0].as_text().unwrap().to_owned()))
    });
    r.raw_tool(Tool::new("hold", "never finishes", object()), move |ctx, _| {
        let held = held.clone();
        async move {
            let _flag = DropFlag(held.dropped.clone());
            *held.ctx.lock().unwrap() = Some(ctx);
            smol::future::pending::<()>().await;
            unreachable!()
        }
    });
    r
}

struct Peer {
    lines: BufReader<UnixStream>,
    out: UnixStream,
}

impl Peer {
    async fn send(&mut self, msg: Value) {
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        self.out.write_all(&line).await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.lines.read_line(&mut line).await.unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }
}

#[test]
fn serve_over_a_socket_pair() {
    let held = Held::default();
    let (ours, theirs) = UnixStream::pair().unwrap();
    let config = ServerConfig::new("serve-test", "1.0");
    let server = serve(config, registry(held.clone()), theirs.clone(), theirs);
    let mut peer = Peer { lines: BufReader::new(ours.clone()), out: ours };

    let client = async move {
        peer.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {"sampling": {}},
            "clientInfo": {"name": "raw", "version": "1"}}}))
            .await;
        assert_eq!(peer.recv().await["result"]["serverInfo"]["name"], "serve-test");
        peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;

        // Log and progress arrive in the order the handler sent them, before its result.
        peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "chatty", "_meta": {"progressToken": "p"}}}))
            .await;
        let log = peer.recv().await;
        assert_eq!(
            (&log["method"], &log["params"]["data"]),
            (&json!("notifications/message"), &json!("hello"))
        );
        let p1 = peer.recv().await;
        assert_eq!(
            (&p1["params"]["progressToken"], &p1["params"]["progress"]),
            (&json!("p"), &json!(1))
        );
        let p2 = peer.recv().await;
        assert_eq!(
            (&p2["params"]["progress"], &p2["params"]["message"]),
            (&json!(2), &json!("done"))
        );
        let done = peer.recv().await;
        assert_eq!(done["id"], 1);
        assert_eq!(done["result"]["content"][0]["text"], "ok 1");

        // A panicking handler gets an internal error answer; the session goes on.
        peer.send(
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "boom"}}),
        )
        .await;
        let boom = peer.recv().await;
        assert_eq!(boom["error"]["code"], -32603, "{boom}");
        assert!(
            boom["error"]["message"].as_str().unwrap().contains("boom at the handler"),
            "{boom}"
        );

        // A handler's request to the client, answered by us.
        peer.send(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask"}}),
        )
        .await;
        let ask = peer.recv().await;
        assert_eq!(ask["method"], "sampling/createMessage");
        peer.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
            "role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}}))
            .await;
        let answered = peer.recv().await;
        assert_eq!(
            (&answered["id"], &answered["result"]["content"][0]["text"]),
            (&json!(2), &json!("4"))
        );

        // Cancelling a running call drops its handler and sends nothing for it.
        peer.send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "hold"}}),
        )
        .await;
        while held.ctx.lock().unwrap().is_none() {
            smol::Timer::after(Duration::from_millis(5)).await;
        }
        let ctx = held.ctx.lock().unwrap().clone().unwrap();
        assert!(!ctx.is_cancelled() && !held.dropped.load(Ordering::SeqCst));
        peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 3, "reason": "changed my mind"}}))
            .await;
        peer.send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"})).await;
        assert_eq!(peer.recv().await, json!({"jsonrpc": "2.0", "id": 4, "result": {}}));
        assert!(ctx.is_cancelled(), "the context saw the cancellation");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !held.dropped.load(Ordering::SeqCst) {
            assert!(std::time::Instant::now() < deadline, "the handler's future was dropped");
            smol::Timer::after(Duration::from_millis(5)).await;
        }
        assert!(
            ctx.log(LoggingLevel::Info, json!("late")).await.is_ok(),
            "the session is still open"
        );
        assert_eq!(peer.recv().await["params"]["data"], "late");

        // At EOF the server ends the session; it sent nothing more (no answer to call 3).
        peer.out.shutdown(Shutdown::Write).unwrap();
        let mut rest = String::new();
        smol::io::AsyncReadExt::read_to_string(&mut peer.lines, &mut rest).await.unwrap();
        assert_eq!(rest, "");
        ctx
    };
    let (reason, ctx) = common::run(60, smol::future::zip(server, client));
    assert_eq!(reason, CloseReason::TransportEnded);
    let late = common::run(30, ctx.log(LoggingLevel::Info, json!("after the end")));
    assert!(late.is_err(), "a context outliving its session reports it: {late:?}");
}

/// A client that never reads: every write stays pending.
struct NeverReads;

impl smol::io::AsyncWrite for NeverReads {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Pending
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Pending
    }

    fn poll_close(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Pending
    }
}

#[test]
fn serve_returns_at_the_drain_deadline_when_the_client_never_reads() {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let mut input = serde_json::to_vec(&init).unwrap();
    input.push(b'\n');
    let config = ServerConfig::new("serve-test", "1.0");
    let reader = smol::io::Cursor::new(input);
    let started = std::time::Instant::now();
    // The answer to `initialize` can never be written; EOF ends the session, and the final
    // drain gives up after its 5 s deadline instead of waiting for ever.
    let reason = common::run(30, serve(config, registry(Held::default()), reader, NeverReads));
    assert_eq!(reason, CloseReason::TransportEnded);
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(4) && took < Duration::from_secs(15), "{took:?}");
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Step {
    by: u64,
}

/// A counter shared by every call of the typed tool below.
struct Total(Mutex<u64>);

#[test]
fn typed_handlers_take_arguments_context_and_state_in_any_order() {
    use zest_smol::{Context, State, ToolError};
    let registry = Registry::new().with_state(Total(Mutex::new(0))).tool(
        "step",
        "Adds to a shared total",
        |total: State<Total>, ctx: Context, Step { by }: Step| async move {
            ctx.progress(1.0, None, None).await?;
            let mut total = total.0.lock().unwrap();
            *total += by;
            Ok::<_, ToolError>(total.to_string())
        },
    );
    let (ours, theirs) = UnixStream::pair().unwrap();
    let server = serve(ServerConfig::new("typed", "1.0"), registry, theirs.clone(), theirs);
    let mut peer = Peer { lines: BufReader::new(ours.clone()), out: ours };
    let client = async move {
        peer.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}))
            .await;
        peer.recv().await;
        peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        for (id, by, total) in [(1, 2, "2"), (2, 3, "5")] {
            peer.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "step", "arguments": {"by": by}, "_meta": {"progressToken": id}}}))
                .await;
            assert_eq!(peer.recv().await["method"], "notifications/progress");
            assert_eq!(peer.recv().await["result"]["content"][0]["text"], total);
        }
        peer.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "step", "arguments": {"by": "four"}}}))
            .await;
        let refused = peer.recv().await;
        assert_eq!(refused["result"]["isError"], true, "{refused}");
        assert!(refused["result"]["content"][0]["text"].as_str().unwrap().contains("/by"));
        peer.out.shutdown(Shutdown::Write).unwrap();
    };
    let (reason, ()) = common::run(30, smol::future::zip(server, client));
    assert_eq!(reason, CloseReason::TransportEnded);
}
