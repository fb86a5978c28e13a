//! `run_command`, registered only with `--allow-exec`: a program run without a shell, in a
//! directory inside the workspace, killed at its timeout, its output capped.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde::Deserialize;
use zest_blocking::{State, ToolError};

use super::workspace::Workspace;

/// The most bytes kept of each of stdout and stderr.
pub(crate) const MAX_OUTPUT: usize = 64 * 1024;
/// The default and the largest timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct RunCommand {
    /// The program to run (found on PATH); no shell is involved.
    program: String,
    /// Its arguments.
    #[serde(default)]
    args: Vec<String>,
    /// The working directory, relative to the workspace root. Default: the root.
    #[serde(default)]
    cwd: Option<String>,
    /// Milliseconds before the program is killed. Default 10,000, at most 120,000.
    #[serde(default)]
    timeout_ms: Option<u64>,
}

/// Runs the program and answers its exit status, stdout and stderr (each capped at
/// [`MAX_OUTPUT`] bytes, saying how much was cut). A non-zero exit is an error result.
pub(crate) fn run_command(args: RunCommand, ws: State<Workspace>) -> Result<String, ToolError> {
    let cwd = ws.existing(args.cwd.as_deref().unwrap_or("."))?;
    let timeout = args.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis).min(MAX_TIMEOUT);
    let mut child = Command::new(&args.program)
        .args(&args.args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ToolError::new(format!("{}: {e}", args.program)))?;
    let stdout = capture(child.stdout.take());
    let stderr = capture(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(ToolError::new(format!("{}: {e}", args.program))),
        }
    };
    // A grandchild may hold a pipe open past the kill: what came by then is what is told.
    let collect =
        |rx: mpsc::Receiver<String>| rx.recv_timeout(Duration::from_secs(1)).unwrap_or_default();
    let (stdout, stderr) = (collect(stdout), collect(stderr));
    let report = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    match status {
        None => Err(ToolError::new(format!("killed after {} ms\n{report}", timeout.as_millis()))),
        Some(s) if s.success() => Ok(format!("exit status 0\n{report}")),
        Some(s) => Err(ToolError::new(format!("{s}\n{report}"))),
    }
}

/// Reads a pipe to its end on a thread of its own, keeping the first [`MAX_OUTPUT`] bytes.
fn capture(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let Some(mut pipe) = pipe else { return };
        let (mut kept, mut total, mut buf) = (Vec::new(), 0usize, [0u8; 8192]);
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            total += n;
            let room = MAX_OUTPUT.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
        }
        let mut text = String::from_utf8_lossy(&kept).into_owned();
        if total > kept.len() {
            text.push_str(&format!("\n[truncated: {} more bytes]", total - kept.len()));
        }
        let _ = tx.send(text);
    });
    rx
}
