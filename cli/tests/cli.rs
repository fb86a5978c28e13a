//! The built `zest` binary, driven as a person or a script would: `zest serve` over stdio and
//! HTTP used by `zest inspect/tools/call/read/prompt/bench`, every tool's happy path and each
//! refusal, the exit codes, an `mcpServers` file, and `zest inspect` against
//! `@modelcontextprotocol/server-everything` over stdio, Streamable HTTP and SSE.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

#[path = "../../tests/support/everything.rs"]
mod everything;
#[path = "../../tests/support/oidc_provider.rs"]
mod oidc_provider;

use everything::Everything;
use serde_json::Value;

const ZEST: &str = env!("CARGO_BIN_EXE_zest");
/// The longest one command may take before the test fails instead of hanging.
const LIMIT: Duration = Duration::from_secs(60);

/// What one run of the binary did.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }

    fn ok(self) -> Self {
        assert_eq!(self.code, 0, "stdout: {}\nstderr: {}", self.stdout, self.stderr);
        self
    }
}

fn zest(args: &[&str]) -> Run {
    let mut command = Command::new(ZEST);
    command.args(args).stdin(Stdio::null());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(command.output());
    });
    let out = rx.recv_timeout(LIMIT).unwrap_or_else(|_| panic!("zest {args:?} took over 60 s"));
    let out = out.expect("zest runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A scratch workspace: `notes.txt` (three lines), `src/lib.rs`, `twice.txt` (one phrase
/// twice), `ignored.txt` (which `.gitignore` names), and `outside.txt` beside the workspace with a link to it inside.
fn workspace(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zest-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn answer() -> u32 {\n    42\n}\n").unwrap();
    std::fs::write(root.join("twice.txt"), "same same\n").unwrap();
    std::fs::write(root.join(".gitignore"), "ignored.txt\n").unwrap();
    std::fs::write(root.join("ignored.txt"), "beta\n").unwrap();
    std::fs::write(dir.join("outside.txt"), "secret\n").unwrap();
    std::os::unix::fs::symlink(dir.join("outside.txt"), root.join("escape.txt")).unwrap();
    root
}

/// `zest ARGS -- zest serve ROOT SERVE_FLAGS`.
fn over_stdio(root: &Path, serve_flags: &[&str], args: &[&str]) -> Run {
    let root = root.to_str().unwrap();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--", ZEST, "serve", root]);
    all.extend(serve_flags);
    zest(&all)
}

fn text(run: &Run) -> &str {
    run.stdout.trim_end()
}

#[test]
fn the_read_tools_over_stdio() {
    let root = workspace("read");
    let info = over_stdio(&root, &[], &["inspect", "--json"]).ok().json();
    assert_eq!(info["server"]["name"], "zest-workspace");
    // The client's ladder finds a server that speaks 2026-07-28.
    assert_eq!(info["era"], "stateless");
    assert_eq!(info["counts"]["tools"], 5, "{info}");
    let tools = over_stdio(&root, &[], &["tools", "--json"]).ok().json();
    let names: Vec<&str> =
        tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["read_file", "list_directory", "find_files", "search_text", "file_info"]);

    let lines = over_stdio(
        &root,
        &[],
        &["call", "read_file", "-a", "path=notes.txt", "-a", "offset=2", "-a", "limit=1"],
    );
    assert_eq!(text(&lines.ok()), "beta");
    let listed = over_stdio(&root, &[], &["call", "list_directory"]).ok();
    assert_eq!(
        text(&listed),
        ".gitignore  (12 bytes)\nescape.txt -> ".to_owned()
            + root.parent().unwrap().join("outside.txt").to_str().unwrap()
            + "\nignored.txt  (5 bytes)\nnotes.txt  (17 bytes)\nsrc/\ntwice.txt  (10 bytes)"
    );
    let found = over_stdio(&root, &[], &["call", "find_files", "-a", "pattern=**/*.rs"]).ok();
    assert_eq!(text(&found), "src/lib.rs");
    let texts = over_stdio(&root, &[], &["call", "find_files", "-a", "pattern=*.txt"]).ok();
    assert_eq!(text(&texts), "notes.txt\ntwice.txt", "hidden, ignored and linked files skipped");
    let beta = over_stdio(&root, &[], &["call", "search_text", "-a", "pattern=beta"]).ok();
    assert_eq!(text(&beta), "notes.txt:2: beta", "the git-ignored copy is not searched");
    let searched =
        over_stdio(&root, &[], &["call", "search_text", "-a", "pattern=^\\s+\\d+$"]).ok();
    assert_eq!(text(&searched), "src/lib.rs:2:     42");
    let info = over_stdio(&root, &[], &["call", "file_info", "-a", "path=notes.txt", "--json"])
        .ok()
        .json();
    assert_eq!(info["structuredContent"]["kind"], "file");
    assert_eq!(info["structuredContent"]["size"], 17);
    let uri = format!("file://{}", root.canonicalize().unwrap().join("notes.txt").display());
    let read = over_stdio(&root, &[], &["read", &uri]).ok();
    assert_eq!(text(&read), "alpha\nbeta\ngamma");
    let prompt = over_stdio(&root, &[], &["prompt", "review_file", "-a", "path=src/lib.rs"]).ok();
    assert!(prompt.stdout.starts_with("[user] Review the file src/lib.rs"), "{}", prompt.stdout);
    assert!(prompt.stdout.contains("    42"), "{}", prompt.stdout);
}

