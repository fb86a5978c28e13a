//! Runs an official SDK client (tests/peers, installed by scripts/install-peers) against a
//! fixture server and checks its JSON report. Shared by the runtime crates' tests through
//! `#[path = "../../tests/support/peers.rs"] mod peers;`.
#![allow(dead_code, clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The official client SDKs the fixture is checked against.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Sdk {
    /// `@modelcontextprotocol/sdk`, tests/peers/ts_client.mjs.
    TypeScript,
    /// `mcp` from PyPI, tests/peers/py_client.py.
    Python,
}

/// Runs `sdk`'s client script against `fixture` (at most 60 s) and asserts every check in its
/// report passed.
pub(crate) fn drive_fixture(sdk: Sdk, fixture: &Path) {
    let peers = workspace().join("tests/peers");
    let (program, script, installed) = match sdk {
        Sdk::TypeScript => (
            PathBuf::from("node"),
            peers.join("ts_client.mjs"),
            peers.join("node_modules/@modelcontextprotocol/sdk/package.json"),
        ),
        Sdk::Python => {
            let python = peers.join(".venv/bin/python");
            (python.clone(), peers.join("py_client.py"), python)
        }
    };
    assert!(installed.exists(), "{} is missing: run scripts/install-peers", installed.display());
    let mut child = Command::new(&program)
        .arg(&script)
        .arg(fixture)
        .current_dir(workspace())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("the {sdk:?} client starts ({}): {e}", program.display()));
    let start = Instant::now();
    while child.try_wait().expect("the peer can be waited for").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the {sdk:?} client ran for over 60 s: {:?}", child.wait_with_output());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("the peer's output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value =
        stdout.lines().rev().find_map(|l| serde_json::from_str(l).ok()).unwrap_or_else(|| {
            panic!(
                "the {sdk:?} client printed no report; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    assert!(out.status.success() && report["ok"] == true, "the {sdk:?} client failed: {report:#}");
    assert!(report["checks"].as_array().is_some_and(|c| c.len() >= 6), "{report:#}");
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace")
        .to_owned()
}
