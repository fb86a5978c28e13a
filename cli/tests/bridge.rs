//! `zest bridge` driven from outside: stdio in front of HTTP (zest's server, server-everything,
//! an OAuth-protected server) and HTTP in front of stdio, used by zest's own client, the
//! TypeScript and Python SDK clients and the MCP Inspector CLI; and `zest login/logout`.

use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

#[path = "../../conformance/tests/support/browser.rs"]
mod browser;
mod common;
#[path = "../../tests/support/everything.rs"]
mod everything;
#[path = "../../tests/support/oidc_provider.rs"]
mod oidc_provider;

use common::*;
use everything::Everything;
use serde_json::Value;

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
    static STARTED: AtomicBool = AtomicBool::new(false);
    let mut registry = Registry::new();
    let tool = Tool::new("wait", "Waits to be cancelled", serde_json::json!({"type": "object"}));
    registry.raw_tool(tool, |ctx, _| {
        STARTED.store(true, Ordering::SeqCst);
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
    // Cancelled once it runs upstream (a cancel that reached the bridge first ends it there).
    let start = Instant::now();
    while !STARTED.load(Ordering::SeqCst) {
        assert!(start.elapsed() < Duration::from_secs(30), "the call never reached upstream");
        thread::sleep(Duration::from_millis(5));
    }
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
    let summary = with_cache(&["login", url, "--json"]).ok().json();
    assert_eq!(summary["url"], url, "{summary}");
    assert_eq!(summary["tokens"]["issuer"], provider.issuer.as_str(), "{summary}");
    assert!(summary["tokens"]["expiresAt"].is_u64(), "{summary}");
    let logout = with_cache(&["logout", url]).ok();
    assert_eq!(logout.stdout.trim(), format!("logged out of {url}"));
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
    assert!(kept.get(url).is_none());
}

/// `node tests/peers/.../inspector --cli ARGS`: the MCP Inspector's CLI mode (on the Node 22
/// it wants), whose one JSON document on stdout is returned.
fn inspector_cli(args: &[&str]) -> Value {
    let peers = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers");
    let launcher =
        peers.join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    assert!(launcher.exists(), "the MCP Inspector is missing: run scripts/install-peers");
    let catalog = std::env::temp_dir().join(format!("zest-inspector-{}.json", std::process::id()));
    let mut command = Command::new(oidc_provider::node22());
    command.arg(launcher).arg("--cli").args(args).env("MCP_CATALOG_PATH", catalog);
    let stdout = succeeds_within_limit(command, "the MCP Inspector");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// The text of a `CallToolResult` as JSON.
fn result_text(result: &Value) -> String {
    let content = result["content"].as_array().expect("content");
    content.iter().filter_map(|c| c["text"].as_str()).collect()
}

/// `zest bridge URL` as the stdio server of the MCP Inspector's CLI and of the TypeScript SDK
/// client, in front of zest's own HTTP server and of server-everything over Streamable HTTP.
#[test]
fn the_mcp_inspector_and_the_typescript_sdk_use_a_bridge() {
    let root = workspace("inspector");
    let server = serve_http(&root);
    let bridge = [ZEST, "bridge", server.url.as_str()];
    let tools = inspector_cli(&[&bridge[..], &["--method", "tools/list"]].concat());
    assert_eq!(tools["tools"].as_array().map(Vec::len), Some(5), "{tools}");
    let call = ["--method", "tools/call", "--tool-name", "read_file", "--tool-arg"];
    let read = inspector_cli(&[&bridge[..], &call[..], &["path=notes.txt", "limit=2"]].concat());
    assert_eq!(result_text(&read), "alpha\nbeta\n", "{read}");

    let everything = Everything::start("streamableHttp");
    let url = format!("http://127.0.0.1:{}/mcp", everything.port);
    let bridge = [ZEST, "bridge", url.as_str()];
    let call = ["--method", "tools/call", "--tool-name", "get-sum", "--tool-arg", "a=2", "b=40"];
    let sum = inspector_cli(&[&bridge[..], &call[..]].concat());
    assert_eq!(result_text(&sum), "The sum of 2 and 40 is 42.", "{sum}");
    let prompts = inspector_cli(&[&bridge[..], &["--method", "prompts/list"]].concat());
    assert!(prompts["prompts"].as_array().is_some_and(|p| !p.is_empty()), "{prompts}");
    sdk_client("node", "ts_everything.mjs", &bridge);
}

/// Two `zest bridge URL`s in front of a server that wants OAuth (oidc-provider's access
/// tokens live 3 s), sharing one token cache: the person logs in once, through the browser
/// the first bridge points at; the second starts on the kept tokens; calls through both keep
/// working across three expiries, on tokens refreshed (and rotated) by one bridge and taken
/// up by the other from the cache instead of a second refresh of a spent token.
#[test]
fn bridges_behind_oauth_log_in_once_share_tokens_and_outlive_them() {
    use std::sync::{Arc, Mutex};
    const TTL: u64 = 3;
    let provider = oidc_provider::Provider::start(TTL);
    let root = workspace("bridge-oauth");
    let issuer = provider.issuer.as_str();
    let server = serve_http_with(&root, &["--oauth-issuer", issuer, "--oauth-scope", "mcp:read"]);
    let cache = root.join("tokens.json");
    let logins = Arc::new(Mutex::new(Vec::<String>::new()));
    let spawn_bridge = |name: &'static str| {
        let seen = logins.clone();
        let bridge = zest_blocking::StdioCommand::new(ZEST)
            .args(["bridge", server.url.as_str(), "--no-browser"])
            .env("ZEST_TOKEN_CACHE", &cache)
            .on_stderr(move |line| {
                eprintln!("{name}: {line}");
                let Some(url) = line.strip_prefix("zest: log in at ") else { return };
                seen.lock().unwrap().push(url.to_owned());
                let url = url.to_owned();
                thread::spawn(move || {
                    let redirect =
                        url.split(['?', '&']).find_map(|p| p.strip_prefix("redirect_uri="));
                    let redirect = redirect.expect("a redirect URI").replace("%3A", ":");
                    let redirect = redirect.replace("%2F", "/");
                    let callback = browser::log_in(&url, &redirect).expect("logged in");
                    let (status, ..) = browser::get(&callback, &[]).expect("the callback");
                    assert_eq!(status, 200, "the login completes");
                });
            });
        let options = zest_blocking::ClientOptions::new(name, "1");
        zest_blocking::Client::spawn(bridge, options).expect("the bridge serves")
    };
    let refresh_token = || {
        let kept: Value = serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
        kept[server.url.as_str()]["refresh_token"].as_str().map(str::to_owned)
    };
    let read = |client: &zest_blocking::Client| {
        let args = serde_json::json!({"path": "notes.txt", "limit": 1});
        let result = zest_blocking::ClientApi::call_tool(client, "read_file", args).unwrap();
        assert_eq!(result.content[0].as_text(), Some("alpha\n"), "{result:?}");
    };
    let first = spawn_bridge("first");
    read(&first);
    let kept = refresh_token().expect("the bridge kept a refresh token");
    let second = spawn_bridge("second");
    read(&second);
    for _ in 0..3 {
        thread::sleep(Duration::from_secs(TTL + 1));
        read(&first);
        read(&second);
    }
    assert_eq!(logins.lock().unwrap().len(), 1, "one login: {:?}", logins.lock().unwrap());
    assert_ne!(refresh_token().unwrap(), kept, "refreshed, with the refresh token rotated");
    first.close().unwrap();
    second.close().unwrap();
}

/// `zest bridge --http` behind a guard: `--require-token` lets only that bearer token
/// through; `--oauth-issuer` only that issuer's access tokens (here by client credentials).
#[test]
fn an_http_bridge_serves_only_what_its_guard_lets_through() {
    let root = workspace("guarded");
    let upstream = ["--", ZEST, "serve", root.to_str().unwrap()];
    let front = ["bridge", "--http", "127.0.0.1:0"];
    let guarded = listening(&[&front[..], &["--require-token", "s3cret"], &upstream[..]].concat());
    let without = zest(&["ping", &guarded.url]);
    assert_eq!(without.code, 3, "{}", without.stderr);
    assert!(without.stderr.contains("401"), "{}", without.stderr);
    let tools = zest(&["tools", &guarded.url, "--bearer-token", "s3cret", "--json"]).ok().json();
    assert_eq!(tools.as_array().map(Vec::len), Some(5), "{tools}");

    let provider = oidc_provider::Provider::start(60);
    let oauth = ["--oauth-issuer", provider.issuer.as_str(), "--oauth-scope", "mcp:read"];
    let guarded = listening(&[&front[..], &oauth[..], &upstream[..]].concat());
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let accept = ("Accept", "application/json, text/event-stream");
    let headers = [("Content-Type", "application/json"), accept];
    let (status, challenge, _) = browser::post(&guarded.url, &headers, ping).unwrap();
    assert_eq!(status, 401, "{challenge:?}");
    let challenge = challenge.unwrap_or_default();
    assert!(challenge.contains("resource_metadata="), "says where to log in: {challenge}");
    let mut command = Command::new(ZEST);
    let machine = ["--client-id", "machine", "--client-secret", "machine-secret"];
    command
        .args([&["tools", &guarded.url, "--json", "--client-credentials"], &machine[..]].concat());
    command.env("ZEST_TOKEN_CACHE", root.join("tokens.json")).stdin(Stdio::null());
    let out = command.output().expect("zest runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tools: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(tools.as_array().map(Vec::len), Some(5), "{tools}");
    let bare = zest(&["bridge", "--require-token", "x", "--", ZEST, "serve", "."]);
    assert_eq!(bare.code, 2, "a guard needs --http: {}", bare.stderr);
}
