//! The stdio soak the runtime crates share: many `tools/call` echo calls from one client (this
//! process) to its fixture server (a child process), made in batches, with the resident
//! memory of both processes sampled after each batch. The runtime's own part is one batch;
//! everything else (the texts, the batching, /proc, the printed table) is here. Included
//! through `#[path = "../../tests/support/soak.rs"] mod soak;` by the runtimes' `soak` bench
//! and `soak` test; conformance tests use its [`example`] builder.
//!
//! Figures are printed by the bench, never asserted with timing; the test asserts counts and
//! a generous bound on memory growth.
#![allow(dead_code, clippy::disallowed_methods)]

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use zest_core::schema::CallToolResult;

#[path = "proc_status.rs"]
mod proc_status;
use proc_status::status_kib;

/// Overrides [`DEFAULT_CALLS`] in the bench.
pub(crate) const CALLS_ENV: &str = "ZEST_SOAK_CALLS";
/// Calls in a bench soak unless [`CALLS_ENV`] says otherwise.
pub(crate) const DEFAULT_CALLS: usize = 1_000_000;
/// Calls between two samples in a bench soak.
pub(crate) const SAMPLE_EVERY: usize = 100_000;
/// Calls in flight at once (tasks or threads, each making its share one after another).
pub(crate) const CONCURRENCY: usize = 8;

/// [`DEFAULT_CALLS`], or the count in [`CALLS_ENV`].
pub(crate) fn calls_from_env() -> usize {
    match std::env::var(CALLS_ENV) {
        Ok(n) => n.trim().parse().unwrap_or_else(|_| panic!("{CALLS_ENV}={n:?} is not a count")),
        Err(_) => DEFAULT_CALLS,
    }
}

/// The text of call `i`: 64 characters, unique across the soak, so an answer given to the
/// wrong call shows.
pub(crate) fn text(i: usize) -> String {
    format!("soak call {i:054}")
}

/// The `echo` arguments of call `i` (its [`text`]).
pub(crate) fn echo_args(i: usize) -> serde_json::Value {
    serde_json::json!({"text": text(i)})
}

/// Panics unless call `i` came back with its own text.
pub(crate) fn check_echo(i: usize, result: Result<CallToolResult, impl std::fmt::Display>) {
    let result = result.unwrap_or_else(|e| panic!("call {i}: {e}"));
    let echoed = result.content.first().and_then(|c| c.as_text());
    assert_eq!(echoed, Some(text(i).as_str()), "the answer to call {i}");
}

/// The resident memory of both processes after a batch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sample {
    /// Calls answered so far.
    pub(crate) calls: usize,
    /// Since the first call.
    pub(crate) elapsed: Duration,
    pub(crate) client_rss_kib: u64,
    pub(crate) server_rss_kib: u64,
}

/// A finished soak: every call was answered with its own text, or it panicked.
#[derive(Debug)]
pub(crate) struct Soak {
    /// Calls answered, each once, with the text it sent.
    pub(crate) answered: usize,
    /// One per batch, the last after the last call.
    pub(crate) samples: Vec<Sample>,
    pub(crate) client_hwm_kib: u64,
    pub(crate) server_hwm_kib: u64,
}

/// Makes calls `0..calls` in batches of `every` through `batch`, which makes the calls of the
/// range it is given (their texts are [`text`]`(i)`), checks that each came back with its own
/// text, and returns how many did. Samples both processes' RSS after each batch and their
/// peak (VmHWM) after the last; `server_pid` is the fixture's. Panics if a batch comes back
/// short.
pub(crate) fn run(
    calls: usize,
    every: usize,
    server_pid: u32,
    mut batch: impl FnMut(Range<usize>) -> usize,
) -> Soak {
    let client_pid = std::process::id();
    let started = Instant::now();
    let mut soak = Soak { answered: 0, samples: Vec::new(), client_hwm_kib: 0, server_hwm_kib: 0 };
    while soak.answered < calls {
        let range = soak.answered..(soak.answered + every).min(calls);
        let want = range.len();
        let got = batch(range.clone());
        assert_eq!(got, want, "calls {range:?}: {got} answered with their own text");
        soak.answered += got;
        soak.samples.push(Sample {
            calls: soak.answered,
            elapsed: started.elapsed(),
            client_rss_kib: status_kib(client_pid, "VmRSS"),
            server_rss_kib: status_kib(server_pid, "VmRSS"),
        });
    }
    soak.client_hwm_kib = status_kib(client_pid, "VmHWM");
    soak.server_hwm_kib = status_kib(server_pid, "VmHWM");
    soak
}

