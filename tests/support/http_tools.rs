//! HTTP test support shared by zest-tokio's and zest-smol's tests: a server with test tools
//! on 127.0.0.1, and raw HTTP/1.1 exchanges for requests a well-behaved client never sends.
//! Each runtime's `tests/common/http.rs` includes this file after naming, in a module
//! `rt`, its own server API, timer, sockets and timeout.
#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use serde_json::{json, Value};

use super::rt::core::error::UsageError;
use super::rt::core::http1::{self, Config};
use super::rt::core::io::{HttpRequest, StreamId};
use super::rt::core::jsonrpc::{codes, ErrorObject};
use super::rt::core::runtime::http_client::ClientConn;
use super::rt::core::runtime::OwnedEvent;
use super::rt::core::server::ServerConfig;
use super::rt::schema::{
    CallToolResult, CreateMessageParams, LoggingLevel, Role, SamplingContent, SamplingMessage, Tool,
};
use super::rt::{serve_http_with, sleep, within, AsyncReadExt, AsyncWriteExt, TcpStream};
use super::rt::{HttpConfig, HttpServer, PeerApi, Registry};

#[path = "tool_args.rs"]
mod tool_args;
use tool_args::{num_arg, str_arg};

/// The tools the HTTP tests call: `echo {text}`, `add {a, b}`, `steps {n}` (a progress report
/// and a log line per step, 20 ms apart, then `done after n steps`), `sample {prompt}` (asks
/// the client's model), `never {}` (waits for an hour).
pub fn registry() -> Registry {
    let mut r = Registry::default();
    let text = |name: &str| json!({"type": "object", "properties": {name: {"type": "string"}}, "required": [name]});
    r.raw_tool(Tool::new("echo", "Echoes", text("text")), |_, p| async move {
        Ok(CallToolResult::text(str_arg(&p, "text")))
    });
    let numbers =
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}});
    r.raw_tool(Tool::new("add", "Adds", numbers), |_, p| async move {
        let sum = num_arg(&p, "a") + num_arg(&p, "b");
        Ok(CallToolResult::text(format!("{sum}")))
    });
    let steps = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    r.raw_tool(Tool::new("steps", "Reports progress and logs", steps), |ctx, p| async move {
        let n = num_arg(&p, "n") as u64;
        for i in 1..=n {
            sleep(Duration::from_millis(20)).await;
            let fail = |e: UsageError| ErrorObject::new(codes::INTERNAL_ERROR, e.to_string());
            ctx.progress(i as f64, Some(n as f64), Some(format!("step {i}")))
                .await
                .map_err(fail)?;
            ctx.log_as("steps", LoggingLevel::Info, json!(format!("did step {i}")))
                .await
                .map_err(fail)?;
        }
        Ok(CallToolResult::text(format!("done after {n} steps")))
    });
    r.raw_tool(
        Tool::new("sample", "Asks the client's model", text("prompt")),
        |ctx, p| async move {
            let message =
                SamplingMessage::new(Role::User, SamplingContent::text(str_arg(&p, "prompt")));
            let params = CreateMessageParams {
                messages: vec![message],
                max_tokens: 10,
                ..Default::default()
            };
            match ctx.create_message(params).await {
                Ok(result) => {
                    let text: String =
                        result.content.as_slice().iter().filter_map(|c| c.as_text()).collect();
                    Ok(CallToolResult::text(format!("model said: {text}")))
                }
                Err(e) => Ok(CallToolResult::error_text(format!("sampling failed: {e}"))),
            }
        },
    );
    // Uses its context before its first await (the closure's body runs when it is called).
    r.raw_tool(Tool::new("eager", "Logs before it awaits", json!({"type": "object"})), |ctx, _| {
        drop(ctx.log(LoggingLevel::Info, json!("eager")));
        async move { Ok(CallToolResult::text("eager done")) }
    });
    // Panics when called, before it returns a future.
    r.raw_tool(Tool::new("boom", "Panics at once", json!({"type": "object"})), |_, p| {
        if p.arguments.is_some() {
            panic!("boom");
        }
        async move { Ok(CallToolResult::text("no arguments, no boom")) }
    });
    r.raw_tool(Tool::new("never", "Never answers", json!({"type": "object"})), |_, _| async move {
        let _guard = Dropped;
        NEVER_STARTED.fetch_add(1, Ordering::SeqCst);
        sleep(Duration::from_secs(3600)).await;
        Ok(CallToolResult::text("too late"))
    });
    r
}

/// How many `never` handlers started, and how many were dropped (their task aborted).
pub static NEVER_STARTED: AtomicUsize = AtomicUsize::new(0);
pub static NEVER_DROPPED: AtomicUsize = AtomicUsize::new(0);

struct Dropped;

impl Drop for Dropped {
    fn drop(&mut self) {
        NEVER_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

/// The test server on a free loopback port.
pub async fn server() -> HttpServer {
    server_with(HttpConfig::new()).await
}

/// The test server with `http` settings.
pub async fn server_with(http: HttpConfig) -> HttpServer {
    let config = ServerConfig::new("zest-http-test", "1.0");
    serve_http_with("127.0.0.1:0", config, http, registry()).await.expect("bind 127.0.0.1:0")
}

/// A whole response read raw.
#[derive(Debug)]
pub struct Raw {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Raw {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// Sends one request on a new connection and reads its response to the end (within 30 s).
pub async fn raw(
    server: &HttpServer,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Raw {
    raw_at(server.local_addr(), method, path, headers, body).await
}

/// [`raw`] to any server listening on `addr`.
pub async fn raw_at(
    addr: std::net::SocketAddr,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Raw {
    let url = format!("http://{addr}{path}");
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        map.append(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            http::HeaderValue::from_str(value).unwrap(),
        );
    }
    let request = HttpRequest {
        method,
        uri: url.parse().unwrap(),
        headers: map,
        body: Bytes::copy_from_slice(body),
    };
    let mut socket = TcpStream::connect(addr).await.expect("connect");
    let mut conn = ClientConn::new(Config::default());
    conn.send(Instant::now(), StreamId(1), request).unwrap();
    let mut out =
        Raw { status: StatusCode::IM_A_TEAPOT, headers: HeaderMap::new(), body: Vec::new() };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        while let Some(t) = conn.poll_transmit() {
            match t {
                http1::Transmit::Write(bytes) => socket.write_all(&bytes).await.unwrap(),
                http1::Transmit::Close => {}
            }
        }
        while let Some((_, event)) = conn.poll_event() {
            match event {
                OwnedEvent::Head(head) => (out.status, out.headers) = (head.status, head.headers),
                OwnedEvent::Data(bytes) => out.body.extend_from_slice(&bytes),
                OwnedEvent::End => return out,
                OwnedEvent::Failed(f) => panic!("{path}: {f}"),
                _ => {}
            }
        }
        let read = within(deadline, socket.read(&mut buf)).await;
        match read.expect("the response ends within 30 s") {
            Ok(0) => conn.handle_end(),
            Ok(n) => conn.handle_data(&buf[..n]),
            Err(e) => panic!("{path}: {e}"),
        }
    }
}

/// The fields a well-formed Streamable HTTP POST carries.
pub const POST_HEADERS: &[(&str, &str)] =
    &[("content-type", "application/json"), ("accept", "application/json, text/event-stream")];

/// An `initialize` request body.
pub fn initialize_body() -> Vec<u8> {
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}
    }))
    .unwrap()
}
