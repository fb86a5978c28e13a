//! Callers write their own frames: calls from many threads at once have no frame written
//! for the session's reader or supervisor (nothing they drain is theirs to send), so no
//! worker thread starts. A test binary of its own: a test that fills `max_in_flight` has the
//! reader send the calls that waited, on a worker thread, in the same process.

mod common;

use serde_json::json;
use zest_blocking::ClientApi;

/// The names of this process's threads, from /proc.
fn thread_names() -> Vec<String> {
    let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
    let comm = |task: std::fs::DirEntry| std::fs::read_to_string(task.path().join("comm"));
    tasks.filter_map(|t| comm(t.ok()?).ok()).map(|name| name.trim_end().to_owned()).collect()
}

#[test]
fn calls_from_eight_threads_start_no_worker_thread() {
    let client = common::spawn_fixture(&[]);
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
    let workers: Vec<_> =
        thread_names().into_iter().filter(|n| n.starts_with("zest-client-han")).collect();
    assert!(workers.is_empty(), "worker threads started: {workers:?}");
    client.close().expect("closes");
}
