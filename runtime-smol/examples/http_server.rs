//! The fixture server (docs/runtime-contract.md) over HTTP on smol: Streamable HTTP at
//! `/mcp`, legacy HTTP+SSE at `/sse`, `GET /health`, bound to 127.0.0.1.
//!
//! `smol_http_server [--port P]` (default 8080; 0 picks a free port). The first line on
//! stdout is the MCP endpoint's URL; logs go to stderr. A closed stdin (or Ctrl-C, which
//! ends the process at once) stops it; on stdin's end it shuts down gracefully.

use std::io::Write as _;

use smol::io::AsyncReadExt as _;
use zest_smol::{serve_http, ServerConfig};

#[path = "support/fixture.rs"]
mod fixture;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port = match args.iter().position(|a| a == "--port") {
        Some(i) => args.get(i + 1).and_then(|p| p.parse().ok()).unwrap_or(8080),
        None => 8080,
    };
    smol::block_on(async {
        let mut config = ServerConfig::new("smol_http_server", env!("CARGO_PKG_VERSION"));
        config.instructions = Some("The zest fixture server (smol, HTTP).".into());
        let server = serve_http(("127.0.0.1", port), config, fixture::registry()).await?;
        println!("{}", server.url());
        std::io::stdout().flush()?;
        eprintln!("smol_http_server: listening on {}", server.url());
        // A parent that closes our stdin asks us to stop.
        let mut stdin = smol::Unblock::new(std::io::stdin());
        let mut buf = [0u8; 64];
        while stdin.read(&mut buf).await.is_ok_and(|n| n > 0) {}
        eprintln!("smol_http_server: shutting down");
        server.shutdown().await;
        Ok(())
    })
}
