//! Helpers shared by the integration tests: where the fixture and the peers are, and checks
//! on processes.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::time::Duration;

use zest_tokio::StdioCommand;

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
