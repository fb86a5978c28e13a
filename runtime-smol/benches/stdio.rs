//! `cargo bench -p zest-smol --bench stdio`: `tools/call` echo calls of a 64-character, a
//! 64 KiB and a 1 MiB text at concurrency 1 and 8, zest-smol's client against the smol fixture
//! server, each beside a raw floor (serde_json over the same pipes, no MCP). The rows, the
//! floor and the table are shared by the three runtimes' stdio benches in
//! `tests/support/stdio_bench.rs`; this file is zest-smol's client. Figures are printed, never
//! asserted.
#![allow(clippy::disallowed_methods)]

#[path = "../../tests/support/stdio_bench.rs"]
mod stdio_bench;

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use stdio_bench::{cpu_time, status_kib, Bench, Load, Measured};
use zest_smol::{Client, ClientApi, ClientOptions, StdioCommand};

fn main() {
    Bench {
        name: "zest-smol",
        package: "zest-smol",
        fixture: "smol_stdio_server",
        server_note: "smol::block_on",
        client_note: "smol::block_on, one smol::spawn task per call in flight",
        zest_client,
    }
    .main();
}

/// `load.concurrency` tasks on smol's global executor, each making its share of the calls one
/// after another.
fn zest_client(server: &Path, load: &Load) -> Measured {
    smol::block_on(async {
        let children_before = cpu_time(libc::RUSAGE_CHILDREN);
        let started = Instant::now();
        let command = StdioCommand::new(server).on_stderr(|_| {});
        let client = Client::spawn(command, ClientOptions::new("bench", "0"))
            .await
            .expect("the fixture starts");
        let ready = started.elapsed();
        let text = load.text();
        let args = json!({ "text": text });
        for _ in 0..load.warmup {
            client.call_tool("echo", args.clone()).await.expect("echo");
        }
        let per_task = load.calls / load.concurrency;
        let cpu_before = cpu_time(libc::RUSAGE_SELF);
        let start = Instant::now();
        let tasks: Vec<_> = (0..load.concurrency)
            .map(|_| {
                let client = client.clone();
                let args = args.clone();
                smol::spawn(async move {
                    let mut latencies = Vec::with_capacity(per_task);
                    for _ in 0..per_task {
                        let t0 = Instant::now();
                        let result = client.call_tool("echo", args.clone()).await.expect("echo");
                        latencies.push(t0.elapsed());
                        assert!(!result.is_error());
                    }
                    latencies
                })
            })
            .collect();
        let mut parts = Vec::with_capacity(load.concurrency);
        for task in tasks {
            parts.push(task.await);
        }
        let elapsed = start.elapsed();
        let client_cpu = cpu_time(libc::RUSAGE_SELF) - cpu_before;
        // One vector of latencies, as the raw client keeps, counts in the client's peak RSS;
        // at concurrency 1 the task's own vector is that one (no second copy).
        let mut latencies = parts.swap_remove(0);
        for part in parts {
            latencies.extend(part);
        }
        let server_hwm_kib = status_kib(client.pid(), "VmHWM");
        // close() returns once the child is reaped, so its CPU time is counted.
        client.close().await.expect("the fixture exits");
        let server_cpu = cpu_time(libc::RUSAGE_CHILDREN) - children_before;
        Measured { ready, server_hwm_kib, elapsed, latencies, client_cpu, server_cpu }
    })
}
