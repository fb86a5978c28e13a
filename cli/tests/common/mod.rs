//! What the `zest` binary's tests share: running it, a scratch workspace, a `zest serve
//! --http` that is killed when dropped, and the SDK peer clients of tests/peers.
#![allow(dead_code, unreachable_pub)] // each test binary uses a part

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::Value;

pub const ZEST: &str = env!("CARGO_BIN_EXE_zest");
/// The longest one command may take before the test fails instead of hanging.
pub const LIMIT: Duration = Duration::from_secs(60);

/// What one run of the binary did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }

    pub fn ok(self) -> Self {
        assert_eq!(self.code, 0, "stdout: {}\nstderr: {}", self.stdout, self.stderr);
        self
    }
}

pub fn zest(args: &[&str]) -> Run {
    let mut command = Command::new(ZEST);
    command.args(args).stdin(Stdio::null());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(command.output());
    });
    let out = rx.recv_timeout(LIMIT).unwrap_or_else(|_| panic!("zest {args:?} took over 60 s"));
    let out = out.expect("zest runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A scratch workspace: `notes.txt` (three lines), `src/lib.rs`, `twice.txt` (one phrase
/// twice), `ignored.txt` (which `.gitignore` names), and `outside.txt` beside the workspace with a link to it inside.
pub fn workspace(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zest-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn answer() -> u32 {\n    42\n}\n").unwrap();
    std::fs::write(root.join("twice.txt"), "same same\n").unwrap();
    std::fs::write(root.join(".gitignore"), "ignored.txt\n").unwrap();
    std::fs::write(root.join("ignored.txt"), "beta\n").unwrap();
    std::fs::write(dir.join("outside.txt"), "secret\n").unwrap();
    std::os::unix::fs::symlink(dir.join("outside.txt"), root.join("escape.txt")).unwrap();
    root
}

/// `zest ARGS -- zest serve ROOT SERVE_FLAGS`.
pub fn over_stdio(root: &Path, serve_flags: &[&str], args: &[&str]) -> Run {
    let root = root.to_str().unwrap();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--", ZEST, "serve", root]);
    all.extend(serve_flags);
    zest(&all)
}

pub fn text(run: &Run) -> &str {
    run.stdout.trim_end()
}

/// `zest serve ROOT --http 127.0.0.1:0`, killed when dropped.
pub struct HttpServe {
    pub child: Child,
    pub url: String,
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn serve_http(root: &Path) -> HttpServe {
    serve_http_with(root, &[])
}

pub fn serve_http_with(root: &Path, flags: &[&str]) -> HttpServe {
    let mut args = vec!["serve", root.to_str().unwrap(), "--http", "127.0.0.1:0"];
    args.extend(flags);
    listening(&args)
}

/// `zest ARGS`, which says on stderr where it listens, as its last word.
pub fn listening(args: &[&str]) -> HttpServe {
    let mut child = Command::new(ZEST)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zest serve starts");
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx.recv_timeout(LIMIT).expect("zest says where it listens");
    let url = line.rsplit(' ').next().unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{line}");
    HttpServe { child, url }
}

/// The TypeScript SDK's client (tests/peers/ts_workspace.mjs) against `zest serve`.
pub fn typescript_client(args: &[&str]) {
    sdk_client("node", "ts_workspace.mjs", args);
}

/// The Python SDK's client (tests/peers/py_workspace.py) against `zest serve`.
pub fn python_client(args: &[&str]) {
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers");
    let python = peers.join(".venv/bin/python");
    assert!(python.exists(), "{} is missing: run scripts/install-peers", python.display());
    sdk_client(python.to_str().unwrap(), "py_workspace.py", args);
}

/// Runs `program tests/peers/SCRIPT ARGS`, which must pass every check it makes.
pub fn sdk_client(program: &str, script: &str, args: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers").join(script);
    let mut command = Command::new(program);
    command.arg(script).args(args);
    succeeds_within_limit(command, "the SDK client");
}

/// Runs a peer program (stdin empty), which must exit 0 within [`LIMIT`]; its stdout.
pub fn succeeds_within_limit(mut command: Command, what: &str) -> String {
    command.stdin(Stdio::null());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(command.output());
    });
    let out = rx.recv_timeout(LIMIT).unwrap_or_else(|_| panic!("{what} ran over 60 s"));
    let out =
        out.unwrap_or_else(|e| panic!("{what} does not run ({e}): run scripts/install-peers"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}
