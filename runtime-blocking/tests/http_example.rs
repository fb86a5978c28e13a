//! The `blocking_http_server` example as a process of its own: a half-sent request cannot
//! hold its graceful shutdown. (Every client runtime against every server runtime over HTTP
//! is conformance/tests/http_matrix.rs.)

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

/// The `blocking_http_server` example, which `cargo test` builds before the tests run.
fn http_server() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's own path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps");
    let path = profile_dir.join("examples/blocking_http_server");
    assert!(path.exists(), "{} is missing: run `cargo test -p zest-blocking`", path.display());
    path
}

/// A fixture server process; its stdin closing (on drop) shuts it down gracefully.
struct Served {
    child: Child,
    url: String,
}

impl Served {
    fn start() -> Self {
        let mut child = Command::new(http_server())
            .args(["--port", "0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the fixture server starts");
        let stdout = child.stdout.take().expect("piped");
        let mut url = String::new();
        BufReader::new(stdout).read_line(&mut url).expect("the URL line");
        let url = url.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "first line: {url:?}");
        Self { child, url }
    }

    /// Closes its stdin and waits (at most 30 s, a hang guard) for it to exit; true if it
    /// exited successfully in time.
    fn stop(mut self) -> bool {
        drop(self.child.stdin.take());
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.success(),
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(_) => return false,
            }
        }
        false
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A connection stalled mid-head does not keep the server from shutting down.
#[test]
fn a_half_sent_request_cannot_hold_shutdown() {
    let served = Served::start();
    let addr = served.url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let mut socket = std::net::TcpStream::connect(&addr).unwrap();
    // Half a request head: the connection is mid-exchange, never finished.
    socket.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n").unwrap();
    thread::sleep(Duration::from_millis(20));
    assert!(served.stop(), "shutdown returned despite the stalled connection");
}
