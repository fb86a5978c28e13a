//! A fleet store in Redis: session-era MCP sessions, resumable streams and the messages
//! between processes, so that a fleet of zest HTTP servers (on any runtime, behind any load
//! balancer) serves one client. The router's side is in `zest_core::http::server::Fleet`;
//! this crate stores and carries.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use zest_redis::RedisFleet;
//!
//! let fleet = RedisFleet::connect("redis://127.0.0.1:6379/")?; // fails at once if unreachable
//! let mut http = zest_blocking::HttpConfig::new();
//! http.router.fleet = Some(fleet.clone());
//! # let (config, registry) = (zest_blocking::ServerConfig::new("s", "1"), zest_blocking::Registry::new());
//! let server = zest_blocking::serve_http_with("127.0.0.1:8080", config, http, registry)?;
//! let _listening = fleet.listen(server.handle())?; // messages from the other processes
//! server.stopped();
//! # Ok(()) }
//! ```
//!
//! What is kept, under a prefix (`zest` by default), keyed by the SHA-256 of each session id
//! (no session id is stored): each session's state (`<p>:s:<key>`, a time to live refreshed
//! by every request), the set of live sessions (`<p>:sessions`), each answer stream's events
//! (`<p>:e:<key>:<stream>`, a sorted set, the newest `events_per_stream`), each session's
//! standalone stream (`<p>:g:<key>`, numbered by `<p>:g:<key>:n`, delivered up to
//! `<p>:g:<key>:d`); every key of a session expires with it. Messages travel on pub/sub
//! channels `<p>:all` and `<p>:m:<member>`; members are numbered by `<p>:members`.
//!
//! Failure: [`RedisFleet::connect`] fails when Redis does not answer. Later, a call that
//! fails (Redis gone, or slower than [`FleetOptions::timeout`]) fails the request that
//! needed it with 503 and a retryable error, and the next call connects again. The
//! listener reconnects on its own; messages published while it was away are lost (the
//! standalone stream is not: it is in the store).

mod listen;
mod store;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use zest_core::http::server::FleetError;

pub use listen::Listening;

/// How a [`RedisFleet`] keeps things.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FleetOptions {
    /// The prefix of every key and channel. Default `zest`.
    pub prefix: String,
    /// How long a session nobody uses lives (match the routers' `idle_timeout`). Default 30
    /// min.
    pub session_ttl: Duration,
    /// Events kept per stream, the newest. Default 256.
    pub events_per_stream: usize,
    /// The longest a call may take before it fails. Default 2 s.
    pub timeout: Duration,
}

impl Default for FleetOptions {
    fn default() -> Self {
        Self {
            prefix: "zest".into(),
            session_ttl: Duration::from_secs(30 * 60),
            events_per_stream: 256,
            timeout: Duration::from_secs(2),
        }
    }
}

/// One process's membership of a fleet whose store is Redis: give it to the router
/// (`RouterConfig::fleet`) and have it [`listen`](Self::listen) for the other members.
pub struct RedisFleet {
    client: redis::Client,
    options: FleetOptions,
    member: u32,
    /// The connection calls share; `None` after one failed (the next call connects again).
    connection: Mutex<Option<redis::Connection>>,
    scripts: store::Scripts,
}

impl RedisFleet {
    /// Joins the fleet at `url` (`redis://host:port/db`) with every default option.
    pub fn connect(url: &str) -> Result<Arc<Self>, FleetError> {
        Self::connect_with(url, FleetOptions::default())
    }

    /// Joins the fleet at `url`: connects (failing at once if Redis does not answer) and
    /// takes a member number.
    pub fn connect_with(url: &str, options: FleetOptions) -> Result<Arc<Self>, FleetError> {
        let client = redis::Client::open(url).map_err(|e| failed("bad Redis URL", &e))?;
        let mut connection = open(&client, options.timeout)?;
        let counter = format!("{}:members", options.prefix);
        let n: u64 = redis::cmd("INCR")
            .arg(&counter)
            .query(&mut connection)
            .map_err(|e| failed("cannot take a member number", &e))?;
        // From 1 to 2^20 - 1: request ids are `member << 32 | n` and stay below 2^53.
        let member = u32::try_from(n % ((1 << 20) - 1)).unwrap_or(0) + 1;
        Ok(Arc::new(Self {
            client,
            options,
            member,
            connection: Mutex::new(Some(connection)),
            scripts: store::Scripts::new(),
        }))
    }

    /// This process's number in the fleet.
    pub fn member(&self) -> u32 {
        self.member
    }

    /// The options it keeps things with.
    pub fn options(&self) -> &FleetOptions {
        &self.options
    }

    /// Runs `f` on the shared connection, connecting first if the last call failed. A call
    /// that fails drops the connection.
    fn with<T>(
        &self,
        what: &str,
        f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, FleetError> {
        let mut slot = self.connection.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(open(&self.client, self.options.timeout)?);
        }
        let Some(connection) = slot.as_mut() else {
            return Err(FleetError("no connection".into()));
        };
        f(connection).map_err(|e| {
            *slot = None;
            failed(what, &e)
        })
    }

    fn key(&self, parts: std::fmt::Arguments<'_>) -> String {
        format!("{}:{parts}", self.options.prefix)
    }
}

impl std::fmt::Debug for RedisFleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisFleet")
            .field("member", &self.member)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// A connection with the call deadline on both directions.
fn open(client: &redis::Client, timeout: Duration) -> Result<redis::Connection, FleetError> {
    let connection = client
        .get_connection_with_timeout(timeout)
        .map_err(|e| failed("Redis does not answer", &e))?;
    connection.set_read_timeout(Some(timeout)).map_err(|e| failed("Redis connection", &e))?;
    connection.set_write_timeout(Some(timeout)).map_err(|e| failed("Redis connection", &e))?;
    Ok(connection)
}

fn failed(what: &str, e: &redis::RedisError) -> FleetError {
    FleetError(format!("{what}: {e}"))
}
