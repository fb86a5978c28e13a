//! The fixture server (docs/runtime-contract.md) over HTTP on blocking threads: Streamable
//! HTTP at `/mcp`, legacy HTTP+SSE at `/sse`, `GET /health`, bound to 127.0.0.1.
//!
//! `blocking_http_server [--port P]` (default 8080; 0 picks a free port). The first line on
//! stdout is the MCP endpoint's URL; logs go to stderr. A closed stdin (or Ctrl-C, which
//! ends the process) stops it; a closed stdin shuts it down gracefully.

use std::io::{Read, Write};

use zest_blocking::{serve_http, ServerConfig};

#[path = "support/fixture.rs"]
mod fixture;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port = match args.iter().position(|a| a == "--port") {
        Some(i) => args.get(i + 1).and_then(|p| p.parse().ok()).unwrap_or(8080),
        None => 8080,
    };
    let mut config = ServerConfig::new("blocking_http_server", env!("CARGO_PKG_VERSION"));
    config.instructions = Some("The zest fixture server (blocking, HTTP).".into());
    let server = serve_http(("127.0.0.1", port), config, fixture::registry())?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", server.url())?;
    stdout.flush()?;
    eprintln!("fixture: listening on {}", server.url());
    // A parent that closes our stdin asks us to stop.
    let mut stdin = std::io::stdin();
    let mut buf = [0u8; 64];
    while stdin.read(&mut buf).is_ok_and(|n| n > 0) {}
    eprintln!("fixture: shutting down");
    server.shutdown();
    Ok(())
}
