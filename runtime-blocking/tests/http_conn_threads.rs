//! zest-blocking's HTTP server runs its connections' readers and writers on a pool of
//! threads, a writer only once a connection needs one. A test binary of its own: it counts
//! this process's threads by name, so no other server may run beside it (its tests take
//! turns).

#[path = "common/http.rs"]
mod http_common;
#[path = "../../tests/support/load.rs"]
mod load;
#[path = "common/settle.rs"]
mod settle;

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use http_common::{server, server_with};
use serde_json::json;
use zest_blocking::HttpConfig;

/// This process's threads named `zest-http-conn` (connections' readers and writers), now.
fn connection_threads() -> Vec<u32> {
    let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
    tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim() == "zest-http-conn")
        })
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
        .collect()
}

/// Whether this kernel shows a thread's wait channel: that of a thread parked on a channel
/// (a futex) names it. (A running thread shows `0` either way.)
fn wait_channels_shown() -> bool {
    let (tid_tx, tid) = std::sync::mpsc::channel();
    let (release, parked) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        let me = std::fs::read_link("/proc/thread-self").expect("/proc/thread-self");
        tid_tx.send(me.file_name().unwrap().to_owned()).unwrap();
        let _ = parked.recv();
    });
    let tid = tid.recv().unwrap().into_string().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut shown = false;
    while !shown && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        let channel = std::fs::read_to_string(format!("/proc/self/task/{tid}/wchan"));
        shown = channel.is_ok_and(|c| c.contains("futex"));
    }
    release.send(()).unwrap();
    thread.join().unwrap();
    shown
}

/// Waits (at most 5 s) until no more than `busy` connection threads are anywhere but parked
/// on a futex, as the pool's idle ones are. Where the kernel hides wait channels it waits a
/// fixed 200 ms instead.
fn wait_until_busy_at_most(busy: usize) {
    static SHOWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if !*SHOWN.get_or_init(wait_channels_shown) {
        std::thread::sleep(Duration::from_millis(200));
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let parked = |t: &u32| {
            std::fs::read_to_string(format!("/proc/self/task/{t}/wchan"))
                .is_ok_and(|c| c.contains("futex"))
        };
        let threads = connection_threads();
        if threads.iter().filter(|t| !parked(t)).count() <= busy || Instant::now() > deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// One test at a time: each counts the threads of the server it started.
fn alone() -> MutexGuard<'static, ()> {
    static ALONE: Mutex<()> = Mutex::new(());
    ALONE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A client that opens a connection per request (rmcp's does) costs no thread spawn per
/// request: the same few pooled threads serve one connection after another.
#[test]
fn connections_one_after_another_are_served_by_the_same_few_threads() {
    let _alone = alone();
    // Threads an earlier test's server left in its pool (they linger a while) are not ours.
    let before: HashSet<u32> = connection_threads().into_iter().collect();
    let server = server();
    let session = load::open_session(&mut load::RawConn::connect(server.local_addr()));
    let headers = load::session_headers(&session);
    let mut seen = HashSet::new();
    for id in 0..20 {
        let mut conn = load::RawConn::connect(server.local_addr());
        let ping = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let r = conn.exchange(Method::POST, &headers, ping.to_string().as_bytes());
        assert_eq!(r.status, StatusCode::OK, "{}", String::from_utf8_lossy(&r.body));
        // While it is open, its reader and writer are alive.
        seen.extend(connection_threads().into_iter().filter(|t| !before.contains(t)));
        drop(conn);
        // The server sees the end and gives its threads back (a thread spawned per
        // connection would be counted anew however long this waits).
        wait_until_busy_at_most(0);
    }
    // At most two per connection and two more for the session's first one; a thread per
    // connection would be twenty readers at least.
    assert!(seen.len() <= 10, "{} distinct connection threads for 20 connections", seen.len());
    server.shutdown();
}

/// A connection whose requests are quick calls (as most are) is served by the polling
/// thread, between requests it waits without a thread (Linux), and it never starts its
/// writer: no connection thread at all, and no wake-up of one. Where nothing parks, its
/// reader serves it: one thread, not two.
#[test]
fn a_connection_of_quick_calls_takes_no_thread_of_its_own() {
    let _alone = alone();
    // Threads an earlier test's server left in its pool (they linger a while) are not ours.
    let before: HashSet<u32> = connection_threads().into_iter().collect();
    // A long wait, so that the timer never decides an answer (its SSE head would need the
    // writer) however slow the machine.
    let mut config = HttpConfig::new();
    config.router.json_wait = Duration::from_secs(10);
    let server = server_with(config);
    let mut conn = load::RawConn::connect(server.local_addr());
    let session = load::open_session(&mut conn);
    let headers = load::session_headers(&session);
    for id in 2..5 {
        let ping = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let r = conn.exchange(Method::POST, &headers, ping.to_string().as_bytes());
        assert_eq!(r.status, StatusCode::OK, "{}", String::from_utf8_lossy(&r.body));
    }
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}}});
    let r = conn.exchange(Method::POST, &headers, call.to_string().as_bytes());
    assert_eq!(r.status, StatusCode::OK, "{}", String::from_utf8_lossy(&r.body));
    let ours: Vec<u32> = connection_threads().into_iter().filter(|t| !before.contains(t)).collect();
    let expected = if cfg!(any(target_os = "linux", target_os = "android")) { 0 } else { 1 };
    assert_eq!(ours.len(), expected, "connection threads that served it: {ours:?}");
    drop(conn);
    server.shutdown();
}

