//! The echo servers, each with one tool, `echo`, that returns its `text` argument as one text
//! block: over stdio (serving this process's stdin and stdout until stdin ends) or over
//! Streamable HTTP on 127.0.0.1 (printing `listening <addr>` on stdout, serving until stdin
//! ends). The floor serves the same exchange with no MCP.

use std::io::{BufRead, Write};
use std::net::SocketAddr;

use serde::Deserialize;

use crate::{tokio_runtime, Sdk, Transport};

/// The `echo` tool's arguments, the same type for every server.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct EchoArgs {
    /// The text to return.
    text: String,
}

const DESCRIPTION: &str = "Returns the text it is given";

/// Serves `sdk`'s echo server over `transport`; returns (or exits) when stdin ends.
pub(crate) fn serve(sdk: Sdk, transport: Transport) {
    match (sdk, transport) {
        (Sdk::Floor, Transport::Stdio) => crate::floor::stdio_server(),
        (Sdk::Floor, Transport::Http) => {
            announce(crate::floor::http_server());
            park_forever();
        }
        (Sdk::Rmcp, Transport::Stdio) => tokio_runtime().block_on(rmcp_echo::serve_stdio()),
        (Sdk::Rmcp, Transport::Http) => tokio_runtime().block_on(async {
            announce(rmcp_echo::serve_http().await);
            std::future::pending::<()>().await;
        }),
        (Sdk::ZestTokio, _) => {
            use zest_tokio::{serve_http, serve_stdio, Registry, ServerConfig};
            let registry =
                Registry::new().tool("echo", DESCRIPTION, |EchoArgs { text }| async move { text });
            let config = ServerConfig::new("zest-tokio-echo", "0.0.0");
            tokio_runtime().block_on(async {
                if transport == Transport::Stdio {
                    serve_stdio(config, registry).await;
                    return;
                }
                let server = serve_http("127.0.0.1:0", config, registry).await.expect("bind");
                announce(server.local_addr());
                std::future::pending::<()>().await;
            });
        }
        (Sdk::ZestSmol, _) => {
            use zest_smol::{serve_http, serve_stdio, Registry, ServerConfig};
            let registry =
                Registry::new().tool("echo", DESCRIPTION, |EchoArgs { text }| async move { text });
            let config = ServerConfig::new("zest-smol-echo", "0.0.0");
            smol::block_on(async {
                if transport == Transport::Stdio {
                    serve_stdio(config, registry).await;
                    return;
                }
                let server = serve_http("127.0.0.1:0", config, registry).await.expect("bind");
                announce(server.local_addr());
                std::future::pending::<()>().await;
            });
        }
        (Sdk::ZestBlocking, _) => {
            use zest_blocking::{serve_http, serve_stdio, Registry, ServerConfig};
            let registry = Registry::new().tool("echo", DESCRIPTION, |EchoArgs { text }| text);
            let config = ServerConfig::new("zest-blocking-echo", "0.0.0");
            if transport == Transport::Stdio {
                serve_stdio(config, registry);
                return;
            }
            let server = serve_http("127.0.0.1:0", config, registry).expect("bind");
            announce(server.local_addr());
            park_forever();
        }
    }
}

/// Tells the client where the HTTP server listens, then ends this process once stdin ends
/// (a thread of its own, so any runtime may keep serving on this one).
fn announce(addr: SocketAddr) {
    println!("listening {addr}");
    std::io::stdout().flush().expect("stdout");
    std::thread::spawn(|| {
        wait_for_stdin_end();
        std::process::exit(0);
    });
}

fn wait_for_stdin_end() {
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
    }
}

/// Lets the server's own threads serve until [`announce`]'s thread ends the process.
fn park_forever() -> ! {
    loop {
        std::thread::park();
    }
}

/// rmcp's server, written the way its documentation shows: a `#[tool_router]` impl with a
/// typed `Parameters` argument, and `#[tool_handler]` on the `ServerHandler` with the router
/// built once and kept in the server (without `router = …` the macro rebuilds it per call);
/// over HTTP, its `StreamableHttpService` in axum with the default settings.
mod rmcp_echo {
    use std::net::SocketAddr;

    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::handler::server::wrapper::Parameters;
    use rmcp::model::{ServerCapabilities, ServerConfig};
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};

    use super::EchoArgs;

    #[derive(Clone)]
    struct Echo {
        tool_router: ToolRouter<Self>,
    }

    #[tool_router]
    impl Echo {
        fn new() -> Self {
            Self { tool_router: Self::tool_router() }
        }

        #[tool(description = "Returns the text it is given")]
        async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
            args.text
        }
    }

    #[tool_handler(router = self.tool_router)]
    impl ServerHandler for Echo {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }
    }

    pub(crate) async fn serve_stdio() {
        let running = Echo::new().serve(rmcp::transport::stdio()).await.expect("rmcp serves");
        let _ = running.waiting().await;
    }

    /// Serves at `/mcp` on a free loopback port, in a task; its address.
    pub(crate) async fn serve_http() -> SocketAddr {
        let service = StreamableHttpService::new(
            || Ok(Echo::new()),
            LocalSessionManager::default().into(),
            StreamableHttpServerConfig::default(),
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, router).await.expect("axum serves") });
        addr
    }
}
