//! Runs the official MCP conformance suite against zest's fixtures, one scenario at a time,
//! and prints the score table. Exits 1 when any run fails (a FAILURE or WARNING the baseline
//! does not list, no SUCCESS at all, a stale baseline entry), 2 on bad usage.
//!
//! ```text
//! conformance_runner [--runtime tokio|smol|blocking|all] [--mode server|client|both]
//!                    [--suite 0.2.0-alpha.12|0.1.16|all] [--scenario NAME]...
//!                    [--baseline FILE] [--harness DIR] [--out DIR] [--timeout SECONDS]
//! ```
//! Defaults: every runtime, both modes, both suites, every scenario, `conformance/baseline.json`,
//! `conformance/harness`, `target/conformance`, 120 s. Usually started by `scripts/conformance`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use zest_conformance::report::baseline::Baseline;
use zest_conformance::report::table::render;
use zest_conformance::runner::harness::{Harness, SUITES};
use zest_conformance::runner::{run, Mode, Plan};
use zest_conformance::Runtime;

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

fn main() -> ExitCode {
    let (plan, harness) = match parse(std::env::args().skip(1)) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("conformance_runner: {message}");
            return ExitCode::from(2);
        }
    };
    if let Err(message) = harness.check() {
        eprintln!("conformance_runner: {message}");
        return ExitCode::from(2);
    }
    match run(&plan, &harness) {
        Ok(rows) => {
            print!("{}", render(&rows));
            if rows.is_empty() {
                eprintln!("conformance_runner: no scenario matched");
                return ExitCode::from(2);
            }
            if rows.iter().all(|r| r.verdict.passed()) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(message) => {
            eprintln!("conformance_runner: {message}");
            ExitCode::FAILURE
        }
    }
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<(Plan, Harness), String> {
    let conformance = PathBuf::from(MANIFEST_DIR);
    let mut plan = Plan {
        runtimes: Runtime::ALL.to_vec(),
        modes: vec![Mode::Server, Mode::Client],
        suites: SUITES.to_vec(),
        only: Vec::new(),
        out: conformance.join("../target/conformance"),
        timeout: Duration::from_secs(120),
        bin_dir: std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(PathBuf::from))
            .ok_or("cannot tell where this binary is")?,
        baseline: Baseline::default(),
        url: None,
    };
    let mut baseline = conformance.join("baseline.json");
    let mut harness = conformance.join("harness");
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--runtime" => {
                plan.runtimes = match value()?.as_str() {
                    "all" => Runtime::ALL.to_vec(),
                    name => vec![name.parse()?],
                }
            }
            "--mode" => {
                plan.modes = match value()?.as_str() {
                    "server" => vec![Mode::Server],
                    "client" => vec![Mode::Client],
                    "both" => vec![Mode::Server, Mode::Client],
                    other => {
                        return Err(format!("--mode: {other:?} is not server, client or both"))
                    }
                }
            }
            "--suite" => {
                let version = value()?;
                plan.suites = SUITES
                    .into_iter()
                    .filter(|s| version == "all" || s.version == version)
                    .collect();
                if plan.suites.is_empty() {
                    return Err(format!(
                        "--suite: {version:?} is not 0.2.0-alpha.12, 0.1.16 or all"
                    ));
                }
            }
            "--scenario" => plan.only.push(value()?),
            "--url" => plan.url = Some(value()?),
            "--baseline" => baseline = PathBuf::from(value()?),
            "--harness" => harness = PathBuf::from(value()?),
            "--out" => plan.out = PathBuf::from(value()?),
            "--timeout" => {
                let seconds = value()?;
                let seconds: u64 =
                    seconds.parse().map_err(|_| format!("--timeout: bad {seconds:?}"))?;
                plan.timeout = Duration::from_secs(seconds);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let text =
        std::fs::read_to_string(&baseline).map_err(|e| format!("{}: {e}", baseline.display()))?;
    plan.baseline = Baseline::parse(&text)?;
    Ok((plan, Harness::new(harness)))
}
