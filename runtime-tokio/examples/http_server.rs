//! The fixture server (docs/runtime-contract.md) over HTTP on tokio: Streamable HTTP at
//! `/mcp`, legacy HTTP+SSE at `/sse`, `GET /health`, bound to 127.0.0.1.
//!
//! `tokio_http_server [--port P]` (default 8080; 0 picks a free port). The first line on
//! stdout is the MCP endpoint's URL; logs go to stderr. Ctrl-C (or a closed stdin) shuts it
//! down gracefully.

use tokio::io::AsyncReadExt;
use zest_tokio::core::server::ServerConfig;
use zest_tokio::serve_http;

#[path = "support/fixture.rs"]
mod fixture;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port = match args.iter().position(|a| a == "--port") {
        Some(i) => args.get(i + 1).and_then(|p| p.parse().ok()).unwrap_or(8080),
        None => 8080,
    };
    let mut config = ServerConfig::new("tokio_http_server", env!("CARGO_PKG_VERSION"));
    config.instructions = Some("The zest fixture server (tokio, HTTP).".into());
    let server = serve_http(("127.0.0.1", port), config, fixture::registry()).await?;
    println!("{}", server.url());
    fixture::log(&format!("listening on {}", server.url()));
    let mut stdin = tokio::io::stdin();
    let mut buf = [0u8; 64];
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        // A parent that closes our stdin asks us to stop, too.
        _ = async { while stdin.read(&mut buf).await.is_ok_and(|n| n > 0) {} } => {}
    }
    fixture::log("shutting down");
    server.shutdown().await;
    Ok(())
}
