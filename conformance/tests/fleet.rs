//! The session era across processes: three fixture processes, one per runtime, sharing
//! sessions, streams and messages in one Redis (zest-redis), behind a loopback proxy that
//! sends each HTTP request to the next process in turn.

#[path = "support/fixture_process.rs"]
mod fixture_process;
#[path = "support/proxy.rs"]
mod proxy;
#[path = "support/redis_server.rs"]
mod redis_server;

use std::sync::{Arc, Mutex};

use fixture_process::FixtureProcess;
use proxy::{authority, proxy};
use redis_server::RedisServer;

const RUNTIMES: [&str; 3] = ["tokio", "smol", "blocking"];

fn fleet(redis: &RedisServer) -> Vec<FixtureProcess> {
    let url = redis.url();
    RUNTIMES.iter().map(|rt| FixtureProcess::serve_http(rt, &["--fleet", &url])).collect()
}

/// The official server suite 0.2.0-alpha.12 at 2025-11-25, every scenario, through the proxy: each request of a
/// session may land on any of the three processes.
#[test]
fn the_2025_11_25_server_suite_passes_through_three_processes_sharing_redis() {
    let harness = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("harness/node_modules");
    assert!(
        harness.exists(),
        "the conformance harness is missing: run scripts/conformance-install"
    );
    let redis = RedisServer::start();
    let processes = fleet(&redis);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = proxy(processes.iter().map(|p| authority(&p.url)).collect(), seen.clone());
    let out = std::env::temp_dir().join(format!("zest-fleet-{}", std::process::id()));
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_conformance_runner"))
        .args(["--runtime", "tokio", "--mode", "server", "--suite", "0.2.0-alpha.12"])
        .args(["--url", &url, "--out"])
        .arg(&out)
        .output()
        .expect("the runner runs");
    let report = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{report}{}", String::from_utf8_lossy(&run.stderr));
    assert!(report.contains(" passed, 0 failed"), "{report}");
    let backends: Vec<usize> = seen.lock().unwrap().iter().map(|(b, _)| *b).collect();
    assert!((0..3).all(|b| backends.contains(&b)), "every process served");
    let _ = std::fs::remove_dir_all(out);
}
