//! `serve` over a socket pair, driven by hand-written JSON-RPC lines: every output line is a
//! frame, handlers see cancellation, a panicking handler is an error, EOF ends the session.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use zest_blocking::core::error::CloseReason;
use zest_blocking::core::server::ServerConfig;
use zest_blocking::schema::{CallToolResult, Tool};
use zest_blocking::{serve, Registry};

struct Peer {
    writer: UnixStream,
    lines: BufReader<UnixStream>,
}

impl Peer {
    fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.writer.write_all(&line).unwrap();
    }

    /// The next line, which must be one JSON-RPC message.
    fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.lines.read_line(&mut line).expect("a line");
        let message: Value = serde_json::from_str(&line).expect("every line is a JSON frame");
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        message
    }
}

fn start(registry: Registry) -> (Peer, thread::JoinHandle<CloseReason>) {
    let (ours, theirs) = UnixStream::pair().unwrap();
    ours.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let reader = theirs.try_clone().unwrap();
    let server = thread::spawn(move || {
        serve(ServerConfig::new("socket-server", "1"), registry, reader, theirs)
    });
    let mut peer = Peer { writer: ours.try_clone().unwrap(), lines: BufReader::new(ours) };
    peer.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "hand", "version": "1"}
    }}));
    let init = peer.recv();
    assert_eq!(init["result"]["serverInfo"]["name"], "socket-server");
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    (peer, server)
}

fn schema() -> Value {
    json!({"type": "object"})
}

#[test]
fn a_cancelled_handler_sees_it_and_eof_ends_the_session() {
    let (seen_tx, seen_rx) = mpsc::channel();
    let seen_tx = std::sync::Mutex::new(seen_tx);
    let mut registry = Registry::default();
    registry.raw_tool(Tool::new("wait", "Waits to be cancelled", schema()), move |ctx, _| {
        while !ctx.is_cancelled() {
            thread::sleep(Duration::from_millis(1));
        }
        let _ = seen_tx.lock().unwrap().send(ctx.request_id().clone());
        Ok(CallToolResult::text("too late"))
    });
    registry.raw_tool(Tool::new("ok", "Answers", schema()), |_, _| Ok(CallToolResult::text("ok")));
    let (mut peer, server) = start(registry);

    peer.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wait"}}),
    );
    peer.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    let id = seen_rx.recv_timeout(Duration::from_secs(10)).expect("the handler saw the cancel");
    assert_eq!(id.to_string(), "1");
    // The cancelled call's answer is dropped: the next line is the next call's answer.
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ok"}}));
    let answer = peer.recv();
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["content"][0]["text"], "ok");

    peer.writer.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(server.join().unwrap(), CloseReason::TransportEnded);
}

#[test]
fn a_panicking_handler_is_an_error_result_and_the_session_goes_on() {
    let mut registry = Registry::default();
    registry.raw_tool(Tool::new("panics", "Panics", schema()), |_, _| panic!("handler bug"));
    registry.raw_tool(Tool::new("ok", "Answers", schema()), |_, _| Ok(CallToolResult::text("ok")));
    let (mut peer, server) = start(registry);

    peer.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "panics"}}),
    );
    let failed = peer.recv();
    assert_eq!(failed["id"], 1);
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ok"}}));
    assert_eq!(peer.recv()["result"]["content"][0]["text"], "ok");

    peer.writer.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(server.join().unwrap(), CloseReason::TransportEnded);
}

#[test]
fn progress_and_logs_leave_before_the_answer() {
    let mut registry = Registry::default();
    registry.raw_tool(Tool::new("report", "Reports", schema()), |ctx, _| {
        ctx.progress(1.0, Some(2.0), None).expect("progress 1");
        ctx.progress(2.0, Some(2.0), Some("done".into())).expect("progress 2");
        assert!(ctx.progress(2.0, None, None).is_err(), "progress must increase");
        ctx.log(zest_blocking::schema::LoggingLevel::Info, json!("hello")).expect("log");
        Ok(CallToolResult::text("reported"))
    });
    let (mut peer, server) = start(registry);
    peer.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "report", "_meta": {"progressToken": "tok"}}}));
    let first = peer.recv();
    assert_eq!(first["method"], "notifications/progress");
    assert_eq!(first["params"], json!({"progressToken": "tok", "progress": 1, "total": 2}));
    assert_eq!(peer.recv()["params"]["message"], "done");
    let log = peer.recv();
    assert_eq!(
        (log["method"].as_str(), &log["params"]["data"]),
        (Some("notifications/message"), &json!("hello"))
    );
    assert_eq!(peer.recv()["result"]["content"][0]["text"], "reported");

    peer.writer.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(server.join().unwrap(), CloseReason::TransportEnded);
}

/// A client that never reads: every write blocks for ever.
struct NeverReads;

impl Write for NeverReads {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        loop {
            thread::park();
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn serve_returns_at_the_drain_deadline_when_the_client_never_reads() {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "hand", "version": "1"}}});
    let mut input = serde_json::to_vec(&init).unwrap();
    input.push(b'\n');
    let (done_tx, done) = mpsc::channel();
    let started = std::time::Instant::now();
    // The answer to `initialize` can never be written; EOF ends the session, and the final
    // drain gives up after its 5 s deadline instead of waiting for ever.
    thread::spawn(move || {
        let config = ServerConfig::new("socket-server", "1");
        let reason = serve(config, Registry::default(), std::io::Cursor::new(input), NeverReads);
        let _ = done_tx.send(reason);
    });
    let reason = done.recv_timeout(Duration::from_secs(30)).expect("serve returned");
    assert_eq!(reason, CloseReason::TransportEnded);
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(4) && took < Duration::from_secs(15), "{took:?}");
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Step {
    by: u64,
}

/// A counter shared by every call of the typed tool below.
struct Total(std::sync::Mutex<u64>);

#[test]
fn typed_handlers_take_arguments_context_and_state_in_any_order() {
    use zest_blocking::{Context, State, ToolError};
    let registry = Registry::new().with_state(Total(Default::default())).tool(
        "step",
        "Adds to a shared total",
        |total: State<Total>, ctx: Context, Step { by }: Step| -> Result<String, ToolError> {
            ctx.progress(1.0, None, None)?;
            let mut total = total.0.lock().unwrap();
            *total += by;
            Ok(total.to_string())
        },
    );
    let (mut peer, server) = start(registry);
    let call = |id: u64, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "step", "arguments": args, "_meta": {"progressToken": id}}})
    };
    peer.send(call(1, json!({"by": 2})));
    assert_eq!(peer.recv()["method"], "notifications/progress");
    assert_eq!(peer.recv()["result"]["content"][0]["text"], "2");
    peer.send(call(2, json!({"by": 3})));
    assert_eq!(peer.recv()["method"], "notifications/progress");
    assert_eq!(peer.recv()["result"]["content"][0]["text"], "5");
    peer.send(call(3, json!({"by": "four"})));
    let refused = peer.recv();
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(refused["result"]["content"][0]["text"].as_str().unwrap().contains("/by"));

    peer.writer.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(server.join().unwrap(), CloseReason::TransportEnded);
}