#[test]
fn escapes_and_missing_permissions_are_refused() {
    let root = workspace("refuse");
    let outside = root.parent().unwrap().join("outside.txt");
    for (path, says) in [
        ("../outside.txt", "`..` is not allowed"),
        (outside.to_str().unwrap(), "outside the workspace"),
        ("escape.txt", "symbolic link"),
    ] {
        let arg = format!("path={path}");
        let run = over_stdio(&root, &[], &["call", "read_file", "-a", &arg]);
        assert_eq!(run.code, 1, "{path}: exit 1 for an error result: {}", run.stderr);
        assert!(run.stderr.contains(says), "{path}: {}", run.stderr);
        assert!(!run.stdout.contains("secret"), "{path}: nothing of the file shown");
    }
    let uri = format!("file://{}", outside.display());
    let run = over_stdio(&root, &[], &["read", &uri]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("outside the workspace"), "{}", run.stderr);
    for tool in ["write_file", "edit_file", "run_command"] {
        let run = over_stdio(&root, &[], &["call", tool]);
        assert_eq!(run.code, 2, "{tool} is not offered: {}", run.stderr);
        assert!(run.stderr.contains(&format!("no tool named \"{tool}\"")), "{}", run.stderr);
    }
    let run = over_stdio(
        &root,
        &["--allow-write"],
        &["call", "write_file", "-a", "path=escape.txt", "-a", "content=x"],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "secret\n",
        "the file outside is untouched"
    );
}

#[test]
fn write_and_edit_with_allow_write() {
    let root = workspace("write");
    let flags = ["--allow-write"];
    let wrote = over_stdio(
        &root,
        &flags,
        &["call", "write_file", "-a", "path=new/dir/file.txt", "-a", "content=one two"],
    );
    assert_eq!(text(&wrote.ok()), "wrote 7 bytes to new/dir/file.txt");
    assert_eq!(std::fs::read_to_string(root.join("new/dir/file.txt")).unwrap(), "one two");
    let edited = over_stdio(
        &root,
        &flags,
        &[
            "call",
            "edit_file",
            "-a",
            "path=new/dir/file.txt",
            "-a",
            "old_text=two",
            "-a",
            "new_text=2",
        ],
    );
    assert_eq!(text(&edited.ok()), "replaced 1 occurrence in new/dir/file.txt");
    assert_eq!(std::fs::read_to_string(root.join("new/dir/file.txt")).unwrap(), "one 2");
    let twice = over_stdio(
        &root,
        &flags,
        &["call", "edit_file", "-a", "path=twice.txt", "-a", "old_text=same", "-a", "new_text=x"],
    );
    assert_eq!(twice.code, 1);
    assert!(twice.stderr.contains("occurs 2 times"), "{}", twice.stderr);
    assert_eq!(
        std::fs::read_to_string(root.join("twice.txt")).unwrap(),
        "same same\n",
        "unchanged"
    );
}

