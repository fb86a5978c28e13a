//! A stdio client that pipelines requests and never reads its answers, against the
//! everything fixture on each runtime: once more than `ServerConfig::max_backlog_bytes`
//! (8 MiB) waits for it, the server reads nothing more from it, ends the session once it has
//! taken nothing for `BACKLOG_STALL` (5 s) instead of holding ever more, and the process exits
//! after its final-flush limit. A client that asks for more than the limit at once and reads
//! late, but reads, gets every answer.

use std::io::{BufRead, BufReader, Write};
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

/// The handshake of a client named `name`, then `calls` calls whose answers are about
/// `answer` bytes each (ids 1..=calls), as newline-delimited frames.
fn session_frames(name: &str, calls: usize, answer: usize) -> Vec<Vec<u8>> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": name, "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let text = "x".repeat(answer);
    let mut frames = vec![frame(init), frame(initialized)];
    frames.extend((1..=calls).map(|id| {
        frame(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "json_schema_2020_12_tool",
            "arguments": {"name": text, "email": "a@example.com"}}}))
    }));
    frames
}

/// Writes the handshake and then `CALLS` calls, never reading; stops when the pipe breaks.
/// Stdin stays open until the returned sender is dropped: an end of input would end the
/// session by itself.
fn flood(mut child: Child) -> (Child, mpsc::Sender<()>) {
    let mut stdin = child.stdin.take().expect("piped stdin");
    let (keep, kept) = mpsc::channel::<()>();
    thread::spawn(move || {
        let frames = session_frames("not-reading", CALLS, ANSWER);
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

/// Large answers asked for at once, far past the 8 MiB limit together.
const LARGE: usize = 1024 * 1024;
const LARGE_CALLS: usize = 32;

/// Writes the handshake and `LARGE_CALLS` calls whose answers are 1 MiB each on one thread,
/// and starts reading only two seconds later: the answers pile up past the limit meanwhile.
/// Every one arrives.
fn a_late_reader_of_many_large_answers_gets_them_all(runtime: Runtime) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_everything_server"))
        .args(["--runtime", runtime.name(), "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the fixture starts");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let writer = thread::spawn(move || {
        let frames = session_frames("late-reader", LARGE_CALLS, LARGE);
        for f in frames {
            stdin.write_all(&f).expect("the server takes every request");
        }
        // Held open until every answer is in: an end of input would end the session.
        stdin
    });
    thread::sleep(Duration::from_secs(2));
    let mut answered = Vec::new();
    let mut lines = BufReader::new(stdout).lines();
    let started = Instant::now();
    while answered.len() < LARGE_CALLS {
        assert!(started.elapsed() < EXIT_WITHIN, "{}: answers stopped coming", runtime.name());
        let line = lines.next().expect("the session goes on").expect("a line");
        let message: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        let id = message["id"].as_u64().unwrap_or(0);
        if id > 0 {
            assert!(message["result"].is_object(), "{}: {id} failed: {line:.200}", runtime.name());
            answered.push(id);
        }
    }
    answered.sort_unstable();
    assert_eq!(answered, (1..=LARGE_CALLS as u64).collect::<Vec<_>>(), "{}", runtime.name());
    drop(writer.join().expect("the writer"));
    assert!(child.wait().expect("wait").success(), "{}: exits at end of input", runtime.name());
}

#[test]
fn tokio_serves_a_late_reader_of_many_large_answers() {
    a_late_reader_of_many_large_answers_gets_them_all(Runtime::Tokio);
}

#[test]
fn smol_serves_a_late_reader_of_many_large_answers() {
    a_late_reader_of_many_large_answers_gets_them_all(Runtime::Smol);
}

#[test]
fn blocking_serves_a_late_reader_of_many_large_answers() {
    a_late_reader_of_many_large_answers_gets_them_all(Runtime::Blocking);
}
