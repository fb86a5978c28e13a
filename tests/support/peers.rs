//! Runs an official SDK client (tests/peers, installed by scripts/install-peers) against a
//! fixture server, over stdio or HTTP, and checks its JSON report. Shared by the runtime crates' tests through
//! `#[path = "../../tests/support/peers.rs"] mod peers;`.
#![allow(dead_code, clippy::disallowed_methods)]

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// The official client SDKs the fixture is checked against.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Sdk {
    /// `@modelcontextprotocol/sdk`, tests/peers/ts_client.mjs.
    TypeScript,
    /// `mcp` from PyPI, tests/peers/py_client.py.
    Python,
}

/// Where an SDK client script finds the server it drives.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target<'a> {
    /// A stdio server binary, which the script spawns.
    Stdio(&'a Path),
    /// A running server's Streamable HTTP endpoint (`http://127.0.0.1:P/mcp`).
    StreamableHttp(&'a str),
    /// A running server's legacy HTTP+SSE stream endpoint (`http://127.0.0.1:P/sse`).
    LegacySse(&'a str),
}

impl Target<'_> {
    /// The script's arguments: the binary, or `--url URL --transport streamable|sse`.
    fn args(self) -> Vec<OsString> {
        let http = |url: &str, kind: &str| {
            ["--url", url, "--transport", kind].into_iter().map(OsString::from).collect()
        };
        match self {
            Self::Stdio(server) => vec![server.into()],
            Self::StreamableHttp(url) => http(url, "streamable"),
            Self::LegacySse(url) => http(url, "sse"),
        }
    }
}

/// The checks every fixture run must report, whatever the SDK and transport.
const FIXTURE_CHECKS: &[&str] = &[
    "handshake",
    "list tools",
    "call echo",
    "call add",
    "progress",
    "logging",
    "sampling",
    "error result",
    "read resource",
    "read template",
    "get prompt",
];

/// Runs `sdk`'s client script against the fixture server at `target` (at most 60 s) and
/// asserts every check in its report passed, among them each of [`FIXTURE_CHECKS`].
pub(crate) fn drive_fixture(sdk: Sdk, target: Target<'_>) {
    let script = match sdk {
        Sdk::TypeScript => "ts_client.mjs",
        Sdk::Python => "py_client.py",
    };
    let report = drive(sdk, script, target);
    let names: Vec<&str> = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    for name in FIXTURE_CHECKS {
        assert!(names.contains(name), "the {sdk:?} client skipped {name:?}: {report:#}");
    }
}

/// Runs `script` (a file of tests/peers written for `sdk`) against `target` (at most 60 s),
/// asserts every check in its report passed and that it made at least six, and returns the
/// report.
pub(crate) fn drive(sdk: Sdk, script: &str, target: Target<'_>) -> serde_json::Value {
    let peers = workspace().join("tests/peers");
    let (program, installed) = match sdk {
        Sdk::TypeScript => (
            PathBuf::from("node"),
            peers.join("node_modules/@modelcontextprotocol/sdk/package.json"),
        ),
        Sdk::Python => {
            let python = peers.join(".venv/bin/python");
            (python.clone(), python)
        }
    };
    let script = peers.join(script);
    assert!(installed.exists(), "{} is missing: run scripts/install-peers", installed.display());
    let mut command = Command::new(&program);
    command.arg(&script).args(target.args()).current_dir(workspace());
    let out = run_bounded(&mut command, Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("the {sdk:?} client ({}): {e}", program.display()));
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
    report
}

/// Runs `command` with piped stdout and stderr, draining both on their own threads while it
/// runs, so a child that writes more than a pipe buffer (64 KiB on Linux) before exiting cannot
/// block on a full pipe while we wait for it to exit. Kills the child and returns an error
/// naming what it printed if it runs past `limit`.
pub(crate) fn run_bounded(command: &mut Command, limit: Duration) -> Result<Output, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("does not start: {e}"))?;
    let stdout = drain(child.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.stderr.take().expect("stderr is piped"));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("cannot be waited for: {e}"))? {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The child has exited (or been killed), so its pipes close and the readers finish, unless
    // a grandchild (a server the client spawned) still holds them: wait a bounded while, then
    // mark the pipe as held open rather than hang.
    let grace = Duration::from_secs(10);
    let stdout = stdout.recv_timeout(grace).unwrap_or_else(|_| b"<pipe held open>".to_vec());
    let stderr = stderr.recv_timeout(grace).unwrap_or_else(|_| b"<pipe held open>".to_vec());
    match status {
        Some(status) => Ok(Output { status, stdout, stderr }),
        None => Err(format!(
            "ran for over {limit:?}; stdout:\n{}\nstderr:\n{}",
            tail(&stdout),
            tail(&stderr)
        )),
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    rx
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let start = text.len().saturating_sub(4096);
    let start = (start..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
    text[start..].to_owned()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace")
        .to_owned()
}