#[test]
fn run_command_with_allow_exec() {
    let root = workspace("exec");
    let flags = ["--allow-exec"];
    let ran =
        over_stdio(&root, &flags, &["call", "run_command", "-a", "program=ls", "-a", "cwd=src"])
            .ok();
    assert!(ran.stdout.starts_with("exit status 0\nstdout:\nlib.rs\n"), "{}", ran.stdout);
    let big = over_stdio(
        &root,
        &flags,
        &["call", "run_command", "-a", "program=seq", "-a", r#"args=["1","100000"]"#],
    )
    .ok();
    assert!(
        big.stdout.contains("[truncated: 523359 more bytes]"),
        "{}",
        &big.stdout[big.stdout.len() - 200..]
    );
    let slow = over_stdio(
        &root,
        &flags,
        &[
            "call",
            "run_command",
            "-a",
            "program=sleep",
            "-a",
            r#"args=["30"]"#,
            "-a",
            "timeout_ms=200",
        ],
    );
    assert_eq!(slow.code, 1);
    assert!(slow.stderr.contains("killed after 200 ms"), "{}", slow.stderr);
    let failed = over_stdio(&root, &flags, &["call", "run_command", "-a", "program=false"]);
    assert_eq!(failed.code, 1);
    assert!(failed.stderr.contains("exit status: 1"), "{}", failed.stderr);
    let run =
        over_stdio(&root, &flags, &["call", "run_command", "-a", "program=ls", "-a", "cwd=.."]);
    assert!(run.stderr.contains("`..` is not allowed"), "{}", run.stderr);
}

/// `zest serve ROOT --http 127.0.0.1:0`, killed when dropped.
struct HttpServe {
    child: Child,
    url: String,
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_http(root: &Path) -> HttpServe {
    serve_http_with(root, &[])
}

fn serve_http_with(root: &Path, flags: &[&str]) -> HttpServe {
    let mut args = vec!["serve", root.to_str().unwrap(), "--http", "127.0.0.1:0"];
    args.extend(flags);
    listening(&args)
}

/// `zest ARGS`, which says on stderr where it listens, as its last word.
fn listening(args: &[&str]) -> HttpServe {
    let mut child = Command::new(ZEST)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zest serve starts");
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx.recv_timeout(LIMIT).expect("zest says where it listens");
    let url = line.rsplit(' ').next().unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{line}");
    HttpServe { child, url }
}

#[test]
fn serve_over_http_with_streamable_http_and_sse() {
    let root = workspace("http");
    let server = serve_http(&root);
    let info = zest(&["inspect", &server.url, "--json"]).ok().json();
    assert_eq!(info["counts"]["tools"], 5);
    let sse = server.url.replace("/mcp", "/sse");
    let read = zest(&["call", "read_file", &sse, "-a", "path=notes.txt", "-a", "limit=1"]).ok();
    assert_eq!(text(&read), "alpha");
    let pinged = zest(&["ping", &server.url, "--json"]).ok().json();
    assert_eq!(pinged["ok"], true);
    let bench = zest(&[
        "bench",
        &server.url,
        "--tool",
        "file_info",
        "--args-json",
        r#"{"path":"."}"#,
        "-n",
        "200",
        "-c",
        "4",
        "--json",
    ]);
    let bench = bench.ok().json();
    assert_eq!(
        (bench["calls"].as_u64(), bench["errors"].as_u64()),
        (Some(200), Some(0)),
        "{bench}"
    );
    assert!(bench["callsPerSecond"].as_f64().unwrap() > 0.0);
    assert!(bench["p50Ms"].as_f64().unwrap() <= bench["p99Ms"].as_f64().unwrap());
}

#[test]
fn a_server_named_in_an_mcp_servers_file() {
    let root = workspace("config");
    let file = root.parent().unwrap().join("servers.json");
    let servers =
        serde_json::json!({"mcpServers": {"ws": {"command": ZEST, "args": ["serve", root]}}});
    std::fs::write(&file, servers.to_string()).unwrap();
    let file = file.to_str().unwrap();
    let tools = zest(&["tools", "ws", "--config", file]).ok();
    assert!(tools.stdout.starts_with("read_file"), "{}", tools.stdout);
    let unknown = zest(&["tools", "nope", "--config", file]);
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("no server named \"nope\" (it has: ws)"), "{}", unknown.stderr);
}

#[test]
fn exit_codes_say_what_failed() {
    let none = zest(&["tools"]);
    assert_eq!(none.code, 2, "no target: {}", none.stderr);
    assert!(none.stderr.contains("no server given"), "{}", none.stderr);
    let refused = zest(&["ping", "http://127.0.0.1:1/mcp"]);
    assert_eq!(refused.code, 3, "nobody listens: {}", refused.stderr);
    assert!(
        refused.stderr.contains("could not connect to http://127.0.0.1:1/mcp"),
        "{}",
        refused.stderr
    );
    let missing = zest(&["ping", "--", "/nonexistent/zest-server"]);
    assert_eq!(missing.code, 3, "{}", missing.stderr);
    let version = zest(&["--version"]).ok();
    assert_eq!(text(&version), format!("zest {}", env!("CARGO_PKG_VERSION")));
}

/// `inspect --json` names the revision and as many tools as `tools --json` lists.
/// server-everything adds some tools a moment after the handshake (and announces them), so
/// two sessions may count at different moments: the pair is taken again, up to five times,
/// until both see the same list.
fn assert_inspects_everything(target: &[&str]) {
    let mut seen = Vec::new();
    for _ in 0..5 {
        let info = zest(&[&["inspect", "--json"], target].concat()).ok().json();
        assert_eq!(info["server"]["name"], "mcp-servers/everything", "{info}");
        assert_eq!(info["protocolVersion"], "2025-11-25", "{info}");
        let tools = zest(&[&["tools", "--json"], target].concat()).ok().json();
        let listed = tools.as_array().unwrap().len() as u64;
        let counted = info["counts"]["tools"].as_u64().unwrap_or(0);
        if counted == listed && listed >= 10 {
            return;
        }
        seen.push((counted, listed));
    }
    panic!("inspect and tools never agreed (counted, listed): {seen:?}");
}

#[test]
fn inspect_server_everything_over_stdio_streamable_http_and_sse() {
    let bin = everything::bin();
    assert_inspects_everything(&["--", bin.to_str().unwrap()]);
    let server = Everything::start("streamableHttp");
    let port = server.port;
    assert_inspects_everything(&[&format!("http://127.0.0.1:{port}/mcp")]);
    let dir = std::env::temp_dir().join(format!("zest-cli-images-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = ["--", bin.to_str().unwrap()];
    let saved = ["call", "get-tiny-image", "--save-dir", dir.to_str().unwrap()];
    let image = zest(&[&saved[..], &target[..]].concat()).ok();
    assert!(image.stdout.contains("[image/png, "), "{}", image.stdout);
    let png = std::fs::read(dir.join("get-tiny-image-1.png")).expect("the image was saved");
    assert_eq!(&png[..4], b"\x89PNG", "the bytes are the PNG sent");
    let weather = ["call", "get-structured-content", "-a", "location=Chicago"];
    let weather = zest(&[&weather[..], &target[..]].concat()).ok();
    assert!(weather.stdout.contains("structured content:\n{"), "{}", weather.stdout);
    assert!(weather.stdout.contains("\"temperature\""), "{}", weather.stdout);
    let server = Everything::start("sse");
    let port = server.port;
    assert_inspects_everything(&[&format!("http://127.0.0.1:{port}/sse")]);
}

/// The TypeScript SDK's client (tests/peers/ts_workspace.mjs) against `zest serve`.
fn typescript_client(args: &[&str]) {
    sdk_client("node", "ts_workspace.mjs", args);
}

/// The Python SDK's client (tests/peers/py_workspace.py) against `zest serve`.
fn python_client(args: &[&str]) {
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers");
    let python = peers.join(".venv/bin/python");
    assert!(python.exists(), "{} is missing: run scripts/install-peers", python.display());
    sdk_client(python.to_str().unwrap(), "py_workspace.py", args);
}

/// Runs `program tests/peers/SCRIPT ARGS`, which must pass every check it makes.
fn sdk_client(program: &str, script: &str, args: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers").join(script);
    let mut command = Command::new(program);
    command.arg(script).args(args).stdin(Stdio::null());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(command.output());
    });
    let out = rx.recv_timeout(LIMIT).expect("the SDK client ends within 60 s");
    let out = out.expect("the SDK client runs (scripts/install-peers installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_typescript_sdk_client_over_stdio_and_http() {
    let root = workspace("ts");
    typescript_client(&[ZEST, "serve", root.to_str().unwrap()]);
    let server = serve_http(&root);
    typescript_client(&["--url", &server.url]);
}

#[test]
fn the_python_sdk_client_over_stdio_and_http() {
    let root = workspace("py");
    python_client(&[ZEST, "serve", root.to_str().unwrap()]);
    let server = serve_http(&root);
    python_client(&["--url", &server.url]);
}

/// A file read as a resource and subscribed to: changing it sends `resources/updated`.
#[test]
fn a_subscribed_file_that_changes_is_announced() {
    use zest_blocking::core::client::ServerNotification;
    use zest_blocking::{Client, ClientApi, ClientOptions, StdioCommand};
    let root = workspace("watch");
    let command = StdioCommand::new(ZEST).args(["serve", root.to_str().unwrap()]);
    let client = Client::spawn(command, ClientOptions::new("watcher", "1")).expect("spawn");
    let uri = format!("file://{}", root.canonicalize().unwrap().join("notes.txt").display());
    let read = client.read_resource(&uri).expect("read");
    assert_eq!(read.contents.len(), 1);
    client.subscribe(&uri).expect("subscribe");
    std::fs::write(root.join("notes.txt"), "changed, and longer than before\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match client.notifications().recv_timeout(left) {
            Some(ServerNotification::ResourceUpdated(p)) => {
                assert_eq!(p.uri, uri);
                break;
            }
            Some(_) => {}
            None => panic!("no resources/updated within 10 s"),
        }
    }
    client.close().expect("close");
}

#[test]
fn serve_over_http_with_a_bearer_token() {
    let root = workspace("bearer");
    let server = serve_http_with(&root, &["--bearer-token", "s3cret"]);
    let without = zest(&["ping", &server.url]);
    assert_eq!(without.code, 3, "{}", without.stderr);
    assert!(without.stderr.contains("401"), "{}", without.stderr);
    let wrong = zest(&["ping", &server.url, "--bearer-token", "guess"]);
    assert_eq!(wrong.code, 3, "{}", wrong.stderr);
    zest(&["ping", &server.url, "--bearer-token", "s3cret"]).ok();
    let stdio = zest(&["serve", root.to_str().unwrap(), "--bearer-token", "x"]);
    assert_eq!(stdio.code, 2, "a token needs --http: {}", stdio.stderr);
}

#[test]
fn bridge_stdio_in_front_of_http_and_http_in_front_of_stdio() {
    let root = workspace("bridge");
    let server = serve_http(&root);
    let bridge = ["--", ZEST, "bridge", server.url.as_str()];
    let tools = zest(&[&["tools", "--json"], &bridge[..]].concat()).ok().json();
    assert_eq!(tools.as_array().unwrap().len(), 5, "{tools}");
    let read = zest(
        &[&["call", "read_file", "-a", "path=notes.txt", "-a", "limit=1"], &bridge[..]].concat(),
    );
    assert_eq!(text(&read.ok()), "alpha");
    let refused =
        zest(&[&["call", "read_file", "-a", "path=../outside.txt"], &bridge[..]].concat());
    assert_eq!(refused.code, 1, "the upstream's error result comes through: {}", refused.stderr);
    assert!(refused.stderr.contains("`..` is not allowed"), "{}", refused.stderr);
    let uri = format!("file://{}", root.canonicalize().unwrap().join("notes.txt").display());
    let resource = zest(&[&["read", uri.as_str()], &bridge[..]].concat()).ok();
    assert_eq!(text(&resource), "alpha\nbeta\ngamma");
    typescript_client(&[ZEST, "bridge", &server.url]);

    let front = listening(&[
        "bridge",
        "--http",
        "127.0.0.1:0",
        "--",
        ZEST,
        "serve",
        root.to_str().unwrap(),
    ]);
    let info = zest(&["inspect", &front.url, "--json"]).ok().json();
    assert_eq!(info["server"]["name"], "zest-workspace", "the upstream's name: {info}");
    assert_eq!(info["counts"]["tools"], 5);
    typescript_client(&["--url", &front.url]);
    python_client(&["--url", &front.url]);
}

#[test]
fn bridge_in_front_of_server_everything_forwards_progress_and_prompts() {
    let server = Everything::start("streamableHttp");
    let port = server.port;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let bridge = ["--", ZEST, "bridge", url.as_str()];
    let args = r#"{"duration": 0.3, "steps": 3}"#;
    let long = zest(
        &[&["call", "trigger-long-running-operation", "--args-json", args], &bridge[..]].concat(),
    );
    assert!(long.ok().stdout.starts_with("Long running operation completed"));
    let client = zest_blocking::Client::spawn(
        zest_blocking::StdioCommand::new(ZEST).args(["bridge", url.as_str()]),
        zest_blocking::ClientOptions::new("progress-watcher", "1"),
    )
    .expect("the bridge serves");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let done = zest_blocking::ClientApi::call_tool_with_progress(
        &client,
        "trigger-long-running-operation",
        serde_json::json!({"duration": 0.3, "steps": 3}),
        move |p| sink.lock().unwrap().push(p.progress),
    )
    .expect("the call through the bridge");
    assert!(!done.is_error());
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0], "each upstream progress report, once");
    client.close().expect("close");
    let prompts = zest(&[&["prompts", "--json"], &bridge[..]].concat()).ok().json();
    assert!(!prompts.as_array().unwrap().is_empty(), "{prompts}");
    let sum = zest(&[&["call", "get-sum", "-a", "a=2", "-a", "b=40"], &bridge[..]].concat()).ok();
    assert_eq!(text(&sum), "The sum of 2 and 40 is 42.");
}

