//! Each zest client runtime against the fixture written with the official Python SDK
//! (tests/peers/py_server.py, `mcp` pinned in tests/peers/requirements.txt; install with
//! scripts/install-peers), over Streamable HTTP on a loopback port: the checks of the stdio
//! interop test that a Python server can answer (tools, progress, log records, sampling
//! mid-call, resources, a template, a prompt, the DELETE on close).

#[path = "support/clients.rs"]
mod clients;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use clients::{text, Blocking, Peer, Smol, Tokio, LIMIT};
use serde_json::{json, Value};
use zest_core::schema::ResourceContents;

/// `py_server.py` in a process of its own; killed if still running when dropped.
struct PyServer {
    child: Child,
    stdin: Option<ChildStdin>,
    url: String,
}

impl PyServer {
    /// Starts it on a free port and waits (at most [`LIMIT`]) for the URL it prints once its
    /// socket listens.
    fn start() -> Self {
        let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers");
        let python = peers.join(".venv/bin/python");
        assert!(python.exists(), "{} is missing: run scripts/install-peers", python.display());
        let mut child = Command::new(python)
            .arg(peers.join("py_server.py"))
            .args(["--port", "0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the Python server starts");
        let stdin = child.stdin.take();
        let stderr = BufReader::new(child.stderr.take().expect("piped"));
        thread::spawn(move || {
            stderr.lines().map_while(Result::ok).for_each(|l| eprintln!("[py] {l}"))
        });
        let stdout = child.stdout.take().expect("piped");
        let (tx, first_line) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let url = first_line.recv_timeout(LIMIT).expect("py_server.py prints its URL within 30 s");
        let url = url.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url:?}");
        Self { child, stdin, url }
    }

    /// Closes its stdin and waits (at most [`LIMIT`]) for it to exit; true if it did.
    fn stop(mut self) -> bool {
        drop(self.stdin.take());
        let deadline = Instant::now() + LIMIT;
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(_)) => return true,
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(_) => return false,
            }
        }
        false
    }
}

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What every era answers the same: plain tools, a failing one, progress.
fn tools_answer<C: Peer>(client: &C, on: &str) {
    assert_eq!(text(&client.call("echo", json!({"text": "hi from zest"}))), "hi from zest");
    assert_eq!(text(&client.call("add", json!({"a": 2, "b": 40}))), "42", "{on}");
    let failed = client.call("fail", json!({"message": "boom"}));
    assert!(failed.is_error() && text(&failed).contains("boom"), "{on}: {failed:?}");
    let steps = json!({"steps": 3, "step_ms": 10});
    let (done, progress) = client.call_with_progress("long_running", steps);
    assert_eq!(text(&done), "done after 3 steps", "{on}");
    assert_eq!(progress, [1.0, 2.0, 3.0], "{on}");
}

/// The client of runtime `C` against the Python server.
fn against_python<C: Peer>() {
    let server = PyServer::start();
    let client = C::connect(&server.url);
    let on = format!("{} client", C::RUNTIME);
    assert_eq!(client.server_name(), "py_server", "{on}");

    tools_answer(&client, &on);
    let logs: Vec<Value> = client.logs(3).into_iter().map(|m| m.data).collect();
    assert_eq!(logs, ["step 1 of 3", "step 2 of 3", "step 3 of 3"].map(Value::from), "{on}");

    let sampled = client.call("sample", json!({"prompt": "hello"}));
    assert_eq!(text(&sampled), "canned: hello", "{on}");

    let readme = client.read_resource("zest://readme");
    let Some(ResourceContents::Text(readme)) = readme.contents.first() else {
        panic!("{on}: {readme:?}")
    };
    assert!(readme.text.contains("zest"), "{on}: {readme:?}");
    let item = client.read_resource("zest://items/7");
    let Some(ResourceContents::Text(item)) = item.contents.first() else {
        panic!("{on}: {item:?}")
    };
    assert_eq!(item.text, "item 7", "{on}");
    let prompt = client.get_prompt("greet", &[("name", "Ada")]);
    let said = prompt.messages.first().and_then(|m| m.content.as_text());
    assert_eq!(said, Some("Hello, Ada!"), "{on}");

    client.close();
    assert!(server.stop(), "{on}: the Python server exits once its stdin closes");
}

#[test]
fn tokio_client_against_python_sdk_server() {
    against_python::<Tokio>();
}

#[test]
fn smol_client_against_python_sdk_server() {
    against_python::<Smol>();
}

#[test]
fn blocking_client_against_python_sdk_server() {
    against_python::<Blocking>();
}

/// The client of runtime `C`, preferring 2026-07-28, against the Python SDK 2.x server,
/// which speaks it: no session, the revision's headers on every POST, and the same calls.
fn against_python_in_2026<C: Peer>() {
    let server = PyServer::start();
    let client = C::connect_modern(&server.url);
    let on = format!("{} client in 2026-07-28", C::RUNTIME);
    assert_eq!(client.revision(), "2026-07-28", "{on}");
    assert_eq!(client.server_name(), "py_server", "{on}");
    tools_answer(&client, &on);
    let item = client.read_resource("zest://items/7");
    let Some(ResourceContents::Text(item)) = item.contents.first() else {
        panic!("{on}: {item:?}")
    };
    assert_eq!(item.text, "item 7", "{on}");
    let prompt = client.get_prompt("greet", &[("name", "Ada")]);
    assert_eq!(prompt.messages.first().and_then(|m| m.content.as_text()), Some("Hello, Ada!"));
    client.close();
    assert!(server.stop(), "{on}: the Python server exits once its stdin closes");
}

#[test]
fn every_client_runtime_speaks_2026_07_28_to_the_python_sdk_server() {
    against_python_in_2026::<Tokio>();
    against_python_in_2026::<Smol>();
    against_python_in_2026::<Blocking>();
}
