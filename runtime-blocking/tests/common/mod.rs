//! Paths and helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use zest_blocking::core::handler::SyncClientHandlers;
use zest_blocking::schema::{CreateMessageResult, Role, SamplingContent};
use zest_blocking::{Client, ClientOptions, StdioCommand};

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
