//! What the runtime crates' stdio benches share: the rows (a 64-character, a 64 KiB and a
//! 1 MiB `text` argument to the fixture's `echo` tool, at concurrency 1 and 8), the raw floor
//! each zest row is printed beside, the table, and the measurements read from the OS. Included
//! through `#[path = "../../tests/support/stdio_bench.rs"] mod stdio_bench;`; a bench supplies
//! only its runtime's zest client ([`Bench::zest_client`]).
//!
//! The floor is the bench binary re-executed as a newline-delimited JSON echo server
//! (serde_json only) and driven with the same requests by a plain client: one thread writes,
//! keeping `concurrency` requests in flight, another reads and parses the replies (a single
//! thread could deadlock at 1 MiB: both ends blocked writing into full pipes). No MCP.
//!
//! Every row's client runs in a process of its own (the bench binary again, with [`ROLE_ENV`]
//! set) so that its peak RSS (VmHWM) is its own. CPU time per call comes from getrusage(2):
//! the client's is RUSAGE_SELF (every thread of the client process) across the timed calls,
//! divided by the calls; the server's is the growth of RUSAGE_CHILDREN across the server's
//! whole life in the client process (spawn to reaped: start, handshake, warm-up, the calls,
//! exit), divided by the warm-up and timed calls it answered. A zest row's calls/s and CPU
//! figures are followed by their ratio to the floor's from the same run.
//!
//! Figures are printed, never asserted.
#![allow(dead_code, clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "proc_status.rs"]
mod proc_status;
pub(crate) use proc_status::status_kib;

/// Set to `raw-echo` or `client` when the bench binary is re-executed in one of those roles.
pub(crate) const ROLE_ENV: &str = "ZEST_STDIO_BENCH_ROLE";

/// One row's workload.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Load {
    /// The argument's size as printed.
    pub(crate) label: &'static str,
    /// Characters in the `text` argument (all `x`, so the JSON string is as long).
    pub(crate) bytes: usize,
    /// Timed calls.
    pub(crate) calls: usize,
    /// Untimed calls first, after the handshake.
    pub(crate) warmup: usize,
    /// Calls in flight at once.
    pub(crate) concurrency: usize,
}

impl Load {
    /// The `text` argument.
    pub(crate) fn text(&self) -> String {
        "x".repeat(self.bytes)
    }
}

/// The rows, in order. Fewer calls for the large arguments keep a run short.
pub(crate) const LOADS: [Load; 6] = [
    Load { label: "64 B", bytes: 64, calls: 20_000, warmup: 500, concurrency: 1 },
    Load { label: "64 B", bytes: 64, calls: 20_000, warmup: 500, concurrency: 8 },
    Load { label: "64 KiB", bytes: 64 * 1024, calls: 2_000, warmup: 50, concurrency: 1 },
    Load { label: "64 KiB", bytes: 64 * 1024, calls: 2_000, warmup: 50, concurrency: 8 },
    Load { label: "1 MiB", bytes: 1024 * 1024, calls: 200, warmup: 10, concurrency: 1 },
    Load { label: "1 MiB", bytes: 1024 * 1024, calls: 200, warmup: 16, concurrency: 8 },
];

/// What one client run measured.
pub(crate) struct Measured {
    /// Spawn to handshake done (to the first reply, for the floor).
    pub(crate) ready: Duration,
    /// The server's peak RSS, read while it was still running.
    pub(crate) server_hwm_kib: u64,
    /// Wall time of the timed calls.
    pub(crate) elapsed: Duration,
    /// Every timed call's latency.
    pub(crate) latencies: Vec<Duration>,
    /// This process's CPU time (all threads) across the timed calls.
    pub(crate) client_cpu: Duration,
    /// The server's CPU time over its whole life, from RUSAGE_CHILDREN once it was reaped.
    pub(crate) server_cpu: Duration,
}

/// One runtime's stdio bench.
pub(crate) struct Bench {
    /// As printed: `zest-tokio`.
    pub(crate) name: &'static str,
    /// The cargo package that has the fixture example: `zest-tokio`.
    pub(crate) package: &'static str,
    /// The fixture server example: `tokio_stdio_server`.
    pub(crate) fixture: &'static str,
    /// How the fixture's runtime is set up, as printed.
    pub(crate) server_note: &'static str,
    /// How the zest client runs, as printed.
    pub(crate) client_note: &'static str,
    /// Runs one zest row against the fixture at `server`.
    pub(crate) zest_client: fn(server: &Path, load: &Load) -> Measured,
}

