//! The fixture server every runtime's tests drive (docs/runtime-contract.md), on tokio's
//! current-thread runtime.
//!
//! Tools `echo`, `add`, `long_running`, `sample`, `fail`, `crash`; resource `zest://readme`;
//! template `zest://items/{id}`; prompt `greet`. Flags: `--banner` (two non-JSON lines on stdout
//! first), `--giant-line` (one 10 MiB line of `x` first), `--linger` (stay alive after stdin
//! ends). Logs go to stderr only.

use std::io::Write;
use std::time::Duration;

use zest_tokio::core::server::ServerConfig;
use zest_tokio::serve_stdio;

#[path = "support/fixture.rs"]
mod fixture;

use fixture::{log, registry};

fn main() {
    let flags: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| flags.iter().any(|f| f == flag);
    {
        let mut out = std::io::stdout().lock();
        if has("--banner") {
            // Non-JSON noise before the protocol starts, as some real servers print.
            let _ = out.write_all(b"zest fixture server starting\nnot json either\n");
        }
        if has("--giant-line") {
            let mut line = vec![b'x'; 10 * 1024 * 1024];
            line.push(b'\n');
            let _ = out.write_all(&line);
        }
        let _ = out.flush();
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime can always be built");
    let reason = runtime.block_on(serve_stdio(config(), registry()));
    log(&format!("session over: {reason}"));
    if has("--linger") {
        log("lingering after stdin closed");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

fn config() -> ServerConfig {
    let mut config = ServerConfig::new("tokio_stdio_server", env!("CARGO_PKG_VERSION"));
    config.instructions = Some("The zest fixture server (tokio).".into());
    config
}
