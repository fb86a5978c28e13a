//! The session era across processes: three fixture processes, one per runtime, sharing
//! sessions, streams and messages in one Redis (zest-redis), behind a loopback proxy that
//! sends each HTTP request to the next process in turn.

#[path = "support/fixture_process.rs"]
mod fixture_process;
#[path = "support/proxied_suite.rs"]
mod proxied_suite;
#[path = "support/proxy.rs"]
mod proxy;
#[path = "support/raw_client.rs"]
mod raw_client;
#[path = "support/redis_server.rs"]
mod redis_server;

use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fixture_process::FixtureProcess;
use proxied_suite::server_suite_passes;
use proxy::{authority, proxy};
use raw_client::{events, request, Event, Reply};
use redis_server::RedisServer;
use serde_json::{json, Value};
use zest_tokio::core::handler::AsyncClientHandlers;
use zest_tokio::schema::CreateMessageResult;
use zest_tokio::{Client, ClientApi, ClientOptions};

/// Far above what any step here takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(30);

const RUNTIMES: [&str; 3] = ["tokio", "smol", "blocking"];

fn fleet(redis: &RedisServer) -> Vec<FixtureProcess> {
    let url = redis.url();
    RUNTIMES.iter().map(|rt| FixtureProcess::serve_http(rt, &["--fleet", &url])).collect()
}

/// The official server suite 0.2.0-alpha.12 at 2025-11-25, every scenario, through the proxy: each request of a
/// session may land on any of the three processes.
#[test]
fn the_2025_11_25_server_suite_passes_through_three_processes_sharing_redis() {
    let redis = RedisServer::start();
    let processes = fleet(&redis);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = proxy(processes.iter().map(|p| authority(&p.url)).collect(), seen.clone());
    server_suite_passes(&url, "0.2.0-alpha.12", None);
    let backends: Vec<usize> = seen.lock().unwrap().iter().map(|(b, _)| *b).collect();
    assert!((0..3).all(|b| backends.contains(&b)), "every process served");
}

/// POSTs `message` to `url` (a process's own endpoint) as a 2025-11-25 client does.
fn post(url: &str, session: Option<&str>, message: &Value) -> Reply {
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    if let Some(session) = session {
        headers.push(("mcp-session-id", session));
    }
    request(url, "POST", &headers, &message.to_string()).expect("the process answers")
}

/// `initialize` on `url`: the session id.
fn initialize(url: &str) -> String {
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let reply = post(url, None, &init);
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.header("mcp-session-id").expect("a session id").to_owned()
}

/// The next `tools/list_changed` on a GET stream: its event id.
fn next_list_changed(stream: &Receiver<Event>) -> String {
    loop {
        let (id, data) = stream.recv_timeout(HANG).expect("an event in time");
        if data.contains("notifications/tools/list_changed") {
            return id.expect("events carry ids");
        }
    }
}

/// A client holding its GET stream on one process loses no message when that process is
/// killed: what other processes send meanwhile waits in Redis, and the GET resumed on
/// another process with `Last-Event-ID` gets it, once and in order.
#[test]
fn a_process_killed_mid_stream_loses_no_message_for_a_client_that_resumes() {
    let redis = RedisServer::start();
    let mut processes = fleet(&redis);
    let urls: Vec<String> = processes.iter().map(|p| p.url.clone()).collect();
    let session = initialize(&urls[0]);
    let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    assert_eq!(post(&urls[1], Some(&session), &initialized).status, 202);
    let listen = [("accept", "text/event-stream"), ("mcp-session-id", session.as_str())];
    let (status, stream) = events(&urls[2], &listen).unwrap();
    assert_eq!(status, 200);
    let change = |n: u64| {
        json!({"jsonrpc":"2.0","id":n,"method":"tools/call",
            "params":{"name":"test_trigger_tool_change","arguments":{}}})
    };
    assert_eq!(post(&urls[0], Some(&session), &change(1)).status, 200);
    let seen = next_list_changed(&stream);
    // The process carrying the GET stream dies; two changes are made meanwhile.
    drop(processes.remove(2));
    assert_eq!(post(&urls[0], Some(&session), &change(2)).status, 200);
    assert_eq!(post(&urls[1], Some(&session), &change(3)).status, 200);
    let mut resume = listen.to_vec();
    resume.push(("last-event-id", seen.as_str()));
    let (status, resumed) = events(&urls[1], &resume).unwrap();
    assert_eq!(status, 200);
    let (first, second) = (next_list_changed(&resumed), next_list_changed(&resumed));
    let number = |id: &str| id.rsplit('-').next().unwrap().parse::<u64>().unwrap();
    assert_eq!((number(&first), number(&second)), (number(&seen) + 1, number(&seen) + 2));
    // Nothing more: each message once.
    assert!(resumed.recv_timeout(Duration::from_millis(500)).is_err());
}

