//! zest-tokio's HTTP server as a `tower::Service` (`McpService`, feature `tower`), mounted
//! at `/mcp` in an axum app beside another route, on 127.0.0.1, driven by zest-tokio's own
//! HTTP client and by raw requests: handshake, progress on a call's SSE stream, the GET
//! stream, Origin and body-size refusals, clients that go away mid-stream, a client that does
//! not read, DELETE, shutdown.
#![cfg(feature = "tower")]

#[path = "common/http.rs"]
mod http_common;
#[path = "../../tests/support/load.rs"]
mod load;
#[path = "../../conformance/tests/support/proxy.rs"]
mod proxy;
#[path = "../../conformance/tests/support/redis_server.rs"]
mod redis_server;

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Method, StatusCode};
use http_common::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use zest_tokio::core::client::ServerNotification;
use zest_tokio::core::server::{ListKind, ServerConfig};
use zest_tokio::schema::{CallToolResult, LoggingLevel, Tool};
use zest_tokio::{Client, ClientApi, ClientOptions, HttpConfig, HttpEndpoint, McpService};

/// Every wait in these tests ends by then.
const WAIT: Duration = Duration::from_secs(10);

/// An axum app serving the test registry at `/mcp` and `hello` at `/hello`.
struct App {
    mcp: McpService,
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl App {
    async fn start(http: HttpConfig) -> Self {
        // The session era: these tests count sessions, DELETE them and log to them.
        let config = ServerConfig::new("zest-http-test", "1.0").session_era();
        let mcp = McpService::new_with(config, http, registry());
        let app = axum::Router::new()
            .route_service("/mcp", mcp.clone())
            .route("/hello", axum::routing::get(|| async { "hello" }));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
            let _ = stopped.await;
        });
        let task = tokio::spawn(serve.into_future());
        Self { mcp, addr, stop, task }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Ends the MCP sessions, then axum's graceful shutdown, which must finish (every stream
    /// closed) within the wait.
    async fn shutdown(self) {
        self.mcp.shutdown().await;
        let _ = self.stop.send(());
        let served = tokio::time::timeout(WAIT, self.task).await;
        served.expect("axum drained every connection").unwrap().unwrap();
    }
}

async fn app() -> App {
    App::start(HttpConfig::new()).await
}

fn options() -> ClientOptions {
    ClientOptions::new("zest-tower-test", "1.0")
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect()
}

/// Polls `what` until it holds, for at most the wait.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "{what} within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn handshake_and_calls_beside_another_route() {
    let app = app().await;
    let client = Client::connect(&app.url(), options()).await.expect("connect");
    assert_eq!(client.negotiated().server_info.name, "zest-http-test");
    let tools: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert!(tools.contains(&"echo".to_owned()), "{tools:?}");
    let echoed = client.call_tool("echo", json!({"text": "through axum"})).await.unwrap();
    assert_eq!(text(&echoed), "through axum");
    assert_eq!(app.mcp.session_count(), 1);
    // The app's other route is untouched by the MCP service.
    let hello = raw_at(app.addr, Method::GET, "/hello", &[], b"").await;
    assert_eq!((hello.status, hello.body.as_slice()), (StatusCode::OK, &b"hello"[..]));
    client.close().await.unwrap();
    app.shutdown().await;
}

#[tokio::test]
async fn progress_arrives_on_the_calls_sse_stream() {
    let app = app().await;
    // Without the GET stream, the call's own SSE answer is the only way in.
    let mut endpoint = HttpEndpoint::new(app.url());
    endpoint.open_get_stream = false;
    let client = Client::connect_to(endpoint, options()).await.unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let call = client.call_tool_with_progress("steps", json!({"n": 3}), move |p| {
        sink.lock().unwrap().push((p.progress, p.total, p.message));
    });
    let result = tokio::time::timeout(WAIT, call).await.expect("answered").unwrap();
    assert_eq!(text(&result), "done after 3 steps");
    let want: Vec<_> = (1..=3).map(|i| (i as f64, Some(3.0), Some(format!("step {i}")))).collect();
    assert_eq!(*seen.lock().unwrap(), want);
    client.close().await.unwrap();
    app.shutdown().await;
}

