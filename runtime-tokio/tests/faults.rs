//! Process faults, each a test: noise on stdout, a giant line, a child dying mid-call, a
//! child ignoring stdin closing and SIGTERM, a missing command, the client dropped with calls
//! in flight, and the runtime itself going away.

mod common;

use std::io::ErrorKind;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use serde_json::json;
use zest_tokio::core::error::{CloseReason, RequestError};
use zest_tokio::{CallError, Client, ClientApi, ClientOptions, ConnectError, StdioCommand};

fn options() -> ClientOptions {
    ClientOptions::new("zest-tokio-faults", "0.0.0")
}

/// Options whose violation sink counts the server's non-JSON lines.
fn counting_non_json_lines() -> (ClientOptions, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use zest_tokio::core::error::ProtocolViolation;
    use zest_tokio::core::framing::lines::LineViolation;
    let seen = std::sync::Arc::new(AtomicUsize::new(0));
    let sink = seen.clone();
    let handlers =
        zest_tokio::core::handler::AsyncClientHandlers::default().on_violation(move |v| {
            if matches!(v, ProtocolViolation::Line(LineViolation::NotJson { .. })) {
                sink.fetch_add(1, Ordering::SeqCst);
            }
        });
    (options().handlers(handlers), seen)
}

/// A 1 MiB line limit, so the fixture's 10 MiB `--giant-line` is over it.
const GIANT_LIMIT: usize = 1024 * 1024;
/// The length of the fixture's giant line, line ending excluded.
const GIANT_LEN: usize = 10 * 1024 * 1024;

/// Each `TooLong` the client reported, as `(limit, dropped)`.
type TooLongSeen = std::sync::Arc<std::sync::Mutex<Vec<(usize, usize)>>>;

/// Options with a 1 MiB line limit whose violation sink records each `TooLong` as
/// `(limit, dropped)`.
fn recording_too_long_lines() -> (ClientOptions, TooLongSeen) {
    use zest_tokio::core::error::ProtocolViolation;
    use zest_tokio::core::framing::lines::LineViolation;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let handlers =
        zest_tokio::core::handler::AsyncClientHandlers::default().on_violation(move |v| {
            if let ProtocolViolation::Line(LineViolation::TooLong { limit, dropped, .. }) = v {
                sink.lock().unwrap().push((*limit, *dropped));
            }
        });
    let mut options = options().handlers(handlers);
    options.config.max_message = GIANT_LIMIT;
    (options, seen)
}

async fn echo(client: &Client, text: &str) -> String {
    let result = client.call_tool("echo", json!({"text": text})).await.expect("echo answers");
    result.content[0].as_text().expect("a text block").to_owned()
}

/// `sh -c "trap '' TERM; exec <fixture> --linger"`: ignores SIGTERM, outlives its stdin.
fn stubborn() -> StdioCommand {
    let script = format!("trap '' TERM; exec '{}' --linger", common::fixture().display());
    StdioCommand::new("sh")
        .arg("-c")
        .arg(script)
        .on_stderr(|line| eprintln!("[stubborn] {line}"))
        .shutdown_grace(Duration::from_millis(200))
}

#[tokio::test]
async fn banner_lines_before_the_protocol_are_skipped() {
    let (options, non_json) = counting_non_json_lines();
    let client = Client::spawn(common::fixture_command(&["--banner"]), options).await.unwrap();
    assert_eq!(echo(&client, "after the banner").await, "after the banner");
    assert_eq!(non_json.load(std::sync::atomic::Ordering::SeqCst), 2, "both banner lines reported");
    assert!(client.close().await.unwrap().success());
}

#[tokio::test]
async fn a_10_mib_line_over_the_limit_is_reported_skipped_and_the_session_goes_on() {
    let (options, too_long) = recording_too_long_lines();
    let client = Client::spawn(common::fixture_command(&["--giant-line"]), options).await.unwrap();
    assert_eq!(echo(&client, "after the giant").await, "after the giant");
    assert_eq!(
        *too_long.lock().unwrap(),
        [(GIANT_LIMIT, GIANT_LEN)],
        "the giant line is reported once as TooLong"
    );
    assert!(client.close().await.unwrap().success());
}

