//! MCP over HTTP, server side, on threads: polling threads that accept and serve the
//! requests of idle connections themselves (see `accept`; an idle connection waits in `park`
//! without a thread), a reader for a connection only while it needs one (a request a polling
//! thread leaves it, an event stream), a writer, started when first needed, for what other
//! threads send a connection (see `conn`),
//! one [`Router`] (sessions, Streamable HTTP, legacy HTTP+SSE, `/health`) that every
//! connection feeds, a timer thread for the router's deadlines, and threads for the other
//! handlers (legacy POSTs, batches).
//!
//! The same names and behaviour as zest-tokio's HTTP server: both are the same core halves
//! ([`ServerConn`](zest_core::runtime::http_server::ServerConn),
//! [`Dispatch`](zest_core::runtime::http_server::Dispatch), the router) with different IO.

mod accept;
mod conn;
mod hub;
mod park;

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use zest_core::http::server::Router;
pub use zest_core::runtime::http_server::ServerStats;
use zest_core::runtime::http_server::LISTEN_BACKLOG;
use zest_core::server::{ListKind, ServerConfig};

use accept::Acceptor;
use hub::{Hub, HubExt, Threads};

use crate::link::lock;
use crate::server::{announcing, Registry, ServerHandle};

pub use zest_core::runtime::DEFAULT_SHUTDOWN_GRACE;

pub use zest_net::{router_config, HttpConfig};

/// Serves MCP over HTTP on `addr` (`"127.0.0.1:8080"`; port 0 picks a free one) with every
/// [`HttpConfig`] default: Streamable HTTP at `/mcp`, legacy HTTP+SSE at `/sse` and
/// `/messages`, `GET /health`. The listener lets [`LISTEN_BACKLOG`] connections wait to be
/// accepted (std's 128 drops bursts). Returns once the listener is bound; the server runs on
/// threads of its own until [`HttpServer::shutdown`].
pub fn serve_http(
    addr: impl ToSocketAddrs,
    config: ServerConfig,
    registry: Registry,
) -> io::Result<HttpServer> {
    serve_http_with(addr, config, HttpConfig::new(), registry)
}

/// [`serve_http`] with explicit HTTP settings.
pub fn serve_http_with(
    addr: impl ToSocketAddrs,
    config: ServerConfig,
    http: HttpConfig,
    registry: Registry,
) -> io::Result<HttpServer> {
    let listener = TcpListener::bind(addr)?;
    rustix::net::listen(&listener, LISTEN_BACKLOG)?;
    HttpServer::start(listener, config, http, registry)
}

/// A running HTTP server. [`shutdown`](Self::shutdown) stops it and waits until it has
/// stopped; dropping it starts the same graceful shutdown without waiting. To serve until
/// something else stops the process, call [`stopped`](Self::stopped).
pub struct HttpServer {
    local_addr: SocketAddr,
    hub: Arc<Hub>,
    stop: Arc<AtomicBool>,
    done: Arc<Done>,
}

/// Set once the server has stopped.
#[derive(Default)]
struct Done {
    done: Mutex<bool>,
    set: Condvar,
}

impl HttpServer {
    /// Serves on an already bound listener (its backlog is left as it is).
    pub fn start(
        listener: TcpListener,
        config: ServerConfig,
        http: HttpConfig,
        registry: Registry,
    ) -> io::Result<Self> {
        let local_addr = listener.local_addr()?;
        let connection = http.connection();
        let hub = Hub::new(
            Router::new(zest_net::with_request_state(announcing(config)), http.router, registry),
            Threads::new(),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(Done::default());
        let timer_hub = hub.clone();
        let timer = thread::Builder::new()
            .name("zest-http-timer".into())
            .spawn(move || timer_hub.run_timer())?;
        let (stopped_hub, stopped_done) = (hub.clone(), done.clone());
        let stopped = move || {
            stopped_hub.stop_timer();
            let _ = timer.join();
            *lock(&stopped_done.done) = true;
            stopped_done.set.notify_all();
        };
        let grace = http.shutdown_grace;
        let acceptor = match Acceptor::new(listener, &hub, connection, &stop, grace, stopped) {
            Ok(acceptor) => Arc::new(acceptor),
            Err(e) => {
                hub.stop_timer();
                return Err(e);
            }
        };
        for set in 0..acceptor.pollers() {
            let acceptor = acceptor.clone();
            let polling = thread::Builder::new()
                .name("zest-http-accept".into())
                .spawn(move || acceptor.poll(set));
            match polling {
                Ok(_) => {}
                // Fewer polling threads: a new connection wakes only a thread that waits.
                Err(_) if set > 0 => break,
                Err(e) => {
                    hub.stop_timer();
                    return Err(e);
                }
            }
        }
        Ok(Self { local_addr, hub, stop, done })
    }

    /// Where the server listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The MCP endpoint's URL, `http://<addr>/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.local_addr)
    }

    /// The handle on this server, for every session it holds (clone it anywhere): change
    /// the registry, report resource updates, log. Sessions declare `listChanged` and
    /// resource `subscribe`, since this handle can always be had.
    pub fn handle(&self) -> ServerHandle {
        self.hub.handle()
    }

    /// Changes the registry every session shares, and tells each session's client that the
    /// lists named in `changed` changed (`notifications/*/list_changed`, on its GET stream).
    pub fn change_registry(&self, changed: &[ListKind], change: impl FnOnce(&mut Registry)) {
        self.hub.change_registry(changed, change);
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
    pub fn shutdown(self) {
        self.begin_stop();
        self.stopped();
    }

    /// Blocks until the server has stopped.
    pub fn stopped(&self) {
        let mut done = lock(&self.done.done);
        while !*done {
            done = self.done.set.wait(done).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Sets the stop flag and wakes a polling thread (with a connection of our own), which
    /// wakes the others as it shuts the server down.
    fn begin_stop(&self) {
        if self.stop.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut wake = self.local_addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => [127, 0, 0, 1].into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        // Refused only if the listener is already gone, which means it stopped accepting.
        let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(5));
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.begin_stop();
    }
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer").field("local_addr", &self.local_addr).finish()
    }
}
