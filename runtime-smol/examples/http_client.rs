//! An MCP client over HTTP on smol: connects to a URL (Streamable HTTP, or legacy HTTP+SSE
//! by detection), lists the tools and calls `echo` and `add` when the server has them.
//!
//! `smol_http_client [URL] [--bearer TOKEN] [--legacy-sse]`. Without a URL it serves the
//! fixture on a free loopback port in this process and tours that.

use serde_json::json;
use zest_smol::{serve_http, Client, ClientApi, ClientOptions, HttpEndpoint, ServerConfig};

#[path = "support/fixture.rs"]
mod fixture;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    smol::block_on(tour())
}

async fn tour() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value_of = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1));
    let url = args.first().filter(|a| !a.starts_with("--")).cloned();
    let local = match url {
        Some(_) => None,
        None => {
            let config = ServerConfig::new("smol_http_server", env!("CARGO_PKG_VERSION"));
            Some(serve_http("127.0.0.1:0", config, fixture::registry()).await?)
        }
    };
    let url = url.unwrap_or_else(|| local.as_ref().map(|s| s.url()).unwrap_or_default());
    let mut endpoint = HttpEndpoint::new(&url);
    if let Some(token) = value_of("--bearer") {
        endpoint = endpoint.bearer(token);
    }
    if args.iter().any(|a| a == "--legacy-sse") {
        endpoint = endpoint.legacy_sse();
    }
    let client =
        Client::connect_to(endpoint, ClientOptions::new("smol_http_client", "0.1")).await?;
    let n = client.negotiated();
    println!(
        "connected to {url}: {} {} ({})",
        n.server_info.name,
        n.server_info.version,
        n.protocol_version.as_str()
    );
    let tools = client.list_all_tools().await?;
    for tool in &tools {
        println!("tool {}: {}", tool.name, tool.description.as_deref().unwrap_or(""));
    }
    if tools.iter().any(|t| t.name == "echo") {
        let echoed = client.call_tool("echo", json!({"text": "hello over http"})).await?;
        println!("echo → {:?}", echoed.content.first().and_then(|c| c.as_text()));
    }
    if tools.iter().any(|t| t.name == "add") {
        let sum = client.call_tool("add", json!({"a": 2, "b": 40})).await?;
        println!("add → {:?}", sum.content.first().and_then(|c| c.as_text()));
    }
    client.close().await?;
    if let Some(server) = local {
        server.shutdown().await;
    }
    Ok(())
}
