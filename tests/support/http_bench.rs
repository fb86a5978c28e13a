//! What the runtime crates' HTTP benches share: the table they print, and a server in a
//! process of its own (the bench binary again, with [`ROLE_ENV`] set) whose peak RSS,
//! memory per idle session and memory with [`WIDE_SESSIONS`] busy at once are read from
//! /proc, and whose [`ServerStats`] it tells on request. Included through
//! `#[path = "../../tests/support/http_bench.rs"] mod http_bench;` beside
//! `#[path = "../../tests/support/load.rs"] mod load;` (its raw driver opens the sessions).
//!
//! Figures are printed, never asserted.
#![allow(dead_code, clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zest_core::runtime::http_server::ServerStats;

use crate::load::{self, WIDE_SESSIONS};

#[path = "proc_status.rs"]
mod proc_status;
use proc_status::status_kib;

/// Set to `server` when the bench binary is re-executed as the server process, to
/// [`FLOOR_ROLE`] when as the raw echo server whose memory is the floor's.
pub(crate) const ROLE_ENV: &str = "ZEST_HTTP_BENCH_ROLE";

/// Set to a server's MCP URL, the bench only drives that server (in a process of another
/// binary) through the calls [`print_peak`] follows, 8,000 at concurrency 8, and exits:
/// scripts/measure-rss reads that server's peak RSS.
pub(crate) const DRIVE_ENV: &str = "ZEST_HTTP_BENCH_DRIVE";

/// The [`ROLE_ENV`] of the floor's process: the raw echo server alone.
pub(crate) const FLOOR_ROLE: &str = "floor";

/// Idle sessions opened for the memory-per-session figure.
pub(crate) const IDLE_SESSIONS: usize = 10_000;

/// Sessions the server process accepts: the idle ones plus the clients' own.
pub(crate) const MAX_SESSIONS: usize = 2 * IDLE_SESSIONS;

/// Calls each of the [`WIDE_SESSIONS`] makes.
pub(crate) const WIDE_BENCH_CALLS: usize = 20;

/// Times the wide run is repeated on one server process, unless [`WIDE_ROUNDS_ENV`] says.
pub(crate) const WIDE_ROUNDS: usize = 3;

/// Overrides [`WIDE_ROUNDS`]: more rounds tell a slow leak from the allocator settling.
pub(crate) const WIDE_ROUNDS_ENV: &str = "ZEST_WIDE_ROUNDS";

/// How many times the floor and zest runs alternate at each concurrency. One run of either
/// can be lucky or not (whether the floor's two tasks share a worker thread, what else the
/// machine does), so the round whose share of its floor is the median is the one printed.
pub(crate) const ECHO_ROUNDS: usize = 3;

/// Calls per second and latencies of one run.
pub(crate) struct Run {
    pub(crate) per_sec: f64,
    pub(crate) latencies: Vec<Duration>,
}

impl Run {
    /// A run of `latencies` that took `took` in all.
    pub(crate) fn new(latencies: Vec<Duration>, took: Duration) -> Self {
        Self { per_sec: latencies.len() as f64 / took.as_secs_f64(), latencies }
    }
}

/// The header of the throughput table.
pub(crate) fn print_header() {
    println!(
        "{:<30} {:>4} {:>9} {:>8} {:>8} {:>9}",
        "", "conc", "calls/s", "p50 µs", "p99 µs", "of floor"
    );
}

/// One row; with `floor`, the share of its calls per second.
pub(crate) fn print_row(name: &str, concurrency: usize, run: &Run, floor: Option<&Run>) {
    let mut sorted = run.latencies.clone();
    sorted.sort();
    let at = |q: f64| sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)];
    let share =
        floor.map_or(String::new(), |f| format!("{:.0} %", 100.0 * run.per_sec / f.per_sec));
    println!(
        "{name:<30} {concurrency:>4} {:>9.0} {:>8} {:>8} {share:>9}",
        run.per_sec,
        at(0.5).as_micros(),
        at(0.99).as_micros()
    );
}

