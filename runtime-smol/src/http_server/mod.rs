//! MCP over HTTP, server side: smol's TCP listener, one task per connection moving HTTP/1.1
//! bytes through zest-core's connection machine, and one [`Router`] (sessions, Streamable
//! HTTP, legacy HTTP+SSE, `/health`) that every connection feeds. The same names and
//! meanings as zest-tokio's (docs/runtime-contract.md).

mod conn;
mod hub;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use smol::channel::{self, Receiver, Sender};
use smol::future::{self, FutureExt as _};
use smol::net::{AsyncToSocketAddrs, TcpListener};
use smol::{Task, Timer};
use zest_core::http::server::Router;
use zest_core::http1;
use zest_core::runtime::accept_pause;
pub use zest_core::runtime::http_server::ServerStats;
use zest_core::runtime::http_server::{StreamIds, LISTEN_BACKLOG};
use zest_core::server::{ListKind, ServerConfig};

pub(crate) use hub::Hub;
pub use hub::SmolHub;

use crate::server::announcing;
use crate::server::Registry;
use crate::server::{http_handle, ServerHandle};

pub use zest_core::runtime::DEFAULT_SHUTDOWN_GRACE;

pub use zest_net::{router_config, HttpConfig};

/// Serves MCP over HTTP on `addr` (`"127.0.0.1:8080"`; port 0 picks a free one) with every
/// [`HttpConfig`] default: Streamable HTTP at `/mcp`, legacy HTTP+SSE at `/sse` and
/// `/messages`, `GET /health`. The listener lets [`LISTEN_BACKLOG`] connections wait to be
/// accepted (std's 128 drops bursts). Returns once the listener is bound; the server runs in tasks
/// on smol's global executor (so under any executor) until [`HttpServer::shutdown`].
pub async fn serve_http(
    addr: impl AsyncToSocketAddrs,
    config: ServerConfig,
    registry: Registry,
) -> io::Result<HttpServer> {
    serve_http_with(addr, config, HttpConfig::new(), registry).await
}

/// [`serve_http`] with explicit HTTP settings.
pub async fn serve_http_with(
    addr: impl AsyncToSocketAddrs,
    config: ServerConfig,
    http: HttpConfig,
    registry: Registry,
) -> io::Result<HttpServer> {
    let listener = TcpListener::bind(addr).await?;
    rustix::net::listen(&listener, LISTEN_BACKLOG)?;
    Ok(HttpServer::start(listener, config, http, registry))
}

/// A running HTTP server. [`shutdown`](Self::shutdown) stops it and waits until it has
/// stopped; dropping it starts the same graceful shutdown without waiting. To serve until
/// something else stops the process, await [`stopped`](Self::stopped).
pub struct HttpServer {
    local_addr: SocketAddr,
    hub: Arc<Hub>,
    /// Closed to ask the server to stop; never carries a message.
    stop: Sender<()>,
    /// Closes once the server has stopped.
    done: Receiver<()>,
}

impl HttpServer {
    /// Serves on an already bound listener (its backlog is left as it is).
    pub fn start(
        listener: TcpListener,
        config: ServerConfig,
        http: HttpConfig,
        registry: Registry,
    ) -> Self {
        let local_addr = listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([0; 4], 0)));
        let connection = http.connection();
        let hub = Hub::new(
            Router::new(zest_net::with_request_state(announcing(config)), http.router, registry),
            SmolHub::new(),
        );
        let (stop, stop_rx) = channel::bounded(1);
        let (done_tx, done) = channel::bounded(1);
        let grace = http.shutdown_grace;
        let task_hub = hub.clone();
        smol::spawn(async move {
            run(listener, task_hub, connection, stop_rx, grace).await;
            drop(done_tx);
        })
        .detach();
        Self { local_addr, hub, stop, done }
    }

    /// Where the server listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The MCP endpoint's URL, `http://<addr>/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.local_addr)
    }

    /// Changes the registry every session shares, and tells each session's client that the
    /// lists named in `changed` changed (`notifications/*/list_changed`, on its GET stream).
    pub fn change_registry(&self, changed: &[ListKind], change: impl FnOnce(&mut Registry)) {
        self.hub.change_registry(changed, change);
    }

    /// The handle on this server, for every session it holds (clone it anywhere): change
    /// the registry, report resource updates, log. Sessions declare `listChanged` and
    /// resource `subscribe`, since this handle can always be had.
    pub fn handle(&self) -> ServerHandle {
        http_handle(&self.hub)
    }

    /// Ends every session now: their streams close and their ids get 404 from now on (a
    /// client then starts a new session).
    pub fn close_sessions(&self) {
        self.hub.close_sessions();
    }

    /// How many sessions the server holds now.
    pub fn session_count(&self) -> usize {
        self.hub.session_count()
    }

    /// What the server holds now (sessions, exchanges, events kept for resumption, running
    /// handlers): each count returns to its baseline once what it counts is gone.
    pub fn stats(&self) -> ServerStats {
        self.hub.stats()
    }

    /// Stops gracefully: stops accepting, lets running handlers finish (up to the grace
    /// period), ends every session (its streams close), lets connections write what is left
    /// (up to the grace period again), then returns.
    pub async fn shutdown(self) {
        self.stop.close();
        self.stopped().await;
    }

    /// Resolves once the server has stopped.
    pub async fn stopped(&self) {
        // The channel never carries a message: this returns once the server task dropped
        // its sender.
        let _ = self.done.recv().await;
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.close();
    }
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer").field("local_addr", &self.local_addr).finish()
    }
}