/// A tool added upstream while a bridge runs: the bridge lists again, announces the change,
/// and its client then sees and calls the new tool; in the session era a log record upstream
/// reaches it too (a log outside any request has no way to a 2026-07-28 client). Both eras,
/// on both sides of the bridge.
#[test]
fn bridge_passes_list_changes_and_logs_on() {
    for session_era in [true, false] {
        bridge_relays(session_era);
    }
}

fn bridge_relays(session_era: bool) {
    use zest_blocking::core::client::ServerNotification;
    use zest_blocking::schema::{CallToolResult, LoggingLevel, Tool};
    use zest_blocking::{ClientApi, ListKind, Registry, ServerConfig};
    let mut config = ServerConfig::new("upstream", "1");
    if session_era {
        config = config.session_era();
    }
    let http = zest_blocking::HttpConfig::new();
    let mut registry = Registry::new();
    registry.raw_tool(
        Tool::new("first", "The first", serde_json::json!({"type": "object"})),
        |_, _| Ok(CallToolResult::text("one")),
    );
    let upstream = zest_blocking::serve_http_with("127.0.0.1:0", config, http, registry).unwrap();
    let options = zest_blocking::ClientOptions::new("bridged", "1");
    let options = if session_era { options.with_config(|c| c.session_era()) } else { options };
    let client = zest_blocking::Client::spawn(
        zest_blocking::StdioCommand::new(ZEST).args(["bridge", upstream.url().as_str()]),
        options,
    )
    .expect("the bridge serves");
    assert_eq!(client.negotiated().protocol_version.is_session_era(), session_era);
    let names = |c: &zest_blocking::Client| -> Vec<String> {
        c.list_all_tools().unwrap().into_iter().map(|t| t.name).collect()
    };
    assert_eq!(names(&client), ["first"]);
    upstream.change_registry(&[ListKind::Tools], |r| {
        r.raw_tool(
            Tool::new("second", "The second", serde_json::json!({"type": "object"})),
            |_, _| Ok(CallToolResult::text("two")),
        );
    });
    let wait_for = |wanted: fn(&ServerNotification) -> bool, what: &str| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match client.notifications().recv_timeout(left) {
                Some(n) if wanted(&n) => return,
                Some(_) => {}
                None => panic!("{what} not announced within 10 s (session era: {session_era})"),
            }
        }
    };
    wait_for(|n| matches!(n, ServerNotification::ToolListChanged), "the list change");
    assert_eq!(names(&client), ["first", "second"]);
    let two = client.call_tool("second", serde_json::json!({})).unwrap();
    assert_eq!(two.content[0].as_text(), Some("two"));
    if session_era {
        client.set_logging_level(LoggingLevel::Debug).unwrap();
        upstream.handle().log(LoggingLevel::Warning, serde_json::json!("from upstream"));
        let log = |n: &ServerNotification| matches!(n, ServerNotification::LoggingMessage(m) if m.data == "from upstream");
        wait_for(log, "the log record");
    }
    client.close().unwrap();
    upstream.shutdown();
}

