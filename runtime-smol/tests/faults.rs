//! Process faults: what the client does when the child misbehaves, dies, or will not die.

mod common;

use std::os::unix::process::ExitStatusExt as _;
use std::time::{Duration, Instant};

use serde_json::json;
use smol::future;
use zest_smol::core::api::ProgressFn;
use zest_smol::core::error::{CloseReason, RequestError};
use zest_smol::core::RequestOptions;
use zest_smol::schema::methods::CallTool;
use zest_smol::schema::{CallToolParams, CallToolResult};
use zest_smol::{CallError, Client, ClientApi, ClientOptions, ConnectError, StdioCommand};

use common::{fixture, fixture_cmd, process_exists, process_state, run};

fn options() -> ClientOptions {
    ClientOptions::new("zest-smol-faults", "0.1.0")
}

/// For the scripted servers below, which answer a session-era handshake.
fn session_era() -> ClientOptions {
    options().with_config(|c| c.session_era())
}

/// Options whose violation sink counts the server's non-JSON lines.
fn counting_non_json_lines() -> (ClientOptions, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use zest_smol::core::error::ProtocolViolation;
    use zest_smol::core::framing::lines::LineViolation;
    let seen = std::sync::Arc::new(AtomicUsize::new(0));
    let sink = seen.clone();
    let handlers =
        zest_smol::core::handler::AsyncClientHandlers::default().on_violation(move |v| {
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
    use zest_smol::core::error::ProtocolViolation;
    use zest_smol::core::framing::lines::LineViolation;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let handlers =
        zest_smol::core::handler::AsyncClientHandlers::default().on_violation(move |v| {
            if let ProtocolViolation::Line(LineViolation::TooLong { limit, dropped, .. }) = v {
                sink.lock().unwrap().push((*limit, *dropped));
            }
        });
    let mut options = options().handlers(handlers);
    options.config.max_message = GIANT_LIMIT;
    (options, seen)
}

async fn echo(client: &Client, text: &str) -> String {
    let r = client.call_tool("echo", json!({ "text": text })).await.unwrap();
    r.content[0].as_text().unwrap().to_owned()
}

/// Waits (polling /proc) until `pid` is gone; panics after `secs`.
async fn reaped(pid: u32, secs: u64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while process_exists(pid) {
        assert!(Instant::now() < deadline, "pid {pid} still there: state {:?}", process_state(pid));
        smol::Timer::after(Duration::from_millis(20)).await;
    }
}

#[test]
fn banner_lines_before_json_are_skipped() {
    run(30, async {
        let (cmd, _) = fixture_cmd(&["--banner"]);
        let (options, non_json) = counting_non_json_lines();
        let client = Client::spawn(cmd, options).await.unwrap();
        assert_eq!(echo(&client, "after the banner").await, "after the banner");
        assert_eq!(
            non_json.load(std::sync::atomic::Ordering::SeqCst),
            2,
            "both banner lines reported"
        );
        assert!(client.close().await.unwrap().success());
    });
}

#[test]
fn a_ten_mib_line_over_the_limit_is_reported_dropped_and_the_session_goes_on() {
    run(60, async {
        let (cmd, _) = fixture_cmd(&["--giant-line"]);
        let (options, too_long) = recording_too_long_lines();
        let client = Client::spawn(cmd, options).await.unwrap();
        assert_eq!(echo(&client, "after 10 MiB of x").await, "after 10 MiB of x");
        assert_eq!(
            *too_long.lock().unwrap(),
            [(GIANT_LIMIT, GIANT_LEN)],
            "the giant line is reported once as TooLong"
        );
        assert!(client.close().await.unwrap().success());
    });
}

#[test]
fn a_child_exiting_mid_call_fails_every_pending_call_at_once() {
    run(90, async {
        let (cmd, stderr) = fixture_cmd(&[]);
        let client = Client::spawn(cmd, options()).await.unwrap();
        let pid = client.pid();
        let started = Instant::now();
        // A call that would take 60 s, and the crash, in flight together: "at once" is any
        // time well short of the 60 s, however loaded the machine.
        let long = client.call_tool("long_running", json!({"steps": 600, "step_ms": 100}));
        let crash = client.call_tool("crash", json!({}));
        let (long, crash) = future::zip(long, crash).await;
        assert!(started.elapsed() < Duration::from_secs(30), "took {:?}", started.elapsed());
        let closed = CallError::Request(RequestError::Closed(CloseReason::TransportEnded));
        assert_eq!(long.unwrap_err(), closed);
        assert_eq!(crash.unwrap_err(), closed);
        assert_eq!(client.close_reason(), Some(CloseReason::TransportEnded));
        // Later calls fail at once too; the child was reaped with its own status.
        let later = client.ping().await.unwrap_err();
        assert!(matches!(later, CallError::Usage(_) | CallError::Request(_)), "{later:?}");
        assert_eq!(client.close().await.unwrap().code(), Some(3));
        assert!(!process_exists(pid));
        assert!(stderr.lines().iter().any(|l| l.contains("crashing")), "{:?}", stderr.lines());
    });
}

#[test]
fn a_child_ignoring_stdin_close_and_sigterm_is_killed_and_reaped() {
    run(60, async {
        let script = format!("trap '' TERM; exec {} --linger", fixture().display());
        let lines = common::Stderr::default();
        let grace = Duration::from_millis(300);
        let cmd = StdioCommand::new("sh")
            .args(["-c", &script])
            .shutdown_grace(grace)
            .on_stderr(lines.sink());
        let client = Client::spawn(cmd, options()).await.unwrap();
        let pid = client.pid();
        assert_eq!(echo(&client, "still here").await, "still here");
        let started = Instant::now();
        let status = client.close().await.unwrap();
        let took = started.elapsed();
        assert_eq!(status.signal(), Some(9), "SIGKILL ended it: {status:?}");
        assert!(took >= grace * 2, "stdin close and SIGTERM each got the grace period: {took:?}");
        // The child lingers for ever: only the SIGKILL (status above) ended it. This bound
        // only says the sequence did not stall.
        assert!(took < Duration::from_secs(30), "{took:?}");
        assert!(!process_exists(pid), "reaped, no zombie: {:?}", process_state(pid));
        assert!(lines.lines().iter().any(|l| l.contains("lingering")), "{:?}", lines.lines());
    });
}

#[test]
fn a_missing_command_is_a_spawn_error_naming_the_program() {
    run(30, async {
        for program in ["zest-smol-no-such-server", "/nonexistent/zest-smol-no-such-server"] {
            let err = Client::spawn(StdioCommand::new(program), options()).await.unwrap_err();
            let ConnectError::Spawn { program: named, kind, .. } = &err else { panic!("{err:?}") };
            assert_eq!(named, program);
            assert_eq!(*kind, std::io::ErrorKind::NotFound);
            assert!(err.to_string().contains(program), "{err}");
        }
    });
}

#[test]
fn a_child_exiting_before_the_handshake_is_typed() {
    run(30, async {
        let cmd =
            StdioCommand::new("sh").args(["-c", "echo not a server >&2; exit 7"]).on_stderr(|_| {});
        let err = Client::spawn(cmd, options()).await.unwrap_err();
        let ConnectError::Exited { reason, status } = &err else { panic!("{err:?}") };
        assert_eq!(*reason, CloseReason::TransportEnded);
        assert_eq!(status.and_then(|s| s.code()), Some(7));
    });
}

#[test]
fn dropping_the_client_with_calls_in_flight_shuts_the_child_down() {
    run(60, async {
        // The child ignores SIGTERM and stdin EOF: only the full sequence ends it.
        let script = format!("trap '' TERM; exec {} --linger", fixture().display());
        let cmd = StdioCommand::new("sh")
            .args(["-c", &script])
            .shutdown_grace(Duration::from_millis(200))
            .on_stderr(|_| {});
        let client = Client::spawn(cmd, options()).await.unwrap();
        let pid = client.pid();
        let mut calls: Vec<_> = (0..3)
            .map(|_| client.call_tool("long_running", json!({"steps": 100, "step_ms": 100})))
            .collect();
        for call in &mut calls {
            assert!(future::poll_once(call).await.is_none(), "the calls are in flight");
        }
        drop(calls);
        drop(client);
        reaped(pid, 30).await;
    });
}

#[test]
fn close_from_one_clone_fails_calls_on_another() {
    run(30, async {
        let (cmd, _) = fixture_cmd(&[]);
        let client = Client::spawn(cmd, options()).await.unwrap();
        let other = client.clone();
        let (tx, progress) = smol::channel::unbounded();
        let pending = smol::spawn(async move {
            let args = json!({"steps": 600, "step_ms": 100});
            other
                .call_tool_with_progress("long_running", args, move |p| {
                    let _ = tx.try_send(p.progress);
                })
                .await
        });
        // The call is in flight once the server reports on it (not after some sleep).
        assert_eq!(progress.recv().await, Ok(1.0));
        assert!(client.close().await.unwrap().success());
        let closed = CallError::Request(RequestError::Closed(CloseReason::Local));
        assert_eq!(pending.await.unwrap_err(), closed);
    });
}

#[test]
fn a_panicking_client_handler_answers_with_an_error() {
    run(30, async {
        let (cmd, _) = fixture_cmd(&[]);
        let handlers = zest_smol::AsyncClientHandlers::default()
            .on_sampling(|_| async move { panic!("no model here") });
        let client = Client::spawn(cmd, options().handlers(handlers)).await.unwrap();
        // The session era answers the server's request with the error and the tool reports
        // it; in 2026-07-28 the client has no one to answer, so the call itself fails.
        let why = match client.call_tool("sample", json!({"prompt": "hi"})).await {
            Ok(r) => {
                assert!(r.is_error(), "{r:?}");
                r.content[0].as_text().unwrap().to_owned()
            }
            Err(e) => e.to_string(),
        };
        assert!(why.contains("no model here"), "{why}");
        assert_eq!(echo(&client, "still fine").await, "still fine");
        assert!(client.close().await.unwrap().success());
    });
}

/// `tools/call` of `tool` with this call's own options and no progress.
async fn call_with(
    client: &Client,
    tool: &str,
    args: serde_json::Value,
    opts: RequestOptions,
) -> Result<CallToolResult, CallError> {
    let params: CallToolParams =
        serde_json::from_value(json!({"name": tool, "arguments": args})).unwrap();
    client.request_with::<CallTool>(params, opts, None).await
}

/// The timing rules (a call's deadline is the configured `request_timeout` to the instant;
/// progress restarts it, never past the cap) are core tests in virtual time
/// (core/tests/requests.rs). Here only the wiring, with bounds load cannot break: the runtime
/// hands the config and each call's options to the machine, sleeps until the machine's
/// deadline and fails the call then, and hands progress to its caller.
#[test]
fn calls_time_out_at_the_machines_deadline_and_progress_reaches_the_caller() {
    run(90, async {
        let (cmd, _) = fixture_cmd(&[]);
        let mut opts = options();
        opts.config.request_timeout = Duration::from_millis(300);
        let client = Client::spawn(cmd, opts).await.unwrap();
        // Every call but the one meant to time out gets 30 s of its own.
        let roomy = || RequestOptions::default().timeout(Duration::from_secs(30));
        let quick = call_with(&client, "echo", json!({"text": "quick"}), roomy()).await;
        assert_eq!(quick.unwrap().content[0].as_text(), Some("quick"));

        // A call's own timeout wins over the config's: at least 800 ms, past the 300 ms.
        let steps = json!({"steps": 8, "step_ms": 100});
        let r = call_with(&client, "long_running", steps, roomy()).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("done after 8 steps"));

        // A 60 s call under the config's 300 ms fails with TimedOut: never before the
        // deadline, and long before the answer (a runtime that never woke for the deadline
        // would see the result after 60 s).
        let started = Instant::now();
        let err = client.call_tool("long_running", json!({"steps": 600, "step_ms": 100})).await;
        let took = started.elapsed();
        assert_eq!(err.unwrap_err(), CallError::Request(RequestError::TimedOut));
        assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(30), "{took:?}");

        // Progress reaches its caller, in order, and the call completes.
        let (tx, reports) = smol::channel::unbounded();
        let on_progress: ProgressFn = Box::new(move |p| {
            let _ = tx.try_send((p.progress, p.total));
        });
        let params: CallToolParams = serde_json::from_value(
            json!({"name": "long_running", "arguments": {"steps": 3, "step_ms": 10}}),
        )
        .unwrap();
        let opts = RequestOptions::with_progress().timeout(Duration::from_secs(30));
        let r = client.request_with::<CallTool>(params, opts, Some(on_progress)).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("done after 3 steps"));
        let reports: Vec<_> = std::iter::from_fn(|| reports.try_recv().ok()).collect();
        assert_eq!(reports, [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);

        let after = call_with(&client, "echo", json!({"text": "after"}), roomy()).await;
        assert_eq!(after.unwrap().content[0].as_text(), Some("after"));
        assert!(client.close().await.unwrap().success());
    });
}

