//! Records what a client writes to a stdio server, so a test can check a message was really
//! sent rather than infer it. The server is started as `sh -c 'tee -a LOG | exec BIN ARGS…'`:
//! every byte the client writes lands in LOG before the server reads it. Shared by the tests
//! through `#[path = "../../tests/support/wire.rs"] mod wire;`.
#![allow(dead_code, clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A file the client's stdout-to-server traffic is teed into; removed on drop.
pub(crate) struct WireLog {
    path: PathBuf,
}

impl WireLog {
    pub(crate) fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir()
            .join(format!("zest-wire-{tag}-{}-{nanos}.jsonl", std::process::id()));
        Self { path }
    }

    /// The program and arguments that run `bin args…` with the client's writes teed here.
    pub(crate) fn wrap(&self, bin: &Path, args: &[&str]) -> (&'static str, Vec<String>) {
        let mut argv = vec![
            "-c".to_owned(),
            r#"log="$1"; shift; tee -a "$log" | exec "$@""#.to_owned(),
            "sh".to_owned(),
            self.path.display().to_string(),
            bin.display().to_string(),
        ];
        argv.extend(args.iter().map(|a| (*a).to_owned()));
        ("sh", argv)
    }

    /// Every JSON message the client has written so far.
    pub(crate) fn messages(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.path).unwrap_or_default();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// The `notifications/cancelled` the client sent naming the id of its `tools/call` of
    /// `tool`, or what it did send instead. Looks once: async tests poll it with their own
    /// timer so the runtime keeps writing meanwhile.
    pub(crate) fn cancelled_call(&self, tool: &str) -> Result<Value, String> {
        let sent = self.messages();
        let call = sent
            .iter()
            .find(|m| m["method"] == "tools/call" && m["params"]["name"] == tool)
            .map(|m| m["id"].clone());
        let cancelled = call.as_ref().and_then(|id| {
            sent.iter().find(|m| {
                m["method"] == "notifications/cancelled" && m["params"]["requestId"] == *id
            })
        });
        cancelled.cloned().ok_or_else(|| {
            format!(
                "no notifications/cancelled for the {tool} call ({call:?}) on the wire; sent:\n{}",
                sent.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
            )
        })
    }

    /// Waits (up to 30 s, blocking the thread) for [`Self::cancelled_call`]; panics if not.
    pub(crate) fn expect_cancelled_call(&self, tool: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.cancelled_call(tool) {
                Ok(cancelled) => return cancelled,
                Err(e) if Instant::now() > deadline => panic!("{e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

impl Drop for WireLog {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
