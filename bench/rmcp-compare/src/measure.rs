//! What a client run measures, and how it reads the OS: CPU time from getrusage(2) for this
//! process and from /proc for its server ([`CpuSnapshot`]), peak RSS (VmHWM) from
//! /proc/<pid>/status for both.

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
    server_cpu: CpuSnapshot,
}

impl Clock {
    /// Starts the timed part against server process `server`.
    pub(crate) fn start(server: u32) -> Self {
        Self {
            server,
            client_cpu: self_cpu(),
            server_cpu: CpuSnapshot::take(server),
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
            server_cpu: CpuSnapshot::take(self.server).since(&self.server_cpu),
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

/// Process `pid`'s CPU so far: each live thread's time on a CPU in nanoseconds (schedstat)
/// and in clock ticks (stat), and the whole process's in clock ticks (stat: every thread it
/// ever had, ended ones too).
#[derive(Default)]
pub(crate) struct CpuSnapshot {
    threads: HashMap<u32, (u64, u64)>,
    process_ticks: u64,
}

impl CpuSnapshot {
    fn take(pid: u32) -> Self {
        let ticks = |path: &std::path::Path| -> u64 {
            let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
            // utime and stime, fields 14 and 15, after the command name in parentheses.
            let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
            let fields: Vec<u64> =
                rest.split(' ').skip(12).take(2).filter_map(|f| f.parse().ok()).collect();
            fields.iter().sum()
        };
        let root = std::path::PathBuf::from(format!("/proc/{pid}"));
        let mut threads = HashMap::new();
        for task in std::fs::read_dir(root.join("task")).into_iter().flatten().flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
                continue;
            };
            let schedstat =
                std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            let Some(ns) = schedstat.split_whitespace().next().and_then(|n| n.parse().ok()) else {
                continue;
            };
            threads.insert(tid, (ns, ticks(&task.path())));
        }
        Self { threads, process_ticks: ticks(&root) }
    }

    /// The CPU time spent since `before`: exact (nanoseconds) for threads alive at both
    /// snapshots; in clock ticks for the rest (threads started or ended in between, such as a
    /// thread per connection).
    fn since(&self, before: &Self) -> Duration {
        let (mut ns, mut ticks_both) = (0u64, 0u64);
        for (tid, (now_ns, now_ticks)) in &self.threads {
            if let Some((then_ns, then_ticks)) = before.threads.get(tid) {
                ns += now_ns.saturating_sub(*then_ns);
                ticks_both += now_ticks.saturating_sub(*then_ticks);
            }
        }
        let rest =
            self.process_ticks.saturating_sub(before.process_ticks).saturating_sub(ticks_both);
        // SAFETY: sysconf only reads a constant of the system.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        Duration::from_nanos(ns + rest * 1_000_000_000 / hz)
    }
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
