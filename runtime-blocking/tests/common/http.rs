//! HTTP test support: a server with test tools on 127.0.0.1 and client options that answer
//! sampling (raw HTTP/1.1 exchanges are `tests/support/load.rs`'s `RawConn`).
#![allow(dead_code, unreachable_pub)]

use std::thread;
use std::time::Duration;

use serde_json::json;
use zest_blocking::core::handler::SyncClientHandlers;
use zest_blocking::core::jsonrpc::{codes, ErrorObject};
use zest_blocking::core::server::ServerConfig;
use zest_blocking::schema::{
    CallToolResult, CreateMessageParams, CreateMessageResult, LoggingLevel, Role, SamplingContent,
    SamplingMessage, Tool,
};
use zest_blocking::{serve_http_with, ClientOptions, HttpConfig, HttpServer, PeerApi, Registry};

#[path = "../../../tests/support/tool_args.rs"]
mod tool_args;
use tool_args::{num_arg, str_arg};

/// The tools the HTTP tests call: `echo {text}`, `add {a, b}`, `steps {n}` (a progress report
/// and a log line per step, 20 ms apart, then `done after n steps`), `sample {prompt}` (asks
/// the client's model), `slow {ms}` (answers after `ms`).
pub fn registry() -> Registry {
    let mut r = Registry::default();
    let text = |name: &str| json!({"type": "object", "properties": {name: {"type": "string"}}, "required": [name]});
    r.raw_tool(Tool::new("echo", "Echoes", text("text")), |_, p| {
        Ok(CallToolResult::text(str_arg(&p, "text")))
    });
    let numbers =
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}});
    r.raw_tool(Tool::new("add", "Adds", numbers), |_, p| {
        Ok(CallToolResult::text(format!("{}", num_arg(&p, "a") + num_arg(&p, "b"))))
    });
    let steps = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    r.raw_tool(Tool::new("steps", "Reports progress and logs", steps), |ctx, p| {
        let n = num_arg(&p, "n") as u64;
        let fail = |e: zest_blocking::core::error::UsageError| {
            ErrorObject::new(codes::INTERNAL_ERROR, e.to_string())
        };
        for i in 1..=n {
            thread::sleep(Duration::from_millis(20));
            ctx.progress(i as f64, Some(n as f64), Some(format!("step {i}"))).map_err(fail)?;
            ctx.log_as("steps", LoggingLevel::Info, json!(format!("did step {i}")))
                .map_err(fail)?;
        }
        Ok(CallToolResult::text(format!("done after {n} steps")))
    });
    r.raw_tool(Tool::new("sample", "Asks the client's model", text("prompt")), |ctx, p| {
        let message =
            SamplingMessage::new(Role::User, SamplingContent::text(str_arg(&p, "prompt")));
        let params =
            CreateMessageParams { messages: vec![message], max_tokens: 10, ..Default::default() };
        match ctx.create_message(params) {
            Ok(result) => {
                let text: String =
                    result.content.as_slice().iter().filter_map(|c| c.as_text()).collect();
                Ok(CallToolResult::text(format!("model said: {text}")))
            }
            Err(e) => Ok(CallToolResult::error_text(format!("sampling failed: {e}"))),
        }
    });
    let slow = json!({"type": "object", "properties": {"ms": {"type": "integer"}}});
    r.raw_tool(Tool::new("slow", "Answers late", slow), |_, p| {
        thread::sleep(Duration::from_millis(num_arg(&p, "ms") as u64));
        Ok(CallToolResult::text("slow done"))
    });
    r
}

/// Client options whose sampling handler answers `"<n> message(s) read"`.
pub fn options() -> ClientOptions {
    let handlers = SyncClientHandlers::default().on_sampling(|params| {
        let asked = params.messages.len();
        Ok(serde_json::from_value::<CreateMessageResult>(json!({
            "role": "assistant",
            "content": {"type": "text", "text": format!("{asked} message(s) read")},
            "model": "canned"
        }))
        .unwrap())
    });
    ClientOptions::new("zest-http-client-test", "1.0").handlers(handlers)
}

pub fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect()
}

/// The test server on a free loopback port.
pub fn server() -> HttpServer {
    server_with(HttpConfig::new())
}

/// The test server with `http` settings.
pub fn server_with(http: HttpConfig) -> HttpServer {
    let config = ServerConfig::new("zest-http-test", "1.0");
    serve_http_with("127.0.0.1:0", config, http, registry()).expect("bind 127.0.0.1:0")
}
