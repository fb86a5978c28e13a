//! A server and a client joined in memory, for testing server code without a process: the
//! server's [`serve`](crate::serve) future on smol's global executor and the client's driver, joined by
//! two [`piper`] pipes, with the same framing as stdio.

use zest_core::error::CloseReason;
use zest_core::runtime::ConnectError;
use zest_core::server::ServerConfig;

use crate::client::Client;
use crate::command::ClientOptions;
use crate::server::Registry;
use crate::server::ServerHandle;
use crate::server::StdioServer;

/// How many bytes each direction buffers before a writer waits for its reader.
const PIPE_CAPACITY: usize = 64 * 1024;

/// The server half of an [`in_memory`] pair: a [`StdioServer`] over in-memory pipes, whose
/// session runs as a task on smol's global executor and ends when the client closes (or the
/// last [`Client`] clone is dropped). Dropping this handle lets the server run on.
#[derive(Debug)]
pub struct InMemoryServer(StdioServer);

impl InMemoryServer {
    /// The handle on the server: change its lists, report resource updates, log.
    pub fn handle(&self) -> ServerHandle {
        self.0.handle()
    }

    /// Waits for the server's session to end and returns why it ended (the client closing
    /// shows as the end of its input).
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
/// # use zest_smol::{ClientApi, Registry, ServerConfig};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Hello { name: String }
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::new()
///     .tool("hello", "Greets", |Hello { name }| async move { format!("Hello, {name}!") });
/// let (client, server) = zest_smol::in_memory(ServerConfig::new("demo", "1.0"), registry).await?;
/// let result = client.call_tool("hello", serde_json::json!({"name": "Ada"})).await?;
/// assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
/// client.close().await?;
/// server.stopped().await;
/// # Ok(()) }
/// ```
///
/// Both sides run on smol's global executor, so this works under any executor.
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
    let (server_reader, client_writer) = piper::pipe(PIPE_CAPACITY);
    let (client_reader, server_writer) = piper::pipe(PIPE_CAPACITY);
    let server = InMemoryServer(StdioServer::start(config, registry, server_reader, server_writer));
    let client = Client::over(client_reader, client_writer, options).await?;
    Ok((client, server))
}