/// Resolves once `stop` is closed.
pub(super) async fn stopping(stop: &Receiver<()>) {
    // Nothing is ever sent: `recv` returns only when the channel closes.
    while stop.recv().await.is_ok() {}
}

/// Accepts until told to stop, then shuts down as [`HttpServer::shutdown`] says.
async fn run(
    listener: TcpListener,
    hub: Arc<Hub>,
    config: http1::Config,
    stop: Receiver<()>,
    grace: Duration,
) {
    let ids = Arc::new(StreamIds::new());
    let timer = smol::spawn(timer(hub.clone()));
    let (finished_tx, finished) = channel::unbounded::<u64>();
    let mut conns: std::collections::HashMap<u64, Task<()>> = std::collections::HashMap::new();
    let mut next = 0u64;
    loop {
        enum Wake {
            Accepted(io::Result<smol::net::TcpStream>),
            Finished(u64),
            Stop,
        }
        let wake = async { Wake::Accepted(listener.accept().await.map(|(s, _)| s)) }
            .or(async {
                match finished.recv().await {
                    Ok(n) => Wake::Finished(n),
                    Err(_) => future::pending().await,
                }
            })
            .or(async {
                stopping(&stop).await;
                Wake::Stop
            })
            .await;
        match wake {
            // Out of descriptors: a pause (the backlog keeps the listener readable).
            Wake::Accepted(Err(e)) => {
                let Some(pause) = accept_pause(&e) else { continue };
                let paused = async {
                    Timer::after(pause).await;
                    false
                };
                let stopped = async {
                    stopping(&stop).await;
                    true
                };
                if paused.or(stopped).await {
                    break;
                }
            }
            Wake::Accepted(Ok(socket)) => {
                let (n, done) = (next, finished_tx.clone());
                next += 1;
                let serve =
                    conn::serve(hub.clone(), socket, config.clone(), ids.clone(), stop.clone());
                let task = smol::spawn(async move {
                    serve.await;
                    let _ = done.try_send(n);
                });
                conns.insert(n, task);
            }
            Wake::Finished(n) => drop(conns.remove(&n)),
            Wake::Stop => break,
        }
    }
    drop(listener);
    let deadline = Instant::now() + grace;
    while hub.running() > 0 {
        let idle = async {
            hub.host().idle().await;
            true
        };
        if !idle
            .or(async {
                Timer::at(deadline).await;
                false
            })
            .await
        {
            break;
        }
    }
    hub.close_sessions();
    let deadline = Instant::now() + grace;
    while !conns.is_empty() {
        let n = async { finished.recv().await.ok() }
            .or(async {
                Timer::at(deadline).await;
                None
            })
            .await;
        match n {
            Some(n) => {
                conns.remove(&n);
            }
            // Past the grace period: dropping the tasks cuts their connections.
            None => break,
        }
    }
    drop(conns);
    drop(timer);
}

/// Sleeps until the router's next deadline and fires it, for as long as the server runs.
async fn timer(hub: Arc<Hub>) {
    let mut next = hub.tick();
    loop {
        let wait = async {
            match next {
                Some(at) => {
                    Timer::at(at).await;
                }
                None => future::pending::<()>().await,
            }
        };
        wait.or(hub.host().rearmed()).await;
        next = hub.tick();
    }
}
