//! Callers write their own frames: while calls come from many threads at once, the
//! session's reader and supervisor drain nothing of their own to send (the handshake aside:
//! the reader queues `notifications/initialized`), so no worker thread is started or woken
//! to write for them. A test binary of its own: a test that fills `max_in_flight` has the
//! reader send the calls that waited, on a worker thread, in the same process.

mod common;
#[path = "common/settle.rs"]
mod settle;

use std::collections::HashMap;
use std::time::Duration;

use serde_json::json;
use zest_blocking::ClientApi;

/// This process's client worker threads (`zest-client-handler`, as /proc shortens it) and
/// how often each has gone to sleep so far (`voluntary_ctxt_switches`): a worker woken for
/// a job sleeps again after it.
fn worker_sleeps() -> HashMap<String, u64> {
    let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
    let sleeps = |task: std::fs::DirEntry| {
        let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
        if !comm.starts_with("zest-client-han") {
            return None;
        }
        let status = std::fs::read_to_string(task.path().join("status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("voluntary_ctxt_switches:"))?;
        let tid = task.file_name().into_string().ok()?;
        Some((tid, line.split_whitespace().nth(1)?.parse().ok()?))
    };
    tasks.filter_map(|t| sleeps(t.ok()?)).collect()
}

#[test]
fn calls_from_eight_threads_wake_no_worker_thread() {
    let client = common::spawn_fixture(&[]);
    client.call_tool("echo", json!({"text": "warm"})).expect("echo");
    // Once a worker that wrote the handshake's notification has gone idle.
    let before = settle::settled(Duration::from_millis(50), worker_sleeps);
    std::thread::scope(|scope| {
        for worker in 0..8 {
            let client = &client;
            scope.spawn(move || {
                for i in 0..1_000 {
                    let text = format!("{worker}-{i}");
                    let result = client.call_tool("echo", json!({"text": text})).expect("echo");
                    assert_eq!(result.content[0].as_text(), Some(text.as_str()));
                }
            });
        }
    });
    let woken: Vec<_> = worker_sleeps()
        .into_iter()
        .filter(|(tid, n)| before.get(tid).is_none_or(|was| n > was))
        .collect();
    assert!(woken.is_empty(), "worker threads started or woken (thread, sleeps): {woken:?}");
    client.close().expect("closes");
}
