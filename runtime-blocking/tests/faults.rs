//! Process faults: noise on stdout, huge lines, children that die, linger or never existed,
//! and a client dropped with calls in flight. Every child must end up reaped.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use zest_blocking::core::error::{CloseReason, RequestError};
use zest_blocking::core::RequestOptions;
use zest_blocking::schema::methods::CallTool;
use zest_blocking::schema::{CallToolParams, CallToolResult};
use zest_blocking::{
    CallError, Client, ClientApi, ClientOptions, ConnectError, PendingCall, StdioCommand,
};

fn long_call(client: &Client) -> PendingCall<CallToolResult> {
    let params: CallToolParams = serde_json::from_value(
        json!({"name": "long_running", "arguments": {"steps": 600, "step_ms": 100}}),
    )
    .unwrap();
    client.start::<CallTool>(params, RequestOptions::default())
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
    use zest_blocking::core::error::ProtocolViolation;
    use zest_blocking::core::framing::lines::LineViolation;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let handlers = common::canned_sampling().on_violation(move |v| {
        if let ProtocolViolation::Line(LineViolation::TooLong { limit, dropped, .. }) = v {
            sink.lock().unwrap().push((*limit, *dropped));
        }
    });
    let mut options = ClientOptions::new("zest-blocking-tests", "0.0.0").handlers(handlers);
    options.config.max_message = GIANT_LIMIT;
    (options, seen)
}

fn echo(client: &Client, text: &str) -> String {
    let result = client.call_tool("echo", json!({"text": text})).expect("echo");
    result.content[0].as_text().expect("a text block").to_owned()
}

fn assert_reaped(pid: u32) {
    assert_eq!(common::proc_state(pid), None, "process {pid} still exists (zombie if Z)");
}

#[test]
fn banner_lines_before_json_are_skipped() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use zest_blocking::core::error::ProtocolViolation;
    use zest_blocking::core::framing::lines::LineViolation;
    let non_json = Arc::new(AtomicUsize::new(0));
    let sink = non_json.clone();
    let handlers = common::canned_sampling().on_violation(move |v| {
        if matches!(v, ProtocolViolation::Line(LineViolation::NotJson { .. })) {
            sink.fetch_add(1, Ordering::SeqCst);
        }
    });
    let command = StdioCommand::new(common::fixture()).arg("--banner").on_stderr(|_| {});
    let options = ClientOptions::new("zest-blocking-tests", "0.0.0").handlers(handlers);
    let client = Client::spawn(command, options).expect("the fixture starts");
    assert_eq!(echo(&client, "after the banner"), "after the banner");
    assert_eq!(non_json.load(Ordering::SeqCst), 2, "both banner lines reported");
}

#[test]
fn a_10_mib_line_over_the_limit_is_reported_dropped_and_the_session_goes_on() {
    let (options, too_long) = recording_too_long_lines();
    let client = common::within(Duration::from_secs(60), move || {
        let command = StdioCommand::new(common::fixture())
            .arg("--giant-line")
            .shutdown_grace(Duration::from_millis(300))
            .on_stderr(|_| {});
        let client = Client::spawn(command, options).expect("the fixture starts");
        assert_eq!(echo(&client, "after the giant"), "after the giant");
        client
    });
    assert_eq!(
        *too_long.lock().unwrap(),
        [(GIANT_LIMIT, GIANT_LEN)],
        "the giant line is reported once as TooLong"
    );

    let pid = client.pid();
    client.close().expect("close");
    assert_reaped(pid);
}

