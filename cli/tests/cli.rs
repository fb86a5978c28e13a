//! The built `zest` binary, driven as a person or a script would: `zest serve` over stdio and
//! HTTP used by `zest inspect/tools/call/read/prompt/bench`, every tool's happy path and each
//! refusal, the exit codes, an `mcpServers` file, and `zest inspect` against
//! `@modelcontextprotocol/server-everything` over stdio, Streamable HTTP and SSE.

use std::time::{Duration, Instant};

mod common;
#[path = "../../tests/support/everything.rs"]
mod everything;

use common::*;
use everything::Everything;
use serde_json::Value;

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

/// Every read command's `--json` is one JSON document in the shape its `--help` states.
#[test]
fn every_json_output_has_the_shape_its_help_states() {
    let root = workspace("shapes");
    let json = |args: &[&str]| over_stdio(&root, &[], &[args, &["--json"]].concat()).ok().json();
    let keys = |v: &Value| -> Vec<String> {
        let mut keys: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
        keys.sort();
        keys
    };
    let info = json(&["inspect"]);
    let expected = ["capabilities", "counts", "era", "instructions", "protocolVersion", "server"];
    assert_eq!(keys(&info), expected, "{info}");
    let counts = ["prompts", "resourceTemplates", "resources", "tools"];
    assert_eq!(keys(&info["counts"]), counts, "{info}");
    assert!(json(&["tools"]).as_array().is_some_and(|t| t.len() == 5));
    let call = json(&["call", "read_file", "-a", "path=notes.txt", "-a", "limit=1"]);
    assert_eq!(call["content"][0]["text"], "alpha\n", "a CallToolResult: {call}");
    let resources = json(&["resources"]);
    assert_eq!(keys(&resources), ["resourceTemplates", "resources"], "{resources}");
    let uri = format!("file://{}", root.canonicalize().unwrap().join("notes.txt").display());
    let read = json(&["read", &uri]);
    assert_eq!(read["contents"][0]["text"], "alpha\nbeta\ngamma\n", "a ReadResourceResult: {read}");
    let prompts = json(&["prompts"]);
    assert_eq!(prompts[0]["name"], "review_file", "{prompts}");
    let prompt = json(&["prompt", "review_file", "-a", "path=notes.txt"]);
    assert_eq!(prompt["messages"][0]["role"], "user", "a GetPromptResult: {prompt}");
    assert_eq!(keys(&json(&["ping"])), ["ms", "ok"]);
    let bench =
        json(&["bench", "--tool", "file_info", "--args-json", r#"{"path":"."}"#, "-n", "20"]);
    let expected = [
        "calls",
        "callsPerSecond",
        "concurrency",
        "errors",
        "maxMs",
        "p50Ms",
        "p99Ms",
        "seconds",
        "tool",
    ];
    assert_eq!(keys(&bench), expected, "{bench}");
}
