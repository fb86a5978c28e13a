//! `cargo bench -p zest-blocking --bench http`: `tools/call` echo over Streamable HTTP on
//! loopback at concurrency 1, 8 and 64, zest-blocking's client (one thread per worker) against
//! zest-blocking's server in one process, beside a raw floor from the same run: a keep-alive
//! HTTP/1.1 JSON echo on std threads (zest-core's http1 machines on both sides, one connection
//! and thread per worker, no MCP). The two alternate three times at each concurrency; the
//! round whose share of its floor is the median is printed, with every round's share. Then the
//! memory of a server in a process of its own (this binary again): its peak RSS after a run at
//! concurrency 8, and its RSS per idle session with 10,000 idle sessions.
//! The same binary alone as the raw echo server, after the same run, gives the floor's
//! peak RSS.
//! Then, on a fresh server process, three rounds of 1,000 sessions at once making 20 calls each:
//! calls/s, the sessions held, and its RSS with them open, at its peak and after they are
//! deleted.
//! Figures are printed, never asserted.

#[path = "../../tests/support/http_bench.rs"]
mod http_bench;
#[path = "../../tests/support/http_floor.rs"]
mod http_floor;
#[path = "../../tests/support/load.rs"]
mod load;

use std::net::SocketAddr;
use std::thread;
use std::time::{Duration, Instant};

use http_bench::{
    print_floor_peak, print_header, print_median_round, print_peak, Run, ServerProcess,
};
use serde_json::json;
use zest_blocking::core::server::ServerConfig;
use zest_blocking::schema::{CallToolResult, Tool};
use zest_blocking::{serve_http_with, Client, ClientApi, ClientOptions, HttpConfig, Registry};

const CALLS: usize = 8_000;
const WARMUP: usize = 200;

fn main() {
    if std::env::var(http_bench::ROLE_ENV).as_deref() == Ok("server") {
        let server = zest_server();
        return http_bench::serve_until_stdin_ends(server.local_addr(), || server.stats());
    }
    if std::env::var(http_bench::ROLE_ENV).as_deref() == Ok(http_bench::FLOOR_ROLE) {
        return http_bench::serve_until_stdin_ends(http_floor::raw_echo_server(), Default::default);
    }
    if let Ok(url) = std::env::var(http_bench::DRIVE_ENV) {
        zest_run(&url, 8);
        return;
    }
    println!("zest-blocking HTTP bench: {CALLS} tools/call echo calls of a 64-char text");
    println!("client and server in one process, std threads, loopback");
    println!();
    print_header();
    let floor_addr = http_floor::raw_echo_server();
    let server = zest_server();
    for concurrency in [1, 8, 64] {
        let mut rounds = Vec::new();
        for _ in 0..http_bench::ECHO_ROUNDS {
            let raw = raw_run(floor_addr, concurrency);
            rounds.push((raw, zest_run(&server.url(), concurrency)));
        }
        print_median_round("zest-blocking (MCP over HTTP)", concurrency, rounds);
    }
    server.shutdown();
    println!();
    let process = ServerProcess::spawn();
    zest_run(&process.url(), 8);
    print_peak(&process, "8,000 calls at concurrency 8");
    process.print_idle_sessions();
    print_peak(&process, "the idle sessions");
    drop(process);
    let floor = ServerProcess::spawn_as(http_bench::FLOOR_ROLE);
    raw_run(floor.addr(), 8);
    print_floor_peak(&floor, "8,000 calls at concurrency 8");
    drop(floor);
    println!();
    ServerProcess::spawn().print_wide_sessions();
}

fn zest_server() -> zest_blocking::HttpServer {
    let mut registry = Registry::default();
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    registry.raw_tool(Tool::new("echo", "Echoes", schema), |_, p| {
        let text = p.arguments.as_ref().and_then(|a| a.get("text")).and_then(|t| t.as_str());
        Ok(CallToolResult::text(text.unwrap_or_default()))
    });
    let mut http = HttpConfig::new();
    http.router.max_sessions = http_bench::MAX_SESSIONS;
    let config = ServerConfig::new("bench", "1");
    serve_http_with("127.0.0.1:0", config, http, registry).expect("bind")
}

fn zest_run(url: &str, concurrency: usize) -> Run {
    let client = Client::connect(url, ClientOptions::new("bench", "1")).expect("connect");
    let text = "x".repeat(64);
    for _ in 0..WARMUP {
        client.call_tool("echo", json!({"text": text})).expect("warm-up call");
    }
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let client = client.clone();
            let text = text.clone();
            thread::spawn(move || {
                let mut latencies = Vec::with_capacity(CALLS / concurrency);
                for _ in 0..CALLS / concurrency {
                    let t = Instant::now();
                    client.call_tool("echo", json!({"text": text})).expect("call");
                    latencies.push(t.elapsed());
                }
                latencies
            })
        })
        .collect();
    let run = Run::new(gather(workers), started.elapsed());
    client.close().expect("close");
    run
}

fn gather(workers: Vec<thread::JoinHandle<Vec<Duration>>>) -> Vec<Duration> {
    workers.into_iter().flat_map(|w| w.join().expect("a worker")).collect()
}

/// The floor's run at `concurrency`, with the same text as the zest rows.
fn raw_run(addr: SocketAddr, concurrency: usize) -> Run {
    let body = http_floor::echo_body(&"x".repeat(64));
    let (latencies, took, _connections) = http_floor::raw_run(addr, &body, CALLS, concurrency);
    Run::new(latencies, took)
}