#[test]
fn a_child_that_exits_mid_call_fails_every_pending_call_at_once() {
    let client = common::spawn_fixture(&[]);
    let pid = client.pid();
    let pending = long_call(&client);
    let started = Instant::now();
    let crash = client.call_tool("crash", json!({}));
    let long = pending.wait();
    let elapsed = started.elapsed();
    assert!(
        matches!(crash, Err(CallError::Request(RequestError::Closed(_)))),
        "crash call: {crash:?}"
    );
    assert!(
        matches!(long, Err(CallError::Request(RequestError::Closed(_)))),
        "long call: {long:?}"
    );
    assert!(elapsed < Duration::from_secs(30), "failing took {elapsed:?} (the call lasts 60 s)");
    let later = client.call_tool("echo", json!({"text": "too late"}));
    assert!(later.is_err(), "{later:?}");
    let status = client.close().expect("the exit status");
    assert_eq!(status.code(), Some(3));
    assert_reaped(pid);
}

#[test]
fn a_child_ignoring_eof_and_sigterm_is_killed_and_reaped() {
    let grace = Duration::from_millis(200);
    let script = format!("trap '' TERM; exec '{}' --linger", common::fixture().display());
    let command =
        StdioCommand::new("sh").arg("-c").arg(script).shutdown_grace(grace).on_stderr(|_| {});
    let client = Client::spawn(command, ClientOptions::new("faults", "0")).expect("spawn");
    let pid = client.pid();
    assert_eq!(echo(&client, "lingering"), "lingering");
    let started = Instant::now();
    let status = client.close().expect("the exit status");
    let elapsed = started.elapsed();
    assert_eq!(status.signal(), Some(9), "SIGKILL ends it: {status:?}");
    assert!(elapsed >= grace * 2, "it waited after EOF and after SIGTERM: {elapsed:?}");
    // The child lingers for ever: only the SIGKILL (status above) ended it. This bound only
    // says the sequence did not stall.
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
    assert_reaped(pid);
}

#[test]
fn a_command_that_does_not_exist_is_a_spawn_error() {
    let program = "zest-no-such-server-anywhere";
    let err = Client::spawn(StdioCommand::new(program), ClientOptions::new("faults", "0"))
        .expect_err("nothing to run");
    match &err {
        ConnectError::Spawn { program: p, kind, .. } => {
            assert_eq!(p, program);
            assert_eq!(*kind, std::io::ErrorKind::NotFound);
        }
        other => panic!("expected a spawn error, got {other:?}"),
    }
    assert!(err.to_string().contains(program), "{err}");
}

#[test]
fn a_child_that_exits_before_the_handshake_is_a_connect_error() {
    let command = StdioCommand::new("sh").args(["-c", "echo not an mcp server; exit 7"]);
    let err = Client::spawn(command.on_stderr(|_| {}), ClientOptions::new("faults", "0"))
        .expect_err("no handshake");
    // Which the driver notices first, stdout's EOF or stdin's broken pipe, is a race.
    let ConnectError::Exited { reason, status } = &err else { panic!("{err:?}") };
    assert!(
        matches!(reason, CloseReason::TransportEnded | CloseReason::TransportFailed(_)),
        "{err:?}"
    );
    assert_eq!(status.and_then(|s| s.code()), Some(7), "reaped before spawn returned");
}

#[test]
fn dropping_the_client_fails_calls_in_flight_and_reaps_the_child() {
    let client = common::spawn_fixture(&[]);
    let pid = client.pid();
    let (tx, rx) = mpsc::channel();
    for _ in 0..3 {
        let pending = long_call(&client);
        let tx = tx.clone();
        thread::spawn(move || {
            let _ = tx.send(pending.wait());
        });
    }
    drop(tx);
    let started = Instant::now();
    drop(client); // the last handle: PendingCalls do not keep the session alive
    let outcomes: Vec<_> = rx.iter().collect();
    assert_eq!(outcomes.len(), 3);
    for outcome in outcomes {
        assert_eq!(outcome, Err(CallError::Request(RequestError::Closed(CloseReason::Local))),);
    }
    // Not after the calls' 60 s.
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    // Dropping the last handle returns once the child is reaped.
    assert_reaped(pid);
}

#[test]
fn a_panicking_progress_callback_does_not_break_the_session() {
    let client = common::spawn_fixture(&[]);
    let result = client
        .call_tool_with_progress("long_running", json!({"steps": 3, "step_ms": 1}), |_| {
            panic!("a progress callback bug")
        })
        .expect("the call completes anyway");
    assert_eq!(result.content[0].as_text(), Some("done after 3 steps"));
    assert_eq!(echo(&client, "still alive"), "still alive");
}