/// Waits (up to 30 s) until the child has written `line` to stderr.
async fn stderr_says(stderr: &common::Stderr, line: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !stderr.lines().iter().any(|l| l == line) {
        assert!(Instant::now() < deadline, "no {line:?} on stderr: {:?}", stderr.lines());
        smol::Timer::after(Duration::from_millis(10)).await;
    }
}

/// A fake server in sh: answers `initialize`, reads one request, closes its stdin, says so on
/// stderr, answers that request 300 ms later and exits.
const CLOSES_STDIN_THEN_ANSWERS: &str = r#"
id() { printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }
read -r init
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}\n' "$(id "$init")"
read -r initialized
read -r ping
exec 0<&-
echo "stdin closed" >&2
sleep 0.3
printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$(id "$ping")"
"#;

#[test]
fn answers_written_before_stdin_broke_still_arrive() {
    run(60, async {
        let stderr = common::Stderr::default();
        // The child exits once it has answered, so a long grace costs nothing here; it only
        // makes "the answer comes within the grace period" hold on any machine.
        let cmd = StdioCommand::new("sh")
            .args(["-c", CLOSES_STDIN_THEN_ANSWERS])
            .shutdown_grace(Duration::from_secs(30))
            .on_stderr(stderr.sink());
        let client = Client::spawn(cmd, session_era()).await.unwrap();
        let mut first = client.ping();
        assert!(future::poll_once(&mut first).await.is_none(), "the first ping is in flight");
        stderr_says(&stderr, "stdin closed").await;
        // The child no longer reads: this write breaks the pipe, and the session must go on
        // reading what the child writes.
        let (first, second) = future::zip(first, client.ping()).await;
        first.expect("the answer written after stdin closed still arrives");
        let Err(CallError::Request(RequestError::Closed(_))) = &second else {
            panic!("{second:?}")
        };
        client.close().await.unwrap();
    });
}