#[tokio::test]
async fn a_child_exiting_mid_call_fails_every_pending_call_at_once() {
    let client = Client::spawn(common::fixture_command(&[]), options()).await.unwrap();
    let pid = client.pid();
    let started = Instant::now();
    let slow = client.call_tool("long_running", json!({"steps": 600, "step_ms": 100}));
    let crash = client.call_tool("crash", json!({}));
    let (slow, crash) = tokio::join!(slow, crash);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "failed at once, not after 60 s: {took:?}");
    for outcome in [slow, crash] {
        assert!(
            matches!(
                outcome,
                Err(CallError::Request(RequestError::Closed(CloseReason::TransportEnded)))
            ),
            "{outcome:?}"
        );
    }
    let status = client.close().await.unwrap();
    assert_eq!(status.code(), Some(3), "the crash tool exits with 3");
    common::assert_reaped(pid, Duration::from_secs(30)).await;
}

#[tokio::test]
async fn a_child_ignoring_stdin_close_and_sigterm_is_killed_and_reaped() {
    let client = Client::spawn(stubborn(), options()).await.unwrap();
    let pid = client.pid();
    assert_eq!(echo(&client, "stubborn").await, "stubborn");
    let started = Instant::now();
    let status = client.close().await.unwrap();
    let took = started.elapsed();
    assert_eq!(status.signal(), Some(9), "only SIGKILL ends it: {status:?}");
    assert!(took >= Duration::from_millis(400), "waited grace twice: {took:?}");
    // The child lingers for ever: only the SIGKILL (status above) ended it. This bound only
    // says the sequence did not stall.
    assert!(took < Duration::from_secs(30), "{took:?}");
    common::assert_reaped(pid, Duration::from_secs(30)).await;
}

#[tokio::test]
async fn a_missing_command_is_a_spawn_error_naming_it() {
    let missing = "/nonexistent/zest-no-such-server";
    let err = Client::spawn(StdioCommand::new(missing), options()).await.unwrap_err();
    match &err {
        ConnectError::Spawn { program, kind, .. } => {
            assert_eq!(program, missing);
            assert_eq!(*kind, ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains(missing), "{err}");
}

#[tokio::test]
async fn a_child_that_exits_before_the_handshake_is_a_handshake_error() {
    let command = StdioCommand::new("sh").arg("-c").arg("echo not an MCP server; exit 1");
    let err = Client::spawn(command.on_stderr(|_| {}), options()).await.unwrap_err();
    let ended = ConnectError::Exited { reason: CloseReason::TransportEnded, status: None };
    assert_eq!(err, ended);
}

#[tokio::test]
async fn dropping_the_client_with_calls_in_flight_shuts_the_child_down() {
    let client = Client::spawn(stubborn(), options()).await.unwrap();
    let pid = client.pid();
    let (tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let calls: Vec<_> = (0..4)
        .map(|_| {
            let client = client.clone();
            let tx = tx.clone();
            tokio::spawn(async move {
                let args = json!({"steps": 600, "step_ms": 100});
                client
                    .call_tool_with_progress("long_running", args, move |p| {
                        if p.progress == 1.0 {
                            let _ = tx.send(());
                        }
                    })
                    .await
            })
        })
        .collect();
    // Every call is in flight once the server has reported on it (not after some sleep).
    for _ in 0..4 {
        started.recv().await.expect("each call reports its first step");
    }
    drop(client);
    for call in &calls {
        call.abort();
    }
    for call in calls {
        assert!(call.await.unwrap_err().is_cancelled(), "the call was still in flight");
    }
    // The last handle is gone: close stdin, 200 ms, SIGTERM (ignored), 200 ms, SIGKILL.
    common::assert_reaped(pid, Duration::from_secs(30)).await;
}

#[test]
fn a_child_is_killed_and_reaped_even_when_the_runtime_goes_away() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let client = runtime.block_on(Client::spawn(stubborn(), options())).unwrap();
    let pid = client.pid();
    assert_eq!(runtime.block_on(echo(&client, "before")), "before");
    // Dropping the runtime drops the driver task mid-session: the synchronous fallback
    // SIGKILLs the process group and reaps the child before the drop returns.
    drop(runtime);
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "{pid} was reaped");
    drop(client);
}
