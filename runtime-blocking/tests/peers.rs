//! The fixture server driven by the official TypeScript and Python SDK clients.

mod common;

use std::path::Path;
use std::process::Command;

fn run_peer(mut command: Command, who: &str) {
    let out = command.current_dir(common::workspace()).output().expect("the peer client runs");
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
    command.arg(script).arg(common::fixture());
    run_peer(command, "TypeScript");
}

#[test]
fn python_sdk_client_drives_the_fixture() {
    let python = common::peer(".venv/bin/python");
    let mut command = Command::new(python);
    command.arg(common::peer("py_client.py")).arg(Path::new(&common::fixture()));
    run_peer(command, "Python");
}
