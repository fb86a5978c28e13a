//! The official suite's client fixture: plays the scenario named in
//! `MCP_CONFORMANCE_SCENARIO` against the server URL the suite appends as the last argument.
//!
//! ```text
//! MCP_CONFORMANCE_SCENARIO=tools_call conformance_client --runtime tokio http://localhost:PORT/mcp
//! ```
//!
//! It uses zest's Streamable HTTP client (`Client::connect(url, options)`), wired for smol;
//! on a runtime not wired yet every run fails at the connect step and says so. The scenario
//! steps themselves (`zest_conformance::client_scenarios`) are tested over stdio against
//! `scenario_server`.

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

/// Connects over Streamable HTTP with `elicitation_answer` as the elicitation handler, plays
/// `scenario` and closes the session.
fn connect(runtime: Runtime, url: &str, scenario: Scenario) -> Result<(), String> {
    match runtime {
        Runtime::Smol => {
            let handlers = zest_smol::AsyncClientHandlers::default()
                .on_elicitation(|p| async move { Ok(elicitation_answer(&p)) });
            let options = zest_smol::ClientOptions::new("zest-conformance-client", "0.1.0")
                .handlers(handlers);
            // The suite's sse-retry server takes the first GET it sees for the tool call's
            // reconnection: the standalone GET stream, opened just after the handshake, would
            // race it and carry no Last-Event-ID (a fresh stream has none). Other scenarios
            // need that stream (the elicitation scenario asks on it).
            let mut endpoint = zest_smol::HttpEndpoint::new(url);
            endpoint.open_get_stream = scenario != Scenario::SseRetry;
            let client = smol::block_on(zest_smol::Client::connect_to(endpoint, options))
                .map_err(|e| format!("cannot connect to {url}: {e}"))?;
            let played = play(scenario, &client);
            // The session ends either way; a failed DELETE does not change the verdict.
            let _ = smol::block_on(client.close());
            played.map(|_| ())
        }
        Runtime::Tokio | Runtime::Blocking => Err(format!(
            "cannot play {scenario} against {url}: the Streamable HTTP client on {runtime} is \
             not wired into this fixture yet (only smol is)"
        )),
    }
}
