//! Every runtime's stdio client when the child misbehaves, dies, or will not die, written once
//! and instantiated for zest-tokio, zest-smol and zest-blocking by a macro, as in
//! runtime_contract.rs: noise on stdout, a giant line, a child dying mid-call, a child ignoring
//! stdin closing and SIGTERM, a missing command, a child exiting before the handshake or
//! never answering it, the client dropped or closed with calls in flight, panicking handlers
//! and callbacks, deadlines, a broken stdin, and the command's arguments, environment,
//! directory and stderr. Every child must end up reaped.
//!
//! The server is `fault_server --runtime <the client's runtime>` (src/bin/fault_server.rs), or
//! a few lines of sh where a test needs a server that misbehaves on purpose.

#[path = "support/clients.rs"]
mod clients;
#[path = "support/runners.rs"]
mod runners;

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A 1 MiB line limit, so the fixture's 10 MiB `--giant-line` is over it.
const GIANT_LIMIT: usize = 1024 * 1024;
/// The length of the fixture's giant line, line ending excluded.
const GIANT_LEN: usize = 10 * 1024 * 1024;

/// The shutdown grace of the child that ignores stdin's end and SIGTERM: it gets it twice.
/// Long enough for the child to say it lingers on a loaded machine before it is killed.
const GRACE: Duration = Duration::from_secs(1);

/// A hand-written server: answers initialize, reads one call, closes its stdin, says so in a
/// log record, waits 500 ms, answers that call and exits.
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

/// A hand-written server: answers initialize, closes its stdin, says so in a log record, and
/// keeps its stdout open for two minutes without writing.
const CLOSES_STDIN_AND_HOLDS_STDOUT: &str = r#"
id_of() { printf '%s' "$1" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
read -r line
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{}},"serverInfo":{"name":"holds-stdout","version":"1"}}}\n' "$(id_of "$line")"
read -r line
exec 0<&-
printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"stdin closed"}}\n'
exec sleep 120
"#;

/// Lines a child wrote to stderr.
#[derive(Clone, Default)]
struct Stderr(Arc<Mutex<Vec<String>>>);

impl Stderr {
    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// A callback for `StdioCommand::on_stderr` that collects into this.
    fn sink(&self) -> impl FnMut(String) + Send + 'static {
        let lines = self.0.clone();
        move |line| lines.lock().unwrap().push(line)
    }
}