impl Bench {
    /// The bench's `main`: a client or raw echo server when re-executed as one, else the table.
    pub(crate) fn main(&self) {
        match std::env::var(ROLE_ENV).as_deref() {
            Ok("raw-echo") => return raw_echo_server(),
            Ok("client") => return self.client_role(),
            _ => {}
        }
        let server = self.fixture_server();
        println!(
            "{} stdio bench: tools/call echo of a text argument, one process per row",
            self.name
        );
        println!("fixture: {} ({})", server.display(), self.server_note);
        println!("client: {}", self.client_note);
        println!("× after calls/s and CPU: the ratio to the raw floor's in the same run");
        println!();
        println!(
            "{:<24} {:>6} {:>6} {:>4} {:>15} {:>9} {:>9} {:>11} {:>11} {:>8} {:>15} {:>15}",
            "",
            "size",
            "calls",
            "conc",
            "calls/s",
            "p50 µs",
            "p99 µs",
            "client HWM",
            "server HWM",
            "ready ms",
            "client CPU µs",
            "server CPU µs"
        );
        for (i, load) in LOADS.iter().enumerate() {
            let zest = run_client_process("zest", i, &server);
            let raw = run_client_process("raw", i, &server);
            print_row(&format!("{} (MCP)", self.name), load, &zest, Some(&raw));
            print_row("raw floor (serde_json)", load, &raw, None);
        }
    }

    /// The client role: `<zest|raw> <row> <server>`; prints one JSON row.
    fn client_role(&self) {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let load = LOADS[args[1].parse::<usize>().expect("a row")];
        let mut m = match args[0].as_str() {
            "zest" => (self.zest_client)(Path::new(&args[2]), &load),
            _ => raw_client(&load),
        };
        let latencies = &mut m.latencies;
        latencies.sort_unstable();
        let pct = |p: f64| {
            let i = ((latencies.len() as f64 * p) as usize).min(latencies.len() - 1);
            latencies[i].as_secs_f64() * 1e6
        };
        let row = json!({
            "calls_per_sec": latencies.len() as f64 / m.elapsed.as_secs_f64(),
            "p50_us": pct(0.50),
            "p99_us": pct(0.99),
            "client_hwm_kib": status_kib(std::process::id(), "VmHWM"),
            "server_hwm_kib": m.server_hwm_kib,
            "ready_ms": m.ready.as_secs_f64() * 1e3,
            "client_cpu_us": m.client_cpu.as_secs_f64() * 1e6 / load.calls as f64,
            "server_cpu_us": m.server_cpu.as_secs_f64() * 1e6 / (load.warmup + load.calls) as f64,
        });
        println!("{row}");
    }

    /// The fixture in this binary's profile (target/<profile>/examples), (re)built with cargo
    /// in that profile first so that it is never stale.
    fn fixture_server(&self) -> PathBuf {
        let exe = std::env::current_exe().expect("this binary");
        let dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<bench>");
        let path = dir.join("examples").join(self.fixture);
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "-q", "-p", self.package, "--example", self.fixture]);
        if dir.ends_with("release") {
            build.arg("--release");
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success() && path.exists(), "building the fixture failed");
        path
    }
}

/// One row; with `floor`, calls/s and each CPU figure are followed by their ratio to it.
fn print_row(name: &str, load: &Load, row: &Value, floor: Option<&Value>) {
    let f = |row: &Value, k: &str| row[k].as_f64().unwrap_or(f64::NAN);
    let ratio = |k: &str, decimals: usize| match floor {
        Some(floor) => format!("{:.decimals$} ×{:.2}", f(row, k), f(row, k) / f(floor, k)),
        None => format!("{:.decimals$}      ", f(row, k)),
    };
    println!(
        "{:<24} {:>6} {:>6} {:>4} {:>15} {:>9.1} {:>9.1} {:>7.0} KiB {:>7.0} KiB {:>8.2} {:>15} {:>15}",
        name,
        load.label,
        load.calls,
        load.concurrency,
        ratio("calls_per_sec", 0),
        f(row, "p50_us"),
        f(row, "p99_us"),
        f(row, "client_hwm_kib"),
        f(row, "server_hwm_kib"),
        f(row, "ready_ms"),
        ratio("client_cpu_us", 2),
        ratio("server_cpu_us", 2),
    );
}

