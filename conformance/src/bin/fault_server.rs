//! The stdio server the client fault tests drive (tests/stdio_client_faults.rs), on the
//! runtime of your choice.
//!
//! ```text
//! fault_server --runtime tokio|smol|blocking [--banner] [--giant-line] [--linger]
//! ```
//!
//! Tools: `echo {text}`, `steps {n}` (a progress report every 20 ms, `n` times, then
//! `done after {n} steps`), `loud {n}`, `sample {prompt}` (asks the client's model) and
//! `crash` (says `crashing` on stderr and exits with status 3). `--banner` writes two lines
//! that are not JSON before the protocol starts, `--giant-line` one line of 10 MiB of `x`,
//! and `--linger` keeps the process alive after the session ends, saying `lingering` on
//! stderr.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;
use zest_conformance::fixture::{self, asynchronous, blocking, Behaviour};
use zest_conformance::Runtime;
use zest_core::jsonrpc::ErrorObject;
use zest_core::schema::{CallToolParams, CallToolResult, Tool};
use zest_core::server::{Registry, ServerConfig};

const USAGE: &str =
    "usage: fault_server --runtime tokio|smol|blocking [--banner] [--giant-line] [--linger]";

fn main() -> ExitCode {
    let mut runtime = None;
    let (mut banner, mut giant, mut linger) = (false, false, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runtime" => runtime = args.next().and_then(|name| name.parse::<Runtime>().ok()),
            "--banner" => banner = true,
            "--giant-line" => giant = true,
            "--linger" => linger = true,
            other => {
                eprintln!("fault_server: unknown argument {other:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(runtime) = runtime else {
        eprintln!("fault_server: --runtime tokio|smol|blocking is required\n{USAGE}");
        return ExitCode::from(2);
    };
    {
        let mut stdout = std::io::stdout().lock();
        if banner {
            // Noise before the protocol starts, as some real servers print.
            let _ = stdout.write_all(b"fault_server starting\nthis line is not JSON either\n");
        }
        if giant {
            let mut line = vec![b'x'; 10 * 1024 * 1024];
            line.push(b'\n');
            let _ = stdout.write_all(&line);
        }
        let _ = stdout.flush();
    }
    let reason = serve_stdio(runtime);
    eprintln!("fault_server ({runtime}): session over: {reason}");
    if linger {
        eprintln!("fault_server ({runtime}): lingering");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    ExitCode::SUCCESS
}

/// Serves one session on stdin/stdout until stdin ends.
fn serve_stdio(runtime: Runtime) -> zest_core::error::CloseReason {
    let config = ServerConfig::new("zest-fault-server", env!("CARGO_PKG_VERSION"));
    match runtime {
        Runtime::Tokio => {
            let registry = registry(asynchronous::adapt::<zest_tokio::RequestContext>);
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a current-thread runtime can always be built");
            rt.block_on(zest_tokio::serve_stdio(config, registry))
        }
        Runtime::Smol => {
            let registry = registry(asynchronous::adapt::<zest_smol::RequestContext>);
            smol::block_on(zest_smol::serve_stdio(config, registry))
        }
        Runtime::Blocking => zest_blocking::serve_stdio(config, registry(blocking::adapt)),
    }
}

/// The load tests' tools (`echo`, `steps`, `loud`), `sample` and `crash`.
fn registry<H>(mut adapt: impl FnMut(Behaviour) -> H + Copy) -> Registry<H> {
    let mut r = fixture::load_registry(adapt, echo);
    let prompt = json!({"type": "object", "properties": {"prompt": {"type": "string"}}});
    r.add_tool(Tool::new("sample", "Asks the client's model", prompt), adapt(Behaviour::Sampling));
    let crash_tool =
        Tool::new("crash", "Exits the process with status 3", json!({"type": "object"}));
    r.add_tool(crash_tool, adapt(Behaviour::Tool(crash)));
    r
}

/// `echo {text}`: answers its text.
fn echo(p: &CallToolParams) -> Result<CallToolResult, ErrorObject> {
    let text = p.arguments.as_ref().and_then(|a| a.get("text")).and_then(|t| t.as_str());
    Ok(CallToolResult::text(text.unwrap_or_default()))
}

/// `crash`: the process dies mid-session with status 3.
fn crash(_: &CallToolParams) -> Result<CallToolResult, ErrorObject> {
    eprintln!("fault_server: crashing on request");
    std::process::exit(3)
}
