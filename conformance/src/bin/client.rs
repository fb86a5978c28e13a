//! The official suite's client fixture: plays the scenario named in
//! `MCP_CONFORMANCE_SCENARIO` against the server URL the suite appends as the last argument.
//!
//! ```text
//! MCP_CONFORMANCE_SCENARIO=tools_call conformance_client --runtime tokio http://localhost:PORT/mcp
//! ```
//!
//! It connects with the runtime's Streamable HTTP client (`Client::connect_to(endpoint,
//! options)`) on tokio, smol or blocking threads, with the client's default config: the era
//! ladder, which a session-era suite's server steps down to `initialize`. The scenario steps themselves
//! (`zest_conformance::client_scenarios`) are tested over stdio against `scenario_server`.

use std::process::ExitCode;

use zest_conformance::client_auth::{describe_connect, oauth_config};
use zest_conformance::client_scenarios::{elicitation_answer, play_with, OnTokio, Scenario};
use zest_conformance::Runtime;
use zest_core::runtime::http_client::HttpEndpoint;

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
    let mut endpoint = HttpEndpoint::new(url.as_str());
    if scenario == Scenario::Auth {
        endpoint = endpoint.oauth(oauth_config(&name, &context()));
    }
    connect(runtime, endpoint, scenario)
}

/// Connects over Streamable HTTP (with `elicitation_answer` as the elicitation handler), plays
/// `scenario` and closes the session.
fn connect(runtime: Runtime, endpoint: HttpEndpoint, scenario: Scenario) -> Result<(), String> {
    let url = endpoint.url.clone();
    match runtime {
        Runtime::Tokio => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;
            let handlers = zest_core::handler::AsyncClientHandlers::default()
                .on_elicitation(|p| async move { Ok(elicitation_answer(&p)) })
                .on_authorize(|url| async move {
                    let headless = move || zest_tokio::authorize_headless(&url);
                    tokio::task::spawn_blocking(headless).await.map_err(|e| e.to_string())?
                });
            let options = zest_tokio::ClientOptions::new(
                "zest-conformance-client",
                env!("CARGO_PKG_VERSION"),
            )
            .handlers(handlers);
            let client = rt
                .block_on(zest_tokio::Client::connect_to(endpoint, options))
                .map_err(|e| format!("cannot connect to {url}: {}", describe_connect(&e)))?;
            let played =
                play_with(scenario, &OnTokio { runtime: &rt, client: &client }, &context());
            let _ = rt.block_on(client.close());
            played.map(|_| ())
        }
        Runtime::Smol => {
            let handlers = zest_smol::AsyncClientHandlers::default()
                .on_elicitation(|p| async move { Ok(elicitation_answer(&p)) })
                .on_authorize(|url| smol::unblock(move || zest_smol::authorize_headless(&url)));
            let options = zest_smol::ClientOptions::new("zest-conformance-client", "0.1.0")
                .handlers(handlers);
            let client = smol::block_on(zest_smol::Client::connect_to(endpoint, options))
                .map_err(|e| format!("cannot connect to {url}: {}", describe_connect(&e)))?;
            let played = play_with(scenario, &client, &context());
            // The session ends either way; a failed DELETE does not change the verdict.
            let _ = smol::block_on(client.close());
            played.map(|_| ())
        }
        Runtime::Blocking => play_blocking(endpoint, scenario),
    }
}

/// zest-blocking's HTTP client, with [`elicitation_answer`] as its elicitation handler.
fn play_blocking(endpoint: HttpEndpoint, scenario: Scenario) -> Result<(), String> {
    let url = endpoint.url.clone();
    let handlers = zest_core::handler::SyncClientHandlers::default()
        .on_elicitation(|params| Ok(elicitation_answer(&params)))
        .on_authorize(|url| zest_blocking::authorize_headless(&url));
    let options =
        zest_blocking::ClientOptions::new("zest-conformance-client", "0.1.0").handlers(handlers);
    let client = zest_blocking::Client::connect_to(endpoint, options)
        .map_err(|e| format!("cannot connect to {url}: {}", describe_connect(&e)))?;
    let played = play_with(scenario, &client, &context());
    // A failed DELETE does not change the scenario's outcome.
    let _ = client.close();
    played.map(drop).map_err(|e| format!("{scenario}: {e}"))
}

/// The context the suite passes to the client (`MCP_CONFORMANCE_CONTEXT`), `null` if none.
fn context() -> serde_json::Value {
    let text = std::env::var("MCP_CONFORMANCE_CONTEXT").unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_default()
}
