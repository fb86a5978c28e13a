//! MCP over HTTP, server side, on threads: a `std::net::TcpListener` accepting on a thread
//! of its own, one or two threads per connection (a reader that reads, feeds the router and
//! runs the handler its request asks for; a writer, started when first needed, for what other
//! threads send it: see `conn`),
//! one [`Router`] (sessions, Streamable HTTP, legacy HTTP+SSE, `/health`) that every
//! connection feeds, a timer thread for the router's deadlines, and threads for the other
//! handlers (legacy POSTs, batches).
//!
//! The same names and behaviour as zest-tokio's HTTP server: both are the same core halves
//! ([`ServerConn`](zest_core::runtime::http_server::ServerConn),
//! [`Dispatch`](zest_core::runtime::http_server::Dispatch), the router) with different IO.

mod conn;
mod hub;

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use zest_core::http::server::Router;
use zest_core::http1;
pub use zest_core::runtime::http_server::ServerStats;
use zest_core::runtime::http_server::{StreamIds, LISTEN_BACKLOG};
use zest_core::server::{ListKind, ServerConfig};

use conn::ToConn;
use hub::{Hub, HubExt, Threads};

use crate::link::lock;
use crate::server::{announcing, Registry, ServerHandle};
use crate::workers::Workers;

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
    accept: Option<JoinHandle<()>>,
}

/// Set once the server has stopped.
#[derive(Default)]
struct Done {
    done: Mutex<bool>,
    set: Condvar,
}

/// The open connections, to stop at shutdown and to cut once its grace period is over.
#[derive(Default)]
struct Conns {
    open: Mutex<HashMap<u64, ToConn>>,
    changed: Condvar,
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
        let (run_hub, run_stop, run_done) = (hub.clone(), stop.clone(), done.clone());
        let grace = http.shutdown_grace;
        let accept = thread::Builder::new().name("zest-http-accept".into()).spawn(move || {
            run(listener, &run_hub, connection, &run_stop, grace);
            run_hub.stop_timer();
            let _ = timer.join();
            *lock(&run_done.done) = true;
            run_done.set.notify_all();
        });
        let accept = match accept {
            Ok(accept) => accept,
            Err(e) => {
                hub.stop_timer();
                return Err(e);
            }
        };
        Ok(Self { local_addr, hub, stop, done, accept: Some(accept) })
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
    pub fn shutdown(mut self) {
        self.begin_stop();
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }

    /// Blocks until the server has stopped.
    pub fn stopped(&self) {
        let mut done = lock(&self.done.done);
        while !*done {
            done = self.done.set.wait(done).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Sets the stop flag and wakes the accepting thread (with a connection of our own).
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

/// Accepts until told to stop, then shuts down as [`HttpServer::shutdown`] says.
fn run(
    listener: TcpListener,
    hub: &Arc<Hub>,
    config: http1::Config,
    stop: &Arc<AtomicBool>,
    grace: Duration,
) {
    let threads = Workers::new("zest-http-conn");
    let shared =
        conn::Shared { hub: hub.clone(), config, ids: Arc::new(StreamIds::new()), threads };
    let conns = Arc::new(Conns::default());
    let mut next_id = 0u64;
    for accepted in listener.incoming() {
        if stop.load(Ordering::Acquire) {
            break;
        }
        // Out of descriptors, or a connection reset before accept: go on.
        let Ok(socket) = accepted else { continue };
        next_id += 1;
        let id = next_id;
        // Filed before its threads start, so that its end (which removes it) comes after.
        let mut open = lock(&conns.open);
        let (ended, stopping) = (conns.clone(), stop.clone());
        let done = move || {
            let mut open = lock(&ended.open);
            open.remove(&id);
            // Only the shutdown waits for connections to end: no wake-up call for each one
            // before (under a client that opens a connection per request, one per call).
            if stopping.load(Ordering::Acquire) {
                ended.changed.notify_all();
            }
        };
        // Without threads for it the connection is dropped (closed) at once.
        if let Ok(conn) = conn::spawn(&shared, socket, done) {
            open.insert(id, conn);
        }
    }
    drop(listener);
    // Connections between requests close now; the others once their answer is written.
    for conn in lock(&conns.open).values() {
        conn.stop();
    }
    hub.wait_idle(Instant::now() + grace);
    hub.close_sessions();
    let deadline = Instant::now() + grace;
    let mut open = lock(&conns.open);
    while !open.is_empty() {
        let now = Instant::now();
        if now >= deadline {
            // Past the grace period: cut what is left (a client that stopped reading).
            for conn in open.values() {
                conn.cut();
            }
            break;
        }
        open = conns
            .changed
            .wait_timeout(open, deadline - now)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}
