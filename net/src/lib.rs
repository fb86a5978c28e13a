//! What every zest runtime's network side shares and zest-core cannot hold, since it reads
//! the OS or links a TLS stack: the HTTP server settings with their session-id seed from OS
//! entropy ([`HttpConfig`]), the TLS client settings of an endpoint ([`tls_client_config`]),
//! the peek that tells whether an idle pooled socket is still open ([`is_open`]), the
//! sealing of 2026-07-28 `requestState` a server needs ([`with_request_state`]), the child
//! process a stdio client starts ([`child_command`]), and which stdio pipes an async
//! runtime may drive with its reactor ([`own_stdio_pipes`]).
//!
//! zest-tokio, zest-smol and zest-blocking re-export what an application needs under their
//! own names; the rest serves the runtimes themselves.
#![forbid(unsafe_code)]

mod browser;
mod fetch;
mod headless;
mod introspect;
mod jwks;

pub use browser::{authorize_in_browser, open_in_browser, LOGIN_TIMEOUT};
pub use headless::authorize_headless;
pub use introspect::{introspection_validator, Introspection};
pub use jwks::{jwt_validator, principal as jwt_principal};

use std::io;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rustix::fs::{fstat, FileType};
use rustix::net::RecvFlags;
use rustls::pki_types::{CertificateDer, ServerName};
use zest_core::http::client::HttpClientConfig;
use zest_core::http::server::RouterConfig;
use zest_core::http1;
use zest_core::io::TransportFailure;
use zest_core::runtime::http_client::{still_open, HttpEndpoint, Target};
use zest_core::runtime::{ConnectError, DEFAULT_SHUTDOWN_GRACE};
use zest_core::server::{RequestStateConfig, RequestStateKey, ServerConfig};
use zest_core::stdio::StdioCommand;

/// How an HTTP server serves, besides the MCP `ServerConfig`: the router's settings
/// (endpoint paths, allowed hosts and origins, limits, JSON or stateless modes) and the
/// HTTP/1.1 limits of each connection. Build with [`HttpConfig::new`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The router's settings; its `rng_seed` comes from the OS in [`HttpConfig::new`].
    pub router: RouterConfig,
    /// Head size and head-read deadline per request. The body limit is the router's
    /// `max_body`.
    pub http1: http1::Config,
    /// How long a shutdown lets running handlers finish, then lets connections write what
    /// is left (see [`DEFAULT_SHUTDOWN_GRACE`]).
    pub shutdown_grace: Duration,
}