/// A call its client cancels at the bridge is cancelled upstream: the upstream handler sees
/// `is_cancelled` and stops.
#[test]
fn bridge_forwards_a_cancellation() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use zest_blocking::core::error::RequestError;
    use zest_blocking::schema::methods::CallTool;
    use zest_blocking::schema::{CallToolParams, CallToolResult, Tool};
    use zest_blocking::{CallError, Registry, RequestOptions, ServerConfig};
    static SAW_CANCEL: AtomicBool = AtomicBool::new(false);
    let mut registry = Registry::new();
    let tool = Tool::new("wait", "Waits to be cancelled", serde_json::json!({"type": "object"}));
    registry.raw_tool(tool, |ctx, _| {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if ctx.is_cancelled() {
                SAW_CANCEL.store(true, Ordering::SeqCst);
                return Ok(CallToolResult::text("cancelled"));
            }
            thread::sleep(Duration::from_millis(5));
        }
        Ok(CallToolResult::text("never cancelled"))
    });
    let http = zest_blocking::HttpConfig::new();
    let config = ServerConfig::new("upstream", "1");
    let upstream = zest_blocking::serve_http_with("127.0.0.1:0", config, http, registry).unwrap();
    let client = zest_blocking::Client::spawn(
        zest_blocking::StdioCommand::new(ZEST).args(["bridge", upstream.url().as_str()]),
        zest_blocking::ClientOptions::new("canceller", "1"),
    )
    .expect("the bridge serves");
    let params = CallToolParams { name: "wait".into(), ..Default::default() };
    let pending = client.start::<CallTool>(params, RequestOptions::default());
    thread::sleep(Duration::from_millis(300));
    pending.cancel();
    let outcome = pending.wait();
    assert!(matches!(outcome, Err(CallError::Request(RequestError::Cancelled))), "{outcome:?}");
    let start = Instant::now();
    while !SAW_CANCEL.load(Ordering::SeqCst) {
        assert!(start.elapsed() < Duration::from_secs(10), "the upstream call was not cancelled");
        thread::sleep(Duration::from_millis(10));
    }
    client.close().unwrap();
    upstream.shutdown();
}

