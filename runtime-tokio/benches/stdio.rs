//! `cargo bench -p zest-tokio --bench stdio`: 20,000 `tools/call` echo calls of a 64-character
//! string at concurrency 1 and 8, zest-tokio's client against the tokio fixture server, beside
//! a raw floor: this binary re-executed as a newline-delimited JSON echo server (serde_json
//! only) and driven by the same exchange with no MCP. Each client runs in a process of its own
//! (this binary again) so that its peak RSS is its own. Figures are printed, never asserted.
//!
//! CPU time per call comes from getrusage(2), beside the floor's from the same run and the
//! ratio to it: the client's is RUSAGE_SELF (every thread of the client process) across the
//! timed calls, divided by CALLS; the server's is the growth of RUSAGE_CHILDREN across the
//! server's whole life in the client process (spawn to reaped: start, handshake, warm-up, the
//! calls, exit), divided by the WARMUP + CALLS calls it answered.
//!
//! Peak RSS (VmHWM) counts the code pages a process has touched (most of it: 1.5 MiB of this
//! binary's text in a zest client, 0.9 MiB in a raw one, plus libc) and, in a client, its one
//! vector of latencies (20,000 × 16 bytes = 312 KiB), kept alike in both clients.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zest_tokio::{Client, ClientApi, ClientOptions, StdioCommand};

const CALLS: usize = 20_000;
const WARMUP: usize = 500;
/// Set to `raw-echo` or `client` when this binary is re-executed in one of those roles.
const ROLE_ENV: &str = "ZEST_TOKIO_BENCH_ROLE";

fn main() {
    match std::env::var(ROLE_ENV).as_deref() {
        Ok("raw-echo") => return raw_echo_server(),
        Ok("client") => return client_role(),
        _ => {}
    }
    let server = fixture_server();
    println!("zest-tokio stdio bench: {CALLS} tools/call echo calls of a 64-char text");
    println!("fixture: {} (current-thread runtime)", server.display());
    println!("client: current-thread runtime, one process per row");
    println!();
    println!("CPU: µs per call from getrusage, × the raw floor's in the same run");
    println!();
    println!(
        "{:<24} {:>4} {:>9} {:>8} {:>8} {:>11} {:>11} {:>9} {:>15} {:>15}",
        "",
        "conc",
        "calls/s",
        "p50 µs",
        "p99 µs",
        "client HWM",
        "server HWM",
        "ready ms",
        "client CPU",
        "server CPU"
    );
    for concurrency in [1, 8] {
        let zest = run_client_process("zest", concurrency, &server);
        let raw = run_client_process("raw", concurrency, &server);
        print_row("zest-tokio (MCP)", concurrency, &zest, Some(&raw));
        print_row("raw floor (serde_json)", concurrency, &raw, None);
    }
}

/// One row; with `floor`, each CPU figure is followed by its ratio to the floor's.
fn print_row(name: &str, concurrency: usize, row: &Value, floor: Option<&Value>) {
    let f = |row: &Value, k: &str| row[k].as_f64().unwrap_or(f64::NAN);
    let cpu = |k: &str| match floor {
        Some(floor) => format!("{:.2} ×{:.2}", f(row, k), f(row, k) / f(floor, k)),
        None => format!("{:.2}      ", f(row, k)),
    };
    println!(
        "{:<24} {:>4} {:>9.0} {:>8.1} {:>8.1} {:>7.0} KiB {:>7.0} KiB {:>9.2} {:>15} {:>15}",
        name,
        concurrency,
        f(row, "calls_per_sec"),
        f(row, "p50_us"),
        f(row, "p99_us"),
        f(row, "client_hwm_kib"),
        f(row, "server_hwm_kib"),
        f(row, "ready_ms"),
        cpu("client_cpu_us"),
        cpu("server_cpu_us"),
    );
}

/// Runs one row's client as a child process and returns the JSON it prints.
fn run_client_process(scenario: &str, concurrency: usize, server: &Path) -> Value {
    let exe = std::env::current_exe().expect("this binary");
    let out = Command::new(exe)
        .env(ROLE_ENV, "client")
        .args([scenario, &concurrency.to_string()])
        .arg(server)
        .stderr(Stdio::inherit())
        .output()
        .expect("re-executing the bench as a client");
    assert!(out.status.success(), "the {scenario} client failed: {}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("the client's JSON row")
}

/// The client role: `<zest|raw> <concurrency> <server>`; prints one JSON row.
fn client_role() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let concurrency: usize = args[1].parse().expect("a concurrency");
    let text = "x".repeat(64);
    let mut m = match args[0].as_str() {
        "zest" => zest_client(Path::new(&args[2]), &text, concurrency),
        _ => raw_client(&text, concurrency),
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
        "client_hwm_kib": hwm_kib(std::process::id()),
        "server_hwm_kib": m.server_hwm_kib,
        "ready_ms": m.ready.as_secs_f64() * 1e3,
        "client_cpu_us": m.client_cpu.as_secs_f64() * 1e6 / CALLS as f64,
        "server_cpu_us": m.server_cpu.as_secs_f64() * 1e6 / (WARMUP + CALLS) as f64,
    });
    println!("{row}");
}

/// What one client run measured.
struct Measured {
    ready: Duration,
    server_hwm_kib: u64,
    elapsed: Duration,
    latencies: Vec<Duration>,
    /// This process's CPU time (all threads) across the timed calls.
    client_cpu: Duration,
    /// The server's CPU time over its whole life, from RUSAGE_CHILDREN once it was reaped.
    server_cpu: Duration,
}

