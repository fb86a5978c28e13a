//! The fixture server driven by the official TypeScript and Python SDK clients
//! (tests/peers/ts_client.mjs and py_client.py, installed by scripts/install-peers).

mod common;

use std::path::Path;
use std::process::Command;

fn drive(program: &Path, script: &str) {
    let root = common::workspace();
    assert!(program.exists(), "{} is missing: run scripts/install-peers", program.display());
    let out = Command::new(program)
        .arg(root.join(script))
        .arg(common::fixture())
        .current_dir(&root)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value =
        stdout.lines().rev().find_map(|l| serde_json::from_str(l).ok()).unwrap_or_else(|| {
            panic!("{script} printed no report; stderr:\n{}", String::from_utf8_lossy(&out.stderr))
        });
    assert!(out.status.success() && report["ok"] == true, "{script} failed: {report:#}");
    assert!(report["checks"].as_array().is_some_and(|c| c.len() >= 6), "{report:#}");
}

#[test]
fn typescript_sdk_client_drives_the_fixture() {
    let sdk = common::workspace().join("tests/peers/node_modules/@modelcontextprotocol/sdk");
    assert!(sdk.exists(), "{} is missing: run scripts/install-peers", sdk.display());
    let node = on_path("node").expect("node is not on PATH (scripts/install-peers needs it too)");
    drive(&node, "tests/peers/ts_client.mjs");
}

#[test]
fn python_sdk_client_drives_the_fixture() {
    let python = common::workspace().join("tests/peers/.venv/bin/python");
    drive(&python, "tests/peers/py_client.py");
}

fn on_path(program: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.exists())
}
