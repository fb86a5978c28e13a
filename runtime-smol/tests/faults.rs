//! Process faults: what the client does when the child misbehaves, dies, or will not die.

mod common;

use std::os::unix::process::ExitStatusExt as _;
use std::time::{Duration, Instant};

use serde_json::json;
use smol::future;
use zest_smol::core::error::{CloseReason, RequestError};
use zest_smol::{CallError, Client, ClientApi, ClientOptions, ConnectError, StdioCommand};

use common::{fixture, fixture_cmd, process_exists, process_state, run};

fn options() -> ClientOptions {
    ClientOptions::new("zest-smol-faults", "0.1.0")
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
    options.config.max_line = GIANT_LIMIT;
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
    run(30, async {
        let (cmd, stderr) = fixture_cmd(&[]);
        let client = Client::spawn(cmd, options()).await.unwrap();
        let pid = client.pid();
        let started = Instant::now();
        // A call that would take 10 s, and the crash, in flight together.
        let long = client.call_tool("long_running", json!({"steps": 100, "step_ms": 100}));
        let crash = client.call_tool("crash", json!({}));
        let (long, crash) = future::zip(long, crash).await;
        assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
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
    run(30, async {
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
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert!(!process_exists(pid), "reaped, no zombie: {:?}", process_state(pid));
        assert!(lines.lines().iter().any(|l| l.contains("lingering")), "{:?}", lines.lines());
    });
}

#[test]
fn a_missing_command_is_a_spawn_error_naming_the_program() {
    run(10, async {
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
    run(10, async {
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
    run(30, async {
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
        reaped(pid, 5).await;
    });
}

#[test]
fn close_from_one_clone_fails_calls_on_another() {
    run(30, async {
        let (cmd, _) = fixture_cmd(&[]);
        let client = Client::spawn(cmd, options()).await.unwrap();
        let other = client.clone();
        let pending = smol::spawn(async move {
            other.call_tool("long_running", json!({"steps": 100, "step_ms": 100})).await
        });
        smol::Timer::after(Duration::from_millis(100)).await;
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
        let r = client.call_tool("sample", json!({"prompt": "hi"})).await.unwrap();
        assert!(r.is_error(), "{r:?}");
        assert!(r.content[0].as_text().unwrap().contains("no model here"), "{r:?}");
        assert_eq!(echo(&client, "still fine").await, "still fine");
        assert!(client.close().await.unwrap().success());
    });
}

#[test]
fn requests_time_out_on_the_machines_deadline_and_progress_extends_it() {
    run(30, async {
        let (cmd, _) = fixture_cmd(&[]);
        let mut opts = options();
        opts.config.request_timeout = Duration::from_millis(300);
        let client = Client::spawn(cmd, opts).await.unwrap();
        assert_eq!(echo(&client, "quick").await, "quick");

        // Progress every 100 ms keeps restarting the 300 ms idle timeout: 8 steps finish.
        let steps = json!({"steps": 8, "step_ms": 100});
        let r = client.call_tool_with_progress("long_running", steps, |_| {}).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("done after 8 steps"));

        // Without progress the same call times out after 300 ms.
        let started = Instant::now();
        let err = client.call_tool("long_running", json!({"steps": 8, "step_ms": 100})).await;
        let took = started.elapsed();
        assert_eq!(err.unwrap_err(), CallError::Request(RequestError::TimedOut));
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_millis(700),
            "{took:?}"
        );
        assert_eq!(echo(&client, "after the timeout").await, "after the timeout");
        assert!(client.close().await.unwrap().success());
    });
}

/// A fake server in sh: answers `initialize`, reads one request, closes its stdin, and
/// answers that request 300 ms later while staying alive.
const CLOSES_STDIN_THEN_ANSWERS: &str = r#"
id() { printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }
read -r init
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"sh","version":"1"}}}\n' "$(id "$init")"
read -r initialized
read -r ping
exec 0<&-
sleep 0.3
printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$(id "$ping")"
exec sleep 10
"#;

#[test]
fn answers_written_before_stdin_broke_still_arrive() {
    run(30, async {
        let grace = Duration::from_secs(1);
        let cmd = StdioCommand::new("sh")
            .args(["-c", CLOSES_STDIN_THEN_ANSWERS])
            .shutdown_grace(grace)
            .on_stderr(|_| {});
        let client = Client::spawn(cmd, options()).await.unwrap();
        let mut first = client.ping();
        assert!(future::poll_once(&mut first).await.is_none(), "the first ping is in flight");
        smol::Timer::after(Duration::from_millis(100)).await;
        // The child no longer reads: this write breaks the pipe.
        let started = Instant::now();
        let (first, second) = future::zip(first, client.ping()).await;
        first.expect("the answer written after stdin closed still arrives");
        let Err(CallError::Request(RequestError::Closed(CloseReason::TransportFailed(why)))) =
            &second
        else {
            panic!("{second:?}")
        };
        assert!(why.to_string().contains("write failed"), "{why}");
        let took = started.elapsed();
        assert!(took >= grace && took < grace * 3, "failed after the grace period: {took:?}");
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
