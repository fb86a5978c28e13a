//! `serve` over a pipe on every runtime, with the test playing the client in raw JSON lines:
//! progress and logs leave in the order the handler sent them and before its answer, a
//! handler asks the client, a cancelled call is stopped and never answered, a panicking
//! handler is an internal error, a context outliving its session is told so, typed handlers
//! take arguments, context and state in any order, EOF ends the session after everything
//! written was flushed, a failing reader ends it, and a client that never reads is let go at
//! the final drain's deadline. One body, instantiated per runtime by a macro that adds
//! `async` and `.await` for the async ones (see runtime_contract.rs).

#[path = "support/runtime_io.rs"]
mod runtime_io;

/// One module per runtime: `$rt` the crate, `$io` its module in `runtime_io`,
/// `[$($async_)?]` / `[$($aw)*]` `async` / `.await` or nothing.
macro_rules! stdio_server {
    ($name:ident, $rt:ident, $io:ident, [$($async_:tt)?], [$($aw:tt)*] $(,)?) => {
        mod $name {
            use std::sync::atomic::{AtomicBool, Ordering};
            use std::sync::{Arc, Mutex};
            use std::time::{Duration, Instant};

            use serde_json::{json, Value};
            use $rt::core::error::CloseReason;
            use $rt::schema::{
                CallToolResult, CreateMessageParams, LoggingLevel, Role, SamplingContent,
                SamplingMessage, Tool,
            };
            use $rt::{Context, PeerApi, Registry, RequestContext, ServerConfig, State};
            use $rt::ToolError;

            use super::runtime_io::$io as io;
            use super::runtime_io::LIMIT;
            use io::{LinePeer, Served};

            fn tool(name: &str) -> Tool {
                Tool::new(name, name, json!({"type": "object"}))
            }

            fn config() -> ServerConfig {
                ServerConfig::new("stdio-test", "1.0")
            }

            fn initialize() -> Value {
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {"sampling": {}},
                    "clientInfo": {"name": "raw", "version": "1"}}})
            }

            fn call(id: u64, tool: &str) -> Value {
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": tool, "arguments": {}}})
            }

            /// `serve` on a pipe, and the handshake done from the other end.
            $($async_)? fn start(registry: Registry) -> (LinePeer, Served) {
                let (served, reader, writer) = io::serve_piped(config(), registry);
                let mut peer = LinePeer::new(reader, writer);
                peer.send(initialize()) $($aw)*;
                let init = peer.recv() $($aw)*;
                assert_eq!(init["result"]["serverInfo"]["name"], "stdio-test", "{init}");
                peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                    $($aw)*;
                (peer, served)
            }

            /// Ends the server's input: the session ends, and everything written before
            /// was read (nothing is left to read).
            $($async_)? fn end(peer: LinePeer, served: Served) {
                assert_eq!(peer.end() $($aw)*, "", "nothing after the last message read");
                assert_eq!(served.stopped() $($aw)*, CloseReason::TransportEnded);
            }

            /// Set when dropped: shows that a handler stopped (an async handler's future
            /// dropped, a blocking handler returned).
            struct DropFlag(Arc<AtomicBool>);

            impl Drop for DropFlag {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::SeqCst);
                }
            }

            /// What the `hold` tool shares with the test: its context, and whether it stopped.
            #[derive(Clone, Default)]
            struct Held {
                ctx: Arc<Mutex<Option<RequestContext>>>,
                stopped: Arc<AtomicBool>,
            }

            /// `hold` keeps its context where the test sees it and runs until it is stopped
            /// from outside; `ok` answers.
            fn holding(held: Held) -> Registry {
                let mut registry = Registry::default();
                registry.raw_tool(tool("hold"), move |ctx, _| {
                    let held = held.clone();
                    let ctx = RequestContext::clone(&ctx);
                    $($async_ move)? {
                        let _stopped = DropFlag(held.stopped.clone());
                        *held.ctx.lock().unwrap() = Some(ctx.clone());
                        io::hold(&ctx) $($aw)*;
                        Ok(CallToolResult::text("never sent"))
                    }
                });
                registry.raw_tool(tool("ok"), |_, _| $($async_ move)? {
                    Ok(CallToolResult::text("ok"))
                });
                registry
            }

            /// The context `hold` keeps, once it runs.
            $($async_)? fn held_context(held: &Held) -> RequestContext {
                let deadline = Instant::now() + LIMIT;
                loop {
                    if let Some(ctx) = held.ctx.lock().unwrap().clone() {
                        return ctx;
                    }
                    assert!(Instant::now() < deadline, "the handler runs");
                    io::nap() $($aw)*;
                }
            }

            #[test]
            fn progress_and_logs_leave_in_the_order_sent_and_before_the_answer() {
                io::run(|| $($async_ move)? {
                    let mut registry = Registry::default();
                    registry.raw_tool(tool("report"), |ctx, _| $($async_ move)? {
                        ctx.progress(1.0, Some(2.0), None) $($aw)* .expect("progress 1");
                        ctx.log(LoggingLevel::Info, json!("hello")) $($aw)* .expect("log");
                        ctx.progress(2.0, Some(2.0), Some("done".into())) $($aw)*
                            .expect("progress 2");
                        let again = ctx.progress(2.0, None, None) $($aw)*;
                        assert!(again.is_err(), "progress must increase: {again:?}");
                        Ok(CallToolResult::text(format!("reported {}", ctx.request_id())))
                    });
                    let (mut peer, served) = start(registry) $($aw)*;
                    peer.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                        "params": {"name": "report", "_meta": {"progressToken": "tok"}}}))
                        $($aw)*;
                    let first = peer.recv() $($aw)*;
                    assert_eq!(first["method"], "notifications/progress");
                    assert_eq!(
                        first["params"],
                        json!({"progressToken": "tok", "progress": 1, "total": 2})
                    );
                    let log = peer.recv() $($aw)*;
                    assert_eq!(
                        (log["method"].as_str(), &log["params"]["data"]),
                        (Some("notifications/message"), &json!("hello"))
                    );
                    let second = peer.recv() $($aw)*;
                    assert_eq!(
                        (&second["params"]["progress"], &second["params"]["message"]),
                        (&json!(2), &json!("done"))
                    );
                    let answer = peer.recv() $($aw)*;
                    assert_eq!(answer["id"], 5);
                    assert_eq!(answer["result"]["content"][0]["text"], "reported 5");
                    end(peer, served) $($aw)*;
                })
            }

            #[test]
            fn a_handler_asks_the_client_and_reads_its_answer() {
                io::run(|| $($async_ move)? {
                    let mut registry = Registry::default();
                    registry.raw_tool(tool("ask"), |ctx, _| $($async_ move)? {
                        let asked = SamplingMessage::new(Role::User, SamplingContent::text("2+2?"));
                        let params = CreateMessageParams {
                            messages: vec![asked],
                            max_tokens: 10,
                            ..Default::default()
                        };
                        let answer = ctx.create_message(params) $($aw)* .expect("the client answers");
                        let text = answer.content.as_slice()[0].as_text().unwrap_or_default();
                        Ok(CallToolResult::text(format!("model said {text}")))
                    });
                    let (mut peer, served) = start(registry) $($aw)*;
                    peer.send(call(2, "ask")) $($aw)*;
                    let request = peer.recv() $($aw)*;
                    assert_eq!(request["method"], "sampling/createMessage", "{request}");
                    let result = json!({
                        "role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"
                    });
                    peer.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
                        $($aw)*;
                    let answer = peer.recv() $($aw)*;
                    assert_eq!(answer["id"], 2);
                    assert_eq!(answer["result"]["content"][0]["text"], "model said 4");
                    end(peer, served) $($aw)*;
                })
            }

            #[test]
            fn a_cancelled_call_is_stopped_and_never_answered_and_the_session_goes_on() {
                io::run(|| $($async_ move)? {
                    let held = Held::default();
                    let (mut peer, served) = start(holding(held.clone())) $($aw)*;
                    peer.send(call(3, "hold")) $($aw)*;
                    let ctx = held_context(&held) $($aw)*;
                    assert_eq!(ctx.request_id().to_string(), "3");
                    assert!(!ctx.is_cancelled() && !held.stopped.load(Ordering::SeqCst));
                    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 3, "reason": "changed my mind"}}))
                        $($aw)*;
                    // What comes after the cancellation is answered first: nothing for 3.
                    peer.send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"})) $($aw)*;
                    assert_eq!(peer.recv() $($aw)*, json!({"jsonrpc": "2.0", "id": 4, "result": {}}));
                    // A clone of the context, outside the handler, saw it at once.
                    assert!(ctx.is_cancelled(), "the context saw the cancellation");
                    let deadline = Instant::now() + LIMIT;
                    while !held.stopped.load(Ordering::SeqCst) {
                        assert!(Instant::now() < deadline, "the handler is stopped");
                        io::nap() $($aw)*;
                    }
                    peer.send(call(5, "ok")) $($aw)*;
                    let answer = peer.recv() $($aw)*;
                    assert_eq!(answer["id"], 5, "no answer for 3, and the session goes on");
                    assert_eq!(answer["result"]["content"][0]["text"], "ok");
                    // The session is open: the cancelled call's context still reaches it.
                    let late = ctx.log(LoggingLevel::Info, json!("late")) $($aw)*;
                    assert!(late.is_ok(), "the session is still open: {late:?}");
                    assert_eq!(peer.recv() $($aw)* ["params"]["data"], "late");
                    // Nothing more, ever, for 3.
                    end(peer, served) $($aw)*;
                })
            }

            #[test]
            fn a_context_kept_past_the_end_of_its_session_is_told_so() {
                io::run(|| $($async_ move)? {
                    let held = Held::default();
                    let (mut peer, served) = start(holding(held.clone())) $($aw)*;
                    peer.send(call(1, "hold")) $($aw)*;
                    let ctx = held_context(&held) $($aw)*;
                    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1}}))
                        $($aw)*;
                    end(peer, served) $($aw)*;
                    let late = ctx.log(LoggingLevel::Info, json!("after the end")) $($aw)*;
                    assert!(late.is_err(), "a context outliving its session reports it: {late:?}");
                })
            }

            #[test]
            fn a_panicking_handler_gets_an_internal_error_naming_the_panic_and_the_session_goes_on() {
                io::run(|| $($async_ move)? {
                    let mut registry = Registry::default();
                    registry.raw_tool(tool("boom"), |_, _| $($async_ move)? {
                        if true {
                            panic!("boom at the handler");
                        }
                        Ok(CallToolResult::text("unreachable"))
                    });
                    registry.raw_tool(tool("ok"), |_, _| $($async_ move)? {
                        Ok(CallToolResult::text("ok"))
                    });
                    let (mut peer, served) = start(registry) $($aw)*;
                    peer.send(call(1, "boom")) $($aw)*;
                    let boom = peer.recv() $($aw)*;
                    assert_eq!(boom["id"], 1);
                    assert_eq!(boom["error"]["code"], -32603, "{boom}");
                    let message = boom["error"]["message"].as_str().unwrap_or_default();
                    assert!(message.contains("boom at the handler"), "{boom}");
                    peer.send(call(2, "ok")) $($aw)*;
                    let answer = peer.recv() $($aw)*;
                    assert_eq!(answer["id"], 2);
                    assert_eq!(answer["result"]["content"][0]["text"], "ok");
                    end(peer, served) $($aw)*;
                })
            }

            #[derive(serde::Deserialize, schemars::JsonSchema)]
            struct Step {
                by: u64,
            }

            /// A counter shared by every call of the typed tool below.
            struct Total(Mutex<u64>);

            #[test]
            fn typed_handlers_take_arguments_context_and_state_in_any_order() {
                io::run(|| $($async_ move)? {
                    let registry = Registry::new().with_state(Total(Mutex::new(0))).tool(
                        "step",
                        "Adds to a shared total",
                        |total: State<Total>, ctx: Context, Step { by }: Step| $($async_ move)? {
                            ctx.progress(1.0, None, None) $($aw)* ?;
                            let mut total = total.0.lock().unwrap();
                            *total += by;
                            Ok::<_, ToolError>(total.to_string())
                        },
                    );
                    let (mut peer, served) = start(registry) $($aw)*;
                    let step = |id: u64, args: Value| {
                        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                            "name": "step", "arguments": args, "_meta": {"progressToken": id}}})
                    };
                    for (id, by, total) in [(1, 2, "2"), (2, 3, "5")] {
                        peer.send(step(id, json!({"by": by}))) $($aw)*;
                        assert_eq!(peer.recv() $($aw)* ["method"], "notifications/progress");
                        let answer = peer.recv() $($aw)*;
                        assert_eq!(answer["result"]["content"][0]["text"], total, "{answer}");
                    }
                    peer.send(step(3, json!({"by": "four"}))) $($aw)*;
                    let refused = peer.recv() $($aw)*;
                    assert_eq!(refused["result"]["isError"], true, "{refused}");
                    let why = refused["result"]["content"][0]["text"].as_str().unwrap_or_default();
                    assert!(why.contains("/by"), "{refused}");
                    end(peer, served) $($aw)*;
                })
            }

            #[test]
            fn a_failing_reader_ends_the_session() {
                io::run(|| $($async_ move)? {
                    let served = io::serve_on(config(), Registry::default(), io::Broken, io::sink());
                    let reason = served.stopped() $($aw)*;
                    assert!(
                        matches!(
                            &reason,
                            CloseReason::TransportFailed(why) if why.to_string().contains("wire cut")
                        ),
                        "{reason:?}"
                    );
                })
            }

            #[test]
            fn serve_returns_at_the_drain_deadline_when_the_client_never_reads() {
                io::run(|| $($async_ move)? {
                    let mut input = serde_json::to_vec(&initialize()).unwrap();
                    input.push(b'\n');
                    let started = Instant::now();
                    // The answer to `initialize` can never be written; EOF ends the session,
                    // and the final drain gives up after its 5 s deadline instead of waiting
                    // for ever.
                    let reader = io::bytes_in(input);
                    let served = io::serve_on(config(), Registry::default(), reader, io::NeverReads);
                    assert_eq!(served.stopped() $($aw)*, CloseReason::TransportEnded);
                    let took = started.elapsed();
                    let expected = Duration::from_secs(4)..Duration::from_secs(15);
                    assert!(expected.contains(&took), "{took:?}");
                })
            }
        }
    };
}

stdio_server!(tokio, zest_tokio, on_tokio, [async], [.await]);
stdio_server!(smol, zest_smol, on_smol, [async], [.await]);
stdio_server!(blocking, zest_blocking, on_blocking, [], []);
