//! `cargo bench -p zest-blocking --bench stdio`: 20,000 `tools/call` echo calls of a
//! 64-character string against the blocking fixture server, at concurrency 1 and 8, beside a
//! raw floor: this binary re-executed as a newline-delimited JSON echo server (serde_json
//! only), driven by the same exchange with no MCP. Figures are printed, never asserted.
//!
//! CPU time per call comes from getrusage(2), beside the floor's from the same run and the
//! ratio to it: the client's is RUSAGE_SELF (every thread of this process) across the timed
//! calls, divided by CALLS; the server's is the growth of RUSAGE_CHILDREN across the server's
//! whole life (spawn to reaped: start, handshake, warm-up, the calls, exit), divided by the
//! WARMUP + CALLS calls it answered.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zest_blocking::{Client, ClientApi, ClientOptions, StdioCommand};

const CALLS: usize = 20_000;
const WARMUP: usize = 500;
const RAW_ECHO_ENV: &str = "ZEST_BENCH_RAW_ECHO";

fn main() {
    if std::env::var_os(RAW_ECHO_ENV).is_some() {
        raw_echo_server();
        return;
    }
    let text = "x".repeat(64);
    let server = fixture_server();
    println!("zest-blocking stdio bench: {CALLS} tools/call echo calls, 64-char text");
    println!("server: {}", server.display());
    println!("CPU: µs per call from getrusage, × the raw floor's in the same run");
    println!();
    println!(
        "{:<22} {:>5} {:>10} {:>9} {:>9} {:>12} {:>12} {:>10} {:>15} {:>15}",
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
        let mcp = mcp_run(&server, &text, concurrency);
        let raw = raw_run(&text, concurrency);
        let floor_cpu = raw.cpu_per_call();
        mcp.print("zest-blocking (MCP)", concurrency, Some(floor_cpu));
        raw.print("raw floor (serde_json)", concurrency, None);
    }
}

struct Run {
    calls_per_sec: f64,
    latencies: Vec<Duration>,
    client_hwm_kib: u64,
    server_hwm_kib: u64,
    ready: Duration,
    /// This process's CPU time (all threads) across the timed calls.
    client_cpu: Duration,
    /// The server's CPU time over its whole life, from RUSAGE_CHILDREN once it was reaped.
    server_cpu: Duration,
}

impl Run {
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
        self.latencies.sort_unstable();
        let pct = |p: f64| {
            let i = ((self.latencies.len() as f64 * p) as usize).min(self.latencies.len() - 1);
            self.latencies[i].as_secs_f64() * 1e6
        };
        println!(
            "{:<22} {:>5} {:>10.0} {:>9.1} {:>9.1} {:>9} KiB {:>8} KiB {:>10.2} {:>15} {:>15}",
            name,
            concurrency,
            self.calls_per_sec,
            pct(0.50),
            pct(0.99),
            self.client_hwm_kib,
            self.server_hwm_kib,
            self.ready.as_secs_f64() * 1e3,
            cpu(client_cpu, floor.map(|f| f.0)),
            cpu(server_cpu, floor.map(|f| f.1)),
        );
    }
}

fn mcp_run(server: &PathBuf, text: &str, concurrency: usize) -> Run {
    let children_before = cpu_time(libc::RUSAGE_CHILDREN);
    let started = Instant::now();
    let command = StdioCommand::new(server).on_stderr(|_| {});
    let client = Client::spawn(command, ClientOptions::new("bench", "0")).expect("the fixture");
    let ready = started.elapsed();
    let args = json!({ "text": text });
    for _ in 0..WARMUP {
        client.call_tool("echo", args.clone()).expect("echo");
    }
    let cpu_before = cpu_time(libc::RUSAGE_SELF);
    let (calls_per_sec, latencies) = timed(concurrency, |_| {
        let client = client.clone();
        let args = args.clone();
        move || {
            let result = client.call_tool("echo", args.clone()).expect("echo");
            assert!(!result.is_error());
        }
    });
    let client_cpu = cpu_time(libc::RUSAGE_SELF) - cpu_before;
    let server_hwm_kib = hwm_kib(client.pid());
    // close() returns once the supervisor has reaped the child, so its CPU time is counted.
    client.close().expect("the fixture exits");
    let server_cpu = cpu_time(libc::RUSAGE_CHILDREN) - children_before;
    Run {
        calls_per_sec,
        latencies,
        client_hwm_kib: hwm_kib(std::process::id()),
        server_hwm_kib,
        ready,
        client_cpu,
        server_cpu,
    }
}

