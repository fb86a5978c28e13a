//! The fixture server (docs/runtime-contract.md) mounted at `/mcp` in an axum app, beside
//! the app's own routes, on 127.0.0.1. Needs the `tower` feature:
//!
//! `cargo run -p zest-tokio --features tower --example tokio_axum_server -- [--port P]`
//! (default 8080; 0 picks a free port). The first line on stdout is the MCP endpoint's URL;
//! `GET /` answers with a greeting. Ctrl-C (or a closed stdin) shuts it down gracefully:
//! the MCP sessions end first, so their open streams close and axum can drain.

use std::future::IntoFuture;

use axum::routing::get;
use tokio::io::AsyncReadExt;
use zest_tokio::{McpService, ServerConfig};

#[path = "support/fixture.rs"]
mod fixture;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port = match args.iter().position(|a| a == "--port") {
        Some(i) => args.get(i + 1).and_then(|p| p.parse().ok()).unwrap_or(8080),
        None => 8080,
    };
    let mut config = ServerConfig::new("tokio_axum_server", env!("CARGO_PKG_VERSION"));
    config.instructions = Some("The zest fixture server (tokio, HTTP, in axum).".into());
    let mcp = McpService::new(config, fixture::registry());
    let app = axum::Router::new()
        // The request path must be the router's (`/mcp`): route_service keeps it whole.
        .route_service("/mcp", mcp.clone())
        .route("/", get(|| async { "an axum app that also speaks MCP at /mcp\n" }));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    println!("{url}");
    fixture::log(&format!("listening on {url}"));
    let stop = async move {
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 64];
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            // A parent that closes our stdin asks us to stop, too.
            _ = async { while stdin.read(&mut buf).await.is_ok_and(|n| n > 0) {} } => {}
        }
        fixture::log("shutting down");
        // Handlers finish, sessions end, their streams close; then axum drains.
        mcp.shutdown().await;
    };
    axum::serve(listener, app).with_graceful_shutdown(stop).into_future().await
}