/// Runs one row's client as a child process and returns the JSON it prints.
fn run_client_process(scenario: &str, row: usize, server: &Path) -> Value {
    let exe = std::env::current_exe().expect("this binary");
    let out = Command::new(exe)
        .env(ROLE_ENV, "client")
        .args([scenario, &row.to_string()])
        .arg(server)
        .stderr(Stdio::inherit())
        .output()
        .expect("re-executing the bench as a client");
    assert!(out.status.success(), "the {scenario} client failed: {}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("the client's JSON row")
}

/// The floor's client: this thread writes requests, keeping `load.concurrency` in flight; a
/// reader thread parses each reply, checks its text and hands back its id and arrival time.
fn raw_client(load: &Load) -> Measured {
    let children_before = cpu_time(libc::RUSAGE_CHILDREN);
    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe().expect("this binary"))
        .env(ROLE_ENV, "raw-echo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("re-executing the bench as the raw echo server");
    let mut stdin = BufWriter::new(child.stdin.take().expect("piped"));
    let stdout = BufReader::new(child.stdout.take().expect("piped"));
    let text = load.text();
    let (tx, replies) = mpsc::channel::<(usize, Instant)>();
    let expected = text.clone();
    let reader = thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { return };
            let reply: Value = serde_json::from_str(&line).expect("the echo server's JSON");
            assert_eq!(reply["result"]["content"][0]["text"].as_str(), Some(expected.as_str()));
            let id = reply["id"].as_u64().expect("an id") as usize;
            if tx.send((id, Instant::now())).is_err() {
                return;
            }
        }
    });
    let mut send = |id: usize| {
        let request = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}}
        });
        serde_json::to_writer(&mut stdin, &request).expect("serialize");
        stdin.write_all(b"\n").and_then(|()| stdin.flush()).expect("write");
        Instant::now()
    };
    // Request 0 alone is the "handshake"; then warm-up and timed calls, ids 1..=total.
    send(0);
    replies.recv().expect("the first reply");
    let ready = started.elapsed();
    let total = load.warmup + load.calls;
    let mut sent_at = vec![Instant::now(); total + 1];
    let mut next = 1;
    while next <= load.concurrency.min(total) {
        sent_at[next] = send(next);
        next += 1;
    }
    let mut latencies = Vec::with_capacity(load.calls);
    let mut cpu_before = cpu_time(libc::RUSAGE_SELF);
    let mut timed_from = Instant::now();
    for done in 1..=total {
        let (id, arrived) = replies.recv().expect("a reply");
        if done == load.warmup {
            cpu_before = cpu_time(libc::RUSAGE_SELF);
            timed_from = Instant::now();
        }
        if id > load.warmup {
            latencies.push(arrived - sent_at[id]);
        }
        if next <= total {
            sent_at[next] = send(next);
            next += 1;
        }
    }
    let elapsed = timed_from.elapsed();
    let client_cpu = cpu_time(libc::RUSAGE_SELF) - cpu_before;
    let server_hwm_kib = status_kib(child.id(), "VmHWM");
    drop(stdin);
    reader.join().expect("the reader thread");
    child.wait().expect("the raw echo server exits at EOF");
    let server_cpu = cpu_time(libc::RUSAGE_CHILDREN) - children_before;
    Measured { ready, server_hwm_kib, elapsed, latencies, client_cpu, server_cpu }
}

/// The raw echo server: parse each line, answer with the text as a tools/call-shaped result;
/// flush whenever no more input is buffered.
pub(crate) fn raw_echo_server() {
    let mut stdin = BufReader::new(std::io::stdin().lock());
    let mut stdout = BufWriter::new(std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if stdin.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let request: Value = serde_json::from_str(&line).expect("JSON");
        let reply = json!({
            "jsonrpc": "2.0", "id": request["id"],
            "result": {"content": [{"type": "text", "text": request["params"]["arguments"]["text"]}]}
        });
        serde_json::to_writer(&mut stdout, &reply).expect("serialize");
        let written = stdout.write_all(b"\n").and_then(|()| {
            if stdin.buffer().is_empty() {
                stdout.flush()
            } else {
                Ok(())
            }
        });
        if written.is_err() {
            return;
        }
    }
}

/// CPU time (user + system) that getrusage(2) reports for `who`: `libc::RUSAGE_SELF` is every
/// thread of this process so far; `libc::RUSAGE_CHILDREN` is every child of this process that
/// has ended and been reaped, so its growth across one child's reaping is that child's whole
/// CPU time.
pub(crate) fn cpu_time(who: libc::c_int) -> Duration {
    // SAFETY: `rusage` is plain integers, for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct it is handed, which outlives the call.
    let rc = unsafe { libc::getrusage(who, &mut usage) };
    assert_eq!(rc, 0, "getrusage: {}", std::io::Error::last_os_error());
    let secs = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.unsigned_abs())
            + Duration::from_micros(t.tv_usec.unsigned_abs())
    };
    secs(usage.ru_utime) + secs(usage.ru_stime)
}
