//! `StdioCommand`: working directory, environment, and stderr lines delivered to the callback.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use zest_blocking::{Client, ClientOptions, StdioCommand};

#[test]
fn cwd_env_and_stderr_reach_the_child_and_back() {
    let script = format!(
        "pwd >&2; echo \"kept=${{ZEST_KEPT-unset}} removed=${{ZEST_REMOVED-unset}}\" >&2; exec '{}'",
        common::fixture().display()
    );
    let (tx, lines) = mpsc::channel();
    let command = StdioCommand::new("sh")
        .args(["-c", &script])
        .current_dir("/")
        .env("ZEST_KEPT", "yes")
        .env("ZEST_REMOVED", "no")
        .env_remove("ZEST_REMOVED")
        .shutdown_grace(Duration::from_millis(300))
        .on_stderr(move |line| {
            let _ = tx.send(line);
        });
    let client = Client::spawn(command, ClientOptions::new("command", "0")).expect("spawn");
    let next = || lines.recv_timeout(Duration::from_secs(10)).expect("a stderr line");
    assert_eq!(next(), "/");
    assert_eq!(next(), "kept=yes removed=unset");
    assert!(next().starts_with("fixture: serving on stdio"));
    client.close().expect("close");
}
