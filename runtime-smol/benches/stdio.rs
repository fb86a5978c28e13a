//! `cargo bench -p zest-smol --bench stdio`: 20,000 `tools/call` echo calls of a 64-character
//! string over stdio at concurrency 1 and 8, against the fixture server (`smol_stdio_server`),
//! beside a raw floor: this binary re-executed as a newline-delimited JSON echo server
//! (serde_json only), driven by a plain pipelining client with no MCP.
//!
//! Prints calls/s, p50/p99 latency, peak RSS (VmHWM) of client and server, spawn-to-ready
//! time, and CPU time per call of client and server from getrusage(2), the zest row's beside
//! its ratio to the floor's from the same run: the client's is RUSAGE_SELF (every thread of
//! this process) across the timed calls, divided by CALLS; the server's is the growth of
//! RUSAGE_CHILDREN across the server's whole life (spawn to reaped: start, handshake, warm-up,
//! the calls, exit), divided by the WARMUP + CALLS calls it answered. Figures are printed,
//! never asserted.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zest_smol::{Client, ClientApi, ClientOptions, StdioCommand};

const CALLS: usize = 20_000;
const WARMUP: usize = 500;
const RAW_SERVER_FLAG: &str = "--raw-echo-server";

fn main() {
    if std::env::args().any(|a| a == RAW_SERVER_FLAG) {
        raw_echo_server();
        return;
    }
    let text: String = "zest-smol-bench-".chars().cycle().take(64).collect();
    let server = fixture();
    println!(
        "zest-smol stdio bench: {CALLS} tools/call echo calls of a {}-char string",
        text.len()
    );
    println!("fixture: {}", server.display());
    println!("CPU: µs per call from getrusage, × the raw floor's in the same run");
    println!(
        "{:<16} {:>4} {:>10} {:>9} {:>9} {:>11} {:>11} {:>12} {:>15} {:>15}",
        "",
        "conc",
        "calls/s",
        "p50",
        "p99",
        "client HWM",
        "server HWM",
        "spawn→ready",
        "client CPU",
        "server CPU"
    );
    for concurrency in [1, 8] {
        let floor = raw_floor(concurrency, &text);
        let floor_cpu = floor.cpu_per_call();
        floor.print("raw floor", concurrency, None);
        zest(&server, concurrency, &text).print("zest-smol", concurrency, Some(floor_cpu));
    }
}

struct Report {
    elapsed: Duration,
    latencies: Vec<Duration>,
    client_hwm_kib: Option<u64>,
    server_hwm_kib: Option<u64>,
    spawn_to_ready: Duration,
    /// This process's CPU time (all threads) across the timed calls.
    client_cpu: Duration,
    /// The server's CPU time over its whole life, from RUSAGE_CHILDREN once it was reaped.
    server_cpu: Duration,
}

impl Report {
    /// Client and server CPU time per call, in µs.
    fn cpu_per_call(&self) -> (f64, f64) {
        (
            self.client_cpu.as_secs_f64() * 1e6 / CALLS as f64,
            self.server_cpu.as_secs_f64() * 1e6 / (WARMUP + CALLS) as f64,
        )
    }

