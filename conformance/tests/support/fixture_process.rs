//! The everything fixture as a process of its own, serving HTTP on a port it picks.
#![allow(dead_code, unreachable_pub)] // a module of each test binary that uses it

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::thread;

/// A fixture process, killed when dropped; `url` is its MCP endpoint.
pub struct FixtureProcess {
    child: Child,
    pub url: String,
}

impl FixtureProcess {
    /// `everything_server --runtime RUNTIME --port 0` with `extra` arguments; its URL read
    /// from what it prints once it listens.
    pub fn serve_http(runtime: &str, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_everything_server"))
            .args(["--runtime", runtime, "--port", "0"])
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .expect("the fixture starts");
        let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
        let mut said = Vec::new();
        let url = lines
            .by_ref()
            .take(20)
            .map_while(Result::ok)
            .inspect(|l| said.push(l.clone()))
            .find_map(|l| l.split_once("serving ").map(|(_, url)| url.trim().to_owned()));
        let Some(url) = url else {
            let status = child.try_wait();
            panic!("the fixture ({runtime}) never said where it serves: {said:?}, {status:?}");
        };
        // Keep draining its stderr so that it never blocks on a full pipe.
        thread::spawn(move || {
            for line in lines.take(10_000).map_while(Result::ok) {
                if line.contains("refused") {
                    eprintln!("{line}");
                }
            }
        });
        Self { child, url }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for FixtureProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