/// Prints the median of `rounds` (floor, zest) by zest's share of its floor, then every
/// round's share.
pub(crate) fn print_median_round(name: &str, concurrency: usize, mut rounds: Vec<(Run, Run)>) {
    let share = |(raw, zest): &(Run, Run)| zest.per_sec / raw.per_sec;
    rounds.sort_by(|a, b| share(a).total_cmp(&share(b)));
    let (raw, zest) = &rounds[rounds.len() / 2];
    print_row("raw HTTP/1.1 JSON echo", concurrency, raw, None);
    print_row(name, concurrency, zest, Some(raw));
    let shares: Vec<String> = rounds.iter().map(|r| format!("{:.0} %", 100.0 * share(r))).collect();
    println!("{:<30} {:>4} {}", "  (each round, of its floor)", "", shares.join(", "));
}

/// In the server process: says where it listens, then answers each line on stdin with
/// `stats()` as a JSON line, until the bench closes its stdin. Call once the server is bound;
/// it keeps serving from other threads meanwhile.
pub(crate) fn serve_until_stdin_ends(addr: SocketAddr, stats: impl Fn() -> ServerStats) {
    // A socket per session for the wide run (two on zest-blocking, whose readers clone it).
    load::raise_fd_limit(2 * WIDE_SESSIONS as u64 + 256);
    println!("listening {addr}");
    std::io::stdout().flush().expect("stdout");
    for line in std::io::stdin().lines() {
        if line.is_err() {
            return;
        }
        let s = stats();
        let line = json!({"sessions": s.sessions, "exchanges": s.exchanges,
            "events_held": s.events_held, "handlers": s.handlers, "peer_calls": s.peer_calls});
        println!("{line}");
        std::io::stdout().flush().expect("stdout");
    }
}

/// The bench binary re-executed as the server; ended (stdin closed, reaped) on drop.
pub(crate) struct ServerProcess {
    child: Child,
    addr: SocketAddr,
    stdout: BufReader<ChildStdout>,
}

impl ServerProcess {
    /// Starts it and waits (at most 10 s) until it listens.
    pub(crate) fn spawn() -> Self {
        Self::spawn_as("server")
    }

    /// Starts the bench binary in `role` ([`ROLE_ENV`]) and waits until it listens.
    pub(crate) fn spawn_as(role: &str) -> Self {
        let exe = std::env::current_exe().expect("the bench binary's path");
        let mut child = Command::new(exe)
            .env(ROLE_ENV, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the server process");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        // Bounded: the child either prints its address or exits (EOF) within its start-up.
        let _ = stdout.read_line(&mut line);
        let addr = line.trim().strip_prefix("listening ").and_then(|a| a.parse().ok());
        let addr = addr.unwrap_or_else(|| panic!("the server process said {line:?}"));
        Self { child, addr, stdout }
    }

    /// Where it listens.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its MCP endpoint.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// A figure of its /proc/<pid>/status in KiB (see [`status_kib`]).
    pub(crate) fn kib(&self, field: &str) -> u64 {
        status_kib(self.child.id(), field)
    }

    /// What the server holds now, from its [`ServerStats`]: `sessions`, `exchanges`,
    /// `events_held`, `handlers`, `peer_calls`.
    pub(crate) fn stats(&mut self) -> Value {
        let stdin = self.child.stdin.as_mut().expect("the server's stdin");
        stdin.write_all(b"stats\n").and_then(|()| stdin.flush()).expect("ask for stats");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("the server's stats");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("the server said {line:?}"))
    }