    /// One row; with `floor` (its `cpu_per_call`), each CPU figure is followed by its ratio.
    fn print(mut self, name: &str, concurrency: usize, floor: Option<(f64, f64)>) {
        let (client_cpu, server_cpu) = self.cpu_per_call();
        let cpu = |us: f64, floor_us: Option<f64>| match floor_us {
            Some(floor_us) => format!("{us:.2} ×{:.2}", us / floor_us),
            None => format!("{us:.2}      "),
        };
        self.latencies.sort();
        let pct = |p: f64| {
            let i = ((self.latencies.len() as f64 * p).ceil() as usize).saturating_sub(1);
            self.latencies[i.min(self.latencies.len() - 1)]
        };
        let kib = |k: Option<u64>| {
            k.map_or_else(|| "n/a".to_owned(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
        };
        println!(
            "{:<16} {:>4} {:>10.0} {:>9} {:>9} {:>11} {:>11} {:>12} {:>15} {:>15}",
            name,
            concurrency,
            self.latencies.len() as f64 / self.elapsed.as_secs_f64(),
            micros(pct(0.50)),
            micros(pct(0.99)),
            kib(self.client_hwm_kib),
            kib(self.server_hwm_kib),
            micros(self.spawn_to_ready),
            cpu(client_cpu, floor.map(|f| f.0)),
            cpu(server_cpu, floor.map(|f| f.1)),
        );
    }
}

fn micros(d: Duration) -> String {
    if d >= Duration::from_millis(10) {
        format!("{:.1} ms", d.as_secs_f64() * 1e3)
    } else {
        format!("{:.0} µs", d.as_secs_f64() * 1e6)
    }
}

/// The fixture binary, built in this profile's examples directory by cargo when missing.
fn fixture() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    // target/<profile>/deps/stdio-<hash> → target/<profile>/examples/smol_stdio_server
    let dir = exe.parent().and_then(|d| d.parent()).expect("target/<profile>/deps");
    let path = dir.join("examples/smol_stdio_server");
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "--release", "-p", "zest-smol", "--example", "smol_stdio_server"]);
        eprintln!("building the fixture: {build:?}");
        assert!(build.status().is_ok_and(|s| s.success()), "could not build the fixture");
    }
    assert!(path.exists(), "{} missing", path.display());
    path
}

