//! The runtime contract (docs/runtime-contract.md) as one body of code, instantiated for
//! zest-tokio, zest-smol and zest-blocking by a macro: if a name or a signature the contract
//! lists differs between the runtimes, this file stops compiling. The body also runs: a
//! spawn that fails typed, a client and a server over streams that end at once, an in-memory
//! pair through which every `ClientApi` call and `RequestContext` method is used, and a
//! session over HTTP on 127.0.0.1. The body is written once; the macro adds `async` and
//! `.await` for the async runtimes.

use std::time::Duration;

/// Far above what any step here takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(60);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    /// The first addend.
    a: f64,
    b: f64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    total: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Count {
    n: u32,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Ask {
    prompt: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Greet {
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    ok: bool,
}

/// A stdio MCP server (for `python3 -c`) whose `tools/list` always names the same next
/// cursor: a client that follows cursors blindly never ends.
const LOOPING_CURSOR: &str = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "looping", "version": "1"}}
    else:
        result = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "nextCursor": "again"}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

/// A stdio MCP server (for `python3 -c`) that names, as its server name, the buffer sizes of
/// the pipes it was given as stdin and stdout (`F_GETPIPE_SZ`), then ends with its stdin.
const PIPE_SIZES: &str = r#"
import fcntl, json, sys
sizes = " ".join(str(fcntl.fcntl(fd, 1032)) for fd in (0, 1))
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {},
                  "serverInfo": {"name": sizes, "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

/// Shared state of the registry (`with_state` / `State<S>`).
struct Prefix(&'static str);

/// One module per runtime: `$rt` the crate, `$Handlers` its client handlers,
/// `[$($async_)?]` / `[$($aw)*]` `async` / `.await` or nothing, `$empty` / `$sink` a reader
/// that ends at once and a writer that takes everything, of the runtime's IO traits; `$drain`
/// takes what waits in a client's notification queue now, without waiting (from a receiver
/// of its own: `try_recv` returns a `Result` in the async runtimes, an `Option` in blocking).
macro_rules! runtime_contract {
    (
        $name:ident, $rt:ident, $Handlers:ident, [$($async_:tt)?], [$($aw:tt)*],
        empty = $empty:expr, sink = $sink:expr, drain = $drain:expr $(,)?
    ) => {
        mod $name {
            use std::collections::BTreeMap;
            use std::sync::{Arc, Mutex};
            use std::time::Duration;

            use serde_json::json;
            use $rt::core::client::ClientConfig;
            use $rt::core::error::{CloseReason, RequestError};
            use $rt::core::handler::$Handlers;
            use $rt::schema::{
                CallToolResult, CompleteResult, ContentBlock, CreateMessageResult, ElicitResult,
                GetPromptResult, ListRootsResult, LoggingLevel, Prompt, PromptMessage,
                ReadResourceResult, Resource, ResourceTemplate, Role, SamplingContent,
                SamplingMessage, Tool,
            };
            use $rt::{
                in_memory, in_memory_with, router_config, serve, serve_http, serve_http_with,
                CallError, CallOptions, Client, ClientApi, ClientOptions, ConnectError, Context,
                Elicited, HttpConfig, HttpEndpoint, HttpMode, HttpServer, InMemoryServer, Json,
                ListKind, PeerApi, Registry, RequestContext, ServerConfig, ServerHandle,
                SessionLink, State, StdioCommand, StdioServer, RequestOptions, ToolError,
                DEFAULT_GRACE, DEFAULT_SHUTDOWN_GRACE,
            };

            use super::{Add, Ask, Confirm, Count, Greet, Prefix, Sum};

            fn config() -> ServerConfig {
                // The builder methods of the configs, defaults kept; the session era, whose
                // `ping` to the client and logs the `context` tool uses.
                ServerConfig::new("contract", "1.0")
                    .session_era()
                    .instructions("A contract.")
                    .page_size(100)
                    .request_timeout(Duration::from_secs(60))
            }

            /// Every registry builder the contract lists, typed and raw.
            fn registry() -> Registry {
                let mut registry = Registry::new()
                    .with_state(Prefix("Hello"))
                    .tool("add", "Adds", |Add { a, b }| $($async_ move)? {
                        Json(Sum { total: a + b })
                    })
                    .tool("count", "Progress", |Count { n }, ctx: Context| $($async_ move)? {
                        for i in 1..=n {
                            ctx.progress(f64::from(i), Some(f64::from(n)), None) $($aw)* ?;
                        }
                        Ok::<_, ToolError>(format!("counted {n}"))
                    })
                    .tool("ask", "Samples", |Ask { prompt }, ctx: Context| $($async_ move)? {
                        let content = SamplingContent::text(prompt);
                        let message = SamplingMessage::new(Role::User, content);
                        let params = $rt::schema::CreateMessageParams {
                            messages: vec![message],
                            max_tokens: 10,
                            ..Default::default()
                        };
                        let result = ctx.create_message(params) $($aw)* ?;
                        let text: String =
                            result.content.as_slice().iter().filter_map(|c| c.as_text()).collect();
                        Ok::<_, ToolError>(text)
                    })
                    .tool("context", "Uses the request context", |ctx: Context| $($async_ move)? {
                        let _: &RequestContext = &ctx;
                        assert!(!ctx.is_cancelled());
                        let id = ctx.request_id().to_string();
                        ctx.log(LoggingLevel::Info, json!("a record")) $($aw)* ?;
                        ctx.log_as("contract", LoggingLevel::Info, json!("named")) $($aw)* ?;
                        ctx.ping_client() $($aw)* ?;
                        let roots = ctx.list_roots() $($aw)* ?;
                        let confirmed = match ctx.elicit_as::<Confirm>("Sure?") $($aw)* ? {
                            Elicited::Accept(Confirm { ok }) => ok,
                            _ => false,
                        };
                        let _ = <RequestContext as PeerApi>::elicit;
                        let _: &ServerHandle = ctx.server();
                        let client = ctx.client_info().map(|i| i.name.clone()).unwrap_or_default();
                        assert_eq!(client, "contract-client");
                        assert!(ctx.client_capabilities().is_some_and(|c| c.sampling.is_some()));
                        assert!(ctx.session().is_some());
                        let roots = roots.roots.len();
                        Ok::<_, ToolError>(format!("{} {roots} {confirmed}", !id.is_empty()))
                    })
                    .tool("flood", "Logs 0..n", |Count { n }, ctx: Context| $($async_ move)? {
                        for i in 0..n {
                            ctx.log(LoggingLevel::Info, json!(i)) $($aw)* ?;
                        }
                        Ok::<_, ToolError>("flooded")
                    })
                    .tool_with(
                        Tool::new("greet_tool", "Greets", json!({"type": "object"})),
                        |Greet { name }, prefix: State<Prefix>| $($async_ move)? {
                            format!("{}, {name}!", prefix.0)
                        },
                    )
                    .prompt("greet", "A greeting", |Greet { name }| $($async_ move)? {
                        format!("Hello, {name}!")
                    })
                    .prompt_with(Prompt::new("plain", "No arguments"), || $($async_ move)? {
                        PromptMessage::new(Role::User, ContentBlock::text("plain"))
                    });
                registry
                    .raw_tool(Tool::new("raw", "Raw", json!({"type": "object"})), |_, _| {
                        $($async_ move)? { Ok(CallToolResult::text("raw")) }
                    })
                    .raw_prompt(Prompt::new("raw_prompt", "Raw"), |_, _| $($async_ move)? {
                        Ok(GetPromptResult::default())
                    })
                    .resource(Resource::new("zest://readme", "readme"), |_, _| $($async_ move)? {
                        Ok(ReadResourceResult::text("zest://readme", Some("text/plain"), "read me"))
                    })
                    .resource_template(
                        ResourceTemplate::new("zest://items/{id}", "item"),
                        |_, _, vars: BTreeMap<String, String>| $($async_ move)? {
                            let id = vars.get("id").cloned().unwrap_or_default();
                            let uri = format!("zest://items/{id}");
                            Ok(ReadResourceResult::text(uri, None, format!("item {id}")))
                        },
                    )
                    .completion(|_, _| $($async_ move)? { Ok(CompleteResult::default()) });
                registry
            }

            /// Client handlers for every server request the tools make.
            fn options() -> ClientOptions {
                let handlers = $Handlers::default()
                    .on_sampling(|_| $($async_ move)? {
                        let result = json!({
                            "role": "assistant",
                            "content": {"type": "text", "text": "sampled"},
                            "model": "contract-model"
                        });
                        Ok(serde_json::from_value::<CreateMessageResult>(result).expect("valid"))
                    })
                    .on_elicitation(|_| $($async_ move)? {
                        let content = json!({"ok": true}).as_object().cloned().unwrap_or_default();
                        Ok(ElicitResult::accept(content))
                    })
                    .on_roots(|| $($async_ move)? { Ok(ListRootsResult::default()) })
                    .on_violation(|_| {});
                let options = ClientOptions::new("contract-client", "1.0")
                    .handlers(handlers)
                    .with_config(|c| c.init_timeout(Duration::from_secs(30)).max_in_flight(1024));
                let _: &ClientConfig = &options.config;
                options
            }

            fn text(result: &CallToolResult) -> &str {
                result.content.first().and_then(|c| c.as_text()).unwrap_or("")
            }

            /// `notifications()` means one thing on every runtime: one queue per session,
            /// shared by every receiver (each notification read once), holding the oldest
            /// `NOTIFICATION_QUEUE` unread ones; what comes while it is full is dropped.
            $($async_)? fn notifications_are_one_bounded_queue(client: &Client) {
                let drain = $drain;
                client.set_logging_level(LoggingLevel::Debug) $($aw)* .expect("setLevel");
                let n = $rt::NOTIFICATION_QUEUE + 10;
                let args = json!({"n": n});
                client.call_tool("flood", args) $($aw)* .expect("flood");
                let logged = |notes: Vec<$rt::core::client::ServerNotification>| -> Vec<u64> {
                    let data = notes.into_iter().map(|note| match note {
                        $rt::core::client::ServerNotification::LoggingMessage(m) => m.data,
                        other => panic!("only logs were sent, got {other:?}"),
                    });
                    data.map(|d| d.as_u64().expect("a number")).collect()
                };
                // A first reader takes one; a second one, made later, gets the rest: the
                // queue is shared and kept from the start, not per receiver.
                let first = drain(client, 1);
                let rest = drain(client, usize::MAX);
                let all = [logged(first), logged(rest)].concat();
                let kept: Vec<u64> = (0..$rt::NOTIFICATION_QUEUE as u64).collect();
                assert_eq!(all, kept, "the oldest {} kept, the newest dropped", kept.len());
                assert_eq!(drain(client, usize::MAX).len(), 0, "each read once");
            }

            pub(super) $($async_)? fn run() {
                // Names that need a process or this process's stdio: referenced only.
                let _ = $rt::serve_stdio;
                let _ = Client::pid;
                let _ = HttpServer::stopped;
                let _ = HttpServer::start;
                let _: fn() -> ServerConfig = config;
                let _ = router_config();
                let _ = (DEFAULT_SHUTDOWN_GRACE, std::mem::size_of::<SessionLink>());
                assert_eq!(DEFAULT_GRACE, StdioCommand::DEFAULT_GRACE);
                let _ = RequestOptions::default();
                let _ = CallError::Usage;

                // A program that does not exist: typed, no process left.
                let command = StdioCommand::new("/nonexistent/zest-contract")
                    .arg("--stdio")
                    .args(["-v", "-v"])
                    .env("ZEST_CONTRACT", "1")
                    .env_remove("ZEST_UNSET")
                    .current_dir("/")
                    .on_stderr(|_line: String| {})
                    .shutdown_grace(Duration::from_secs(1));
                let spawned = Client::spawn(command, options()) $($aw)*;
                assert!(matches!(spawned, Err(ConnectError::Spawn { .. })), "{spawned:?}");

                // A server whose cursor repeats: every runtime refuses it with one error.
                let command = StdioCommand::new("python3").arg("-c").arg(super::LOOPING_CURSOR);
                let looping = Client::spawn(command, options()) $($aw)* .expect("python3 serves");
                let refused = looping.list_all_tools() $($aw)*;
                let Err(CallError::Request(RequestError::InvalidResult(why))) = refused else {
                    panic!("expected an invalid result, got {refused:?}")
                };
                assert_eq!(why, r#"tools/list gave the cursor "again" a second time"#);
                looping.close() $($aw)* .expect("the server exits");

                // The child's pipes are widened to 256 KiB: a 1 MiB message crosses in four
                // wake-ups of each side, not sixteen (Linux; elsewhere the OS's default stays).
                let command = StdioCommand::new("python3").arg("-c").arg(super::PIPE_SIZES);
                let piped = Client::spawn(command, options()) $($aw)* .expect("python3 serves");
                if cfg!(target_os = "linux") {
                    let sizes = &piped.negotiated().server_info.name;
                    assert_eq!(sizes, "262144 262144");
                }
                piped.close() $($aw)* .expect("the server exits");

                // Streams that end at once: the client fails its handshake, the server returns.
                let over = Client::over($empty, $sink, options()) $($aw)*;
                let Err(ConnectError::Exited { reason, status: None }) = over else {
                    panic!("expected Exited, got {over:?}")
                };
                assert_eq!(reason, CloseReason::TransportEnded);
                let served = serve(config(), registry(), $empty, $sink) $($aw)*;
                assert_eq!(served, CloseReason::TransportEnded);
                let _ = StdioServer::stdio;
                let stdio: StdioServer = StdioServer::start(config(), registry(), $empty, $sink);
                let _: bool = stdio.is_stopped();
                let handle: ServerHandle = stdio.handle();
                assert_eq!(stdio.stopped() $($aw)*, CloseReason::TransportEnded);
                handle.log(LoggingLevel::Info, json!("after the end: nothing happens"));

                // In memory: every ClientApi call and RequestContext method.
                let (client, server): (Client, InMemoryServer) =
                    in_memory_with(config(), registry(), options()) $($aw)* .expect("a pair");
                assert_eq!(client.negotiated().server_info.name, "contract");
                assert_eq!(client.pid(), 0);
                assert_eq!(client.close_reason(), None);
                let _notifications = client.notifications();
                client.ping() $($aw)* .expect("ping");
                client.set_logging_level(LoggingLevel::Debug) $($aw)* .expect("setLevel");
                let tools = client.list_all_tools() $($aw)* .expect("tools");
                let mut tools: Vec<String> = tools.into_iter().map(|t| t.name).collect();
                tools.sort();
                assert_eq!(tools, ["add", "ask", "context", "count", "flood", "greet_tool", "raw"]);
                assert!(client.list_tools(None) $($aw)* .expect("a page").next_cursor.is_none());
                let sum = client.call_tool("add", json!({"a": 1, "b": 2})) $($aw)* .expect("add");
                assert_eq!(sum.structured_content, Some(json!({"total": 3.0})));
                let wrong = client.call_tool("add", json!({"a": "one"})) $($aw)* .expect("answered");
                assert!(wrong.is_error(), "arguments of the wrong type: {wrong:?}");
                let seen = Arc::new(Mutex::new(Vec::new()));
                let record = seen.clone();
                let counted = client
                    .call_tool_with_progress("count", json!({"n": 2}), move |p| {
                        record.lock().expect("not poisoned").push(p.progress)
                    })
                    $($aw)* .expect("count");
                assert_eq!(text(&counted), "counted 2");
                assert_eq!(*seen.lock().expect("not poisoned"), [1.0, 2.0]);
                let record = seen.clone();
                let per_call = CallOptions::new()
                    .timeout(Duration::from_secs(30))
                    .max_total(Duration::from_secs(60))
                    .on_progress(move |p| record.lock().expect("not poisoned").push(p.progress));
                let counted = client.call_tool_with("count", json!({"n": 3}), per_call)
                    $($aw)* .expect("count with options");
                assert_eq!(text(&counted), "counted 3");
                assert_eq!(*seen.lock().expect("not poisoned"), [1.0, 2.0, 1.0, 2.0, 3.0]);
                let asked = client.call_tool("ask", json!({"prompt": "hi"})) $($aw)* .expect("ask");
                assert_eq!(text(&asked), "sampled");
                let context = client.call_tool("context", json!({})) $($aw)* .expect("context");
                assert_eq!(text(&context), "true 0 true", "{context:?}");
                let greeted =
                    client.call_tool("greet_tool", json!({"name": "Ada"})) $($aw)* .expect("greet");
                assert_eq!(text(&greeted), "Hello, Ada!");
                assert_eq!(text(&client.call_tool("raw", json!({})) $($aw)* .expect("raw")), "raw");
                let prompts = client.list_all_prompts() $($aw)* .expect("prompts");
                assert_eq!(prompts.len(), 3);
                let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
                let prompt = client.get_prompt("greet", args) $($aw)* .expect("prompt");
                assert_eq!(prompt.messages.len(), 1);
                let resources = client.list_all_resources() $($aw)* .expect("resources");
                assert_eq!(resources.len(), 1);
                let templates = client.list_all_resource_templates() $($aw)* .expect("templates");
                assert_eq!(templates.len(), 1);
                let item = client.read_resource("zest://items/7") $($aw)* .expect("item");
                assert_eq!(item.contents.len(), 1);
                assert!(client.close() $($aw)* .expect("close").success());
                assert_eq!(client.close_reason(), Some(CloseReason::Local));
                assert_eq!(server.stopped() $($aw)*, CloseReason::TransportEnded);
                // After close: calls are refused as usage, and closing again says the same.
                let late = client.call_tool("add", json!({"a": 1, "b": 2})) $($aw)*;
                assert!(matches!(late, Err(CallError::Usage(_))), "{late:?}");
                assert!(client.close() $($aw)* .expect("closed again").success());
                let (client, server) = in_memory(config(), registry()) $($aw)* .expect("pair");
                let _: ServerHandle = server.handle();
                notifications_are_one_bounded_queue(&client) $($aw)*;
                // The session lives while any clone of the client does.
                let clone = client.clone();
                drop(client);
                assert!(!server.is_stopped(), "a clone still holds the session");
                drop(clone);
                assert_eq!(server.stopped() $($aw)*, CloseReason::TransportEnded);

                // Over HTTP on loopback, the same client API.
                let http: HttpServer = serve_http("127.0.0.1:0", config(), registry()) $($aw)*
                    .expect("bind 127.0.0.1:0");
                assert_eq!(http.url(), format!("http://{}/mcp", http.local_addr()));
                let client = Client::connect(&http.url(), options()) $($aw)* .expect("connect");
                assert_eq!(client.pid(), 0);
                assert_eq!(http.session_count(), 1);
                http.change_registry(&[ListKind::Tools], |registry| {
                    let late = Tool::new("late", "Late", json!({"type": "object"}));
                    registry.raw_tool(late, |_, _| $($async_ move)? {
                        Ok(CallToolResult::text("late"))
                    });
                });
                let late = client.call_tool("late", json!({})) $($aw)* .expect("late");
                assert_eq!(text(&late), "late");
                let handle: ServerHandle = http.handle();
                handle.change_registry(&[ListKind::Tools], |registry| {
                    registry.remove_tool("late");
                });
                handle.add_tool("typed_late", "Typed", |Add { a, b }| $($async_ move)? {
                    Json(Sum { total: a + b })
                });
                handle.remove_tool("typed_late");
                // Prompts and resources added and removed at run time: over HTTP the change
                // is made before the call returns, so the next list sees it.
                handle.add_prompt("late_prompt", "Late", |Greet { name }| $($async_ move)? {
                    format!("Late, {name}!")
                });
                let late_uri = "zest://late";
                handle.add_resource(Resource::new(late_uri, "late"), move |_, _| $($async_ move)? {
                    Ok(ReadResourceResult::text(late_uri, None, "late resource"))
                });
                let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
                let late = client.get_prompt("late_prompt", args) $($aw)* .expect("late prompt");
                assert_eq!(late.messages.len(), 1);
                let read = client.read_resource(late_uri) $($aw)* .expect("late resource");
                assert_eq!(read.contents.len(), 1);
                handle.remove_prompt("late_prompt");
                handle.remove_resource(late_uri);
                let prompts = client.list_all_prompts() $($aw)* .expect("prompts");
                assert!(prompts.iter().all(|p| p.name != "late_prompt"), "removed: {prompts:?}");
                let resources = client.list_all_resources() $($aw)* .expect("resources");
                assert!(resources.iter().all(|r| r.uri != late_uri), "removed: {resources:?}");
                handle.resource_updated("zest://readme");
                handle.log(LoggingLevel::Info, json!("to every session"));
                handle.log_as("contract", LoggingLevel::Info, json!("named"));
                assert!(client.close() $($aw)* .expect("close").success());
                http.close_sessions();
                http.shutdown() $($aw)*;
                let endpoint = HttpEndpoint::new("http://127.0.0.1:9/mcp")
                    .header("x-contract", "1")
                    .bearer("token")
                    .mode(HttpMode::Auto)
                    .connect_timeout(Duration::from_secs(10))
                    .read_timeout(Duration::from_secs(10))
                    .without_webpki_roots();
                let _ = (endpoint.open_get_stream, endpoint.max_idle_per_host);
                let _ = endpoint.idle_timeout;
                let legacy = HttpEndpoint::new("http://127.0.0.1:9/sse").legacy_sse();
                let _ = legacy.root_certificate(Vec::new());
                let _ = Client::connect_to;
                let mut http_config = HttpConfig::new();
                http_config.router = http_config.router.json_response(false).max_sessions(100);
                let _ = (&http_config.router, &http_config.http1, http_config.shutdown_grace);
                let second = serve_http_with("127.0.0.1:0", config(), http_config, registry())
                    $($aw)* .expect("bind 127.0.0.1:0");
                second.shutdown() $($aw)*;
            }
        }
    };
}

runtime_contract!(
    tokio_contract, zest_tokio, AsyncClientHandlers, [async], [.await],
    empty = tokio::io::empty(), sink = tokio::io::sink(),
    drain = |client: &Client, most: usize| {
        let rx = client.notifications();
        std::iter::from_fn(|| rx.try_recv().ok()).take(most).collect::<Vec<_>>()
    },
);
runtime_contract!(
    smol_contract, zest_smol, AsyncClientHandlers, [async], [.await],
    empty = smol::io::empty(), sink = smol::io::sink(),
    drain = |client: &Client, most: usize| {
        let rx = client.notifications();
        std::iter::from_fn(|| rx.try_recv().ok()).take(most).collect::<Vec<_>>()
    },
);
runtime_contract!(
    blocking_contract,
    zest_blocking,
    SyncClientHandlers,
    [],
    [],
    empty = std::io::empty(),
    sink = std::io::sink(),
    drain = |client: &Client, most: usize| {
        let rx = client.notifications();
        std::iter::from_fn(|| rx.try_recv()).take(most).collect::<Vec<_>>()
    },
);

/// Runs `f` on a thread of its own, failing if it takes longer than [`HANG`].
fn within(f: impl FnOnce() + Send + 'static) {
    let (done, finished) = std::sync::mpsc::channel();
    let runner = std::thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    match finished.recv_timeout(HANG) {
        Ok(()) => runner.join().expect("joined"),
        // The body panicked: show its panic.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(runner.join().expect_err("it panicked"))
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("still running after {HANG:?}"),
    }
}

#[test]
fn the_contract_holds_on_tokio() {
    within(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        rt.block_on(tokio_contract::run());
    });
}

#[test]
fn the_contract_holds_on_smol() {
    within(|| smol::block_on(smol_contract::run()));
}

#[test]
fn the_contract_holds_on_blocking() {
    within(blocking_contract::run);
}
