//! The tokio fixture server driven by the official TypeScript and Python SDK clients
//! (tests/peers; install with scripts/install-peers).

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs a peer client script against the fixture and checks its JSON report.
fn run_peer(mut command: Command, who: &str) {
    let mut child = command
        .arg(common::fixture())
        .current_dir(common::workspace())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("the {who} client starts: {e}"));
    let start = Instant::now();
    while child.try_wait().expect("the peer can be waited for").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the {who} client ran for over 60 s: {:?}", child.wait_with_output());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("the peer's output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{who} client failed ({}):\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON report");
    assert_eq!(report["ok"], true, "{report}");
    assert!(report["checks"].as_array().is_some_and(|c| c.len() >= 6), "{report}");
}

#[test]
fn typescript_sdk_client_drives_the_fixture() {
    let script = common::peer("ts_client.mjs");
    common::peer("node_modules/@modelcontextprotocol/sdk/package.json");
    let mut command = Command::new("node");
    command.arg(script);
    run_peer(command, "TypeScript");
}

#[test]
fn python_sdk_client_drives_the_fixture() {
    let mut command = Command::new(common::peer(".venv/bin/python"));
    command.arg(common::peer("py_client.py"));
    run_peer(command, "Python");
}