/// A fake server in sh: answers `initialize`, closes its stdin, says so on stderr, and keeps
/// its stdout open for two minutes without writing.
const CLOSES_STDIN_AND_HOLDS_STDOUT: &str = r#"
id() { printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }
read -r init
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}\n' "$(id "$init")"
read -r initialized
exec 0<&-
echo "stdin closed" >&2
exec sleep 120
"#;

#[test]
fn a_broken_stdin_fails_the_session_after_the_grace_period_even_if_stdout_stays_open() {
    run(60, async {
        let stderr = common::Stderr::default();
        let grace = Duration::from_millis(300);
        let cmd = StdioCommand::new("sh")
            .args(["-c", CLOSES_STDIN_AND_HOLDS_STDOUT])
            .shutdown_grace(grace)
            .on_stderr(stderr.sink());
        let client = Client::spawn(cmd, session_era()).await.unwrap();
        stderr_says(&stderr, "stdin closed").await;
        let started = Instant::now();
        let ping = client.ping().await;
        let took = started.elapsed();
        let Err(CallError::Request(RequestError::Closed(CloseReason::TransportFailed(why)))) =
            &ping
        else {
            panic!("{ping:?}")
        };
        assert!(why.to_string().contains("writing to the server failed"), "{why}");
        // Not before the grace period, and not when the child's stdout ends two minutes on.
        assert!(took >= grace && took < Duration::from_secs(30), "{took:?}");
        client.close().await.unwrap();
    });
}

