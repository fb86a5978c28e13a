//! `serve_stdio`'s descriptors: pipes of its own are non-blocking (reactor-driven) during the
//! session and blocking again after it; a stdout shared with stderr stays blocking.

mod common;

use std::time::Duration;

use serde_json::json;
use zest_smol::{ClientApi, ClientOptions, StdioCommand};

use common::{fixture, run, Stderr};

const O_NONBLOCK: u32 = 0o4000;

/// Whether descriptor `fd` of `pid` is in non-blocking mode, from /proc.
fn nonblocking(pid: u32, fd: u32) -> bool {
    let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).expect("fdinfo");
    flags(info.lines()).first().expect("a flags line") & O_NONBLOCK != 0
}

/// The `flags:` fields (octal) among fdinfo lines.
fn flags<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<u32> {
    let fields = lines.into_iter().filter_map(|l| l.strip_prefix("flags:"));
    fields.map(|f| u32::from_str_radix(f.trim(), 8).expect("octal flags")).collect()
}

/// The only child of `pid` (the fixture under `sh -c`).
fn child_of(pid: u32) -> u32 {
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).expect("children list");
    children.split_whitespace().next().expect("one child").parse().expect("a pid")
}

fn options() -> ClientOptions {
    ClientOptions::new("zest-smol-stdio", "0.1.0")
}

#[test]
fn own_pipes_are_non_blocking_during_the_session_and_blocking_after_it() {
    run(60, async {
        // After the fixture, the shell reports the flags of the same stdin and stdout.
        let script = r#""$0" 2>/dev/null; cat /proc/self/fdinfo/0 /proc/self/fdinfo/1 >&2"#;
        let stderr = Stderr::default();
        let cmd = StdioCommand::new("sh")
            .args(["-c", script, &fixture().to_string_lossy()])
            .shutdown_grace(Duration::from_secs(30))
            .on_stderr(stderr.sink());
        let client = zest_smol::Client::spawn(cmd, options()).await.unwrap();
        client.call_tool("echo", json!({"text": "hi"})).await.unwrap();
        let server = child_of(client.pid());
        assert!(nonblocking(server, 0), "stdin is reactor-driven");
        assert!(nonblocking(server, 1), "stdout is reactor-driven");

        let status = client.close().await.unwrap();
        assert!(status.success(), "{status:?}");
        let lines = stderr.lines();
        let after = flags(lines.iter().map(String::as_str));
        assert_eq!(after.len(), 2, "{:?}", stderr.lines());
        assert!(after.iter().all(|f| f & O_NONBLOCK == 0), "restored: {after:?}");
    });
}

#[test]
fn a_stdout_shared_with_stderr_stays_blocking() {
    run(30, async {
        let cmd = StdioCommand::new("sh")
            .args(["-c", r#"exec "$0" 2>&1"#, &fixture().to_string_lossy()])
            .on_stderr(|_| {});
        let client = zest_smol::Client::spawn(cmd, options()).await.unwrap();
        client.call_tool("echo", json!({"text": "hi"})).await.unwrap();
        assert!(nonblocking(client.pid(), 0), "stdin is still its own pipe");
        assert!(!nonblocking(client.pid(), 1), "stdout is shared with stderr");
        client.close().await.unwrap();
    });
}