/// How often each connection thread has gone to sleep so far (`voluntary_ctxt_switches`):
/// a pool thread woken for a job sleeps again after it.
fn connection_thread_sleeps() -> Vec<(u32, u64)> {
    let sleeps = |t: u32| {
        let status = std::fs::read_to_string(format!("/proc/self/task/{t}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("voluntary_ctxt_switches:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    connection_threads().into_iter().filter_map(|t| Some((t, sleeps(t)?))).collect()
}

/// A 2026-07-28 call is watched while it runs (its connection's close cancels it, so a
/// thread must read the socket if it runs long). Quick calls have returned when their watch
/// comes due: no connection thread is woken or started for them. (A call the machine
/// stalls past the watch is rescued, rightly: a few wake-ups are allowed for that.)
#[test]
fn quick_2026_calls_wake_no_thread_when_their_watch_comes_due() {
    use zest_blocking::{Client, ClientApi, ClientOptions};
    let _alone = alone();
    // A long wait, so that the timer never decides an answer (its SSE head would need the
    // writer) however slow the machine.
    let mut config = HttpConfig::new();
    config.router.json_wait = Duration::from_secs(10);
    let server = server_with(config);
    let options = ClientOptions::new("watched", "1").with_config(|c| c.prefer_modern());
    let client = Client::connect(&server.url(), options).expect("connects");
    assert_eq!(client.negotiated().protocol_version.as_str(), "2026-07-28");
    let call = |i: usize| {
        let text = format!("call {i}");
        let result = client.call_tool("echo", json!({"text": text})).expect("echo");
        assert_eq!(result.content[0].as_text(), Some(text.as_str()));
        // Past the call's watch (due 5-10 ms after it), each in a sweep of its own.
        std::thread::sleep(Duration::from_millis(12));
    };
    // Whatever the session itself keeps (the reader of its listening stream) is there now.
    call(0);
    wait_until_busy_at_most(1);
    let before: std::collections::HashMap<u32, u64> =
        connection_thread_sleeps().into_iter().collect();
    for i in 1..=30 {
        call(i);
    }
    let woken: Vec<(u32, u64)> = connection_thread_sleeps()
        .into_iter()
        .map(|(t, n)| (t, n.saturating_sub(before.get(&t).copied().unwrap_or(0))))
        .filter(|(_, n)| *n > 0)
        .collect();
    // A wake-up per call was 30 here.
    let wake_ups: u64 = woken.iter().map(|(_, n)| n).sum();
    assert!(wake_ups <= 5, "connection threads woken or started (thread, sleeps): {woken:?}");
    client.close().expect("closes");
    server.shutdown();
}

/// Connections wait between their requests without a thread (Linux): twenty keep-alive
/// connections, each open after a request, hold no connection thread, where each held a
/// reader blocked on its socket before. Where nothing parks, each keeps its reader.
#[test]
fn connections_between_requests_hold_no_thread() {
    let _alone = alone();
    let before: HashSet<u32> = connection_threads().into_iter().collect();
    let mut config = HttpConfig::new();
    config.router.json_wait = Duration::from_secs(10);
    let server = server_with(config);
    let (session, mut open) = idle_connections(server.local_addr(), 20);
    let headers = load::session_headers(&session);
    let ours = started_since(&before);
    let expected = if cfg!(any(target_os = "linux", target_os = "android")) { 0 } else { 21 };
    assert_eq!(ours.len(), expected, "connection threads for 21 open connections: {ours:?}");
    // Still served, each on its own connection.
    for (id, conn) in open.iter_mut().enumerate() {
        ping(conn, &headers, 100 + id);
    }
    drop(open);
    server.shutdown();
}

/// At shutdown, connections parked between requests close on the thread shutting the server
/// down (Linux): twenty-one idle connections start no connection thread, and each sees its
/// end.
#[test]
fn a_shutdown_closes_parked_connections_without_a_thread_each() {
    let _alone = alone();
    let before: HashSet<u32> = connection_threads().into_iter().collect();
    let server = server();
    let (_session, mut open) = idle_connections(server.local_addr(), 20);
    server.shutdown();
    if cfg!(any(target_os = "linux", target_os = "android")) {
        let ours = started_since(&before);
        assert!(ours.is_empty(), "connection threads started by the shutdown: {ours:?}");
    }
    for conn in &mut open {
        conn.read_to_close(Duration::from_secs(5));
    }
}

/// A session opened on one connection, and `more` connections beside it, each left open
/// after a ping: all of them idle.
fn idle_connections(addr: std::net::SocketAddr, more: usize) -> (String, Vec<load::RawConn>) {
    let mut first = load::RawConn::connect(addr);
    let session = load::open_session(&mut first);
    let headers = load::session_headers(&session);
    let mut open = vec![first];
    for id in 0..more {
        let mut conn = load::RawConn::connect(addr);
        ping(&mut conn, &headers, id);
        open.push(conn);
    }
    (session, open)
}

/// A ping on `conn`, answered 200.
fn ping(conn: &mut load::RawConn, headers: &[(&str, &str)], id: usize) {
    let ping = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    let r = conn.exchange(Method::POST, headers, ping.to_string().as_bytes());
    assert_eq!(r.status, StatusCode::OK, "{}", String::from_utf8_lossy(&r.body));
}

/// Connection threads that were not there in `before`.
fn started_since(before: &HashSet<u32>) -> Vec<u32> {
    connection_threads().into_iter().filter(|t| !before.contains(t)).collect()
}

/// This process's open file descriptors, now.
fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd").count()
}

/// A connection's reader, writer and cutter share one descriptor: a copy each cost a `dup`
/// and a `close` apiece for every connection (one per call under rmcp's client).
#[test]
fn an_open_connection_holds_one_descriptor_on_the_server() {
    let _alone = alone();
    let server = server();
    let mut first = load::RawConn::connect(server.local_addr());
    let session = load::open_session(&mut first);
    let headers = load::session_headers(&session);
    // Sockets of an earlier test's server may still be closing: count once none closes.
    let before = settle::settled(Duration::from_millis(100), open_descriptors);
    let mut conns: Vec<load::RawConn> = Vec::new();
    for id in 0..4 {
        let mut conn = load::RawConn::connect(server.local_addr());
        let ping = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let r = conn.exchange(Method::POST, &headers, ping.to_string().as_bytes());
        assert_eq!(r.status, StatusCode::OK, "{}", String::from_utf8_lossy(&r.body));
        conns.push(conn);
    }
    // Each open connection: the client's socket here and the server's one.
    assert_eq!(open_descriptors() - before, 2 * conns.len());
    drop(conns);
    drop(first);
    server.shutdown();
}
