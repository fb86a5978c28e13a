//! zest beside rmcp, the official Rust SDK, and beside a floor with no MCP: `tools/call echo`
//! with a 64 B, 64 KiB and 1 MiB text argument, at concurrency 1, 8 and 64, over stdio (the
//! server a child process of its client) and over Streamable HTTP on loopback (the server a
//! process of its own). Prints calls/s, p50 and p99 latency, CPU per call of client and server,
//! and the peak RSS of both, with ratios against rmcp↔rmcp and against the floor.
//!
//! `cargo run --release` runs the whole table; see README.md for the options. The same binary
//! plays every role: `serve <sdk> <stdio|http>` is a server, `client <sdk> <sdk> <transport>
//! <bytes> <calls> <warmup> <concurrency>` one client run (it prints one JSON line), and no
//! role is the driver that runs those in turn, each in a fresh process.

mod clients;
mod floor;
mod measure;
mod rmcp_client;
mod servers;

use std::process::{Command, Stdio};

use serde_json::Value;

/// What runs on either end. `Floor` is the same exchange with no MCP (see [`floor`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sdk {
    Floor,
    Rmcp,
    ZestBlocking,
    ZestSmol,
    ZestTokio,
}

impl Sdk {
    const ALL: [Self; 5] =
        [Self::Floor, Self::Rmcp, Self::ZestTokio, Self::ZestSmol, Self::ZestBlocking];

    fn name(self) -> &'static str {
        match self {
            Self::Floor => "floor",
            Self::Rmcp => "rmcp",
            Self::ZestBlocking => "zest-blocking",
            Self::ZestSmol => "zest-smol",
            Self::ZestTokio => "zest-tokio",
        }
    }

    fn parse(name: &str) -> Self {
        Self::ALL.into_iter().find(|s| s.name() == name).unwrap_or_else(|| panic!("sdk {name}?"))
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Transport {
    Stdio,
    Http,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
        }
    }

    fn parse(name: &str) -> Self {
        match name {
            "stdio" => Self::Stdio,
            "http" => Self::Http,
            other => panic!("transport {other}? (stdio or http)"),
        }
    }
}

/// One cell's workload.
#[derive(Clone, Copy, Debug)]
struct Load {
    /// Characters of the `text` argument (all `x`).
    bytes: usize,
    /// Timed calls, a multiple of `concurrency`.
    calls: usize,
    /// Untimed calls first, one at a time.
    warmup: usize,
    /// Calls in flight at once.
    concurrency: usize,
}

impl Load {
    fn text(&self) -> String {
        "x".repeat(self.bytes)
    }
}

/// The argument sizes: label, bytes, timed calls per worker at concurrency 1 / 8 / 64, and
/// warm-up calls. Fewer calls for the large arguments keep a run short.
const SIZES: [(&str, usize, [usize; 3], usize); 3] = [
    ("64B", 64, [4_000, 1_000, 125], 200),
    ("64KiB", 64 * 1024, [1_000, 200, 30], 20),
    ("1MiB", 1024 * 1024, [100, 20, 4], 5),
];

const CONCURRENCIES: [usize; 3] = [1, 8, 64];

/// The pairs in every cell, client first: the baseline (rmcp↔rmcp), the floor, each zest
/// runtime with itself, each zest server under rmcp's client, each zest client against
/// rmcp's server.
const PAIRS: [(Sdk, Sdk); 11] = [
    (Sdk::Rmcp, Sdk::Rmcp),
    (Sdk::Floor, Sdk::Floor),
    (Sdk::ZestTokio, Sdk::ZestTokio),
    (Sdk::ZestSmol, Sdk::ZestSmol),
    (Sdk::ZestBlocking, Sdk::ZestBlocking),
    (Sdk::Rmcp, Sdk::ZestTokio),
    (Sdk::Rmcp, Sdk::ZestSmol),
    (Sdk::Rmcp, Sdk::ZestBlocking),
    (Sdk::ZestTokio, Sdk::Rmcp),
    (Sdk::ZestSmol, Sdk::Rmcp),
    (Sdk::ZestBlocking, Sdk::Rmcp),
];

/// Set (to anything) for tokio's multi-thread runtime in every tokio client and server;
/// unset, both SDKs run on a current-thread runtime, as zest's fixture servers do.
const MULTI_THREAD_ENV: &str = "RMCP_COMPARE_MULTI_THREAD";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => servers::serve(Sdk::parse(&args[1]), Transport::parse(&args[2])),
        Some("client") => client_role(&args[1..]),
        _ => drive(&args),
    }
}

