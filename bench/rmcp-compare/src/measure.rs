//! What a client run measures, and how it reads the OS: CPU time from getrusage(2) for this
//! process and from /proc/<pid>/task/<tid>/schedstat (nanoseconds on a CPU, per thread) for
//! its server, peak RSS (VmHWM) from /proc/<pid>/status for both.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "../../../tests/support/proc_status.rs"]
mod proc_status;
pub(crate) use proc_status::status_kib;

/// One client run: the server's pid (a child of this process), then every timed call.
pub(crate) struct Measured {
    /// Spawn to handshake done.
    pub(crate) ready: Duration,
    /// Wall time of the timed calls.
    pub(crate) elapsed: Duration,
    /// Every timed call's latency.
    pub(crate) latencies: Vec<Duration>,
    /// This process's CPU time (all threads) across the timed calls.
    pub(crate) client_cpu: Duration,
    /// The server's CPU time across the timed calls.
    pub(crate) server_cpu: Duration,
    /// The server's peak RSS, read after the timed calls.
    pub(crate) server_hwm_kib: u64,
}

impl Measured {
    /// The JSON row a client process prints for the driver.
    pub(crate) fn row(mut self) -> Value {
        let calls = self.latencies.len();
        self.latencies.sort_unstable();
        let pct = |p: f64| {
            let i = ((calls as f64 * p) as usize).min(calls - 1);
            self.latencies[i].as_secs_f64() * 1e6
        };
        json!({
            "calls_per_sec": calls as f64 / self.elapsed.as_secs_f64(),
            "p50_us": pct(0.50),
            "p99_us": pct(0.99),
            "ready_ms": self.ready.as_secs_f64() * 1e3,
            "client_cpu_us": self.client_cpu.as_secs_f64() * 1e6 / calls as f64,
            "server_cpu_us": self.server_cpu.as_secs_f64() * 1e6 / calls as f64,
            "client_hwm_kib": status_kib(std::process::id(), "VmHWM"),
            "server_hwm_kib": self.server_hwm_kib,
        })
    }
}

/// The timed part of a run, seen from outside: CPU of both processes and wall time from
/// [`Clock::start`] to [`Clock::stop`].
pub(crate) struct Clock {
    server: u32,
    started: Instant,
    client_cpu: Duration,
    server_cpu: HashMap<u32, u64>,
}

impl Clock {
    /// Starts the timed part against server process `server`.
    pub(crate) fn start(server: u32) -> Self {
        Self {
            server,
            client_cpu: self_cpu(),
            server_cpu: threads_cpu_ns(server),
            started: Instant::now(),
        }
    }

    /// Ends it: what it measured, with the latencies and the time to ready given.
    pub(crate) fn stop(self, ready: Duration, latencies: Vec<Duration>) -> Measured {
        let elapsed = self.started.elapsed();
        Measured {
            ready,
            elapsed,
            latencies,
            client_cpu: self_cpu() - self.client_cpu,
            server_cpu: cpu_since(self.server, &self.server_cpu),
            server_hwm_kib: status_kib(self.server, "VmHWM"),
        }
    }
}

/// This process's CPU time so far, every thread, user and system.
fn self_cpu() -> Duration {
    // SAFETY: `rusage` is plain integers, for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct it is handed, which outlives the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    assert_eq!(rc, 0, "getrusage: {}", std::io::Error::last_os_error());
    let secs = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.unsigned_abs())
            + Duration::from_micros(t.tv_usec.unsigned_abs())
    };
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Each live thread of process `pid`: its time on a CPU so far, in nanoseconds.
fn threads_cpu_ns(pid: u32) -> HashMap<u32, u64> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return HashMap::new() };
    tasks
        .flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let schedstat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            Some((tid, schedstat.split_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

/// The CPU time process `pid`'s threads spent since `before` was taken: each live thread's
/// growth (a thread that started since counts whole; one that ended since is missed, so the
/// timed part must keep the server's threads alive, as every server here does).
fn cpu_since(pid: u32, before: &HashMap<u32, u64>) -> Duration {
    let ns = threads_cpu_ns(pid)
        .into_iter()
        .map(|(tid, now)| now.saturating_sub(before.get(&tid).copied().unwrap_or(0)))
        .sum();
    Duration::from_nanos(ns)
}

/// The one child process of this process (the server an SDK's client spawned).
pub(crate) fn only_child() -> u32 {
    let me = std::process::id();
    let mut children = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{me}/task")).expect("/proc/self/task").flatten() {
        let list = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        children.extend(list.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
    }
    match children.as_slice() {
        [pid] => *pid,
        other => panic!("one server child expected, found {other:?}"),
    }
}
