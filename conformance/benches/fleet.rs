//! The fleet's cost: `tools/call` (`test_simple_text`) rounds per second by one zest-blocking client at
//! c=1 and c=8 through a round-robin loopback proxy (one connection per request) in front of
//! 1, 2 and 3 fixture processes (tokio, smol, blocking) sharing sessions in a Redis of our
//! own; the Redis commands per call (each one round trip: a command, a pipeline or a
//! script); and one process with its in-memory store behind the same proxy, for the
//! latency a shared store adds. Prints a table.
//!
//! `cargo bench -p zest-conformance --bench fleet` (`ZEST_FLEET_BENCH_CALLS`, default 2000
//! per run).

#[path = "../tests/support/fixture_process.rs"]
mod fixture_process;
#[path = "../tests/support/proxy.rs"]
mod proxy;
#[path = "../tests/support/redis_server.rs"]
mod redis_server;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use fixture_process::FixtureProcess;
use proxy::{authority, proxy};
use redis_server::RedisServer;
use serde_json::json;
use zest_blocking::{Client, ClientApi, ClientOptions};

const RUNTIMES: [&str; 3] = ["tokio", "smol", "blocking"];

/// Redis commands run so far (`INFO commandstats`, summed).
fn commands(port: u16) -> u64 {
    let mut redis = TcpStream::connect(("127.0.0.1", port)).expect("redis answers");
    redis.write_all(b"INFO commandstats\r\n").unwrap();
    redis.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let mut text = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = redis.read(&mut buf) {
        if n == 0 {
            break;
        }
        text.extend_from_slice(&buf[..n]);
        if text.ends_with(b"\r\n\r\n") || text.windows(2).filter(|w| w == b"\r\n").count() > 2 {
            // A bulk reply: read until it is whole.
            let head = String::from_utf8_lossy(&text);
            let want: usize = head[1..head.find("\r\n").unwrap()].parse().unwrap_or(0);
            if text.len() >= want + head.find("\r\n").unwrap() + 4 {
                break;
            }
        }
    }
    String::from_utf8_lossy(&text)
        .lines()
        .filter(|l| !l.starts_with("cmdstat_info"))
        .filter_map(|l| l.split("calls=").nth(1)?.split(',').next()?.parse::<u64>().ok())
        .sum()
}

/// Calls per second with `concurrency` threads sharing one client, `calls` in all.
fn run(url: &str, calls: usize, concurrency: usize) -> f64 {
    let options = ClientOptions::new("fleet-bench", "0").with_config(|c| c.session_era());
    let client = Client::connect(url, options).expect("the client connects");
    let started = Instant::now();
    thread::scope(|scope| {
        for _ in 0..concurrency {
            let client = &client;
            scope.spawn(move || {
                for _ in 0..calls / concurrency {
                    client.call_tool("test_simple_text", json!({})).expect("the call works");
                }
            });
        }
    });
    let rate = calls as f64 / started.elapsed().as_secs_f64();
    let _ = client.close();
    rate
}

fn main() {
    let calls: usize =
        std::env::var("ZEST_FLEET_BENCH_CALLS").ok().and_then(|n| n.parse().ok()).unwrap_or(2000);
    println!("tools/call test_simple_text through a round-robin proxy, {calls} calls per run");
    println!(
        "{:<32} {:>12} {:>12} {:>18}",
        "servers", "c=1 calls/s", "c=8 calls/s", "Redis cmds/call"
    );
    let memory = FixtureProcess::serve_http("tokio", &[]);
    let url = proxy(vec![authority(&memory.url)], Arc::new(Mutex::new(Vec::new())));
    let (one, eight) = (run(&url, calls, 1), run(&url, calls, 8));
    println!("{:<32} {:>12.0} {:>12.0} {:>18}", "1 process, in-memory store", one, eight, "-");
    drop(memory);
    let base_latency = 1e6 / one;
    for size in 1..=3 {
        let redis = RedisServer::start();
        let fleet: Vec<FixtureProcess> = RUNTIMES[..size]
            .iter()
            .map(|rt| FixtureProcess::serve_http(rt, &["--fleet", &redis.url()]))
            .collect();
        let backends = fleet.iter().map(|p| authority(&p.url)).collect();
        let url = proxy(backends, Arc::new(Mutex::new(Vec::new())));
        let before = commands(redis.port);
        let one = run(&url, calls, 1);
        let per_call = (commands(redis.port) - before) as f64 / calls as f64;
        let eight = run(&url, calls, 8);
        let name = format!("{size} process(es) sharing Redis");
        println!("{name:<32} {one:>12.0} {eight:>12.0} {per_call:>18.2}");
        if size == 1 {
            let added = 1e6 / one - base_latency;
            println!("  added latency per call at c=1 against the in-memory store: {added:.0} µs");
        }
    }
}