#[test]
fn a_child_that_never_answers_initialize_times_out() {
    let command = StdioCommand::new("sleep")
        .arg("120")
        .shutdown_grace(Duration::from_millis(100))
        .on_stderr(|_| {});
    let mut options = ClientOptions::new("faults", "0");
    options.config.init_timeout = Duration::from_millis(300);
    let started = Instant::now();
    let err = Client::spawn(command, options).expect_err("no answer");
    assert_eq!(err, ConnectError::TimedOut);
    // 300 ms for initialize, 100 ms after closing stdin, then SIGTERM ends `sleep`, long
    // before it would end by itself. (The deadline itself, to the instant, is a core test:
    // handshake.rs, the_initialize_timeout_fires_at_the_configured_deadline.)
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(400) && elapsed < Duration::from_secs(30),
        "{elapsed:?}"
    );
}

/// A hand-written server: answers initialize, reads one call, closes its stdin, logs, waits
/// 500 ms, answers that call and exits.
const LAST_WORDS: &str = r#"
id_of() { printf '%s' "$1" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
read -r line
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"last-words","version":"1"}}}\n' "$(id_of "$line")"
read -r line
read -r line
id=$(id_of "$line")
exec 0<&-
printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"stdin closed"}}\n'
sleep 0.5
printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"last words"}]}}\n' "$id"
"#;

#[test]
fn answers_written_before_stdin_broke_still_arrive() {
    // The child exits once it has answered, so a long grace costs nothing; it only makes
    // "the answer comes within the grace period after the write broke" hold on any machine.
    let command = StdioCommand::new("sh")
        .args(["-c", LAST_WORDS])
        .shutdown_grace(Duration::from_secs(30))
        .on_stderr(|_| {});
    // The script answers a session-era handshake.
    let options = ClientOptions::new("faults", "0").with_config(|c| c.session_era());
    let client = Client::spawn(command, options).expect("spawn");
    let params: CallToolParams =
        serde_json::from_value(json!({"name": "anything", "arguments": {}})).unwrap();
    let first = client.start::<CallTool>(params, RequestOptions::default());
    let note = client.notifications().recv_timeout(Duration::from_secs(30));
    assert!(note.is_some(), "the server said it closed its stdin");
    // Writing this one fails (EPIPE): the session must still read what the child writes.
    let second = client.call_tool("anything", json!({}));
    assert!(matches!(second, Err(CallError::Request(RequestError::Closed(_)))), "{second:?}");
    let first = first.wait().expect("the answer written after stdin closed");
    assert_eq!(first.content[0].as_text(), Some("last words"));
}

/// A progress callback that calls the client from inside: each call is answered, the
/// outer call too, and every callback ran before the outer call returned.
fn a_progress_callback_calls(client: &Client, tool: &str, args: serde_json::Value) {
    let inner = client.clone();
    let (tx, rx) = mpsc::channel();
    let result = client
        .call_tool_with_progress(tool, args, move |p| {
            let echoed = inner.call_tool("echo", json!({"text": format!("at {}", p.progress)}));
            let _ = tx.send(echoed.map(|r| r.content[0].as_text().unwrap_or("").to_owned()));
        })
        .expect("the outer call completes");
    assert!(result.content[0].as_text().unwrap_or("").starts_with("done after 3 steps"));
    let echoed: Vec<String> = rx.try_iter().map(|r| r.expect("the inner call")).collect();
    assert_eq!(echoed, ["at 1", "at 2", "at 3"]);
}

#[test]
fn a_progress_callback_may_call_the_client_over_stdio() {
    let client = common::spawn_fixture(&[]);
    a_progress_callback_calls(&client, "long_running", json!({"steps": 3, "step_ms": 5}));
    assert_eq!(echo(&client, "still alive"), "still alive");
}