/// True while `/proc/<pid>` exists (a zombie counts: it has not been reaped).
fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The process state letter from `/proc/<pid>/stat` (`Z` for a zombie).
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// One module per runtime: `$rt` the crate, `$runtime` its name, `$Handlers` its client
/// handlers, `[$($async_)?]` / `[$($aw)*]` `async` / `.await` or nothing; `$run`, `$spawn`
/// and `$join` how a test body runs and runs work beside it (runners.rs), `$recv` how it
/// waits on a `smol::channel` (`recv` awaited, or `recv_blocking`), `$pause` a sleep and
/// `$next_note` the next notification within a wait. Where the runtimes differ:
/// `exited_before_handshake` the close reasons and exit code a child that exits before the
/// handshake gives, `stderr_delivered_within` how long after `close` or a failed spawn returns the child's
/// last stderr lines may still be on their way to `on_stderr` (zero: they are all there),
/// `reaped_after_failed_spawn_within` and `reaped_after_drop_within` how long after a spawn
/// failed, or after the last handle is dropped, the child may still exist (zero: it is reaped
/// before the call returns), and `$drop_in_flight` how calls are put in flight and the client
/// dropped under them (an async call holds its client until its future is dropped; a
/// zest-blocking pending call does not, and fails `Closed(Local)`).
macro_rules! stdio_client_faults {
    (
        $name:ident, $rt:ident, $runtime:literal, $Handlers:ident, [$($async_:tt)?], [$($aw:tt)*],
        run = $run:path, spawn = $spawn:path, join = $join:path, recv = $recv:ident,
        pause = $pause:expr, next_note = $next_note:expr,
        exited_before_handshake = ($early_reason:pat, $early_status:expr),
        stderr_delivered_within = $stderr_within:expr,
        reaped_after_failed_spawn_within = $reap_spawn_within:expr,
        reaped_after_drop_within = $reap_within:expr,
        drop_with_calls_in_flight = $drop_in_flight:expr $(,)?
    ) => {
        mod $name {
            mod body {
                use std::os::unix::process::ExitStatusExt as _;
                use std::sync::atomic::{AtomicUsize, Ordering};
                use std::sync::{Arc, Mutex};
                use std::time::{Duration, Instant};

                use serde_json::{json, Value};
                use $rt::core::api::ProgressFn;
                use $rt::core::client::ServerNotification;
                use $rt::core::error::{CloseReason, ProtocolViolation, RequestError};
                use $rt::core::framing::lines::LineViolation;
                use $rt::core::handler::$Handlers;
                use $rt::core::RequestOptions;
                use $rt::schema::methods::CallTool;
                use $rt::schema::{CallToolParams, CallToolResult};
                use $rt::{CallError, Client, ClientApi, ClientOptions, ConnectError, StdioCommand};

                use crate::clients::LIMIT;
                use crate::{process_exists, process_state, Stderr, GIANT_LEN, GIANT_LIMIT, GRACE};

                $($async_)? fn pause(wait: Duration) {
                    ($pause)(wait) $($aw)*;
                }

                $($async_)? fn next_note(
                    client: &Client,
                    wait: Duration,
                ) -> Option<ServerNotification> {
                    ($next_note)(client, wait) $($aw)*
                }

                fn options() -> ClientOptions {
                    ClientOptions::new(concat!("zest-", $runtime, "-faults"), "0.1.0")
                }

                /// For the hand-written servers, which answer a session-era handshake.
                fn session_era() -> ClientOptions {
                    options().with_config(|c| c.session_era())
                }

                /// The fault server on this runtime with `flags`, and a 30 s shutdown grace:
                /// it exits as soon as its stdin ends, so the grace is never waited out, and
                /// tests that expect a clean exit cannot see a SIGTERM because a loaded machine
                /// was slow.
                fn fixture(flags: &[&str]) -> StdioCommand {
                    StdioCommand::new(env!("CARGO_BIN_EXE_fault_server"))
                        .args(["--runtime", $runtime])
                        .args(flags.iter().copied())
                        .shutdown_grace(Duration::from_secs(30))
                }

                /// `sh -c "trap '' TERM; exec <fault server> --linger"`: ignores SIGTERM and
                /// outlives its stdin; its stderr in `stderr`.
                fn stubborn(stderr: &Stderr) -> StdioCommand {
                    let script = format!(
                        "trap '' TERM; exec '{}' --runtime {} --linger",
                        env!("CARGO_BIN_EXE_fault_server"),
                        $runtime
                    );
                    StdioCommand::new("sh")
                        .args(["-c", &script])
                        .shutdown_grace(GRACE)
                        .on_stderr(stderr.sink())
                }

                /// `command` started and initialized, which must succeed.
                $($async_)? fn start(command: StdioCommand, options: ClientOptions) -> Client {
                    Client::spawn(command, options) $($aw)* .expect("the server starts")
                }

                $($async_)? fn echo(client: &Client, text: &str) -> String {
                    let result = client.call_tool("echo", json!({"text": text})) $($aw)*
                        .expect("echo answers");
                    result.content[0].as_text().expect("a text block").to_owned()
                }

                /// `tools/call` of `tool` with this call's own options and no progress.
                $($async_)? fn call_with(
                    client: &Client,
                    tool: &str,
                    args: Value,
                    opts: RequestOptions,
                ) -> Result<CallToolResult, CallError> {
                    let params: CallToolParams =
                        serde_json::from_value(json!({"name": tool, "arguments": args}))
                            .expect("valid call params");
                    client.request_with::<CallTool>(params, opts, None) $($aw)*
                }

                /// Waits (polling /proc) until `pid` is gone; fails after `within`.
                $($async_)? fn reaped(pid: u32, within: Duration) {
                    let deadline = Instant::now() + within;
                    while process_exists(pid) {
                        let state = process_state(pid);
                        assert!(Instant::now() < deadline, "{pid} still there, state {state:?}");
                        pause(Duration::from_millis(10)) $($aw)*;
                    }
                }

                /// The child's stderr lines once `done` holds of them, or as they are when
                /// `$stderr_within` has passed.
                $($async_)? fn stderr_once(
                    stderr: &Stderr,
                    done: impl Fn(&[String]) -> bool,
                ) -> Vec<String> {
                    let deadline = Instant::now() + $stderr_within;
                    loop {
                        let lines = stderr.lines();
                        if done(&lines) || Instant::now() >= deadline {
                            return lines;
                        }
                        pause(Duration::from_millis(10)) $($aw)*;
                    }
                }

                pub(super) $($async_)? fn banner_lines_before_json_are_reported_and_skipped() {
                    let non_json = Arc::new(AtomicUsize::new(0));
                    let sink = non_json.clone();
                    let handlers = $Handlers::default().on_violation(move |v| {
                        if matches!(v, ProtocolViolation::Line(LineViolation::NotJson { .. })) {
                            sink.fetch_add(1, Ordering::SeqCst);
                        }
                    });
                    let command = fixture(&["--banner"]).on_stderr(|_| {});
                    let client = start(command, options().handlers(handlers)) $($aw)*;
                    assert_eq!(echo(&client, "after the banner") $($aw)*, "after the banner");
                    assert_eq!(non_json.load(Ordering::SeqCst), 2, "both banner lines reported");
                    assert!(client.close() $($aw)* .expect("the exit status").success());
                }

                pub(super) $($async_)? fn a_10_mib_line_over_the_limit_is_reported_dropped_and_the_session_goes_on() {
                    let too_long = Arc::new(Mutex::new(Vec::new()));
                    let sink = too_long.clone();
                    let handlers = $Handlers::default().on_violation(move |v| {
                        if let ProtocolViolation::Line(LineViolation::TooLong {
                            limit, dropped, ..
                        }) = v
                        {
                            sink.lock().unwrap().push((*limit, *dropped));
                        }
                    });
                    let mut options = options().handlers(handlers);
                    options.config.max_message = GIANT_LIMIT;
                    let command = fixture(&["--giant-line"]).on_stderr(|_| {});
                    let client = start(command, options) $($aw)*;
                    let pid = client.pid();
                    assert_eq!(echo(&client, "after the giant") $($aw)*, "after the giant");
                    assert_eq!(
                        *too_long.lock().unwrap(),
                        [(GIANT_LIMIT, GIANT_LEN)],
                        "the giant line is reported once as TooLong"
                    );
                    assert!(client.close() $($aw)* .expect("the exit status").success());
                    assert!(!process_exists(pid), "reaped: {:?}", process_state(pid));
                }

                pub(super) $($async_)? fn a_child_exiting_mid_call_fails_every_pending_call_at_once() {
                    let stderr = Stderr::default();
                    let command = fixture(&[]).on_stderr(stderr.sink());
                    let client = start(command, options()) $($aw)*;
                    let pid = client.pid();
                    // A call that would take 60 s, in flight once the server reports on it.
                    let (tx, progress) = smol::channel::unbounded();
                    let other = client.clone();
                    let slow = $spawn(move || $($async_ move)? {
                        let report = move |p: $rt::core::schema::ProgressParams| {
                            let _ = tx.try_send(p.progress);
                        };
                        other.call_tool_with_progress("steps", json!({"n": 3000}), report) $($aw)*
                    });
                    assert_eq!(progress.$recv() $($aw)*, Ok(1.0));
                    let started = Instant::now();
                    let crash = client.call_tool("crash", json!({})) $($aw)*;
                    let slow = $join(slow) $($aw)*;
                    // "At once" is any time well short of the 60 s, however loaded the machine.
                    assert!(started.elapsed() < LIMIT, "took {:?}", started.elapsed());
                    let closed =
                        CallError::Request(RequestError::Closed(CloseReason::TransportEnded));
                    assert_eq!(slow.expect_err("the slow call fails"), closed);
                    assert_eq!(crash.expect_err("the crash call fails"), closed);
                    assert_eq!(client.close_reason(), Some(CloseReason::TransportEnded));
                    // Later calls fail at once too; the child was reaped with its own status.
                    let later = client.ping() $($aw)* .expect_err("the session is over");
                    let failed = matches!(later, CallError::Usage(_) | CallError::Request(_));
                    assert!(failed, "{later:?}");
                    assert_eq!(client.close() $($aw)* .expect("the exit status").code(), Some(3));
                    assert!(!process_exists(pid), "reaped: {:?}", process_state(pid));
                    let crashing =
                        |lines: &[String]| lines.iter().any(|l| l.contains("crashing"));
                    let lines = stderr_once(&stderr, crashing) $($aw)*;
                    assert!(crashing(&lines), "{lines:?}");
                }

                pub(super) $($async_)? fn a_child_ignoring_stdin_close_and_sigterm_is_killed_and_reaped() {
                    let stderr = Stderr::default();
                    let client = start(stubborn(&stderr), options()) $($aw)*;
                    let pid = client.pid();
                    assert_eq!(echo(&client, "stubborn") $($aw)*, "stubborn");
                    let started = Instant::now();
                    let status = client.close() $($aw)* .expect("the exit status");
                    let took = started.elapsed();
                    assert_eq!(status.signal(), Some(9), "only SIGKILL ends it: {status:?}");
                    assert!(took >= GRACE * 2, "stdin's end and SIGTERM each wait: {took:?}");
                    // The child lingers for ever: only the SIGKILL (status above) ended it. This
                    // bound only says the sequence did not stall.
                    assert!(took < LIMIT, "{took:?}");
                    assert!(!process_exists(pid), "reaped, no zombie: {:?}", process_state(pid));
                    let lingering =
                        |lines: &[String]| lines.iter().any(|l| l.contains("lingering"));
                    let lines = stderr_once(&stderr, lingering) $($aw)*;
                    assert!(lingering(&lines), "{lines:?}");
                }

                pub(super) $($async_)? fn a_missing_command_is_a_spawn_error_naming_the_program() {
                    for program in ["zest-no-such-server", "/nonexistent/zest-no-such-server"] {
                        let spawned = Client::spawn(StdioCommand::new(program), options()) $($aw)*;
                        let err = spawned.expect_err("nothing to run");
                        let ConnectError::Spawn { program: named, kind, .. } = &err else {
                            panic!("{err:?}")
                        };
                        assert_eq!(named, program);
                        assert_eq!(*kind, std::io::ErrorKind::NotFound);
                        assert!(err.to_string().contains(program), "{err}");
                    }
                }

                pub(super) $($async_)? fn a_child_exiting_before_the_handshake_is_a_connect_error() {
                    // Its line on stdout, then on stderr.
                    for script in
                        ["echo not an mcp server; exit 7", "echo not an mcp server >&2; exit 7"]
                    {
                        let command =
                            StdioCommand::new("sh").args(["-c", script]).on_stderr(|_| {});
                        let spawned = Client::spawn(command, options()) $($aw)*;
                        let err = spawned.expect_err("no handshake");
                        let ConnectError::Exited { reason, status } = &err else {
                            panic!("{script}: {err:?}")
                        };
                        assert!(matches!(reason, $early_reason), "{script}: {err:?}");
                        let code = status.and_then(|s| s.code());
                        assert_eq!(code, $early_status, "{script}: {err:?}");
                    }
                }

                pub(super) $($async_)? fn dropping_the_client_with_calls_in_flight_shuts_the_child_down() {
                    // The child ignores stdin's end and SIGTERM: only the whole sequence ends it.
                    let stderr = Stderr::default();
                    let client = start(stubborn(&stderr), options()) $($aw)*;
                    let pid = client.pid();
                    ($drop_in_flight)(client) $($aw)*;
                    reaped(pid, $reap_within) $($aw)*;
                }

                pub(super) $($async_)? fn close_from_one_clone_fails_calls_on_another() {
                    let command = fixture(&[]).on_stderr(|_| {});
                    let client = start(command, options()) $($aw)*;
                    let other = client.clone();
                    let (tx, progress) = smol::channel::unbounded();
                    let pending = $spawn(move || $($async_ move)? {
                        let report = move |p: $rt::core::schema::ProgressParams| {
                            let _ = tx.try_send(p.progress);
                        };
                        other.call_tool_with_progress("steps", json!({"n": 3000}), report) $($aw)*
                    });
                    // The call is in flight once the server reports on it (not after some sleep).
                    assert_eq!(progress.$recv() $($aw)*, Ok(1.0));
                    assert!(client.close() $($aw)* .expect("the exit status").success());
                    let closed = CallError::Request(RequestError::Closed(CloseReason::Local));
                    assert_eq!($join(pending) $($aw)* .expect_err("the call fails"), closed);
                }

                pub(super) $($async_)? fn a_panicking_client_handler_answers_with_an_error() {
                    let handlers = $Handlers::default()
                        .on_sampling(|_| $($async_ move)? { panic!("no model here") });
                    let command = fixture(&[]).on_stderr(|_| {});
                    let client = start(command, options().handlers(handlers)) $($aw)*;
                    // The session era answers the server's request with the error and the tool
                    // reports it; in 2026-07-28 the client has no one to answer, so the call
                    // itself fails.
                    let why = match client.call_tool("sample", json!({"prompt": "hi"})) $($aw)* {
                        Ok(r) => {
                            assert!(r.is_error(), "{r:?}");
                            r.content[0].as_text().expect("a text block").to_owned()
                        }
                        Err(e) => e.to_string(),
                    };
                    assert!(why.contains("no model here"), "{why}");
                    assert_eq!(echo(&client, "still fine") $($aw)*, "still fine");
                    assert!(client.close() $($aw)* .expect("the exit status").success());
                }

                pub(super) $($async_)? fn a_panicking_progress_callback_does_not_break_the_session() {
                    let command = fixture(&[]).on_stderr(|_| {});
                    let client = start(command, options()) $($aw)*;
                    let result = client
                        .call_tool_with_progress("steps", json!({"n": 3}), |_| {
                            panic!("a progress callback bug")
                        })
                        $($aw)*
                        .expect("the call completes anyway");
                    assert_eq!(result.content[0].as_text(), Some("done after 3 steps"));
                    assert_eq!(echo(&client, "still alive") $($aw)*, "still alive");
                    assert!(client.close() $($aw)* .expect("the exit status").success());
                }

                /// The timing rules (a call's deadline is the configured `request_timeout` to
                /// the instant; progress restarts it, never past the cap) are core tests in
                /// virtual time (core/tests/requests.rs). Here only the wiring, with bounds load
                /// cannot break: the runtime hands the config and each call's options to the
                /// machine, sleeps until the machine's deadline and fails the call then, and
                /// hands progress to its caller.
                pub(super) $($async_)? fn calls_time_out_at_the_machines_deadline_and_progress_reaches_the_caller() {
                    let mut options = options();
                    options.config.request_timeout = Duration::from_millis(300);
                    let command = fixture(&[]).on_stderr(|_| {});
                    let client = start(command, options) $($aw)*;
                    // Every call but the one meant to time out gets 30 s of its own.
                    let roomy = || RequestOptions::default().timeout(LIMIT);
                    let args = json!({"text": "quick"});
                    let quick = call_with(&client, "echo", args, roomy()) $($aw)*;
                    assert_eq!(quick.expect("quick").content[0].as_text(), Some("quick"));

                    // A call's own timeout wins over the config's: 40 steps of 20 ms, 800 ms,
                    // past the 300 ms.
                    let r = call_with(&client, "steps", json!({"n": 40}), roomy()) $($aw)*;
                    let r = r.expect("40 steps");
                    assert_eq!(r.content[0].as_text(), Some("done after 40 steps"));

                    // A 60 s call under the config's 300 ms fails with TimedOut: never before
                    // the deadline, and long before the answer (a runtime that never woke for
                    // the deadline would see the result after 60 s).
                    let started = Instant::now();
                    let err = client.call_tool("steps", json!({"n": 3000})) $($aw)*;
                    let took = started.elapsed();
                    let timed_out = CallError::Request(RequestError::TimedOut);
                    assert_eq!(err.expect_err("timed out"), timed_out);
                    assert!(took >= Duration::from_millis(300) && took < LIMIT, "{took:?}");

                    // Progress reaches its caller, in order, and the call completes.
                    let reports = Arc::new(Mutex::new(Vec::new()));
                    let sink = reports.clone();
                    let on_progress: ProgressFn = Box::new(move |p| {
                        sink.lock().unwrap().push((p.progress, p.total));
                    });
                    let params: CallToolParams =
                        serde_json::from_value(json!({"name": "steps", "arguments": {"n": 3}}))
                            .expect("valid call params");
                    let opts = RequestOptions::with_progress().timeout(LIMIT);
                    let r = client.request_with::<CallTool>(params, opts, Some(on_progress));
                    let r = r $($aw)* .expect("3 steps");
                    assert_eq!(r.content[0].as_text(), Some("done after 3 steps"));
                    let reports = reports.lock().unwrap().clone();
                    assert_eq!(reports, [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);

                    let args = json!({"text": "after"});
                    let after = call_with(&client, "echo", args, roomy()) $($aw)*;
                    assert_eq!(after.expect("after").content[0].as_text(), Some("after"));
                    assert!(client.close() $($aw)* .expect("the exit status").success());
                }

                pub(super) $($async_)? fn answers_written_before_stdin_broke_still_arrive() {
                    // The child exits once it has answered, so a long grace costs nothing; it
                    // only makes "the answer comes within the grace period after the write
                    // broke" hold on any machine.
                    let command = StdioCommand::new("sh")
                        .args(["-c", crate::LAST_WORDS])
                        .shutdown_grace(Duration::from_secs(30))
                        .on_stderr(|_| {});
                    let client = start(command, session_era()) $($aw)*;
                    let other = client.clone();
                    let first = $spawn(move || $($async_ move)? {
                        other.call_tool("anything", json!({})) $($aw)*
                    });
                    // It reads the first call before it closes its stdin and says so.
                    let note = next_note(&client, LIMIT) $($aw)*;
                    assert!(note.is_some(), "the server said it closed its stdin");
                    // Writing this one fails (EPIPE): the session must still read what the
                    // child writes.
                    let second = client.call_tool("anything", json!({})) $($aw)*;
                    let Err(CallError::Request(RequestError::Closed(_))) = &second else {
                        panic!("{second:?}")
                    };
                    let first = $join(first) $($aw)*;
                    let first = first.expect("the answer written after stdin closed");
                    assert_eq!(first.content[0].as_text(), Some("last words"));
                    client.close() $($aw)* .expect("the exit status");
                }

                pub(super) $($async_)? fn a_broken_stdin_fails_the_session_after_the_grace_period_even_if_stdout_stays_open() {
                    let grace = Duration::from_millis(300);
                    let command = StdioCommand::new("sh")
                        .args(["-c", crate::CLOSES_STDIN_AND_HOLDS_STDOUT])
                        .shutdown_grace(grace)
                        .on_stderr(|_| {});
                    let client = start(command, session_era()) $($aw)*;
                    let note = next_note(&client, LIMIT) $($aw)*;
                    assert!(note.is_some(), "the server said it closed its stdin");
                    let started = Instant::now();
                    let ping = client.ping() $($aw)*;
                    let took = started.elapsed();
                    let Err(CallError::Request(RequestError::Closed(CloseReason::TransportFailed(
                        why,
                    )))) = &ping
                    else {
                        panic!("{ping:?}")
                    };
                    assert!(why.to_string().contains("writing to the server failed"), "{why}");
                    // Not before the grace period, and not when the child's stdout ends two
                    // minutes on.
                    assert!(took >= grace && took < LIMIT, "{took:?}");
                    client.close() $($aw)* .expect("the exit status");
                }

                pub(super) $($async_)? fn a_child_that_never_answers_initialize_times_out_and_is_reaped() {
                    let stderr = Stderr::default();
                    let command = StdioCommand::new("sh")
                        .args(["-c", "echo $$ >&2; exec sleep 120"])
                        .shutdown_grace(Duration::from_millis(100))
                        .on_stderr(stderr.sink());
                    let mut options = options();
                    options.config.init_timeout = Duration::from_millis(300);
                    let started = Instant::now();
                    let spawned = Client::spawn(command, options) $($aw)*;
                    let elapsed = started.elapsed();
                    assert_eq!(spawned.expect_err("no answer"), ConnectError::TimedOut);
                    // 300 ms for initialize, 100 ms after closing stdin, then SIGTERM ends
                    // `sleep`, long before it would end by itself. (The deadline itself, to the
                    // instant, is a core test: handshake.rs,
                    // the_initialize_timeout_fires_at_the_configured_deadline.)
                    let bounded = elapsed >= Duration::from_millis(400) && elapsed < LIMIT;
                    assert!(bounded, "{elapsed:?}");
                    let lines = stderr_once(&stderr, |lines| !lines.is_empty()) $($aw)*;
                    let pid: u32 = lines[0].parse().expect("the child's pid");
                    reaped(pid, $reap_spawn_within) $($aw)*;
                }

                pub(super) $($async_)? fn the_command_gets_its_args_env_and_directory_and_stderr_comes_back_as_lines() {
                    let inherited = "CARGO_PKG_NAME";
                    assert!(std::env::var_os(inherited).is_some(), "cargo test sets {inherited}");
                    let script = format!(
                        r#"echo "arg=$0 $1" >&2; echo "cwd=$(pwd)" >&2; echo "foo=$ZEST_FOO" >&2;
                           echo "removed=${{{inherited}-unset}}" >&2;
                           printf 'no newline at the end' >&2"#
                    );
                    let stderr = Stderr::default();
                    let command = StdioCommand::new("sh")
                        .args(["-c", &script, "first", "second"])
                        .env("ZEST_FOO", "bar baz")
                        .env_remove(inherited)
                        .current_dir("/")
                        .on_stderr(stderr.sink());
                    let spawned = Client::spawn(command, options()) $($aw)*;
                    let err = spawned.expect_err("sh exits without a handshake");
                    assert!(matches!(err, ConnectError::Exited { .. }), "{err:?}");
                    let lines = stderr_once(&stderr, |lines| lines.len() >= 5) $($aw)*;
                    let expected = [
                        "arg=first second",
                        "cwd=/",
                        "foo=bar baz",
                        "removed=unset",
                        "no newline at the end",
                    ];
                    assert_eq!(lines, expected);
                }
            }

            #[test]
            fn banner_lines_before_json_are_reported_and_skipped() {
                $run(body::banner_lines_before_json_are_reported_and_skipped);
            }

            #[test]
            fn a_10_mib_line_over_the_limit_is_reported_dropped_and_the_session_goes_on() {
                $run(body::a_10_mib_line_over_the_limit_is_reported_dropped_and_the_session_goes_on);
            }

            #[test]
            fn a_child_exiting_mid_call_fails_every_pending_call_at_once() {
                $run(body::a_child_exiting_mid_call_fails_every_pending_call_at_once);
            }

            #[test]
            fn a_child_ignoring_stdin_close_and_sigterm_is_killed_and_reaped() {
                $run(body::a_child_ignoring_stdin_close_and_sigterm_is_killed_and_reaped);
            }

            #[test]
            fn a_missing_command_is_a_spawn_error_naming_the_program() {
                $run(body::a_missing_command_is_a_spawn_error_naming_the_program);
            }

            #[test]
            fn a_child_exiting_before_the_handshake_is_a_connect_error() {
                $run(body::a_child_exiting_before_the_handshake_is_a_connect_error);
            }

            #[test]
            fn dropping_the_client_with_calls_in_flight_shuts_the_child_down() {
                $run(body::dropping_the_client_with_calls_in_flight_shuts_the_child_down);
            }

            #[test]
            fn close_from_one_clone_fails_calls_on_another() {
                $run(body::close_from_one_clone_fails_calls_on_another);
            }

            #[test]
            fn a_panicking_client_handler_answers_with_an_error() {
                $run(body::a_panicking_client_handler_answers_with_an_error);
            }

            #[test]
            fn a_panicking_progress_callback_does_not_break_the_session() {
                $run(body::a_panicking_progress_callback_does_not_break_the_session);
            }

            #[test]
            fn calls_time_out_at_the_machines_deadline_and_progress_reaches_the_caller() {
                $run(body::calls_time_out_at_the_machines_deadline_and_progress_reaches_the_caller);
            }

            #[test]
            fn answers_written_before_stdin_broke_still_arrive() {
                $run(body::answers_written_before_stdin_broke_still_arrive);
            }

            #[test]
            fn a_broken_stdin_fails_the_session_after_the_grace_period_even_if_stdout_stays_open() {
                $run(body::a_broken_stdin_fails_the_session_after_the_grace_period_even_if_stdout_stays_open);
            }

            #[test]
            fn a_child_that_never_answers_initialize_times_out_and_is_reaped() {
                $run(body::a_child_that_never_answers_initialize_times_out_and_is_reaped);
            }

            #[test]
            fn the_command_gets_its_args_env_and_directory_and_stderr_comes_back_as_lines() {
                $run(body::the_command_gets_its_args_env_and_directory_and_stderr_comes_back_as_lines);
            }
        }
    };
}

stdio_client_faults!(
    tokio_stdio, zest_tokio, "tokio", AsyncClientHandlers, [async], [.await],
    run = crate::runners::on_tokio,
    spawn = crate::runners::tokio_spawn,
    join = crate::runners::tokio_join,
    recv = recv,
    pause = tokio::time::sleep,
    next_note = crate::runners::tokio_next_note,
    // No exit status: the handshake fails before the child is waited for.
    exited_before_handshake = (CloseReason::TransportEnded, None),
    // The stderr reader is a task of its own.
    stderr_delivered_within = LIMIT,
    // A spawn that failed returns before the child is reaped; the driver reaps it later.
    reaped_after_failed_spawn_within = LIMIT,
    reaped_after_drop_within = LIMIT,
    // Each call a task holding a clone of the client: the session ends once the last
    // handle is dropped and every task aborted.
    drop_with_calls_in_flight = |client: Client| async move {
        let (tx, mut started) = tokio::sync::mpsc::unbounded_channel();
        let calls: Vec<_> = (0..4)
            .map(|_| {
                let client = client.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    let args = json!({"n": 3000});
                    client
                        .call_tool_with_progress("steps", args, move |p| {
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
            let aborted = call.await.expect_err("the call was still in flight");
            assert!(aborted.is_cancelled(), "{aborted}");
        }
    },
);

stdio_client_faults!(
    smol_stdio, zest_smol, "smol", AsyncClientHandlers, [async], [.await],
    run = crate::runners::on_smol,
    spawn = crate::runners::smol_spawn,
    join = crate::runners::smol_join,
    recv = recv,
    pause = crate::runners::smol_pause,
    next_note = crate::runners::smol_next_note,
    exited_before_handshake = (CloseReason::TransportEnded, Some(7)),
    stderr_delivered_within = Duration::ZERO,
    reaped_after_failed_spawn_within = Duration::ZERO,
    reaped_after_drop_within = LIMIT,
    // Each call a task holding a clone of the client: the session ends once the last
    // handle is dropped and every task cancelled.
    drop_with_calls_in_flight = |client: Client| async move {
        let (tx, started) = smol::channel::unbounded();
        let calls: Vec<_> = (0..4)
            .map(|_| {
                let client = client.clone();
                let tx = tx.clone();
                smol::spawn(async move {
                    let args = json!({"n": 3000});
                    client
                        .call_tool_with_progress("steps", args, move |p| {
                            if p.progress == 1.0 {
                                let _ = tx.try_send(());
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
        for call in calls {
            assert!(call.cancel().await.is_none(), "the call was still in flight");
        }
    },
);

stdio_client_faults!(
    blocking_stdio,
    zest_blocking,
    "blocking",
    SyncClientHandlers,
    [],
    [],
    run = crate::runners::on_blocking,
    spawn = crate::runners::thread_spawn,
    join = crate::runners::thread_join,
    recv = recv_blocking,
    pause = std::thread::sleep,
    next_note = |client: &Client, wait: Duration| client.notifications().recv_timeout(wait),
    // Which the driver notices first, stdout's end or stdin's broken pipe, is a race; the
    // child is reaped before spawn returns.
    exited_before_handshake =
        (CloseReason::TransportEnded | CloseReason::TransportFailed(_), Some(7)),
    // The stderr reader is a thread of its own.
    stderr_delivered_within = LIMIT,
    reaped_after_failed_spawn_within = Duration::ZERO,
    // Dropping the last handle returns once the child is reaped.
    reaped_after_drop_within = Duration::ZERO,
    // Pending calls do not keep the session alive: dropping the last handle fails them
    // `Closed(Local)`, at once.
    drop_with_calls_in_flight = |client: Client| {
        let (tx, started) = std::sync::mpsc::channel();
        let (done, outcomes) = std::sync::mpsc::channel();
        for _ in 0..4 {
            let params = serde_json::from_value(json!({"name": "steps", "arguments": {"n": 3000}}))
                .expect("valid call params");
            let tx = tx.clone();
            let on_progress: ProgressFn = Box::new(move |p| {
                if p.progress == 1.0 {
                    let _ = tx.send(());
                }
            });
            let pending = client.start_with_progress::<CallTool>(
                params,
                RequestOptions::with_progress(),
                Some(on_progress),
            );
            let done = done.clone();
            std::thread::spawn(move || {
                let _ = done.send(pending.wait());
            });
        }
        drop(done);
        // Every call is in flight once the server has reported on it (not after some sleep).
        for _ in 0..4 {
            started.recv_timeout(LIMIT).expect("each call reports its first step");
        }
        let dropped = Instant::now();
        drop(client); // the last handle
        let outcomes: Vec<Result<CallToolResult, CallError>> = outcomes.iter().collect();
        assert_eq!(outcomes.len(), 4);
        for outcome in outcomes {
            assert_eq!(outcome, Err(CallError::Request(RequestError::Closed(CloseReason::Local))));
        }
        // Not after the calls' 60 s.
        assert!(dropped.elapsed() < LIMIT, "{:?}", dropped.elapsed());
    },
);
