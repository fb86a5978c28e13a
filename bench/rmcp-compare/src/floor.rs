//! The floors every row is set beside: the same exchange with no MCP. Over stdio, a
//! newline-delimited JSON echo (serde_json on both sides) that zest's stdio benches use too;
//! over HTTP, a keep-alive HTTP/1.1 echo of each POST body (zest-core's http1 machines, std
//! threads, one connection per worker) that zest's HTTP benches use too.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::measure::{Clock, Measured};
use crate::Load;

#[path = "../../../tests/support/http_floor.rs"]
mod http_floor;
#[path = "../../../tests/support/stdio_bench.rs"]
mod stdio_bench;

/// The stdio floor's server, on this process's stdin and stdout.
pub(crate) fn stdio_server() {
    stdio_bench::raw_echo_server();
}

/// The HTTP floor's server, on a free loopback port (threads of its own).
pub(crate) fn http_server() -> SocketAddr {
    http_floor::raw_echo_server()
}

/// The HTTP floor's client against the floor server at `addr`.
pub(crate) fn http_client(
    server: &Child,
    addr: SocketAddr,
    load: &Load,
    ready: Duration,
) -> Measured {
    let body = http_floor::echo_body(&load.text());
    http_floor::raw_run(addr, &body, load.warmup.max(load.concurrency), load.concurrency);
    let clock = Clock::start(server.id());
    let (latencies, _, connections) =
        http_floor::raw_run(addr, &body, load.calls, load.concurrency);
    // Stopped while the connections are open: their server threads still count.
    let measured = clock.stop(ready, latencies);
    drop(connections);
    measured
}

/// The stdio floor's client against the floor server `server` (its pipes given): this thread
/// writes requests, keeping `load.concurrency` in flight; a reader thread parses each reply,
/// checks its text and hands back its id and arrival time.
pub(crate) fn stdio_client(
    server: &Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    load: &Load,
    started: Instant,
) -> Measured {
    let mut stdin = BufWriter::new(stdin);
    let text = load.text();
    let (tx, replies) = mpsc::channel::<(usize, Instant)>();
    let expected = text.clone();
    let reader = thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
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
    // Request 0 alone stands for the handshake; then warm-up and timed calls, ids 1..=total.
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
    let mut clock = None;
    for done in 1..=total {
        if done == load.warmup + 1 {
            clock = Some(Clock::start(server.id()));
        }
        let (id, arrived) = replies.recv().expect("a reply");
        if id > load.warmup {
            latencies.push(arrived - sent_at[id]);
        }
        if next <= total {
            sent_at[next] = send(next);
            next += 1;
        }
    }
    let measured = clock.expect("timed calls").stop(ready, latencies);
    drop(stdin);
    reader.join().expect("the reader thread");
    measured
}