impl HttpConfig {
    /// Every default, with the session-id CSPRNG seeded from the OS.
    pub fn new() -> Self {
        Self {
            router: router_config(),
            http1: http1::Config::default(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
        }
    }

    /// The HTTP/1.1 limits of each connection, with the router's body limit.
    pub fn connection(&self) -> http1::Config {
        let mut connection = self.http1.clone();
        connection.max_body_bytes = Some(self.router.max_body as u64);
        connection
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// A [`RouterConfig`] with every default and its `rng_seed` filled from the OS (the only
/// place zest reads entropy for session ids).
pub fn router_config() -> RouterConfig {
    let mut seed = [0u8; 32];
    // Without OS entropy session ids would be guessable: refusing to start is the only
    // safe answer, and no supported OS lacks it.
    getrandom::fill(&mut seed).expect("the OS provides entropy");
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut config = RouterConfig::new(seed);
    // For OAuth token expiry; the router reads no clock of its own.
    config.wall_clock = Some((Instant::now(), unix));
    config
}

/// `config`, sealing 2026-07-28 `requestState` with a fresh key from the OS and the wall
/// clock unless the app set [`ServerConfig::request_state`] (as a fleet that shares a key
/// does). Every runtime serves with this.
pub fn with_request_state(mut config: ServerConfig) -> ServerConfig {
    if config.request_state.is_none() {
        let mut key = [0u8; 32];
        // As for session ids: a guessable key would let a client forge earlier answers.
        getrandom::fill(&mut key).expect("the OS provides entropy");
        let unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let key = RequestStateKey::new(key);
        config.request_state = Some(RequestStateConfig::new(key, Instant::now(), unix));
    }
    config
}

/// `config` with its OAuth flow (if any) seeded from the OS and reading the wall clock: every
/// runtime connects with this.
pub fn with_oauth_entropy(mut config: HttpClientConfig) -> HttpClientConfig {
    if let Some(oauth) = config.oauth.take() {
        let mut seed = [0u8; 32];
        // `state` and PKCE verifiers must not be guessable.
        getrandom::fill(&mut seed).expect("the OS provides entropy");
        let unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        config.oauth = Some(oauth.with_entropy(seed, Instant::now(), unix));
    }
    config
}

/// The TLS client settings for `endpoint`: the webpki roots (unless turned off) and its
/// own root certificates, rustls's safe default protocol versions with the ring provider,
/// ALPN `http/1.1`. `Err` names an unusable root certificate.
pub fn tls_client_config(
    endpoint: &HttpEndpoint,
) -> Result<Arc<rustls::ClientConfig>, ConnectError> {
    let mut roots = rustls::RootCertStore::empty();
    if endpoint.webpki_roots {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    for der in &endpoint.root_certificates {
        roots
            .add(CertificateDer::from(der.clone()))
            .map_err(|e| ConnectError::InvalidConfig(format!("unusable root certificate: {e}")))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ConnectError::InvalidConfig(format!("tls: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(tls))
}

/// The TLS server name to ask `target`'s host for; `Err` when the host is no valid name.
pub fn tls_server_name(target: &Target) -> Result<ServerName<'static>, TransportFailure> {
    ServerName::try_from(target.host.clone())
        .map_err(|e| TransportFailure::Tls(format!("{}: {e}", target.host)))
}

/// A failed TCP connect to `target`, as the client machine reports it.
pub fn refused(target: &Target, e: &io::Error) -> TransportFailure {
    TransportFailure::Refused(format!("{target}: {e}"))
}

/// A failed TLS handshake with `target`, saying what rustls said (without the io wrapping).
pub fn tls_failed(target: &Target, e: &io::Error) -> TransportFailure {
    let why = e.get_ref().map_or_else(|| e.to_string(), ToString::to_string);
    TransportFailure::Tls(format!("{target}: {why}"))
}

/// The pipe buffer [`widen_pipe`] asks for: 256 KiB. A 1 MiB message crossed no faster
/// with 1 MiB pipes (measured side by side), and Linux counts each pipe's buffer size
/// against a per-user budget (`/proc/sys/fs/pipe-user-pages-soft`, 64 MiB by default) past
/// which every new pipe of that user gets a small one: at this size a client runs 128
/// servers before it could reach that budget.
pub const PIPE_BUFFER: usize = 256 * 1024;

/// Asks the kernel for a [`PIPE_BUFFER`]-byte buffer on a stdio pipe (either end; the buffer
/// is the pipe's). With the default 64 KiB a 1 MiB message crosses in sixteen or more
/// wake-ups of each side; the kernel takes the pages only while data waits in it. Anything
/// but a pipe, a refusal, or another OS than Linux leaves the buffer as it was: that costs
/// speed, never correctness.
pub fn widen_pipe(pipe: impl AsFd) {
    #[cfg(target_os = "linux")]
    let _ = rustix::pipe::fcntl_setpipe_size(pipe, PIPE_BUFFER);
    #[cfg(not(target_os = "linux"))]
    let _ = pipe;
}

/// The child process a stdio client starts for `command`: its program and arguments, its
/// environment changes and working directory, stdin, stdout and stderr piped, in a process
/// group of its own (the client signals the group at shutdown, so the server's own children
/// end with it). Each runtime spawns it with its own process type.
pub fn child_command(command: &StdioCommand) -> Command {
    let mut child = Command::new(command.program());
    child.args(command.arguments());
    for (key, value) in command.env_changes() {
        match value {
            Some(v) => child.env(key, v),
            None => child.env_remove(key),
        };
    }
    if let Some(dir) = command.working_dir() {
        child.current_dir(dir);
    }
    child.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    child
}

/// [`widen_pipe`] on this process's stdin and stdout, for a server on stdio: its client's
/// pipes are widened whichever SDK spawned it.
pub fn widen_stdio() {
    widen_pipe(io::stdin());
    widen_pipe(io::stdout());
}

/// Which of this process's stdin and stdout are pipes of its own, which an async runtime
/// may drive with its reactor in non-blocking mode (a server spawned by its client has two).
/// Stdout is not when stderr is the same pipe (`2>&1`): non-blocking mode belongs to the
/// pipe, so log writes to stderr would fail with `WouldBlock`. Terminals and files are not
/// either: other programs may share them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnPipes {
    /// Stdin is a pipe.
    pub stdin: bool,
    /// Stdout is a pipe, and stderr is not the same one.
    pub stdout: bool,
}

/// [`OwnPipes`] of this process.
pub fn own_stdio_pipes() -> OwnPipes {
    let stdout = is_pipe(io::stdout()) && !same_file(io::stdout(), io::stderr());
    OwnPipes { stdin: is_pipe(io::stdin()), stdout }
}

fn is_pipe(fd: impl AsFd) -> bool {
    fstat(fd).is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Fifo)
}

fn same_file(a: impl AsFd, b: impl AsFd) -> bool {
    match (fstat(a), fstat(b)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

/// Whether an idle pooled socket is still open: a peek that does not wait
/// (`MSG_PEEK | MSG_DONTWAIT`) finds nothing to read (see zest-core's [`still_open`]).
pub fn is_open(socket: impl AsFd) -> bool {
    let flags = RecvFlags::PEEK | RecvFlags::DONTWAIT;
    let peek = rustix::net::recv(socket, &mut [0u8; 1][..], flags);
    still_open(peek.map(|(n, _)| n).map_err(io::Error::from))
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::{Shutdown, TcpListener, TcpStream};

    use super::*;

    /// True once `closed` holds, checked up to 1,000 times (loopback delivers at once; the
    /// bound only turns a surprise into a failure).
    fn soon(closed: impl Fn() -> bool) -> bool {
        (0..1000).any(|_| {
            std::thread::yield_now();
            closed()
        })
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_pipe_is_widened_and_anything_else_left_alone() {
        let (read, write) = rustix::pipe::pipe().unwrap();
        widen_pipe(&read);
        assert_eq!(rustix::pipe::fcntl_getpipe_size(&write).unwrap(), PIPE_BUFFER);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        widen_pipe(&listener);
        assert!(listener.local_addr().is_ok(), "a socket is no pipe: nothing happens");
    }

    #[test]
    fn a_socket_is_open_until_the_peer_closes_or_sends_something() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        assert!(is_open(&client));
        server.write_all(b"x").unwrap();
        assert!(soon(|| !is_open(&client)), "stray bytes mean the connection is done");
        let other = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        server.shutdown(Shutdown::Both).unwrap();
        assert!(soon(|| !is_open(&other)), "an end means the connection is done");
    }

    #[test]
    fn each_config_gets_its_own_seed_and_the_router_body_limit() {
        let (a, b) = (HttpConfig::new(), HttpConfig::new());
        assert_ne!(a.router.rng_seed, b.router.rng_seed);
        assert_eq!(a.connection().max_body_bytes, Some(a.router.max_body as u64));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_stdio_child_gets_its_command_piped_stdio_and_a_process_group_of_its_own() {
        let script = r#"read -r line; read -r _ _ _ _ group _ < /proc/$$/stat
            echo "$0|$1|$line|$ZEST_X|${CARGO_PKG_NAME-unset}|$(pwd)|$group""#;
        let command = StdioCommand::new("sh")
            .args(["-c", script, "zero", "one"])
            .env("ZEST_X", "x y")
            .env_remove("CARGO_PKG_NAME")
            .current_dir("/");
        assert!(std::env::var_os("CARGO_PKG_NAME").is_some(), "cargo test sets it");
        let mut child = child_command(&command).spawn().expect("sh");
        child.stdin.take().expect("piped").write_all(b"hello\n").expect("written");
        let pid = child.id();
        let out = child.wait_with_output().expect("sh ends");
        let said = String::from_utf8(out.stdout).expect("UTF-8");
        // The child leads a group of its own: the client signals that group at shutdown.
        assert_eq!(said.trim(), format!("zero|one|hello|x y|unset|/|{pid}"));
    }
}
