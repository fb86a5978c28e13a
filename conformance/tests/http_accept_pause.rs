//! An HTTP server out of file descriptors pauses accepting ([`ACCEPT_PAUSE`]) instead of
//! spinning on its listener, which the waiting connections keep readable, and serves those
//! connections once descriptors are free again: on every server runtime, each the everything
//! fixture in a process of its own whose descriptor limit the test lowers (prlimit(2)).
//!
//! One test walks the three runtimes in turn, so that no two fixtures are starved at once.
#![cfg(target_os = "linux")]

#[path = "support/fixture_process.rs"]
mod fixture_process;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::Duration;

use fixture_process::FixtureProcess;
use zest_core::runtime::ACCEPT_PAUSE;

/// Connections left waiting in the listener's backlog.
const WAITING: usize = 4;

/// The descriptor numbers `pid` has open.
fn open_fds(pid: u32) -> Vec<u64> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/fd")).expect("/proc/PID/fd");
    dir.map(|e| e.unwrap().file_name().to_string_lossy().parse().unwrap()).collect()
}

/// Sets the soft limit on `pid`'s open files; returns the old limit.
fn set_open_files(pid: u32, soft: u64) -> libc::rlimit {
    let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: both pointers are to live rlimit values; the new one only when `soft` is set.
    let got = unsafe {
        libc::prlimit(pid as libc::pid_t, libc::RLIMIT_NOFILE, std::ptr::null(), &mut old)
    };
    assert_eq!(got, 0, "prlimit reads the limit");
    let new = libc::rlimit { rlim_cur: soft, rlim_max: old.rlim_max };
    // SAFETY: as above.
    let set = unsafe {
        libc::prlimit(pid as libc::pid_t, libc::RLIMIT_NOFILE, &new, std::ptr::null_mut())
    };
    assert_eq!(set, 0, "prlimit lowers the limit");
    old
}

/// The CPU time `pid` has used, user and system, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    let after_name = &stat[stat.rfind(')').expect("(comm)") + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // utime and stime: fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf only reads a configuration value.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 / per_second as f64
}

/// The CPU seconds `runtime`'s server used in a second out of descriptors; then checks that
/// every waiting connection is served once the limit is back.
fn cpu_out_of_descriptors_then_served(runtime: &str) -> f64 {
    let server = FixtureProcess::serve_http(runtime, &[]);
    let pid = server.pid();
    let addr = server.url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    // The limit is on descriptor numbers: at the lowest free one, no descriptor can be had.
    let open = open_fds(pid);
    let lowest_free = (0..).find(|n| !open.contains(n)).unwrap();
    let old = set_open_files(pid, lowest_free);
    let mut waiting: Vec<TcpStream> =
        (0..WAITING).map(|_| TcpStream::connect(&addr).expect("the backlog takes it")).collect();
    // Every accept now fails for want of a descriptor; watch the server for a second.
    thread::sleep(ACCEPT_PAUSE * 3);
    let before = cpu_seconds(pid);
    thread::sleep(Duration::from_secs(1));
    let used = cpu_seconds(pid) - before;
    assert_eq!(open_fds(pid).len(), open.len(), "{runtime}: nothing was accepted meanwhile");

    set_open_files(pid, old.rlim_cur);
    for socket in &mut waiting {
        let request = format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        socket.write_all(request.as_bytes()).expect("written");
        socket.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut answer = String::new();
        socket.read_to_string(&mut answer).expect("an answer");
        assert!(answer.starts_with("HTTP/1.1 200"), "{runtime}: {answer}");
    }
    used
}

#[test]
fn a_server_out_of_descriptors_pauses_accepting_then_serves_who_waited() {
    let used: Vec<_> = ["tokio", "smol", "blocking"]
        .into_iter()
        .map(|runtime| (runtime, cpu_out_of_descriptors_then_served(runtime)))
        .collect();
    eprintln!("CPU seconds in a second out of descriptors: {used:?}");
    // A pause of 100 ms costs next to nothing; a spin takes a core (or what it can get).
    let spun: Vec<_> = used.iter().filter(|(_, seconds)| *seconds >= 0.2).collect();
    assert!(spun.is_empty(), "CPU seconds in a second out of descriptors: {used:?}");
}