/// The tokio runtime every tokio client and server runs on.
fn tokio_runtime() -> tokio::runtime::Runtime {
    let mut builder = if std::env::var_os(MULTI_THREAD_ENV).is_some() {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder.enable_all().build().expect("a tokio runtime")
}

/// `client <client> <server> <transport> <bytes> <calls> <warmup> <concurrency>`: one run,
/// one JSON line out.
fn client_role(args: &[String]) {
    let number = |i: usize| -> usize { args[i].parse().expect("a number") };
    let load =
        Load { bytes: number(3), calls: number(4), warmup: number(5), concurrency: number(6) };
    let (client, server) = (Sdk::parse(&args[0]), Sdk::parse(&args[1]));
    let measured = clients::run(client, server, Transport::parse(&args[2]), &load);
    println!("{}", measured.row());
}

/// The driver's options: `--rounds N` (default 3; each row shows the pair's median round by
/// calls/s), and filters `--transport stdio|http`, `--size 64B|64KiB|1MiB`,
/// `--concurrency 1|8|64`, `--pairs zest-tokio,rmcp` (pairs with any of these names on
/// either end; the baseline and the floor always run).
fn drive(args: &[String]) {
    let value = |flag: &str| {
        args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).map(String::as_str)
    };
    let rounds: usize = value("--rounds").map_or(3, |r| r.parse().expect("--rounds N"));
    let wanted =
        |flag: &str, name: &str| value(flag).is_none_or(|v| v.split(',').any(|w| w == name));
    let pairs: Vec<(Sdk, Sdk)> = PAIRS
        .into_iter()
        .enumerate()
        .filter(|&(i, (c, s))| i < 2 || wanted("--pairs", c.name()) || wanted("--pairs", s.name()))
        .map(|(_, pair)| pair)
        .collect();
    let runtime = match std::env::var_os(MULTI_THREAD_ENV) {
        Some(_) => "multi-thread",
        None => "current-thread",
    };
    println!("tools/call echo of a text argument; release builds; one client process per run");
    println!("stdio: the server is a child of its client; http: Streamable HTTP on 127.0.0.1,");
    println!("the server a process of its own. Tokio clients and servers (rmcp, zest-tokio) on a");
    println!("{runtime} runtime. Each row: the pair's median of {rounds} interleaved rounds.");
    println!("×rmcp: calls/s ÷ rmcp↔rmcp's; ×floor: calls/s ÷ the floor's, CPU (client + server)");
    println!("per call ÷ the floor's. CPU is user + system over the timed calls; HWM is peak RSS.");
    for transport in [Transport::Stdio, Transport::Http] {
        for (label, bytes, per_worker, warmup) in SIZES {
            for (k, concurrency) in CONCURRENCIES.into_iter().enumerate() {
                let cell = [
                    wanted("--transport", transport.name()),
                    wanted("--size", label),
                    wanted("--concurrency", &concurrency.to_string()),
                ];
                if cell.contains(&false) {
                    continue;
                }
                let load = Load { bytes, calls: per_worker[k] * concurrency, warmup, concurrency };
                print_cell(transport, label, &load, &pairs, rounds);
            }
        }
    }
}

/// Runs every pair `rounds` times, rounds interleaved so that a slow spell on a shared
/// machine falls on all pairs alike, and prints each pair's median round.
fn print_cell(transport: Transport, label: &str, load: &Load, pairs: &[(Sdk, Sdk)], rounds: usize) {
    let mut runs: Vec<Vec<Value>> = vec![Vec::new(); pairs.len()];
    for _ in 0..rounds {
        for (i, &(client, server)) in pairs.iter().enumerate() {
            runs[i].push(run_client(client, server, transport, load));
        }
    }
    let f = |row: &Value, k: &str| row[k].as_f64().unwrap_or(f64::NAN);
    let medians: Vec<Value> = runs
        .into_iter()
        .map(|mut rows| {
            rows.sort_by(|a, b| f(a, "calls_per_sec").total_cmp(&f(b, "calls_per_sec")));
            rows.swap_remove(rows.len() / 2)
        })
        .collect();
    let (rmcp, floor) = (&medians[0], &medians[1]);
    let cpu = |row: &Value| f(row, "client_cpu_us") + f(row, "server_cpu_us");
    println!();
    println!(
        "{} · {} · concurrency {} · {} calls",
        transport.name(),
        label,
        load.concurrency,
        load.calls
    );
    println!(
        "{:<14} {:<14} {:>9} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {:>6} {:>8} {:>8}",
        "client",
        "server",
        "calls/s",
        "×rmcp",
        "×floor",
        "p50 µs",
        "p99 µs",
        "cpu c µs",
        "cpu s µs",
        "×floor",
        "HWM c",
        "HWM s"
    );
    for ((client, server), row) in pairs.iter().zip(&medians) {
        println!(
            "{:<14} {:<14} {:>9.0} {:>6.2} {:>6.2} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>6.2} {:>5.1}MiB {:>5.1}MiB",
            client.name(),
            server.name(),
            f(row, "calls_per_sec"),
            f(row, "calls_per_sec") / f(rmcp, "calls_per_sec"),
            f(row, "calls_per_sec") / f(floor, "calls_per_sec"),
            f(row, "p50_us"),
            f(row, "p99_us"),
            f(row, "client_cpu_us"),
            f(row, "server_cpu_us"),
            cpu(row) / cpu(floor),
            f(row, "client_hwm_kib") / 1024.0,
            f(row, "server_hwm_kib") / 1024.0,
        );
    }
}

/// One client run in a process of its own (this binary again), so that no run inherits
/// another's heap or warmed-up runtime.
fn run_client(client: Sdk, server: Sdk, transport: Transport, load: &Load) -> Value {
    let exe = std::env::current_exe().expect("this binary");
    let numbers = [load.bytes, load.calls, load.warmup, load.concurrency].map(|n| n.to_string());
    let out = Command::new(exe)
        .args(["client", client.name(), server.name(), transport.name()])
        .args(numbers)
        .stderr(Stdio::inherit())
        .output()
        .expect("re-executing this binary as a client");
    let (c, s) = (client.name(), server.name());
    assert!(out.status.success(), "the {c} client against {s} failed: {}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("the client's JSON row")
}
