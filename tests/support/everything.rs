//! The reference server `@modelcontextprotocol/server-everything` (pinned in tests/peers;
//! installed by scripts/install-peers) for tests that drive a zest client against it. Shared
//! through `#[path = "../../tests/support/everything.rs"] mod everything;`.
#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long node may take to start listening.
const START_LIMIT: Duration = Duration::from_secs(30);

/// The server's executable, or a panic saying how to install it.
pub(crate) fn bin() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/peers/node_modules/.bin/mcp-server-everything");
    assert!(bin.exists(), "{} is missing: run scripts/install-peers", bin.display());
    bin
}

/// server-everything listening on a free loopback port; killed and reaped when dropped.
pub(crate) struct Everything {
    child: Child,
    /// Where it listens, on 127.0.0.1.
    pub(crate) port: u16,
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Everything {
    /// Starts it over `transport` (`streamableHttp` or `sse`) and waits until it listens.
    pub(crate) fn start(transport: &str) -> Self {
        let port = {
            let probe = TcpListener::bind("127.0.0.1:0").expect("a free port");
            probe.local_addr().expect("its address").port()
        };
        let child = Command::new(bin())
            .arg(transport)
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("server-everything starts");
        // The guard kills and reaps the child on every way out of here.
        let server = Self { child, port };
        let start = Instant::now();
        while start.elapsed() < START_LIMIT {
            // A connect to a port nobody listens on can meet itself (the kernel may pick the
            // same port as its source): that is not node listening.
            if let Ok(probe) = TcpStream::connect(("127.0.0.1", port)) {
                if probe.local_addr().ok() != probe.peer_addr().ok() {
                    return server;
                }
            }
            thread::sleep(Duration::from_millis(50));
        }
        panic!("server-everything {transport} did not listen on {port} within 30 s");
    }
}
