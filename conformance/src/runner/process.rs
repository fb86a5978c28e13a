//! Processes the runner starts: the fixture server (until `/health` answers) and one suite
//! run per scenario, each bounded in time.

use std::fs;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const POLL: Duration = Duration::from_millis(50);

/// A free port on 127.0.0.1 (the OS picks it; it is released before the fixture binds it).
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()?.port())
}

/// A started fixture server, killed when dropped.
#[derive(Debug)]
pub struct Fixture {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `command` (the fixture, told to serve on `port`), stderr to `log`, and waits until
/// `GET /health` answers 200, for at most `within`.
pub fn start_fixture(
    mut command: Command,
    port: u16,
    log: &Path,
    within: Duration,
) -> Result<Fixture, String> {
    let stderr = fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot start the fixture: {e}"))?;
    let mut fixture = Fixture { child, port };
    let deadline = Instant::now() + within;
    loop {
        if let Ok(Some(status)) = fixture.child.try_wait() {
            let said = fs::read_to_string(log).unwrap_or_default();
            return Err(format!("the fixture exited ({status}) before serving: {}", said.trim()));
        }
        if health(port) {
            return Ok(fixture);
        }
        if Instant::now() >= deadline {
            return Err(format!("GET /health on port {port} did not answer 200 within {within:?}"));
        }
        sleep(POLL);
    }
}

/// True when `GET http://127.0.0.1:port/health` answers 200.
fn health(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect((Ipv4Addr::LOCALHOST, port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request =
        format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

/// Runs `command` with stdout and stderr to `log`, killing it after `limit`; `None` when it
/// was killed or could not start.
pub fn run_bounded(mut command: Command, log: &Path, limit: Duration) -> Option<ExitStatus> {
    let out = fs::File::create(log).ok()?;
    let err = out.try_clone().ok()?;
    let mut child = command.stdin(Stdio::null()).stdout(out).stderr(err).spawn().ok()?;
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => sleep(POLL),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// The one `checks.json` under `dir` (the suite nests it in a directory named after the
/// scenario and a timestamp, and `auth/…` scenarios one level deeper).
pub fn find_checks(dir: &Path) -> Result<PathBuf, String> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.file_name().is_some_and(|n| n == "checks.json") {
                found.push(path);
            }
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(format!("no checks.json under {}", dir.display())),
        n => Err(format!("{n} checks.json files under {}", dir.display())),
    }
}
