//! One figure of a process's /proc/<pid>/status, for the benches and soaks that print
//! memory. Included by the other support files as `#[path = "proc_status.rs"] mod
//! proc_status;` (a path beside them).
#![allow(dead_code)]

/// A figure of /proc/<pid>/status in KiB (`VmRSS` now, `VmHWM` the peak, `RssFile` and
/// `RssAnon` the parts of `VmRSS`); 0 if the process or the field is gone.
pub(crate) fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|l| l.split(':').next() == Some(field)).unwrap_or_default();
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}
