//! The official suite's "everything" fixture server, on the runtime of your choice.
//!
//! ```text
//! everything_server --runtime tokio|smol|blocking --stdio     # one session on stdin/stdout
//! everything_server --runtime tokio|smol|blocking --port P    # Streamable HTTP on 127.0.0.1:P
//! ```
//!
//! The registry is built once (`zest_conformance::fixture`); only the serving differs.
//! `--port` serves with the runtime's `serve_http`; a runtime without one fails with a message
//! that says so, rather than pretending.

use std::process::ExitCode;

use zest_conformance::fixture::{self, asynchronous, blocking};
use zest_conformance::Runtime;

const USAGE: &str = "usage: everything_server --runtime tokio|smol|blocking (--stdio | --port P)";

enum Serve {
    Stdio,
    Http(u16),
}

fn main() -> ExitCode {
    let (runtime, serve) = match parse(std::env::args().skip(1)) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("everything_server: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match serve {
        Serve::Stdio => {
            let reason = serve_stdio(runtime);
            eprintln!("everything_server ({runtime}): session over: {reason}");
            ExitCode::SUCCESS
        }
        Serve::Http(port) => match serve_http(runtime, port) {
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
fn serve_stdio(runtime: Runtime) -> zest_core::error::CloseReason {
    let config = fixture::server_config(runtime.name());
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
/// process is stopped.
fn serve_http(runtime: Runtime, port: u16) -> Result<(), String> {
    let config = fixture::server_config(runtime.name());
    match runtime {
        Runtime::Tokio => {
            let registry = fixture::registry(asynchronous::adapt::<zest_tokio::RequestContext>);
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;
            rt.block_on(async {
                let server = zest_tokio::serve_http(("127.0.0.1", port), config, registry)
                    .await
                    .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
                eprintln!("everything_server (tokio): serving {}", server.url());
                server.stopped().await;
                Ok(())
            })
        }
        Runtime::Smol => {
            let registry = fixture::registry(asynchronous::adapt::<zest_smol::RequestContext>);
            smol::block_on(async {
                let server = zest_smol::serve_http(("127.0.0.1", port), config, registry)
                    .await
                    .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
                eprintln!("everything_server (smol): serving {}", server.url());
                server.stopped().await;
                Ok(())
            })
        }
        Runtime::Blocking => {
            let registry = fixture::registry(blocking::adapt);
            let server = zest_blocking::serve_http(("127.0.0.1", port), config, registry)
                .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
            eprintln!("everything_server (blocking): serving {}", server.url());
            server.stopped();
            Ok(())
        }
    }
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<(Runtime, Serve), String> {
    let (mut runtime, mut serve) = (None, None);
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
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok((runtime.ok_or("--runtime is required")?, serve.ok_or("--stdio or --port is required")?))
}
