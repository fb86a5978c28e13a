//! zest's stdio echo beside rmcp's, the official Rust SDK: `tools/call echo` with a 64 B,
//! 64 KiB and 1 MiB text argument, one call at a time, each server a child process of its
//! client over stdio. Prints calls/s, p50 and p99 latency and each row's ratio to rmcp↔rmcp.
//!
//! `cargo run --release` runs the table; see README.md for the options. The same binary plays
//! every role: `serve <sdk>` is a server, `client <sdk> <sdk> <bytes> <calls> <warmup>` one
//! client run (it prints one JSON line), and no role is the driver that runs those in turn.

mod clients;
mod servers;

use std::process::{Command, Stdio};

use serde_json::{json, Value};

/// The implementations on either end.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sdk {
    Rmcp,
    ZestBlocking,
    ZestSmol,
    ZestTokio,
}

impl Sdk {
    const ALL: [Self; 4] = [Self::Rmcp, Self::ZestTokio, Self::ZestSmol, Self::ZestBlocking];

    fn name(self) -> &'static str {
        match self {
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

/// Argument sizes, with the calls (and untimed warm-up calls) made at each.
const SIZES: [(&str, usize, usize, usize); 3] =
    [("64 B", 64, 5_000, 200), ("64 KiB", 64 * 1024, 2_000, 50), ("1 MiB", 1024 * 1024, 200, 10)];

/// The pairs the table always shows, client first; the first is the baseline.
const PAIRS: [(Sdk, Sdk); 6] = [
    (Sdk::Rmcp, Sdk::Rmcp),
    (Sdk::ZestTokio, Sdk::ZestTokio),
    (Sdk::Rmcp, Sdk::ZestTokio),
    (Sdk::ZestTokio, Sdk::Rmcp),
    (Sdk::ZestSmol, Sdk::ZestSmol),
    (Sdk::ZestBlocking, Sdk::ZestBlocking),
];

/// Set (to anything) for tokio's multi-thread runtime in every tokio client and server;
/// unset, both SDKs run on a current-thread runtime, as zest's fixture servers do.
const MULTI_THREAD_ENV: &str = "RMCP_COMPARE_MULTI_THREAD";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => servers::serve(Sdk::parse(&args[1])),
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

/// `client <client sdk> <server sdk> <bytes> <calls> <warmup>`: one run, one JSON line out.
fn client_role(args: &[String]) {
    let number = |i: usize| -> usize { args[i].parse().expect("a number") };
    let text = "x".repeat(number(2));
    let m = clients::run(Sdk::parse(&args[0]), Sdk::parse(&args[1]), &text, number(3), number(4));
    let mut latencies = m.latencies;
    latencies.sort_unstable();
    let pct = |p: f64| {
        let i = ((latencies.len() as f64 * p) as usize).min(latencies.len() - 1);
        latencies[i].as_secs_f64() * 1e6
    };
    let row = json!({
        "calls_per_sec": latencies.len() as f64 / m.elapsed.as_secs_f64(),
        "p50_us": pct(0.50),
        "p99_us": pct(0.99),
        "ready_ms": m.ready.as_secs_f64() * 1e3,
    });
    println!("{row}");
}

/// Options: `--rounds N` (default 3; each row shows the median round), `--all-pairs` (every
/// client with every server, 16 rows per size), `--size 64B|64KiB|1MiB` (one size only).
fn drive(args: &[String]) {
    let value = |flag: &str| {
        args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).map(String::as_str)
    };
    let rounds: usize = value("--rounds").map_or(3, |r| r.parse().expect("--rounds N"));
    let pairs: Vec<(Sdk, Sdk)> = if args.iter().any(|a| a == "--all-pairs") {
        let mut all = PAIRS.to_vec();
        for c in Sdk::ALL {
            for s in Sdk::ALL {
                if !all.contains(&(c, s)) {
                    all.push((c, s));
                }
            }
        }
        all
    } else {
        PAIRS.to_vec()
    };
    let runtime = if std::env::var_os(MULTI_THREAD_ENV).is_some() {
        "multi-thread"
    } else {
        "current-thread"
    };
    println!("stdio tools/call echo, concurrency 1, release builds, server a child process");
    println!("tokio clients and servers (rmcp and zest-tokio) on a {runtime} runtime");
    println!("each row: the median of {rounds} rounds (by calls/s); × is calls/s ÷ rmcp↔rmcp's");
    println!();
    println!(
        "{:<7} {:>6} {:<14} {:<14} {:>9} {:>10} {:>10} {:>7}",
        "size", "calls", "client", "server", "calls/s", "p50 µs", "p99 µs", "×rmcp"
    );
    for (label, bytes, calls, warmup) in SIZES {
        let wanted = value("--size").is_none_or(|s| s.replace(' ', "") == label.replace(' ', ""));
        if !wanted {
            continue;
        }
        // Rounds interleave the pairs, so that a slow spell on a shared machine hits all alike.
        let mut runs: Vec<Vec<Value>> = vec![Vec::new(); pairs.len()];
        for _ in 0..rounds {
            for (i, &(client, server)) in pairs.iter().enumerate() {
                runs[i].push(run_client(client, server, bytes, calls, warmup));
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
        let baseline = f(&medians[0], "calls_per_sec");
        for ((client, server), row) in pairs.iter().zip(&medians) {
            println!(
                "{:<7} {:>6} {:<14} {:<14} {:>9.0} {:>10.1} {:>10.1} {:>6.2}×",
                label,
                calls,
                client.name(),
                server.name(),
                f(row, "calls_per_sec"),
                f(row, "p50_us"),
                f(row, "p99_us"),
                f(row, "calls_per_sec") / baseline,
            );
        }
    }
}

/// One client run in a process of its own (this binary again), so that no run inherits
/// another's heap or warmed-up runtime.
fn run_client(client: Sdk, server: Sdk, bytes: usize, calls: usize, warmup: usize) -> Value {
    let exe = std::env::current_exe().expect("this binary");
    let out = Command::new(exe)
        .args(["client", client.name(), server.name()])
        .args([bytes, calls, warmup].map(|n| n.to_string()))
        .stderr(Stdio::inherit())
        .output()
        .expect("re-executing this binary as a client");
    let (c, s) = (client.name(), server.name());
    assert!(out.status.success(), "the {c} client against {s} failed: {}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("the client's JSON row")
}
