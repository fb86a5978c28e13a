//! The official suite's "everything" fixture server, on the runtime of your choice.
//!
//! ```text
//! everything_server --runtime tokio|smol|blocking --stdio     # one session on stdin/stdout
//! everything_server --runtime tokio|smol|blocking --port P    # Streamable HTTP on 127.0.0.1:P
//!     [--state-key HEX]   # 32 bytes in hex: seal 2026-07-28 requestState with this key
//!     [--oauth-issuer URL] # HTTP only: every request needs a token from this issuer
//!     [--oauth-introspect ID:SECRET] # its tokens are opaque: introspect them as ID
//!     [--fleet redis://HOST:PORT/] # HTTP only: share session-era sessions in this Redis
//! ```
//!
//! Processes given the same `--fleet` serve each other's session-era sessions: any request of
//! a session may land on any of them.
//!
//! Processes given the same `--state-key` accept each other's `requestState`, so a
//! 2026-07-28 call's rounds may land on any of them.
//!
//! The registry is built once (`zest_conformance::fixture`); only the serving differs.
//! `--port` serves with the runtime's `serve_http`; a runtime without one fails with a message
//! that says so, rather than pretending.

use std::process::ExitCode;

use zest_conformance::fixture::{self, asynchronous, blocking};
use zest_conformance::Runtime;

const USAGE: &str = "usage: everything_server --runtime tokio|smol|blocking (--stdio | --port P) \
     [--state-key HEX] [--oauth-issuer URL [--oauth-introspect ID:SECRET]] [--fleet REDIS_URL]";

enum Serve {
    Stdio,
    Http(u16),
}

fn main() -> ExitCode {
    let (runtime, serve, key, issuer, fleet) = match parse(std::env::args().skip(1)) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("everything_server: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match serve {
        Serve::Stdio => {
            let reason = serve_stdio(runtime, key);
            eprintln!("everything_server ({runtime}): session over: {reason}");
            ExitCode::SUCCESS
        }
        Serve::Http(port) => match serve_http(runtime, port, key, issuer.as_ref(), fleet) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("everything_server ({runtime}): {message}");
                ExitCode::from(3)
            }
        },
    }
}

/// Serves one session on stdin/stdout with a server handle (`StdioServer`), so that the
/// fixture declares `listChanged` and resource `subscribe`, as over HTTP.
fn serve_stdio(runtime: Runtime, key: Option<[u8; 32]>) -> zest_core::error::CloseReason {
    let config = config(runtime, key);
    match runtime {
        Runtime::Tokio => {
            let registry = fixture::registry(asynchronous::adapt::<zest_tokio::RequestContext>);
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a current-thread runtime can always be built");
            rt.block_on(async { zest_tokio::StdioServer::stdio(config, registry).stopped().await })
        }
        Runtime::Smol => {
            let registry = fixture::registry(asynchronous::adapt::<zest_smol::RequestContext>);
            smol::block_on(zest_smol::StdioServer::stdio(config, registry).stopped())
        }
        Runtime::Blocking => {
            let registry = fixture::registry(blocking::adapt);
            zest_blocking::StdioServer::stdio(config, registry).stopped()
        }
    }
}

