//! A stdio client that pipelines requests and never reads its answers, against the
//! everything fixture on each runtime: once more than `ServerConfig::max_backlog_bytes`
//! (8 MiB) waits for it, the server ends the session instead of holding ever more, and the
//! process exits after its final-flush limit.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use zest_conformance::Runtime;

/// Answers of this size are asked for, far more of them than the limit holds.
const ANSWER: usize = 64 * 1024;
const CALLS: usize = 400;

/// Far past the 5 s final flush; only there to turn a server that never lets go into a
/// failure instead of a hang.
const EXIT_WITHIN: Duration = Duration::from_secs(30);

fn frame(value: serde_json::Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(&value).expect("json");
    line.push(b'\n');
    line
}

/// Writes the handshake and then `CALLS` calls, never reading; stops when the pipe breaks.
/// Stdin stays open until the returned sender is dropped: an end of input would end the
/// session by itself.
fn flood(mut child: Child) -> (Child, mpsc::Sender<()>) {
    let mut stdin = child.stdin.take().expect("piped stdin");
    let (keep, kept) = mpsc::channel::<()>();
    thread::spawn(move || {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "not-reading", "version": "1"}}});
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let name = "x".repeat(ANSWER);
        let mut frames = vec![frame(init), frame(initialized)];
        frames.extend((1..=CALLS).map(|id| {
            frame(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "json_schema_2020_12_tool",
                "arguments": {"name": name, "email": "a@example.com"}}}))
        }));
        for f in frames {
            if stdin.write_all(&f).is_err() {
                return;
            }
        }
        let _ = kept.recv();
        drop(stdin);
    });
    (child, keep)
}

fn a_client_that_does_not_read_is_cut_off(runtime: Runtime) {
    let child = Command::new(env!("CARGO_BIN_EXE_everything_server"))
        .args(["--runtime", runtime.name(), "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the fixture starts");
    // stdout is held, never read: the pipe fills and every answer after it waits.
    let (mut child, _open) = flood(child);
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            assert!(status.success(), "{}: {status}", runtime.name());
            return;
        }
        if started.elapsed() > EXIT_WITHIN {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{}: the server still runs after {EXIT_WITHIN:?}", runtime.name());
        }
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn tokio_cuts_off_a_stdio_client_that_does_not_read() {
    a_client_that_does_not_read_is_cut_off(Runtime::Tokio);
}

#[test]
fn smol_cuts_off_a_stdio_client_that_does_not_read() {
    a_client_that_does_not_read_is_cut_off(Runtime::Smol);
}

#[test]
fn blocking_cuts_off_a_stdio_client_that_does_not_read() {
    a_client_that_does_not_read_is_cut_off(Runtime::Blocking);
}
