//! `cargo bench -p zest-blocking --bench stdio`: `tools/call` echo calls of a 64-character, a
//! 64 KiB and a 1 MiB text at concurrency 1 and 8, zest-blocking's client against the blocking
//! fixture server, each beside a raw floor (serde_json over the same pipes, no MCP). The rows,
//! the floor and the table are shared by the three runtimes' stdio benches in
//! `tests/support/stdio_bench.rs`; this file is zest-blocking's client. Figures are printed,
//! never asserted.
#![allow(clippy::disallowed_methods)]

#[path = "../../tests/support/stdio_bench.rs"]
mod stdio_bench;

use std::path::Path;
use std::thread;
use std::time::Instant;

use serde_json::json;
use stdio_bench::{cpu_time, status_kib, Bench, Load, Measured};
use zest_blocking::{Client, ClientApi, ClientOptions, StdioCommand};

fn main() {
    Bench {
        name: "zest-blocking",
        package: "zest-blocking",
        fixture: "blocking_stdio_server",
        server_note: "threads",
        client_note: "one thread per call in flight",
        zest_client,
    }
    .main();
}

/// `load.concurrency` threads, each making its share of the calls one after another.
fn zest_client(server: &Path, load: &Load) -> Measured {
    let children_before = cpu_time(libc::RUSAGE_CHILDREN);
    let started = Instant::now();
    let command = StdioCommand::new(server).on_stderr(|_| {});
    let client = Client::spawn(command, ClientOptions::new("bench", "0")).expect("the fixture");
    let ready = started.elapsed();
    let text = load.text();
    let args = json!({ "text": text });
    for _ in 0..load.warmup {
        client.call_tool("echo", args.clone()).expect("echo");
    }
    let per_thread = load.calls / load.concurrency;
    let cpu_before = cpu_time(libc::RUSAGE_SELF);
    let start = Instant::now();
    let threads: Vec<_> = (0..load.concurrency)
        .map(|_| {
            let client = client.clone();
            let args = args.clone();
            thread::spawn(move || {
                let mut latencies = Vec::with_capacity(per_thread);
                for _ in 0..per_thread {
                    let t0 = Instant::now();
                    let result = client.call_tool("echo", args.clone()).expect("echo");
                    latencies.push(t0.elapsed());
                    assert!(!result.is_error());
                }
                latencies
            })
        })
        .collect();
    let mut parts = Vec::with_capacity(load.concurrency);
    for thread in threads {
        parts.push(thread.join().expect("a bench thread"));
    }
    let elapsed = start.elapsed();
    let client_cpu = cpu_time(libc::RUSAGE_SELF) - cpu_before;
    // One vector of latencies, as the raw client keeps, counts in the client's peak RSS; at
    // concurrency 1 the thread's own vector is that one (no second copy).
    let mut latencies = parts.swap_remove(0);
    for part in parts {
        latencies.extend(part);
    }
    let server_hwm_kib = status_kib(client.pid(), "VmHWM");
    // close() returns once the supervisor has reaped the child, so its CPU time is counted.
    client.close().expect("the fixture exits");
    let server_cpu = cpu_time(libc::RUSAGE_CHILDREN) - children_before;
    Measured { ready, server_hwm_kib, elapsed, latencies, client_cpu, server_cpu }
}
