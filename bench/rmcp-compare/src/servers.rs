//! The four stdio echo servers: each has one tool, `echo`, that returns its `text` argument as
//! one text block, and serves this process's stdin and stdout until stdin ends.

use serde::Deserialize;

use crate::{tokio_runtime, Sdk};

/// The `echo` tool's arguments, the same type for every server.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct EchoArgs {
    /// The text to return.
    text: String,
}

const DESCRIPTION: &str = "Returns the text it is given";

/// Serves `sdk`'s echo server on stdio; returns when the client closes stdin.
pub(crate) fn serve(sdk: Sdk) {
    match sdk {
        Sdk::Rmcp => tokio_runtime().block_on(rmcp_echo::serve()),
        Sdk::ZestTokio => {
            let registry = zest_tokio::Registry::new().tool(
                "echo",
                DESCRIPTION,
                |EchoArgs { text }| async move { text },
            );
            let config = zest_tokio::ServerConfig::new("zest-tokio-echo", "0.0.0");
            tokio_runtime().block_on(zest_tokio::serve_stdio(config, registry));
        }
        Sdk::ZestSmol => {
            let registry = zest_smol::Registry::new().tool(
                "echo",
                DESCRIPTION,
                |EchoArgs { text }| async move { text },
            );
            let config = zest_smol::ServerConfig::new("zest-smol-echo", "0.0.0");
            smol::block_on(zest_smol::serve_stdio(config, registry));
        }
        Sdk::ZestBlocking => {
            let registry =
                zest_blocking::Registry::new().tool("echo", DESCRIPTION, |EchoArgs { text }| text);
            let config = zest_blocking::ServerConfig::new("zest-blocking-echo", "0.0.0");
            zest_blocking::serve_stdio(config, registry);
        }
    }
}

/// rmcp's server, written the way its documentation shows: a `#[tool_router]` impl with a
/// typed `Parameters` argument, and `#[tool_handler]` on the `ServerHandler` with the router
/// built once and kept in the server (without `router = …` the macro rebuilds it per call).
mod rmcp_echo {
    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::handler::server::wrapper::Parameters;
    use rmcp::model::{ServerCapabilities, ServerConfig};
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

    pub(crate) async fn serve() {
        let running = Echo::new().serve(rmcp::transport::stdio()).await.expect("rmcp serves");
        let _ = running.waiting().await;
    }
}