/// server-everything's sampling and elicitation tools through `zest bridge URL`: the
/// upstream's requests are asked of the bridge's client (mid-call), whose answers come back.
#[test]
fn bridge_asks_its_client_what_the_upstream_asks() {
    use zest_blocking::core::handler::SyncClientHandlers;
    use zest_blocking::schema::{CreateMessageResult, ElicitResult};
    use zest_blocking::{Client, ClientApi, ClientOptions, StdioCommand};
    let server = Everything::start("streamableHttp");
    let port = server.port;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let handlers = SyncClientHandlers::default()
        .on_sampling(|_| Ok(CreateMessageResult::text("bridged-model", "an answer via the bridge")))
        .on_elicitation(|_| {
            Ok(serde_json::from_value::<ElicitResult>(serde_json::json!({"action": "decline"}))
                .unwrap())
        });
    let options = ClientOptions::new("asked", "1").handlers(handlers);
    let client = Client::spawn(StdioCommand::new(ZEST).args(["bridge", url.as_str()]), options)
        .expect("the bridge serves");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !client.list_all_tools().unwrap().iter().any(|t| t.name == "trigger-sampling-request") {
        assert!(Instant::now() < deadline, "the sampling tool never appeared");
        thread::sleep(Duration::from_millis(50));
    }
    let sampled =
        client.call_tool("trigger-sampling-request", serde_json::json!({"prompt": "hi"})).unwrap();
    let sampled: String = sampled.content.iter().filter_map(|c| c.as_text()).collect();
    assert!(sampled.contains("an answer via the bridge"), "{sampled}");
    let elicited = client.call_tool("trigger-elicitation-request", serde_json::json!({})).unwrap();
    let elicited: String = elicited.content.iter().filter_map(|c| c.as_text()).collect();
    assert!(elicited.contains("declined"), "{elicited}");
    client.close().unwrap();
}