#[tokio::test]
async fn the_get_stream_delivers_a_server_message() {
    let app = app().await;
    let client = Client::connect(&app.url(), options()).await.unwrap();
    let notes = client.notifications();
    client.ping().await.unwrap();
    // The GET stream opens after the handshake: wait until the router carries it.
    let mcp = app.mcp.clone();
    eventually("the GET stream is open", || mcp.stats().exchanges == 1).await;
    let tool = Tool::new("late", "Added while running", json!({"type": "object"}));
    app.mcp.change_registry(&[ListKind::Tools], move |r| {
        r.raw_tool(tool, |_, _| async move { Ok(CallToolResult::text("late")) });
    });
    let deadline = tokio::time::Instant::now() + WAIT;
    let announced = loop {
        match tokio::time::timeout_at(deadline, notes.recv()).await {
            Ok(Ok(ServerNotification::ToolListChanged)) => break true,
            Ok(Ok(_)) => continue,
            Ok(Err(_)) | Err(_) => break false,
        }
    };
    assert!(announced, "tools/list_changed reached the client on its GET stream");
    let late = client.call_tool("late", json!({})).await.unwrap();
    assert_eq!(text(&late), "late");
    client.close().await.unwrap();
    app.shutdown().await;
}

#[tokio::test]
async fn the_services_handle_adds_tools_and_logs_to_its_sessions() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Nothing {}
    let app = app().await;
    let client = Client::connect(&app.url(), options()).await.unwrap();
    let notes = client.notifications();
    let handle = app.mcp.handle();
    handle.add_tool("typed_late", "Added through the handle", |Nothing {}| async { "typed" });
    handle.log_as("svc", LoggingLevel::Notice, json!("hello"));
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match tokio::time::timeout_at(deadline, notes.recv()).await {
            Ok(Ok(n @ ServerNotification::ToolListChanged)) => seen.push(format!("{n:?}")),
            Ok(Ok(ServerNotification::LoggingMessage(m))) if m.logger.as_deref() == Some("svc") => {
                seen.push(format!("log {}", m.data))
            }
            Ok(Ok(_)) => continue,
            Ok(Err(_)) | Err(_) => break,
        }
    }
    assert_eq!(seen, ["ToolListChanged", "log \"hello\""]);
    let typed = client.call_tool("typed_late", json!({})).await.unwrap();
    assert_eq!(text(&typed), "typed");
    client.close().await.unwrap();
    app.shutdown().await;
}

