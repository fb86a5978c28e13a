//! What `serve_stdio` does with this process's stdin and stdout, on every server runtime
//! (the everything fixture, spawned by zest-blocking's client through `sh`): on zest-tokio and
//! zest-smol pipes of its own are non-blocking (reactor-driven) during the session and
//! blocking again after it, and a stdout shared with stderr (`2>&1`) stays blocking; on
//! zest-blocking both stay blocking throughout.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use zest_blocking::{Client, ClientApi, ClientOptions, StdioCommand};

const O_NONBLOCK: u32 = 0o4000;
const RUNTIMES: [&str; 3] = ["tokio", "smol", "blocking"];

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

/// `sh -c script` with the fixture's path as `$0` and the runtime as `$1`.
fn under_sh(script: &str, runtime: &str) -> StdioCommand {
    StdioCommand::new("sh").args(["-c", script, env!("CARGO_BIN_EXE_everything_server"), runtime])
}

fn options() -> ClientOptions {
    ClientOptions::new("zest-stdio-pipes", "0.1.0")
}

#[test]
fn own_pipes_are_reactor_driven_during_the_session_and_blocking_after_it() {
    for runtime in RUNTIMES {
        // After the fixture, the shell reports the flags of the same stdin and stdout.
        let script = r#""$0" --runtime "$1" --stdio 2>/dev/null
            cat /proc/self/fdinfo/0 /proc/self/fdinfo/1 >&2"#;
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = stderr.clone();
        let cmd = under_sh(script, runtime)
            .shutdown_grace(Duration::from_secs(30))
            .on_stderr(move |line| sink.lock().unwrap().push(line));
        let client = Client::spawn(cmd, options()).unwrap();
        client.list_all_tools().unwrap();
        let server = child_of(client.pid());
        let async_runtime = runtime != "blocking";
        assert_eq!(nonblocking(server, 0), async_runtime, "{runtime}: stdin");
        assert_eq!(nonblocking(server, 1), async_runtime, "{runtime}: stdout");

        let status = client.close().unwrap();
        assert!(status.success(), "{runtime}: {status:?}");
        let lines = stderr.lock().unwrap().clone();
        let after = flags(lines.iter().map(String::as_str));
        assert_eq!(after.len(), 2, "{runtime}: {lines:?}");
        assert!(after.iter().all(|f| f & O_NONBLOCK == 0), "{runtime}: restored: {after:?}");
    }
}

#[test]
fn a_stdout_shared_with_stderr_stays_blocking() {
    for runtime in RUNTIMES {
        let cmd = under_sh(r#"exec "$0" --runtime "$1" --stdio 2>&1"#, runtime).on_stderr(|_| {});
        let client = Client::spawn(cmd, options()).unwrap();
        client.list_all_tools().unwrap();
        let async_runtime = runtime != "blocking";
        assert_eq!(nonblocking(client.pid(), 0), async_runtime, "{runtime}: stdin is its own");
        assert!(!nonblocking(client.pid(), 1), "{runtime}: stdout is shared with stderr");
        client.close().unwrap();
    }
}