/// Calls in the short soak the runtimes' `soak` tests run (CI), and between two samples.
pub(crate) const SHORT_CALLS: usize = 20_000;
pub(crate) const SHORT_EVERY: usize = 5_000;

/// A bound no run near its steady state reaches, even on a loaded machine (RSS does not
/// depend on speed): a leak of a kilobyte a call would pass it.
const MAX_GROWTH_KIB: i64 = 32 * 1024;

impl Soak {
    /// What the short soak of a `soak` test must show: every one of [`SHORT_CALLS`]
    /// answered, one sample per [`SHORT_EVERY`], and neither process's memory growing past
    /// [`MAX_GROWTH_KIB`].
    pub(crate) fn assert_short(&self) {
        assert_eq!(self.answered, SHORT_CALLS);
        assert_eq!(self.samples.len(), SHORT_CALLS / SHORT_EVERY);
        let (client, server) = self.growth_kib();
        assert!(client < MAX_GROWTH_KIB, "client RSS grew {client} KiB: {:?}", self.samples);
        assert!(server < MAX_GROWTH_KIB, "server RSS grew {server} KiB: {:?}", self.samples);
    }

    /// The growth in KiB (client, server) from the first sample to the last.
    pub(crate) fn growth_kib(&self) -> (i64, i64) {
        let (Some(first), Some(last)) = (self.samples.first(), self.samples.last()) else {
            return (0, 0);
        };
        let diff = |a: u64, b: u64| b as i64 - a as i64;
        (
            diff(first.client_rss_kib, last.client_rss_kib),
            diff(first.server_rss_kib, last.server_rss_kib),
        )
    }

    /// Prints the samples (calls/s per batch and overall), the peaks and the growth.
    pub(crate) fn print(&self) {
        println!(
            "{:>10} {:>9} {:>9} {:>15} {:>15}",
            "calls", "s", "calls/s", "client RSS", "server RSS"
        );
        let mut previous = (0, Duration::ZERO);
        for s in &self.samples {
            let rate = (s.calls - previous.0) as f64 / (s.elapsed - previous.1).as_secs_f64();
            previous = (s.calls, s.elapsed);
            println!(
                "{:>10} {:>9.1} {:>9.0} {:>11} KiB {:>11} KiB",
                s.calls,
                s.elapsed.as_secs_f64(),
                rate,
                s.client_rss_kib,
                s.server_rss_kib
            );
        }
        let Some(last) = self.samples.last() else { return };
        let first = self.samples[0];
        println!(
            "{} calls in {:.1} s: {:.0} calls/s, each answered once with its own text",
            self.answered,
            last.elapsed.as_secs_f64(),
            self.answered as f64 / last.elapsed.as_secs_f64()
        );
        println!(
            "peak RSS (VmHWM): client {} KiB, server {} KiB",
            self.client_hwm_kib, self.server_hwm_kib
        );
        if last.calls == first.calls {
            return;
        }
        let (client, server) = self.growth_kib();
        let per_1000 = |kib: i64| kib as f64 * 1024.0 * 1000.0 / (last.calls - first.calls) as f64;
        println!(
            "RSS growth from {} to {} calls: client {client:+} KiB ({:+.1} bytes per 1,000 calls), \
             server {server:+} KiB ({:+.1} bytes per 1,000 calls)",
            first.calls,
            last.calls,
            per_1000(client),
            per_1000(server)
        );
    }
}

/// `runtime`'s fixture server (`<runtime>_stdio_server`) in this binary's profile, (re)built
/// with cargo in that profile first so that figures never come from a stale binary; or the
/// binary `ZEST_SOAK_<RUNTIME>_FIXTURE` names (`scripts/measure-rss`: zest-tokio's server
/// as a user's crate builds it).
pub(crate) fn fixture(runtime: &str) -> PathBuf {
    let named = format!("ZEST_SOAK_{}_FIXTURE", runtime.to_uppercase());
    match std::env::var_os(named) {
        Some(path) => path.into(),
        None => example(runtime, "stdio_server"),
    }
}

/// `runtime`'s example `<runtime>_<kind>` in this binary's profile, (re)built first.
pub(crate) fn example(runtime: &str, kind: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("this binary");
    let dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<bench>");
    let name = format!("{runtime}_{kind}");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "-q", "-p", &format!("zest-{runtime}"), "--example", &name]);
    if dir.ends_with("release") {
        build.arg("--release");
    }
    let status = build.status().expect("cargo runs");
    let path = dir.join("examples").join(name);
    assert!(status.success() && path.exists(), "building {} failed", path.display());
    path
}
