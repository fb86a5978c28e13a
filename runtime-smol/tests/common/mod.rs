//! Shared test helpers: where the binaries are, a bounded `block_on`, stderr capture.
#![allow(dead_code, unreachable_pub)] // each test binary uses its own subset

use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use smol::future::FutureExt as _;
use zest_smol::schema::{CreateMessageResult, Role, SamplingContent, StopReason};
use zest_smol::{AsyncClientHandlers, StdioCommand};

/// A runtime's fixture server binary (`smol`, `tokio`, `blocking`) as `cargo test` builds it:
/// in the examples directory beside this test binary's `deps/` (any target dir or profile).
pub fn fixture_of(runtime: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps");
    profile_dir.join(format!("examples/{runtime}_stdio_server"))
}

/// This crate's fixture server; `cargo test` builds it before running tests.
pub fn fixture() -> PathBuf {
    let path = fixture_of("smol");
    assert!(
        path.exists(),
        "{} is missing: run `cargo test -p zest-smol` (which builds the examples) or \
         `cargo build -p zest-smol --example smol_stdio_server`",
        path.display()
    );
    path
}

/// Fails the test instead of hanging when `fut` takes longer than `secs`.
pub fn run<T>(secs: u64, fut: impl Future<Output = T>) -> T {
    smol::block_on(fut.or(async move {
        smol::Timer::after(Duration::from_secs(secs)).await;
        panic!("test timed out after {secs} s")
    }))
}

/// Lines a child wrote to stderr.
#[derive(Clone, Default)]
pub struct Stderr(Arc<Mutex<Vec<String>>>);

impl Stderr {
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// A callback for [`StdioCommand::on_stderr`] that collects into this.
    pub fn sink(&self) -> impl FnMut(String) + Send + 'static {
        let lines = self.0.clone();
        move |line| lines.lock().unwrap().push(line)
    }
}

/// The fixture with `args`, its stderr captured, and a 30 s grace period: the fixture exits as
/// soon as its stdin ends, so the grace is never waited out, and tests that expect a clean
/// exit (`success()`) cannot see a SIGTERM because a loaded machine was slow to exit.
pub fn fixture_cmd(args: &[&str]) -> (StdioCommand, Stderr) {
    let stderr = Stderr::default();
    let cmd = StdioCommand::new(fixture())
        .args(args)
        .shutdown_grace(Duration::from_secs(30))
        .on_stderr(stderr.sink());
    (cmd, stderr)
}

/// A sampling handler that answers every request with `canned: <first text>`.
pub fn canned_sampling() -> AsyncClientHandlers {
    AsyncClientHandlers::default().on_sampling(|params| async move {
        let asked = params
            .messages
            .iter()
            .flat_map(|m| m.content.as_slice().iter().filter_map(|c| c.as_text()))
            .next()
            .unwrap_or_default()
            .to_owned();
        Ok(CreateMessageResult {
            role: Role::Assistant,
            content: SamplingContent::text(format!("canned: {asked}")).into(),
            model: "canned-model".into(),
            stop_reason: Some(StopReason::EndTurn),
            meta: None,
            extra: Default::default(),
        })
    })
}

/// True while `/proc/<pid>` exists (a zombie counts: it has not been reaped).
pub fn process_exists(pid: u32) -> bool {
    PathBuf::from(format!("/proc/{pid}")).exists()
}