/// A sampling request sent by the process running a tool, answered by a POST that the proxy
/// sends to another process, reaches the tool, which completes.
#[tokio::test(flavor = "multi_thread")]
async fn a_sampling_request_answered_through_another_process_completes() {
    let redis = RedisServer::start();
    let processes = fleet(&redis);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = proxy(processes.iter().map(|p| authority(&p.url)).collect(), seen.clone());
    let handlers = AsyncClientHandlers::default().on_sampling(|_params| async move {
        let answer = json!({"role":"assistant","content":{"type":"text","text":"from the app"},
            "model":"test-model"});
        Ok(serde_json::from_value::<CreateMessageResult>(answer).unwrap())
    });
    let options =
        ClientOptions::new("fleet-test", "0").handlers(handlers).with_config(|c| c.session_era());
    let client = tokio::time::timeout(HANG, Client::connect(&url, options)).await.unwrap().unwrap();
    let call = client.call_tool("test_sampling", json!({"prompt": "hello"}));
    let result = tokio::time::timeout(HANG, call).await.unwrap().unwrap();
    let text = serde_json::to_string(&result).unwrap();
    assert!(text.contains("from the app"), "{text}");
    let seen = seen.lock().unwrap().clone();
    let landed =
        |needle: &str| seen.iter().find(|(_, body)| body.contains(needle)).map(|(b, _)| *b);
    let (asked, answered) = (landed("test_sampling"), landed("test-model"));
    assert!(asked.is_some() && answered.is_some() && asked != answered, "{seen:?}");
    let _ = client.close().await;
}

/// Redis unreachable when a process starts: it says so and stops.
#[test]
fn a_process_whose_redis_is_unreachable_at_start_says_so_and_stops() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_everything_server"))
        .args(["--runtime", "blocking", "--port", "0", "--fleet"])
        .arg(format!("redis://127.0.0.1:{port}/"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("Redis does not answer"), "{stderr}");
}

/// Redis lost mid-run: requests that need it fail at once with 503 and an error that says
/// to retry; nothing is kept half done; once Redis is back new sessions work.
#[test]
fn requests_fail_fast_and_retryable_while_redis_is_gone() {
    let mut redis = RedisServer::start();
    let processes = fleet(&redis);
    let urls: Vec<String> = processes.iter().map(|p| p.url.clone()).collect();
    let session = initialize(&urls[0]);
    let port = redis.port;
    drop(redis);
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    for url in &urls {
        let reply = post(url, Some(&session), &ping);
        assert_eq!(reply.status, 503, "{}", reply.text());
        let error: Value = serde_json::from_slice(&reply.body).unwrap();
        assert!(error["error"]["message"].as_str().unwrap().contains("retry"), "{error}");
    }
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let refused = post(&urls[1], None, &init);
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert!(refused.header("mcp-session-id").is_none());
    redis = RedisServer::start_on(port);
    let again = initialize(&urls[2]);
    assert_eq!(post(&urls[0], Some(&again), &ping).status, 200);
    drop(redis);
}
