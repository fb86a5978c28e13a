//! Runs the pinned suite one scenario at a time against zest's fixtures and judges each run.
//!
//! Server mode: per runtime, start `everything_server --runtime R --port P` on a free
//! loopback port, wait for `GET /health`, then run every scenario the suite lists, one by
//! one (`conformance server --url http://localhost:P/mcp --scenario S`). Client mode: per
//! runtime, run every non-auth client scenario with `conformance_client --runtime R` as the
//! client command. Every run gets its own output directory and a time limit; its
//! `checks.json` is judged by [`crate::report::verdict`].

pub mod harness;
pub mod process;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::client_auth;
use crate::report::baseline::{Baseline, Place};
use crate::report::checks::{self, Check, Status};
use crate::report::table::Row;
use crate::report::verdict::{judge, RunOutput};
use crate::Runtime;
use harness::{client_plays, Harness, Suite};

/// Which side of MCP the suite tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The suite is the client; zest's everything fixture is the server.
    Server,
    /// The suite is the server; zest's client fixture is the client.
    Client,
}

impl Mode {
    /// `server` or `client`, as the suite's subcommands and the baseline name it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Server => "server",
            Self::Client => "client",
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The runtimes to run the fixtures on.
    pub runtimes: Vec<Runtime>,
    /// Server mode, client mode or both.
    pub modes: Vec<Mode>,
    /// The suite versions.
    pub suites: Vec<Suite>,
    /// Only these scenarios (empty: every one listed).
    pub only: Vec<String>,
    /// Where each run writes (`<out>/<suite>/<mode>/<runtime>/<scenario>/`).
    pub out: PathBuf,
    /// The limit on one scenario run.
    pub timeout: Duration,
    /// Where the fixture binaries are.
    pub bin_dir: PathBuf,
    /// Server mode against this MCP endpoint instead of a fixture the runner starts (a
    /// fleet behind a proxy, say); rows are labelled with the plan's runtime.
    pub url: Option<String>,
    /// The known failures.
    pub baseline: Baseline,
}

/// Runs `plan`, printing each verdict as it comes; returns every row for the table.
pub fn run(plan: &Plan, harness: &Harness) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for &mode in &plan.modes {
        for &runtime in &plan.runtimes {
            match mode {
                Mode::Server => server_mode(plan, harness, runtime, &mut rows)?,
                Mode::Client => client_mode(plan, harness, runtime, &mut rows)?,
            }
        }
    }
    Ok(rows)
}

fn server_mode(
    plan: &Plan,
    harness: &Harness,
    runtime: Runtime,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    // The fixture (when the runner starts one) lives until this function returns.
    let fixture = plan.url.is_none().then(|| start_fixture(plan, runtime));
    let started = match (&plan.url, &fixture) {
        (Some(url), _) => Ok(url.clone()),
        (None, Some(Ok(f))) => Ok(format!("http://localhost:{}/mcp", f.port)),
        (None, Some(Err(why))) => Err(why.clone()),
        (None, None) => Err("no fixture".into()),
    };
    for suite in &plan.suites {
        for listed in selected(plan, harness.list(*suite, Mode::Server)?, |_| true) {
            let output = match &started {
                Ok(url) => {
                    let mut command = harness.command(*suite);
                    command.args(["server", "--url", url, "--scenario", &listed.name]);
                    if let Some(revision) = suite.spec_version {
                        command.args(["--spec-version", revision]);
                    }
                    run_one(plan, suite, Mode::Server, runtime, &listed.name, command)
                }
                Err(why) => RunOutput { exit: None, checks: Err(why.clone()) },
            };
            rows.push(row(plan, suite, Mode::Server, runtime, &listed.name, &output));
        }
    }
    Ok(())
}

/// Starts the fixture on `runtime`, killed when dropped.
fn start_fixture(plan: &Plan, runtime: Runtime) -> Result<process::Fixture, String> {
    let dir = plan.out.join(format!("fixture-{runtime}"));
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let port = process::free_port().map_err(|e| format!("no free port: {e}"))?;
    let mut command = Command::new(plan.bin_dir.join("everything_server"));
    command.args(["--runtime", runtime.name(), "--port", &port.to_string()]);
    process::start_fixture(command, port, &dir.join("stderr.txt"), Duration::from_secs(20))
}