/// Peak resident set size of `pid` ("self" for this process), from /proc.
fn vm_hwm_kib(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resets this process's peak RSS so each scenario reports its own (Linux ≥ 4.0).
fn reset_hwm() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn zest(server: &PathBuf, concurrency: usize, text: &str) -> Report {
    let hwm_reset = reset_hwm();
    smol::block_on(async {
        let children_before = cpu_time(libc::RUSAGE_CHILDREN);
        let started = Instant::now();
        let cmd = StdioCommand::new(server).on_stderr(|_| {});
        let client = Client::spawn(cmd, ClientOptions::new("zest-smol-bench", "0.1.0"))
            .await
            .expect("the fixture starts");
        let spawn_to_ready = started.elapsed();
        let args = json!({ "text": text });
        for _ in 0..WARMUP {
            client.call_tool("echo", args.clone()).await.expect("echo");
        }
        let cpu_before = cpu_time(libc::RUSAGE_SELF);
        let started = Instant::now();
        let workers: Vec<_> = (0..concurrency)
            .map(|w| {
                let client = client.clone();
                let args = args.clone();
                let n = CALLS / concurrency + usize::from(w < CALLS % concurrency);
                smol::spawn(async move {
                    let mut latencies = Vec::with_capacity(n);
                    for _ in 0..n {
                        let t = Instant::now();
                        let r = client.call_tool("echo", args.clone()).await.expect("echo");
                        latencies.push(t.elapsed());
                        assert_eq!(r.content.len(), 1);
                    }
                    latencies
                })
            })
            .collect();
        let mut latencies = Vec::with_capacity(CALLS);
        for w in workers {
            latencies.extend(w.await);
        }
        let elapsed = started.elapsed();
        let client_cpu = cpu_time(libc::RUSAGE_SELF) - cpu_before;
        let server_hwm_kib = vm_hwm_kib(&client.pid().to_string());
        // close() returns once the child is reaped, so its CPU time is counted.
        client.close().await.expect("the fixture exits");
        let server_cpu = cpu_time(libc::RUSAGE_CHILDREN) - children_before;
        Report {
            elapsed,
            latencies,
            client_hwm_kib: vm_hwm_kib("self").filter(|_| hwm_reset),
            server_hwm_kib,
            spawn_to_ready,
            client_cpu,
            server_cpu,
        }
    })
}

/// The floor: the same exchange (one JSON line each way, parsed with serde_json) with no MCP,
/// `concurrency` requests kept in flight by one pipelining thread.
fn raw_floor(concurrency: usize, text: &str) -> Report {
    let hwm_reset = reset_hwm();
    let children_before = cpu_time(libc::RUSAGE_CHILDREN);
    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe().expect("own path"))
        .arg(RAW_SERVER_FLAG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("re-exec as the raw echo server");
    let mut to_server = BufWriter::new(child.stdin.take().expect("piped"));
    let mut from_server = BufReader::new(child.stdout.take().expect("piped"));
    let request = |id: usize| {
        let call = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}}
        });
        let mut line = serde_json::to_vec(&call).expect("serializes");
        line.push(b'\n');
        line
    };
    let mut line = String::new();
    let mut read_reply = |line: &mut String| -> usize {
        line.clear();
        from_server.read_line(line).expect("the server answers");
        let reply: Value = serde_json::from_str(line).expect("a JSON reply");
        assert_eq!(reply["result"]["content"][0]["text"].as_str(), Some(text));
        reply["id"].as_u64().expect("an id") as usize
    };
    to_server.write_all(&request(0)).and_then(|()| to_server.flush()).expect("write");
    read_reply(&mut line);
    let spawn_to_ready = started.elapsed();

    let total = WARMUP + CALLS;
    let mut sent_at = vec![Instant::now(); total + 1];
    let mut latencies = Vec::with_capacity(CALLS);
    let mut next = 1;
    while next <= concurrency.min(total) {
        sent_at[next] = Instant::now();
        to_server.write_all(&request(next)).expect("write");
        next += 1;
    }
    to_server.flush().expect("flush");
    let mut cpu_before = cpu_time(libc::RUSAGE_SELF);
    let mut started = Instant::now();
    for done in 1..=total {
        let id = read_reply(&mut line);
        if done == WARMUP {
            cpu_before = cpu_time(libc::RUSAGE_SELF);
            started = Instant::now();
        }
        if id > WARMUP {
            latencies.push(sent_at[id].elapsed());
        }
        if next <= total {
            sent_at[next] = Instant::now();
            to_server.write_all(&request(next)).and_then(|()| to_server.flush()).expect("write");
            next += 1;
        }
    }
    let elapsed = started.elapsed();
    let client_cpu = cpu_time(libc::RUSAGE_SELF) - cpu_before;
    let server_hwm_kib = vm_hwm_kib(&child.id().to_string());
    drop(to_server);
    child.wait().expect("the raw server exits at EOF");
    let server_cpu = cpu_time(libc::RUSAGE_CHILDREN) - children_before;
    Report {
        elapsed,
        latencies,
        client_hwm_kib: vm_hwm_kib("self").filter(|_| hwm_reset),
        server_hwm_kib,
        spawn_to_ready,
        client_cpu,
        server_cpu,
    }
}

/// CPU time (user + system) that getrusage(2) reports for `who`: `libc::RUSAGE_SELF` is every
/// thread of this process so far; `libc::RUSAGE_CHILDREN` is every child of this process that
/// has ended and been reaped, so its growth across one child's reaping is that child's whole
/// CPU time.
fn cpu_time(who: libc::c_int) -> Duration {
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

/// The raw floor's server: each line is a JSON-RPC request; the reply echoes
/// `params.arguments.text` as a tool result. Flushes whenever no more input is buffered.
fn raw_echo_server() {
    let stdin = std::io::stdin().lock();
    let mut reader = BufReader::new(stdin);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).expect("read") == 0 {
            return;
        }
        let request: Value = serde_json::from_str(&line).expect("a JSON request");
        let text = &request["params"]["arguments"]["text"];
        let reply = json!({
            "jsonrpc": "2.0", "id": request["id"],
            "result": {"content": [{"type": "text", "text": text}]}
        });
        serde_json::to_writer(&mut out, &reply).expect("write");
        out.write_all(b"\n").expect("write");
        if reader.buffer().is_empty() {
            out.flush().expect("flush");
        }
    }
}