/// Runs `CALLS` calls split over `concurrency` threads; `make(thread)` builds each thread's
/// call. Returns calls/s and every call's latency.
fn timed<F, C>(concurrency: usize, make: F) -> (f64, Vec<Duration>)
where
    F: Fn(usize) -> C,
    C: FnMut() + Send + 'static,
{
    let per_thread = CALLS / concurrency;
    let start = Instant::now();
    let threads: Vec<_> = (0..concurrency)
        .map(|t| {
            let mut call = make(t);
            thread::spawn(move || {
                let mut latencies = Vec::with_capacity(per_thread);
                for _ in 0..per_thread {
                    let t0 = Instant::now();
                    call();
                    latencies.push(t0.elapsed());
                }
                latencies
            })
        })
        .collect();
    let latencies: Vec<Duration> =
        threads.into_iter().flat_map(|t| t.join().expect("a bench thread")).collect();
    let elapsed = start.elapsed().as_secs_f64();
    (latencies.len() as f64 / elapsed, latencies)
}

/// The raw floor's client: JSON-RPC-shaped lines over the same pipes, routed by id.
struct RawClient {
    child: Child,
    stdin: Mutex<BufWriter<ChildStdin>>,
    waiting: Arc<Mutex<HashMap<u64, Sender<Value>>>>,
    next: Mutex<u64>,
}

impl RawClient {
    fn spawn() -> Self {
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .env(RAW_ECHO_ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("re-executing the bench as the raw echo server");
        let stdin = Mutex::new(BufWriter::new(child.stdin.take().expect("piped")));
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let waiting: Arc<Mutex<HashMap<u64, Sender<Value>>>> = Arc::default();
        let routes = waiting.clone();
        thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                let reply: Value = serde_json::from_str(&line).expect("the echo server's JSON");
                let id = reply["id"].as_u64().expect("an id");
                if let Some(tx) = routes.lock().unwrap().remove(&id) {
                    let _ = tx.send(reply);
                }
            }
        });
        Self { child, stdin, waiting, next: Mutex::new(0) }
    }

    fn call(&self, text: &str) -> Value {
        let id = {
            let mut next = self.next.lock().unwrap();
            *next += 1;
            *next
        };
        let (tx, rx) = mpsc::channel();
        self.waiting.lock().unwrap().insert(id, tx);
        let request = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}}
        });
        {
            let mut stdin = self.stdin.lock().unwrap();
            serde_json::to_writer(&mut *stdin, &request).expect("serialize");
            stdin.write_all(b"\n").and_then(|()| stdin.flush()).expect("write");
        }
        rx.recv().expect("a reply")
    }
}

fn raw_run(text: &str, concurrency: usize) -> Run {
    let children_before = cpu_time(libc::RUSAGE_CHILDREN);
    let started = Instant::now();
    let raw = Arc::new(RawClient::spawn());
    raw.call(text);
    let ready = started.elapsed();
    for _ in 0..WARMUP {
        raw.call(text);
    }
    let cpu_before = cpu_time(libc::RUSAGE_SELF);
    let (calls_per_sec, latencies) = timed(concurrency, |_| {
        let raw = raw.clone();
        let text = text.to_owned();
        move || {
            let reply = raw.call(&text);
            assert_eq!(reply["result"]["content"][0]["text"].as_str(), Some(text.as_str()));
        }
    });
    let client_cpu = cpu_time(libc::RUSAGE_SELF) - cpu_before;
    let raw = Arc::into_inner(raw).expect("every bench thread has finished");
    let server_hwm_kib = hwm_kib(raw.child.id());
    let RawClient { mut child, stdin, .. } = raw;
    drop(stdin);
    child.wait().expect("the raw echo server exits at EOF");
    let server_cpu = cpu_time(libc::RUSAGE_CHILDREN) - children_before;
    Run {
        calls_per_sec,
        latencies,
        client_hwm_kib: hwm_kib(std::process::id()),
        server_hwm_kib,
        ready,
        client_cpu,
        server_cpu,
    }
}

/// The raw echo server: parse each line, answer with the text as a tools/call-shaped result.
fn raw_echo_server() {
    let stdin = std::io::stdin().lock();
    let mut stdout = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let Ok(line) = line else { return };
        let request: Value = serde_json::from_str(&line).expect("JSON");
        let text = request["params"]["arguments"]["text"].clone();
        let reply = json!({
            "jsonrpc": "2.0", "id": request["id"],
            "result": {"content": [{"type": "text", "text": text}]}
        });
        serde_json::to_writer(&mut stdout, &reply).expect("serialize");
        if stdout.write_all(b"\n").and_then(|()| stdout.flush()).is_err() {
            return;
        }
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

/// Peak resident set size (VmHWM) of a process, in KiB.
fn hwm_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The release fixture in target/release/examples, (re)built with cargo first so the figures
/// never come from a stale binary.
fn fixture_server() -> PathBuf {
    let exe = std::env::current_exe().expect("this binary");
    // target/release/deps/stdio-… → target/release/examples/blocking_stdio_server
    let dir = exe.parent().and_then(|d| d.parent()).expect("target/release").to_owned();
    let path = dir.join("examples").join("blocking_stdio_server");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "-p", "zest-blocking", "--example", "blocking_stdio_server"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success() && path.exists(), "building the fixture failed");
    path
}