/// Serves Streamable HTTP (and legacy SSE, and `GET /health`) on 127.0.0.1:`port` until the
/// process is stopped; protected by OAuth when `issuer` is given.
fn serve_http(
    runtime: Runtime,
    mut port: u16,
    key: Option<[u8; 32]>,
    issuer: Option<&fixture::oauth::Issuer>,
    fleet: Option<String>,
) -> Result<(), String> {
    let config = config(runtime, key);
    let mut http = zest_tokio::HttpConfig::new();
    let fleet = match fleet {
        Some(url) => Some(zest_redis::RedisFleet::connect(&url).map_err(|e| e.to_string())?),
        None => None,
    };
    if let Some(fleet) = &fleet {
        http.router.fleet = Some(fleet.clone());
    }

    if let Some(issuer) = issuer {
        // The resource names its port: pick a free one now rather than after binding.
        if port == 0 {
            let probe = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(|e| e.to_string())?;
            port = probe.local_addr().map_err(|e| e.to_string())?.port();
        }
        let resource = format!("http://127.0.0.1:{port}/mcp");
        http.router.oauth = Some(fixture::oauth::protected(&resource, issuer)?);
    }
    match runtime {
        Runtime::Tokio => {
            let registry = fixture::registry(asynchronous::adapt::<zest_tokio::RequestContext>);
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;
            rt.block_on(async {
                let server =
                    zest_tokio::serve_http_with(("127.0.0.1", port), config, http, registry)
                        .await
                        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
                let _listening = listen(fleet.as_ref(), server.handle())?;
                eprintln!("everything_server (tokio): serving {}", server.url());
                server.stopped().await;
                Ok(())
            })
        }
        Runtime::Smol => {
            let registry = fixture::registry(asynchronous::adapt::<zest_smol::RequestContext>);
            smol::block_on(async {
                let server =
                    zest_smol::serve_http_with(("127.0.0.1", port), config, http, registry)
                        .await
                        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
                let _listening = listen(fleet.as_ref(), server.handle())?;
                eprintln!("everything_server (smol): serving {}", server.url());
                server.stopped().await;
                Ok(())
            })
        }
        Runtime::Blocking => {
            let registry = fixture::registry(blocking::adapt);
            let server =
                zest_blocking::serve_http_with(("127.0.0.1", port), config, http, registry)
                    .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
            let _listening = listen(fleet.as_ref(), server.handle())?;
            eprintln!("everything_server (blocking): serving {}", server.url());
            server.stopped();
            Ok(())
        }
    }
}

/// Hands what the other processes of the fleet send to `server`, while the result lives.
fn listen<H: Clone + Send + 'static>(
    fleet: Option<&std::sync::Arc<zest_redis::RedisFleet>>,
    server: zest_core::server::ServerHandle<H>,
) -> Result<Option<zest_redis::Listening>, String> {
    fleet.map(|fleet| fleet.listen(server)).transpose().map_err(|e| e.to_string())
}

/// The fixture's config, sealing `requestState` with `key` when one is given.
fn config(runtime: Runtime, key: Option<[u8; 32]>) -> zest_core::server::ServerConfig {
    use std::time::{Instant, SystemTime, UNIX_EPOCH};
    use zest_core::server::{RequestStateConfig, RequestStateKey};
    let config = fixture::server_config(runtime.name());
    let Some(key) = key else { return config };
    let unix = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    config.request_state(RequestStateConfig::new(RequestStateKey::new(key), Instant::now(), unix))
}

fn parse_key(hex: &str) -> Result<[u8; 32], String> {
    let bad = || format!("--state-key wants 64 hex digits, not {hex:?}");
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(key)
}

type Parsed = (Runtime, Serve, Option<[u8; 32]>, Option<fixture::oauth::Issuer>, Option<String>);

fn parse(mut args: impl Iterator<Item = String>) -> Result<Parsed, String> {
    let (mut runtime, mut serve, mut key, mut issuer) = (None, None, None, None);
    let (mut introspect, mut fleet) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runtime" => {
                let name = args.next().ok_or("--runtime needs a value")?;
                runtime = Some(name.parse::<Runtime>()?);
            }
            "--stdio" => serve = Some(Serve::Stdio),
            "--port" => {
                let port = args.next().ok_or("--port needs a value")?;
                serve = Some(Serve::Http(port.parse().map_err(|_| format!("bad port {port:?}"))?));
            }
            "--state-key" => {
                let hex = args.next().ok_or("--state-key needs a value")?;
                key = Some(parse_key(&hex)?);
            }
            "--oauth-issuer" => issuer = Some(args.next().ok_or("--oauth-issuer needs a value")?),
            "--oauth-introspect" => {
                let pair = args.next().ok_or("--oauth-introspect needs ID:SECRET")?;
                let (id, secret) =
                    pair.split_once(':').ok_or("--oauth-introspect needs ID:SECRET")?;
                introspect = Some((id.to_owned(), secret.to_owned()));
            }
            "--fleet" => fleet = Some(args.next().ok_or("--fleet needs a Redis URL")?),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let runtime = runtime.ok_or("--runtime is required")?;
    let issuer = issuer.map(|url| fixture::oauth::Issuer { url, introspect });
    Ok((runtime, serve.ok_or("--stdio or --port is required")?, key, issuer, fleet))
}