#[test]
fn a_child_that_never_answers_initialize_times_out_and_is_reaped() {
    run(30, async {
        let stderr = common::Stderr::default();
        let cmd = StdioCommand::new("sh")
            .args(["-c", "echo $$ >&2; exec sleep 30"])
            .shutdown_grace(Duration::from_millis(200))
            .on_stderr(stderr.sink());
        let mut opts = options();
        opts.config.init_timeout = Duration::from_millis(300);
        let started = Instant::now();
        let err = Client::spawn(cmd, opts).await.unwrap_err();
        assert!(matches!(err, ConnectError::TimedOut), "{err:?}");
        assert!(started.elapsed() >= Duration::from_millis(300));
        let pid: u32 = stderr.lines()[0].parse().unwrap();
        assert!(!process_exists(pid), "reaped before spawn returned: {:?}", process_state(pid));
    });
}

#[test]
fn the_command_gets_its_args_env_and_directory_and_stderr_comes_back_as_lines() {
    run(30, async {
        let inherited = "CARGO_PKG_NAME";
        assert!(std::env::var_os(inherited).is_some(), "cargo test sets {inherited}");
        let script = format!(
            r#"echo "arg=$0 $1" >&2; echo "cwd=$(pwd)" >&2; echo "foo=$ZEST_FOO" >&2;
               echo "removed=${{{inherited}-unset}}" >&2; printf 'no newline at the end' >&2"#
        );
        let stderr = common::Stderr::default();
        let cmd = StdioCommand::new("sh")
            .args(["-c", &script, "first", "second"])
            .env("ZEST_FOO", "bar baz")
            .env_remove(inherited)
            .current_dir("/")
            .on_stderr(stderr.sink());
        let err = Client::spawn(cmd, options()).await.unwrap_err();
        assert!(matches!(err, ConnectError::Exited { .. }), "{err:?}");
        assert_eq!(
            stderr.lines(),
            ["arg=first second", "cwd=/", "foo=bar baz", "removed=unset", "no newline at the end"]
        );
    });
}