#[tokio::test]
async fn a_foreign_origin_gets_403() {
    let app = app().await;
    let headers = [POST_HEADERS, &[("origin", "https://evil.example")]].concat();
    let r = raw_at(app.addr, Method::POST, "/mcp", &headers, &initialize_body()).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", String::from_utf8_lossy(&r.body));
    assert!(r.json()["error"]["code"].is_i64(), "a JSON-RPC error: {:?}", r.json());
    assert_eq!(app.mcp.session_count(), 0);
    // A loopback origin is fine.
    let headers = [POST_HEADERS, &[("origin", "http://localhost:3000")]].concat();
    let r = raw_at(app.addr, Method::POST, "/mcp", &headers, &initialize_body()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(app.mcp.session_count(), 1);
    app.shutdown().await;
}

#[tokio::test]
async fn an_oversized_body_gets_413() {
    let mut http = HttpConfig::new();
    http.router.max_body = 1024;
    let app = App::start(http).await;
    let mut body = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"pad\":\"".to_vec();
    body.extend(std::iter::repeat_n(b'x', 4096));
    body.extend_from_slice(b"\"}}");
    let r = raw_at(app.addr, Method::POST, "/mcp", POST_HEADERS, &body).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    // Within the limit, the same service answers.
    let r = raw_at(app.addr, Method::POST, "/mcp", POST_HEADERS, &initialize_body()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(app.mcp.stats().exchanges, 0);
    app.shutdown().await;
}

/// Initializes a session with raw requests; returns its id.
async fn raw_session(addr: SocketAddr) -> String {
    let r = raw_at(addr, Method::POST, "/mcp", POST_HEADERS, &initialize_body()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", String::from_utf8_lossy(&r.body));
    let id = r.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let headers = [POST_HEADERS, &[("mcp-session-id", id.as_str())]].concat();
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let r = raw_at(addr, Method::POST, "/mcp", &headers, initialized).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    id
}

/// Sends `request` on a new connection and reads until the response head has arrived;
/// returns the socket (the body still streaming) and the head.
async fn open_stream(addr: SocketAddr, request: String) -> (TcpStream, String) {
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + WAIT;
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout_at(deadline, socket.read(&mut buf)).await.unwrap().unwrap();
        assert!(n > 0, "the server closed before a head: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    (socket, String::from_utf8_lossy(&seen).into_owned())
}

#[tokio::test]
async fn clients_gone_mid_stream_leave_nothing_behind() {
    let app = app().await;
    assert_eq!((app.mcp.session_count(), app.mcp.stats().exchanges), (0, 0));
    let id = raw_session(app.addr).await;
    assert_eq!((app.mcp.session_count(), app.mcp.stats().exchanges), (1, 0));

    // A GET stream, then the client goes away while it idles.
    let get = format!(
        "GET /mcp HTTP/1.1\r\nhost: {}\r\naccept: text/event-stream\r\nmcp-session-id: {id}\r\n\r\n",
        app.addr
    );
    let (socket, head) = open_stream(app.addr, get.clone()).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.to_ascii_lowercase().contains("text/event-stream"), "{head}");
    assert_eq!(app.mcp.stats().exchanges, 1, "the GET stream is carried");
    drop(socket);
    let mcp = app.mcp.clone();
    eventually("the GET stream is released", || mcp.stats().exchanges == 0).await;

    // A call answered over SSE, and the client goes away while it streams.
    let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"steps","arguments":{"n":25}}}"#;
    let post = format!(
        "POST /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-session-id: {id}\r\n\
         content-length: {}\r\n\r\n{}",
        app.addr,
        call.len(),
        String::from_utf8_lossy(call)
    );
    let (socket, head) = open_stream(app.addr, post).await;
    assert!(head.to_ascii_lowercase().contains("text/event-stream"), "{head}");
    assert_eq!(app.mcp.stats().exchanges, 1, "the answer stream is carried");
    drop(socket);
    eventually("the answer stream is released", || mcp.stats().exchanges == 0).await;

    // A new GET stream opens: the old one is not held as a conflict.
    let (socket, head) = open_stream(app.addr, get).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    drop(socket);
    eventually("the second GET stream is released", || mcp.stats().exchanges == 0).await;

    app.mcp.close_sessions();
    assert_eq!((app.mcp.session_count(), app.mcp.stats().exchanges), (0, 0));
    app.shutdown().await;
}

#[tokio::test]
async fn delete_ends_the_session() {
    let app = app().await;
    let client = Client::connect(&app.url(), options()).await.unwrap();
    client.ping().await.unwrap();
    assert_eq!(app.mcp.session_count(), 1);
    client.close().await.unwrap();
    assert_eq!(app.mcp.session_count(), 0, "DELETE ended the session");
    let mcp = app.mcp.clone();
    eventually("the GET stream closed with its session", || mcp.stats().exchanges == 0).await;
    app.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_open_streams_and_refuses_new_requests() {
    let app = app().await;
    let client = Client::connect(&app.url(), options()).await.unwrap();
    let mcp = app.mcp.clone();
    eventually("the GET stream is open", || mcp.stats().exchanges == 1).await;
    // Shutting the service down ends the session and its GET stream, so axum can drain.
    tokio::time::timeout(WAIT, app.mcp.shutdown()).await.expect("shut down");
    assert_eq!((app.mcp.session_count(), app.mcp.stats().exchanges), (0, 0));
    let r = raw_at(app.addr, Method::POST, "/mcp", POST_HEADERS, &initialize_body()).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    drop(client);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_read_is_cut_off_once_its_backlog_is_full() {
    let mut http = HttpConfig::new();
    http.http1.max_backlog_bytes = 1024 * 1024;
    let app = App::start(http).await;
    let (addr, handle) = (app.addr, app.mcp.handle());
    let log = move |record| handle.log(LoggingLevel::Info, record);
    tokio::task::spawn_blocking(move || {
        load::assert_a_client_that_does_not_read_is_cut_off(addr, log)
    })
    .await
    .unwrap();
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_answer_beside_small_messages_is_not_cut() {
    let mut http = HttpConfig::new();
    http.http1.max_backlog_bytes = 64 * 1024;
    let app = App::start(http).await;
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    app.mcp.change_registry(&[ListKind::Tools], |r| {
        r.raw_tool(
            Tool::new("loud", "Logs a line, then answers n bytes", schema),
            |ctx, p| async move {
                let n = p.arguments.as_ref().and_then(|a| a.get("n")).and_then(|n| n.as_u64());
                let _ = ctx.log(LoggingLevel::Info, json!("answering")).await;
                Ok(CallToolResult::text(load::loud_text(n.unwrap_or(0) as usize)))
            },
        );
    });
    let addr = app.addr;
    tokio::task::spawn_blocking(move || {
        load::assert_a_large_answer_beside_small_messages_is_not_cut(addr)
    })
    .await
    .unwrap();
    app.shutdown().await;
}

/// Two services in one fleet (zest-redis, a Redis of the test's own) behind a round-robin
/// proxy: the session opened through one is served by both, and a log broadcast from either
/// reaches the client's GET stream.
#[tokio::test(flavor = "multi_thread")]
async fn two_services_sharing_redis_serve_one_session() {
    let redis = redis_server::RedisServer::start();
    let mut apps = Vec::new();
    let mut listening = Vec::new();
    for _ in 0..2 {
        let fleet = zest_redis::RedisFleet::connect(&redis.url()).expect("redis answers");
        let mut http = HttpConfig::new();
        http.router.fleet = Some(fleet.clone());
        let app = App::start(http).await;
        listening.push(fleet.listen(app.mcp.handle()).expect("subscribed"));
        apps.push(app);
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let backends = apps.iter().map(|a| a.addr.to_string()).collect();
    let url = proxy::proxy(backends, seen.clone());
    let options = options().with_config(|c| c.session_era());
    let client = Client::connect(&url, options).await.expect("connect");
    for n in 0..4 {
        let result = client.call_tool("echo", json!({"text": format!("n{n}")})).await.unwrap();
        assert_eq!(text(&result), format!("n{n}"));
    }
    let served: Vec<usize> = seen.lock().unwrap().iter().map(|(b, _)| *b).collect();
    assert!(served.contains(&0) && served.contains(&1), "{served:?}");
    apps[1].mcp.handle().log(LoggingLevel::Warning, json!("from the second service"));
    let heard = tokio::time::timeout(WAIT, async {
        loop {
            match client.notifications().recv().await {
                Ok(ServerNotification::LoggingMessage(m)) => return m.data,
                Ok(_) => {}
                Err(e) => panic!("{e}"),
            }
        }
    });
    assert_eq!(heard.await.expect("the log arrives"), json!("from the second service"));
    let _ = client.close().await;
    drop(listening);
    for app in apps {
        app.shutdown().await;
    }
}