/// zest-tokio: `concurrency` tasks on a current-thread runtime, each making its share of the
/// calls one after another.
fn zest_client(server: &Path, text: &str, concurrency: usize) -> Measured {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(async {
        let children_before = cpu_time(libc::RUSAGE_CHILDREN);
        let started = Instant::now();
        let command = StdioCommand::new(server).on_stderr(|_| {});
        let client = Client::spawn(command, ClientOptions::new("bench", "0"))
            .await
            .expect("the fixture starts");
        let ready = started.elapsed();
        let args = json!({ "text": text });
        for _ in 0..WARMUP {
            client.call_tool("echo", args.clone()).await.expect("echo");
        }
        let per_task = CALLS / concurrency;
        let cpu_before = cpu_time(libc::RUSAGE_SELF);
        let start = Instant::now();
        let tasks: Vec<_> = (0..concurrency)
            .map(|_| {
                let client = client.clone();
                let args = args.clone();
                tokio::spawn(async move {
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
        let mut parts = Vec::with_capacity(concurrency);
        for task in tasks {
            parts.push(task.await.expect("a bench task"));
        }
        let elapsed = start.elapsed();
        let client_cpu = cpu_time(libc::RUSAGE_SELF) - cpu_before;
        // One vector of CALLS latencies, as the raw client keeps, counts in the client's peak
        // RSS; at concurrency 1 the task's own vector is that one (no second copy).
        let mut latencies = parts.swap_remove(0);
        for part in parts {
            latencies.extend(part);
        }
        let server_hwm_kib = hwm_kib(client.pid());
        // close() returns once the driver has reaped the child, so its CPU time is counted.
        client.close().await.expect("the fixture exits");
        let server_cpu = cpu_time(libc::RUSAGE_CHILDREN) - children_before;
        Measured { ready, server_hwm_kib, elapsed, latencies, client_cpu, server_cpu }
    })
}

/// The floor: JSON-RPC-shaped lines over the same kind of pipes, with up to `concurrency`
/// requests outstanding, from one blocking loop (no runtime, no MCP).
fn raw_client(text: &str, concurrency: usize) -> Measured {
    let children_before = cpu_time(libc::RUSAGE_CHILDREN);
    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe().expect("this binary"))
        .env(ROLE_ENV, "raw-echo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("re-executing the bench as the raw echo server");
    let mut stdin = BufWriter::new(child.stdin.take().expect("piped"));
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    let mut exchange = |n: usize, latencies: &mut Vec<Duration>| {
        let mut sent_at = HashMap::with_capacity(concurrency);
        let (mut next, mut done) = (0usize, 0usize);
        while done < n {
            while sent_at.len() < concurrency && next < n {
                let request = json!({
                    "jsonrpc": "2.0", "id": next, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": text}}
                });
                serde_json::to_writer(&mut stdin, &request).expect("serialize");
                stdin.write_all(b"\n").expect("write");
                sent_at.insert(next as u64, Instant::now());
                next += 1;
            }
            stdin.flush().expect("flush");
            line.clear();
            stdout.read_line(&mut line).expect("read");
            let reply: Value = serde_json::from_str(&line).expect("the echo server's JSON");
            assert_eq!(reply["result"]["content"][0]["text"].as_str(), Some(text));
            let id = reply["id"].as_u64().expect("an id");
            let sent = sent_at.remove(&id).expect("a request we sent");
            latencies.push(sent.elapsed());
            done += 1;
        }
    };
    let mut warm = Vec::new();
    exchange(1, &mut warm);
    let ready = started.elapsed();
    exchange(WARMUP, &mut warm);
    let mut latencies = Vec::with_capacity(CALLS);
    let cpu_before = cpu_time(libc::RUSAGE_SELF);
    let start = Instant::now();
    exchange(CALLS, &mut latencies);
    let elapsed = start.elapsed();
    let client_cpu = cpu_time(libc::RUSAGE_SELF) - cpu_before;
    let server_hwm_kib = hwm_kib(child.id());
    drop(stdin);
    child.wait().expect("the raw echo server exits at EOF");
    let server_cpu = cpu_time(libc::RUSAGE_CHILDREN) - children_before;
    Measured { ready, server_hwm_kib, elapsed, latencies, client_cpu, server_cpu }
}

/// The raw echo server: parse each line, answer with the text as a tools/call-shaped result.
fn raw_echo_server() {
    let stdin = std::io::stdin().lock();
    let mut stdout = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let Ok(line) = line else { return };
        let request: Value = serde_json::from_str(&line).expect("JSON");
        let reply = json!({
            "jsonrpc": "2.0", "id": request["id"],
            "result": {"content": [{"type": "text", "text": request["params"]["arguments"]["text"]}]}
        });
        serde_json::to_writer(&mut stdout, &reply).expect("serialize");
        if stdout.write_all(b"\n").and_then(|()| stdout.flush()).is_err() {
            return;
        }
    }
}

/// Peak resident set size (VmHWM) of a process, in KiB.
fn hwm_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
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

/// The fixture in this binary's profile (target/<profile>/examples), (re)built with cargo in
/// that profile first so that it is never stale.
fn fixture_server() -> PathBuf {
    let exe = std::env::current_exe().expect("this binary");
    let dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<bench>");
    let path = dir.join("examples").join("tokio_stdio_server");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "-q", "-p", "zest-tokio", "--example", "tokio_stdio_server"]);
    if dir.ends_with("release") {
        build.arg("--release");
    }
    let status = build.current_dir(env!("CARGO_MANIFEST_DIR")).status().expect("cargo runs");
    assert!(status.success() && path.exists(), "building the fixture failed");
    path
}