#[test]
fn login_keeps_tokens_that_later_commands_use_and_logout_forgets_them() {
    let provider = oidc_provider::Provider::start(60);
    let root = workspace("oauth");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let server = listening(&[
        "serve",
        root.to_str().unwrap(),
        "--http",
        &addr,
        "--oauth-issuer",
        &provider.issuer,
        "--oauth-scope",
        "mcp:read",
    ]);
    let cache = root.join("tokens.json");
    let with_cache = |args: &[&str]| {
        let mut command = Command::new(ZEST);
        command.args(args).env("ZEST_TOKEN_CACHE", &cache).stdin(Stdio::null());
        let out = command.output().expect("zest runs");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    };
    let url = server.url.as_str();
    let login = with_cache(&[
        "login",
        url,
        "--client-id",
        "machine",
        "--client-secret",
        "machine-secret",
        "--client-credentials",
    ])
    .ok();
    assert!(login.stdout.starts_with(&format!("logged in to {url}")), "{}", login.stdout);
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
    assert_eq!(kept[url]["issuer"], provider.issuer.as_str());
    // No credentials now: the kept token does it.
    let tools = with_cache(&["tools", url, "--json"]).ok();
    assert!(tools.json().as_array().is_some_and(|t| !t.is_empty()), "{}", tools.stdout);
    let logout = with_cache(&["logout", url]).ok();
    assert_eq!(logout.stdout.trim(), format!("logged out of {url}"));
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
    assert!(kept.get(url).is_none());
}
