//! Helpers shared by the integration tests: where the fixture and the peers are, and checks
//! on processes.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use zest_tokio::StdioCommand;

/// The workspace root (the tests' paths are relative to it).
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// target/<profile>/examples/<name>, next to this test binary (target/<profile>/deps/…).
pub fn example_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps");
    profile_dir.join("examples").join(name)
}

/// The fixture server of this crate, built by `cargo test` before the tests run.
pub fn fixture() -> PathBuf {
    let bin = example_bin("tokio_stdio_server");
    assert!(bin.exists(), "{} is missing: run `cargo test -p zest-tokio`", bin.display());
    bin
}

/// A command for the fixture with `args`, its stderr prefixed on ours, and a 30 s shutdown
/// grace: the fixture exits as soon as its stdin ends, so the grace is never waited out, and
/// tests that expect a clean exit cannot see a SIGTERM because a loaded machine was slow.
pub fn fixture_command(args: &[&str]) -> StdioCommand {
    StdioCommand::new(fixture())
        .args(args)
        .on_stderr(|line| eprintln!("[fixture] {line}"))
        .shutdown_grace(Duration::from_secs(30))
}

/// A file under tests/peers, or a panic saying how to install the peers.
pub fn peer(path: &str) -> PathBuf {
    let p = workspace().join("tests/peers").join(path);
    assert!(p.exists(), "{} is missing: run scripts/install-peers", p.display());
    p
}

/// Waits until /proc/<pid> is gone: the process exited and was reaped (a zombie still has
/// an entry, in state Z).
pub async fn assert_reaped(pid: u32, within: Duration) {
    let path = PathBuf::from(format!("/proc/{pid}"));
    let start = Instant::now();
    while path.exists() {
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        assert!(start.elapsed() < within, "process {pid} still exists after {within:?}: {stat}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
