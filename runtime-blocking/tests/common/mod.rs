//! Paths and helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use zest_blocking::core::handler::SyncClientHandlers;
use zest_blocking::schema::{CreateMessageResult, Role, SamplingContent};
use zest_blocking::{Client, ClientOptions, StdioCommand};

/// The workspace root (runtime-blocking/..).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the crate is in a workspace").into()
}

/// An example binary built alongside this test (`cargo test` builds the package's examples
/// into target/<profile>/examples/).
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary has a path");
    // target/<profile>/deps/<test> → target/<profile>/examples/<name>
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps");
    let path = profile_dir.join("examples").join(name);
    assert!(path.exists(), "{} is missing: run `cargo test -p zest-blocking`", path.display());
    path
}

/// The blocking fixture server.
pub fn fixture() -> PathBuf {
    example("blocking_stdio_server")
}

/// A file under tests/peers, or a panic saying how to install the peers.
pub fn peer(relative: &str) -> PathBuf {
    let path = workspace().join("tests/peers").join(relative);
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-peers (installs the pinned real MCP peers)",
        path.display()
    );
    path
}

/// Handlers answering sampling with `canned: <first text of the request>`.
pub fn canned_sampling() -> SyncClientHandlers {
    SyncClientHandlers::default().on_sampling(|params| {
        let asked = params
            .messages
            .iter()
            .flat_map(|m| m.content.as_slice())
            .find_map(SamplingContent::as_text)
            .unwrap_or("")
            .to_owned();
        Ok(CreateMessageResult {
            role: Role::Assistant,
            content: SamplingContent::text(format!("canned: {asked}")).into(),
            model: "zest-test-model".into(),
            stop_reason: None,
            meta: None,
            extra: Default::default(),
        })
    })
}

/// The fixture with `args`, short shutdown grace, and stderr kept quiet.
pub fn spawn_fixture(args: &[&str]) -> Client {
    let command = StdioCommand::new(fixture())
        .args(args)
        .shutdown_grace(Duration::from_millis(300))
        .on_stderr(|_| {});
    let options = ClientOptions::new("zest-blocking-tests", "0.0.0").handlers(canned_sampling());
    Client::spawn(command, options).expect("the fixture starts")
}

/// Runs `f` on a thread and returns its result, or panics after `limit`.
pub fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).unwrap_or_else(|_| panic!("did not finish within {limit:?}"))
}

/// The state letter of /proc/<pid>/stat (`Z` for a zombie), or `None` once the process is
/// gone.
pub fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the parenthesised command name, which may itself contain spaces.
    let after = &stat[stat.rfind(')')? + 1..];
    after.trim_start().chars().next()
}

/// Our child processes (zombies included) whose command name is `comm`.
pub fn children_named(comm: &str) -> Vec<u32> {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { return false };
            let ppid = stat[close + 1..].split_whitespace().nth(1);
            &stat[open + 1..close] == comm && ppid == Some(me.as_str())
        })
        .collect()
}