fn client_mode(
    plan: &Plan,
    harness: &Harness,
    runtime: Runtime,
    rows: &mut Vec<Row>,
) -> Result<(), String> {
    let client = plan.bin_dir.join("conformance_client");
    let client_command = format!("{} --runtime {runtime}", shell_quote(&client));
    for suite in plan.suites.iter().filter(|s| s.client) {
        let listed = harness.list(*suite, Mode::Client)?;
        for scenario in selected(plan, listed, client_plays) {
            let Some(revision) = scenario.client_spec_version(suite) else { continue };
            let mut command = harness.command(*suite);
            command.args(["client", "--command", &client_command, "--scenario", &scenario.name]);
            if let Some(version) = revision {
                command.args(["--spec-version", version]);
            }
            let output = run_one(plan, suite, Mode::Client, runtime, &scenario.name, command);
            rows.push(row(plan, suite, Mode::Client, runtime, &scenario.name, &output));
        }
    }
    Ok(())
}

fn selected(
    plan: &Plan,
    listed: Vec<harness::Listed>,
    wanted: impl Fn(&str) -> bool,
) -> Vec<harness::Listed> {
    listed
        .into_iter()
        .filter(|l| wanted(&l.name))
        .filter(|l| plan.only.is_empty() || plan.only.contains(&l.name))
        .collect()
}

/// Runs one scenario into a fresh directory and reads its checks.
fn run_one(
    plan: &Plan,
    suite: &Suite,
    mode: Mode,
    runtime: Runtime,
    scenario: &str,
    mut command: Command,
) -> RunOutput {
    let dir = plan
        .out
        .join(suite.version)
        .join(mode.name())
        .join(runtime.name())
        .join(scenario.replace('/', "_"));
    let _ = fs::remove_dir_all(&dir);
    if let Err(e) = fs::create_dir_all(&dir) {
        return RunOutput { exit: None, checks: Err(format!("{}: {e}", dir.display())) };
    }
    command.arg("-o").arg(dir.join("results"));
    let status = process::run_bounded(command, &dir.join("suite.log"), plan.timeout);
    let checks = process::find_checks(&dir.join("results"))
        .and_then(|path| {
            let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut checks = checks::parse(&text)?;
            checks.extend(refusal_check(mode, scenario, &path));
            Ok(checks)
        })
        .map_err(|why| match status {
            Some(_) => why,
            None => {
                format!("{why} (the suite was killed after {:?} or did not start)", plan.timeout)
            }
        });
    RunOutput { exit: status.and_then(|s| s.code()), checks }
}

/// A scenario that expects the client to refuse passes the suite whatever made the client
/// fail: the client's stderr (beside `checks.json`) must name the expected refusal.
fn refusal_check(mode: Mode, scenario: &str, checks: &Path) -> Option<Check> {
    let code = client_auth::expected_refusal(scenario).filter(|_| mode == Mode::Client)?;
    let stderr = checks.with_file_name("stderr.txt");
    let said = fs::read_to_string(&stderr).unwrap_or_default();
    let refused = said.lines().any(|l| l.trim() == client_auth::refusal_line(code));
    Some(Check {
        id: "zest-refusal-reason".into(),
        description: format!("the client refused with {code}"),
        status: if refused { Status::Success } else { Status::Failure },
        error_message: (!refused).then(|| format!("the client did not refuse with {code}: {said}")),
    })
}

fn row(
    plan: &Plan,
    suite: &Suite,
    mode: Mode,
    runtime: Runtime,
    scenario: &str,
    output: &RunOutput,
) -> Row {
    let place =
        Place { mode: mode.name(), scenario, suite: suite.version, runtime: runtime.name() };
    let verdict = judge(place, output, &plan.baseline);
    eprintln!("{:5} {} {} {runtime} {scenario}", verdict.label(), suite.version, mode.name());
    Row {
        suite: suite.version.into(),
        mode: mode.name().into(),
        runtime: runtime.name().into(),
        scenario: scenario.into(),
        verdict,
    }
}

/// `path` quoted for `/bin/sh` (the suite runs the client command through it).
fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests;
