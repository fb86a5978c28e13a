//! MCP over HTTP, server side: a TCP listener, one task per connection moving HTTP/1.1
//! bytes through zest-core's connection machine, and one [`Router`] (sessions, Streamable
//! HTTP, legacy HTTP+SSE, `/health`) that every connection feeds.

mod conn;
mod hub;
#[cfg(feature = "tower")]
mod service;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::watch;
use tokio::task::JoinSet;
use zest_core::http::server::Router;
use zest_core::http1;
use zest_core::runtime::accept_pause;
pub use zest_core::runtime::http_server::ServerStats;
use zest_core::runtime::http_server::{StreamIds, LISTEN_BACKLOG};
use zest_core::server::{ListKind, ServerConfig};

pub(crate) use hub::Hub;
pub use hub::TokioHub;
#[cfg(feature = "tower")]
pub use service::{McpBody, McpService};

use crate::server::{announcing, http_handle, Registry, ServerHandle};

pub use zest_core::runtime::DEFAULT_SHUTDOWN_GRACE;

pub use zest_net::{router_config, HttpConfig};

/// Serves MCP over HTTP on `addr` (`"127.0.0.1:8080"`; port 0 picks a free one) with every
/// [`HttpConfig`] default: Streamable HTTP at `/mcp`, legacy HTTP+SSE at `/sse` and
/// `/messages`, `GET /health`. The listener lets [`LISTEN_BACKLOG`] connections wait to be
/// accepted (std's 128 drops bursts). Returns once the listener is bound; the server runs in tasks
/// until [`HttpServer::shutdown`]. Must be called within a tokio runtime.
pub async fn serve_http(
    addr: impl ToSocketAddrs,
    config: ServerConfig,
    registry: Registry,
) -> io::Result<HttpServer> {
    serve_http_with(addr, config, HttpConfig::new(), registry).await
}

/// [`serve_http`] with explicit HTTP settings.
pub async fn serve_http_with(
    addr: impl ToSocketAddrs,
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
    stop: watch::Sender<bool>,
    done: watch::Receiver<bool>,
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
            TokioHub::default(),
        );
        let (stop, stop_rx) = watch::channel(false);
        let (done_tx, done) = watch::channel(false);
        let grace = http.shutdown_grace;
        let task_hub = hub.clone();
        tokio::spawn(async move {
            run(listener, task_hub, connection, stop_rx, grace).await;
            done_tx.send_replace(true);
        });
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
        self.stop.send_replace(true);
        self.stopped().await;
    }

    /// Resolves once the server has stopped.
    pub async fn stopped(&self) {
        let mut done = self.done.clone();
        // Err only if the server task is gone, which also means it stopped.
        let _ = done.wait_for(|d| *d).await;
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer").field("local_addr", &self.local_addr).finish()
    }
}

/// Accepts until told to stop, then shuts down as [`HttpServer::shutdown`] says.
async fn run(
    listener: TcpListener,
    hub: Arc<Hub>,
    config: http1::Config,
    mut stop: watch::Receiver<bool>,
    grace: Duration,
) {
    let ids = Arc::new(StreamIds::new());
    let timer = tokio::spawn(timer(hub.clone()));
    let mut conns = JoinSet::new();
    let conn_stop = stop.clone();
    loop {
        let pause = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => {
                    let stop = conn_stop.clone();
                    conns.spawn(conn::serve(hub.clone(), socket, config.clone(), ids.clone(), stop));
                    None
                }
                // Out of descriptors: a pause (the backlog keeps the listener readable).
                Err(e) => accept_pause(&e),
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => None,
            _ = stop.wait_for(|s| *s) => break,
        };
        if let Some(pause) = pause {
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                _ = stop.wait_for(|s| *s) => break,
            }
        }
    }
    drop(listener);
    wind_down(&hub, grace).await;
    let deadline = tokio::time::Instant::now() + grace;
    while !conns.is_empty() {
        if tokio::time::timeout_at(deadline, conns.join_next()).await.is_err() {
            conns.abort_all();
            break;
        }
    }
    timer.abort();
}

/// Lets running handlers finish (up to `grace`), then ends every session, so that every
/// stream the router holds closes.
async fn wind_down(hub: &Arc<Hub>, grace: Duration) {
    let deadline = tokio::time::Instant::now() + grace;
    while hub.running() > 0 {
        let idle = hub.host().idle.notified();
        if hub.running() == 0 || tokio::time::timeout_at(deadline, idle).await.is_err() {
            break;
        }
    }
    hub.close_sessions();
}

/// Sleeps until the router's next deadline and fires it, for as long as the server runs.
async fn timer(hub: Arc<Hub>) {
    let mut next = hub.tick();
    loop {
        match next {
            Some(at) => {
                tokio::select! {
                    () = tokio::time::sleep_until(at.into()) => next = hub.tick(),
                    () = hub.host().timer.notified() => next = hub.tick(),
                }
            }
            None => {
                hub.host().timer.notified().await;
                next = hub.tick();
            }
        }
    }
}