    /// [`WIDE_ROUNDS`] times (or [`WIDE_ROUNDS_ENV`]): opens [`WIDE_SESSIONS`] sessions at
    /// once, each making [`WIDE_BENCH_CALLS`] calls, all together (a thread and a connection
    /// per session, [`load::wide_sessions`]), then deletes them. Prints each round's calls/s,
    /// the server's stats with the sessions open and after, and its RSS before, with the
    /// sessions open, at its peak (VmHWM: run this on a fresh server process) and after the
    /// deletes. The later rounds tell memory the allocator keeps for reuse (flat) from memory
    /// lost (growing).
    pub(crate) fn print_wide_sessions(&mut self) {
        let calls = WIDE_SESSIONS * WIDE_BENCH_CALLS;
        let rounds = match std::env::var(WIDE_ROUNDS_ENV) {
            Ok(n) => n.trim().parse().unwrap_or_else(|_| panic!("{WIDE_ROUNDS_ENV}={n:?}")),
            Err(_) => WIDE_ROUNDS,
        };
        println!(
            "{WIDE_SESSIONS} sessions at once × {WIDE_BENCH_CALLS} calls, a client thread and \
             connection each, {rounds} rounds on one server process:"
        );
        for round in 1..=rounds {
            let before = self.kib("VmRSS");
            let wide = load::wide_sessions(self.addr, WIDE_SESSIONS, WIDE_BENCH_CALLS, || {
                (self.stats(), self.kib("VmRSS"))
            });
            wide.assert_each_answered(WIDE_SESSIONS, WIDE_BENCH_CALLS);
            let (held, open_rss) = &wide.at_peak;
            println!(
                "round {round}: {calls} calls in {:.2} s, {:.0} calls/s, each answered once",
                wide.calls_took.as_secs_f64(),
                calls as f64 / wide.calls_took.as_secs_f64()
            );
            println!("  server stats with every call answered, before the DELETEs: {held}");
            load::settle("sessions after the DELETEs", Duration::from_secs(30), Some(0), || {
                self.stats()["sessions"].as_u64()
            });
            println!("  server stats after the DELETEs: {}", self.stats());
            println!(
                "  server RSS: {before} KiB before, {open_rss} KiB with the sessions open, \
                 peak (VmHWM) {} KiB, {} KiB after the DELETEs",
                self.kib("VmHWM"),
                self.kib("VmRSS")
            );
        }
    }

    /// Opens [`IDLE_SESSIONS`] sessions (initialize + initialized each, over one keep-alive
    /// connection) and leaves them idle; prints the server's resident memory before and
    /// after, and per session.
    pub(crate) fn print_idle_sessions(&self) {
        let before = self.kib("VmRSS");
        let started = Instant::now();
        let mut conn = load::RawConn::connect(self.addr);
        for _ in 0..IDLE_SESSIONS {
            load::open_session(&mut conn);
        }
        let took = started.elapsed();
        drop(conn);
        let after = self.kib("VmRSS");
        let per = (after.saturating_sub(before) * 1024) as f64 / IDLE_SESSIONS as f64;
        println!(
            "{IDLE_SESSIONS} idle sessions: RSS {before} KiB → {after} KiB, {per:.0} bytes per \
             session (target ≤ 4096; opened in {:.1} s)",
            took.as_secs_f64()
        );
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Prints the server process's peak and present RSS after what it served so far, and what
/// the present RSS is made of: pages of files (this bench binary's code, which holds the
/// clients and the floor too, and libc; clean, shared with other processes) and anonymous
/// memory (what the server allocated: heap, stacks).
/// Prints the floor's process's peak RSS after `after`: the raw echo server alone, in this
/// same binary (the same libraries and binary pages to map), beside which zest's figure is
/// read.
pub(crate) fn print_floor_peak(floor: &ServerProcess, after: &str) {
    println!(
        "floor process (the raw echo server alone, same binary) peak RSS after {after}: {} KiB \
         ({} KiB file pages, {} KiB anonymous)",
        floor.kib("VmHWM"),
        floor.kib("RssFile"),
        floor.kib("RssAnon")
    );
}

pub(crate) fn print_peak(server: &ServerProcess, after: &str) {
    println!(
        "server process peak RSS after {after}: {} KiB (target ≤ 4096), now {} KiB \
         ({} KiB file pages, {} KiB anonymous)",
        server.kib("VmHWM"),
        server.kib("VmRSS"),
        server.kib("RssFile"),
        server.kib("RssAnon")
    );
}
