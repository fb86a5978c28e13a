//! The cross pairs over HTTP: this runtime's client against each runtime's fixture server
//! example (`<rt>_http_server --port 0`, a process of its own), same body for each; the
//! tokio one is built on demand when `cargo test --workspace` has not built it.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::json;
use zest_blocking::core::handler::SyncClientHandlers;
use zest_blocking::schema::{CallToolResult, CreateMessageResult};
use zest_blocking::{Client, ClientApi, ClientOptions, HttpEndpoint};

/// The `<runtime>_http_server` example, built if missing.
fn http_server(runtime: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's own path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps");
    let name = format!("{runtime}_http_server");
    let path = profile_dir.join("examples").join(&name);
    if path.exists() {
        return path;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = Command::new(cargo);
    build.args(["build", "-p", &format!("zest-{runtime}"), "--example", &name]);
    if profile_dir.file_name().is_some_and(|p| p == "release") {
        build.arg("--release");
    }
    let status = build.status().expect("cargo runs");
    assert!(status.success() && path.exists(), "could not build {}", path.display());
    path
}

/// A fixture server process; its stdin closing (on drop) shuts it down gracefully.
struct Served {
    child: Child,
    url: String,
}

impl Served {
    fn start(runtime: &str) -> Self {
        let mut child = Command::new(http_server(runtime))
            .args(["--port", "0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the fixture server starts");
        let stdout = child.stdout.take().expect("piped");
        let mut url = String::new();
        BufReader::new(stdout).read_line(&mut url).expect("the URL line");
        let url = url.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "first line: {url:?}");
        Self { child, url }
    }

    /// Closes its stdin and waits (at most 30 s, a hang guard) for it to exit; true if it
    /// exited successfully in time.
    fn stop(mut self) -> bool {
        drop(self.child.stdin.take());
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.success(),
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(_) => return false,
            }
        }
        false
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(result: &CallToolResult) -> &str {
    result.content.first().and_then(|c| c.as_text()).unwrap_or("")
}

fn options() -> ClientOptions {
    let handlers = SyncClientHandlers::default().on_sampling(|params| {
        let asked = params.messages.len();
        Ok(serde_json::from_value::<CreateMessageResult>(json!({
            "role": "assistant",
            "content": {"type": "text", "text": format!("canned: {asked} message(s)")},
            "model": "canned"
        }))
        .unwrap())
    });
    ClientOptions::new("zest-blocking-http-cross", "0.0.0").handlers(handlers)
}

/// The same body for every fixture server.
fn exercise(runtime: &str) {
    let served = Served::start(runtime);
    let client = Client::connect_to(HttpEndpoint::new(&served.url), options()).expect("connect");
    let mut names: Vec<_> = client.list_all_tools().unwrap().into_iter().map(|t| t.name).collect();
    names.sort();
    assert_eq!(names, ["add", "crash", "echo", "fail", "long_running", "sample"]);
    assert_eq!(text(&client.call_tool("echo", json!({"text": "cross"})).unwrap()), "cross");
    assert_eq!(text(&client.call_tool("add", json!({"a": 2, "b": 40})).unwrap()), "42");
    let failed = client.call_tool("fail", json!({"message": "nope"})).unwrap();
    assert!(failed.is_error() && text(&failed) == "nope", "{failed:?}");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let done = client
        .call_tool_with_progress("long_running", json!({"steps": 3, "step_ms": 10}), move |p| {
            sink.lock().unwrap().push(p.progress)
        })
        .unwrap();
    assert_eq!(text(&done), "done after 3 steps");
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
    let sampled = client.call_tool("sample", json!({"prompt": "hi"})).unwrap();
    assert_eq!(text(&sampled), "canned: 1 message(s)");
    let prompt =
        client.get_prompt("greet", [("name".to_owned(), "Ada".to_owned())].into()).unwrap();
    assert!(format!("{prompt:?}").contains("Hello, Ada!"), "{prompt:?}");
    let item = client.read_resource("zest://items/7").unwrap();
    assert!(format!("{item:?}").contains("item 7"), "{item:?}");
    // Calls from several threads at once.
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let client = client.clone();
            thread::spawn(move || {
                let want = format!("t{i}");
                let got = client.call_tool("echo", json!({"text": want})).unwrap();
                assert_eq!(text(&got), want);
            })
        })
        .collect();
    for t in threads {
        t.join().expect("no thread panicked");
    }
    client.close().unwrap();
    assert!(served.stop(), "the server shut down gracefully when its stdin closed");
}

#[test]
fn blocking_client_against_blocking_http_server() {
    exercise("blocking");
}

#[test]
fn blocking_client_against_tokio_http_server() {
    exercise("tokio");
}

/// A connection stalled mid-head does not keep the server from shutting down.
#[test]
fn a_half_sent_request_cannot_hold_shutdown() {
    let served = Served::start("blocking");
    let addr = served.url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let mut socket = std::net::TcpStream::connect(&addr).unwrap();
    // Half a request head: the connection is mid-exchange, never finished.
    socket.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n").unwrap();
    thread::sleep(Duration::from_millis(20));
    assert!(served.stop(), "shutdown returned despite the stalled connection");
}
