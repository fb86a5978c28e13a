//! The official suite's client fixture: plays the scenario named in
//! `MCP_CONFORMANCE_SCENARIO` against the server URL the suite appends as the last argument.
//!
//! ```text
//! MCP_CONFORMANCE_SCENARIO=tools_call conformance_client --runtime tokio http://localhost:PORT/mcp
//! ```
//!
//! It needs zest's Streamable HTTP client (`Client::connect(url, options)` on each runtime),
//! which is not in this build yet: until it is, every run fails at the connect step and says
//! so. The scenario steps themselves (`zest_conformance::client_scenarios`) are tested over
//! stdio against `scenario_server`.

use std::process::ExitCode;

use zest_conformance::client_scenarios::{elicitation_answer, play, Scenario};
use zest_conformance::Runtime;

const USAGE: &str =
    "usage: MCP_CONFORMANCE_SCENARIO=NAME conformance_client --runtime tokio|smol|blocking URL";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("conformance_client: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (runtime, url) = match args.as_slice() {
        [flag, runtime, url] if flag == "--runtime" => (runtime.parse::<Runtime>()?, url),
        _ => return Err(USAGE.into()),
    };
    let name = std::env::var("MCP_CONFORMANCE_SCENARIO")
        .map_err(|_| format!("MCP_CONFORMANCE_SCENARIO is not set\n{USAGE}"))?;
    let scenario: Scenario = name.parse()?;
    connect(runtime, url, scenario)
}

/// Connects over Streamable HTTP and plays `scenario`. Not available until the runtimes
/// have `Client::connect(url, options)`; then this builds the client with
/// `elicitation_answer` as its elicitation handler and calls `client_scenarios::play`.
fn connect(runtime: Runtime, url: &str, scenario: Scenario) -> Result<(), String> {
    if runtime == Runtime::Blocking {
        return play_blocking(url, scenario);
    }
    Err(format!(
        "cannot play {scenario} against {url}: the Streamable HTTP client is not available in \
         this build (zest-{runtime} has no Client::connect(url, options) yet)"
    ))
}

/// zest-blocking's HTTP client, with [`elicitation_answer`] as its elicitation handler.
fn play_blocking(url: &str, scenario: Scenario) -> Result<(), String> {
    let handlers = zest_core::handler::SyncClientHandlers::default()
        .on_elicitation(|params| Ok(elicitation_answer(&params)));
    let options =
        zest_blocking::ClientOptions::new("zest-conformance-client", "0.1.0").handlers(handlers);
    let client = zest_blocking::Client::connect(url, options)
        .map_err(|e| format!("cannot connect to {url}: {e}"))?;
    let played = play(scenario, &client);
    // A failed DELETE does not change the scenario's outcome.
    let _ = client.close();
    played.map(drop).map_err(|e| format!("{scenario}: {e}"))
}
