//! The `zest` command: serve a directory over MCP, and inspect, call and benchmark any MCP
//! server over stdio or HTTP. Built on zest-blocking: no async runtime in the binary.

mod bench;
mod bridge;
mod commands;
mod fail;
mod guard;
mod login;
mod serve;
mod target;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use commands::CallArgs;
use fail::Failure;
use target::TargetArgs;

const AFTER_HELP: &str = "\
Where a command names a server, it comes last: an http(s):// URL, a name from an mcpServers
file (--config FILE, or .mcp.json here), or a command after `--` to spawn over stdio.

Examples:
  zest serve . --http 127.0.0.1:8080         serve this directory over Streamable HTTP
  zest inspect http://127.0.0.1:8080/mcp     who the server is and what it offers
  zest tools -- zest serve .                 list the tools of a stdio server
  zest call read_file http://127.0.0.1:8080/mcp --arg path=README.md
  zest bench --tool file_info --args-json '{\"path\":\".\"}' -n 5000 -c 8 -- zest serve .

Exit codes: 0 done; 1 the server answered with an error (a tool's isError result, a
JSON-RPC error); 2 the command line is wrong; 3 could not connect or the handshake failed;
4 the session broke during the command.";

/// Serve a directory over MCP; inspect, call and benchmark any MCP server.
#[derive(Parser, Debug)]
#[command(name = "zest", version, after_help = AFTER_HELP)]
struct Cli {
    /// Print one JSON document instead of text (every read command).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve this directory from this binary over stdio and tour it: inspect, tools, calls.
    Demo,
    /// Serve a directory's files over stdio (the default) or HTTP.
    ///
    /// Tools, a `file://` resource template and a prompt. Paths stay inside DIR: `..`, absolute paths outside it and
    /// symbolic links that lead out are refused.
    Serve {
        /// The directory to serve. Default: the current one.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Serve over stdio (the default).
        #[arg(long, conflicts_with = "http")]
        stdio: bool,
        /// Serve over HTTP at ADDR (a port alone binds 127.0.0.1): Streamable HTTP at /mcp,
        /// legacy SSE at /sse, /health; Host and Origin checked.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// Also offer write_file and edit_file.
        #[arg(long)]
        allow_write: bool,
        /// Also offer run_command (no shell; a timeout; output capped).
        #[arg(long)]
        allow_exec: bool,
        /// Over HTTP, serve only requests that carry `Authorization: Bearer TOKEN` (all but
        /// /health; others get 401).
        #[arg(long, value_name = "TOKEN", requires = "http")]
        bearer_token: Option<String>,
        /// Over HTTP, serve only requests with a JWT access token from this OAuth issuer
        /// (checked against its published keys; clients are told where to log in).
        #[arg(long, value_name = "ISSUER", requires = "http")]
        oauth_issuer: Option<String>,
        /// A scope every token must grant (repeatable; with --oauth-issuer).
        #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
        oauth_scope: Vec<String>,
    },
    /// Who the server is, the revision and era it speaks, what it offers.
    ///
    /// JSON: {server, protocolVersion, era, capabilities, instructions, counts: {tools,
    /// resources, resourceTemplates, prompts}} (a count is null when not offered).
    Inspect {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// List every tool.
    ///
    /// JSON: the array of tools as the server lists them.
    Tools {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Call a tool and print its result.
    ///
    /// Images and audio are saved to files; progress is shown on a terminal. JSON: the CallToolResult. Exit 1 when the result is an error.
    Call {
        #[command(flatten)]
        call: CallArgs,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// List every resource and resource template.
    ///
    /// JSON: {resources, resourceTemplates}.
    Resources {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Read a resource.
    ///
    /// JSON: the ReadResourceResult.
    Read {
        /// The resource's URI.
        uri: String,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// List every prompt.
    ///
    /// JSON: the array of prompts.
    Prompts {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Get a prompt with its arguments.
    ///
    /// JSON: the GetPromptResult.
    Prompt {
        /// The prompt's name.
        name: String,
        /// An argument, `name=value` (repeatable).
        #[arg(long = "arg", short = 'a', value_name = "NAME=VALUE")]
        args: Vec<String>,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Log in to an HTTP server that asks for OAuth, and keep the tokens for later commands.
    ///
    /// Opens the authorization URL in a browser (or prints it with --no-browser) and waits
    /// for the redirect on http://127.0.0.1:33418/callback (or the next free port up to
    /// 33427); with --client-credentials,
    /// no person is needed. Tokens are kept in $ZEST_TOKEN_CACHE or
    /// ~/.config/zest/tokens.json (mode 600) and refreshed when they expire. JSON: {url,
    /// tokens: {issuer, scope, expiresAt, refreshable} or null}.
    Login {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Forget the tokens kept for an HTTP server.
    Logout {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Offer a server on another transport: stdio in front of HTTP, or HTTP in front of stdio.
    ///
    /// `zest bridge URL` is a stdio server forwarding to the server at URL (Streamable HTTP
    /// or legacy SSE); `zest bridge --http ADDR -- CMD` serves the stdio server CMD over
    /// HTTP. Tool calls (with progress), resources, prompts and completions are forwarded,
    /// and the upstream's logs, list changes and resource updates passed on, and a call
    /// cancelled here is cancelled upstream; the upstream's own requests (sampling,
    /// elicitation, roots) are asked of the client of the newest call in flight.
    Bridge {
        /// Serve over HTTP at ADDR (a port alone binds 127.0.0.1) instead of stdio.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// With --http, serve only requests that carry `Authorization: Bearer TOKEN` (all
        /// but /health; others get 401). `--bearer-token` is the one sent upstream.
        #[arg(long, value_name = "TOKEN", requires = "http")]
        require_token: Option<String>,
        /// With --http, serve only requests with a JWT access token from this OAuth issuer.
        #[arg(long, value_name = "ISSUER", requires = "http")]
        oauth_issuer: Option<String>,
        /// A scope every token must grant (repeatable; with --oauth-issuer).
        #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
        oauth_scope: Vec<String>,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// One ping, timed.
    ///
    /// JSON: {ok, ms}.
    Ping {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Call one tool N times from C threads: calls/s and latency.
    ///
    /// One session; calls/s, p50/p99/max latency, errors. JSON: {tool, calls, concurrency, errors, seconds, callsPerSecond,
    /// p50Ms, p99Ms, maxMs}.
    Bench {
        #[command(flatten)]
        bench: bench::BenchArgs,
        #[command(flatten)]
        target: TargetArgs,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("zest: {failure}");
            failure.exit_code()
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    let json = cli.json;
    match cli.command {
        Command::Serve {
            dir,
            stdio: _,
            http,
            allow_write,
            allow_exec,
            bearer_token,
            oauth_issuer,
            oauth_scope,
        } => {
            let workspace = serve::Workspace::open(&dir, allow_write)
                .map_err(|e| Failure::usage(format!("{}: {e}", dir.display())))?;
            let oauth = oauth_issuer.map(|issuer| (issuer, oauth_scope));
            let guard = guard::Guard { bearer_token, oauth };
            let serving = serve::Serve { workspace, allow_exec, guard };
            match http {
                Some(addr) => {
                    let addr = if addr.parse::<u16>().is_ok() {
                        format!("127.0.0.1:{addr}")
                    } else {
                        addr
                    };
                    serve::http(&serving, &addr)
                        .map_err(|e| Failure::usage(format!("cannot listen on {addr}: {e}")))
                }
                None => {
                    serve::stdio(&serving);
                    Ok(())
                }
            }
        }
        Command::Demo => commands::demo(),
        Command::Login { target } => commands::login(&target, json),
        Command::Logout { target } => commands::logout(&target),
        Command::Inspect { target } => commands::inspect(&target, json),
        Command::Tools { target } => commands::tools(&target, json),
        Command::Call { call, target } => commands::call(&target, &call, json),
        Command::Resources { target } => commands::resources(&target, json),
        Command::Read { uri, target } => commands::read(&target, &uri, json),
        Command::Prompts { target } => commands::prompts(&target, json),
        Command::Prompt { name, args, target } => commands::prompt(&target, &name, &args, json),
        Command::Bridge { http, require_token, oauth_issuer, oauth_scope, target } => {
            let oauth = oauth_issuer.map(|issuer| (issuer, oauth_scope));
            let guard = guard::Guard { bearer_token: require_token, oauth };
            let front = match http {
                Some(addr) => bridge::Front::Http(loopback_if_port(addr), guard),
                None => bridge::Front::Stdio,
            };
            bridge::bridge(&target, &front)
        }
        Command::Ping { target } => commands::ping(&target, json),
        Command::Bench { bench, target } => bench::bench(&target, &bench, json),
    }
}

/// `ADDR` as given, or `127.0.0.1:ADDR` when it is a port alone.
fn loopback_if_port(addr: String) -> String {
    if addr.parse::<u16>().is_ok() {
        format!("127.0.0.1:{addr}")
    } else {
        addr
    }
}
