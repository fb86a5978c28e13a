//! A fault only zest-tokio can meet: the runtime the client's driver runs on goes away
//! mid-session. The faults every runtime meets are written once in
//! conformance/tests/stdio_client_faults.rs.

mod common;

use std::time::Duration;

use serde_json::json;
use zest_tokio::{Client, ClientApi, ClientOptions, StdioCommand};

#[test]
fn a_child_is_killed_and_reaped_even_when_the_runtime_goes_away() {
    // `sh -c "trap '' TERM; exec <fixture> --linger"`: ignores SIGTERM, outlives its stdin.
    let script = format!("trap '' TERM; exec '{}' --linger", common::fixture().display());
    let stubborn = StdioCommand::new("sh")
        .arg("-c")
        .arg(script)
        .on_stderr(|line| eprintln!("[stubborn] {line}"))
        .shutdown_grace(Duration::from_millis(200));
    let options = ClientOptions::new("zest-tokio-faults", "0.0.0");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let client = runtime.block_on(Client::spawn(stubborn, options)).unwrap();
    let pid = client.pid();
    let echoed = runtime.block_on(client.call_tool("echo", json!({"text": "before"}))).unwrap();
    assert_eq!(echoed.content[0].as_text(), Some("before"));
    // Dropping the runtime drops the driver task mid-session: the synchronous fallback
    // SIGKILLs the process group and reaps the child before the drop returns.
    drop(runtime);
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "{pid} was reaped");
    drop(client);
}
