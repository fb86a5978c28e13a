//! A server and a client joined in memory, for testing server code without a process: the
//! server's [`serve`](crate::serve) loop and the client's driver, each over one end of a
//! [`tokio::io::duplex`] pair, with the same framing as stdio.

use zest_core::error::CloseReason;
use zest_core::runtime::ConnectError;
use zest_core::server::ServerConfig;

use crate::client::Client;
use crate::command::ClientOptions;
use crate::server::{Registry, ServerHandle, StdioServer};

/// How many bytes each direction buffers before a writer waits for its reader.
const PIPE_CAPACITY: usize = 64 * 1024;

/// The server half of an [`in_memory`] pair: a [`StdioServer`] over an in-memory pipe, whose
/// session runs in a task of its own and ends when the client closes (or the last
/// [`Client`] clone is dropped). Dropping this handle lets the server run on.
#[derive(Debug)]
pub struct InMemoryServer(StdioServer);

impl InMemoryServer {
    /// The handle on the server: change its lists, report resource updates, log.
    pub fn handle(&self) -> ServerHandle {
        self.0.handle()
    }

    /// Waits for the server's session to end and returns why it ended (the client closing
    /// shows as the end of its input). A panic in the server's loop is resumed here.
    pub async fn stopped(self) -> CloseReason {
        self.0.stopped().await
    }

    /// True once the server's session has ended.
    pub fn is_stopped(&self) -> bool {
        self.0.is_stopped()
    }
}

/// Serves `registry` in this process and connects a client to it, with no process and no
/// socket: returns once the handshake is done. The client is the same [`Client`] as over
/// stdio or HTTP (with [`pid`](Client::pid) 0); its [`close`](Client::close) ends the server
/// too. The client presents itself as `zest-in-memory` and answers no server requests; see
/// [`in_memory_with`] for options of your own (sampling, elicitation, roots handlers). The
/// server runs as a [`StdioServer`], so it declares `listChanged` and resource `subscribe`,
/// and [`InMemoryServer::handle`] changes its lists, reports resource updates and logs.
///
/// ```no_run
/// # use zest_tokio::{ClientApi, Registry, ServerConfig};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Hello { name: String }
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::new()
///     .tool("hello", "Greets", |Hello { name }| async move { format!("Hello, {name}!") });
/// let (client, server) = zest_tokio::in_memory(ServerConfig::new("demo", "1.0"), registry).await?;
/// let result = client.call_tool("hello", serde_json::json!({"name": "Ada"})).await?;
/// assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
/// client.close().await?;
/// server.stopped().await;
/// # Ok(()) }
/// ```
///
/// Must be called within a tokio runtime (either flavour) with time enabled.
pub async fn in_memory(
    config: ServerConfig,
    registry: Registry,
) -> Result<(Client, InMemoryServer), ConnectError> {
    let options = ClientOptions::new("zest-in-memory", env!("CARGO_PKG_VERSION"));
    in_memory_with(config, registry, options).await
}

/// [`in_memory`] with the client's own options and handlers.
pub async fn in_memory_with(
    config: ServerConfig,
    registry: Registry,
    options: ClientOptions,
) -> Result<(Client, InMemoryServer), ConnectError> {
    let (client_end, server_end) = tokio::io::duplex(PIPE_CAPACITY);
    let (server_reader, server_writer) = tokio::io::split(server_end);
    let server = InMemoryServer(StdioServer::start(config, registry, server_reader, server_writer));
    let (client_reader, client_writer) = tokio::io::split(client_end);
    let client = Client::over(client_reader, client_writer, options).await?;
    Ok((client, server))
}
