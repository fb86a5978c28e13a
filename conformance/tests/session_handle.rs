//! The server handle, on every runtime: tools added and removed at run time (from outside and
//! from a handler) are listed after `list_changed` on every open session, resource updates
//! reach only the subscribed session, logs outside a request carry their logger name,
//! handlers see the client's info and capabilities, and `listChanged`/`subscribe` are
//! declared only when the app holds a handle. One body, instantiated per runtime by a macro
//! that adds `async` and `.await` for the async ones (see runtime_contract.rs).

#[path = "support/runtime_io.rs"]
mod runtime_io;

/// One module per runtime: `$rt` the crate, `$io` its module in `runtime_io`,
/// `[$($async_)?]` / `[$($aw)*]` `async` / `.await` or nothing.
macro_rules! session_handle {
    ($name:ident, $rt:ident, $io:ident, [$($async_:tt)?], [$($aw:tt)*] $(,)?) => {
        mod $name {
            use std::sync::Arc;
            use std::time::Instant;

            use serde_json::json;
            use $rt::core::client::ServerNotification;
            use $rt::core::error::CloseReason;
            use $rt::schema::{LoggingLevel, ReadResourceParams, ReadResourceResult, Resource};
            use $rt::{
                in_memory, serve_http, Client, ClientApi, ClientOptions, Context, HttpServer,
                Notifications, Registry, ServerConfig, ServerHandle,
            };

            use super::runtime_io::$io as io;
            use super::runtime_io::LIMIT;

            #[derive(serde::Deserialize, schemars::JsonSchema)]
            struct Text {
                text: String,
            }

            #[derive(serde::Deserialize, schemars::JsonSchema)]
            struct Nothing {}

            fn registry() -> Registry {
                let mut registry = Registry::new()
                    .tool("echo", "Echoes", |Text { text }| $($async_ move)? { text })
                    .tool(
                        "install",
                        "Adds the tool `late`",
                        |Nothing {}, ctx: Context| $($async_ move)? {
                            let late = |Text { text }| $($async_ move)? { format!("late {text}") };
                            ctx.server().add_tool("late", "Added by a handler", late);
                            "installed"
                        },
                    )
                    .tool(
                        "whoami",
                        "The client's name and whether it samples",
                        |Nothing {}, ctx: Context| $($async_ move)? {
                            let name = ctx.client_info().map(|i| i.name.clone()).unwrap_or_default();
                            let samples =
                                ctx.client_capabilities().is_some_and(|c| c.sampling.is_some());
                            format!("{name} samples={samples}")
                        },
                    );
                let notes = Resource::new("file:///notes", "notes");
                registry.resource(notes, |_, p: ReadResourceParams| $($async_ move)? {
                    Ok(ReadResourceResult::text(p.uri, Some("text/plain"), "notes"))
                });
                registry
            }

            /// The session era: the handle's logs outside a request and its list changes on
            /// open sessions are that era's (a 2026-07-28 client hears list changes on its
            /// listen only).
            fn config() -> ServerConfig {
                ServerConfig::new("handle-test", "1.0").session_era()
            }

            /// The session era and 2026-07-28 (the default).
            fn both_eras() -> [ServerConfig; 2] {
                [config(), ServerConfig::new("handle-test", "1.0")]
            }

            /// The next notification `pick` accepts, skipping others; fails after [`LIMIT`].
            $($async_)? fn next<T>(
                rx: &Notifications,
                mut pick: impl FnMut(ServerNotification) -> Option<T>,
            ) -> T {
                let deadline = Instant::now() + LIMIT;
                loop {
                    let left = deadline.saturating_duration_since(Instant::now());
                    let n = io::next_within(rx, left) $($aw)*;
                    if let Some(found) = pick(n.expect("a notification within the time limit")) {
                        return found;
                    }
                }
            }

            $($async_)? fn tools_changed(rx: &Notifications) {
                next(rx, |n| (n == ServerNotification::ToolListChanged).then_some(())) $($aw)*;
            }

            /// The very next notification (what was sent before it would come first).
            $($async_)? fn very_next(rx: &Notifications) -> ServerNotification {
                next(rx, Some) $($aw)*
            }

            $($async_)? fn tool_names(client: &Client) -> Vec<String> {
                let listed = client.list_tools(None) $($aw)* .unwrap();
                listed.tools.into_iter().map(|t| t.name).collect()
            }

            $($async_)? fn text_of(client: &Client, tool: &str, args: serde_json::Value) -> String {
                let result = client.call_tool(tool, args) $($aw)* .unwrap();
                result.content[0].as_text().unwrap().to_owned()
            }

            /// A log record both sessions get: whatever a session was sent before comes first.
            fn marker(handle: &ServerHandle) {
                handle.log_as("marker", LoggingLevel::Info, json!("marker"));
            }

            fn is_marker(n: &ServerNotification) -> bool {
                matches!(
                    n,
                    ServerNotification::LoggingMessage(m) if m.logger.as_deref() == Some("marker")
                )
            }

            $($async_)? fn http_pair(server: &HttpServer) -> (ServerHandle, Client, Client) {
                let url = server.url();
                let a = Client::connect(&url, ClientOptions::new("client-a", "1")) $($aw)*;
                let b = Client::connect(&url, ClientOptions::new("client-b", "1")) $($aw)*;
                (server.handle(), a.unwrap(), b.unwrap())
            }

            #[test]
            fn stdio_tool_added_and_removed_from_outside_is_announced_then_listed() {
                // In both eras: in 2026-07-28 the change, made the moment the client is
                // ready, travels on the client's listen, acknowledged before it is ready.
                io::run(|| $($async_ move)? {
                    for config in both_eras() {
                        let (client, server) = in_memory(config, registry()) $($aw)* .unwrap();
                        let rx = client.notifications();
                        let handle = server.handle();
                        handle.add_tool("late", "Added from outside", |Text { text }| {
                            $($async_ move)? { text }
                        });
                        tools_changed(&rx) $($aw)*;
                        assert!(tool_names(&client) $($aw)* .contains(&"late".to_owned()));
                        assert_eq!(text_of(&client, "late", json!({"text": "hi"})) $($aw)*, "hi");
                        handle.remove_tool("late");
                        tools_changed(&rx) $($aw)*;
                        assert!(!tool_names(&client) $($aw)* .contains(&"late".to_owned()));
                        client.close() $($aw)* .unwrap();
                        assert_eq!(server.stopped() $($aw)*, CloseReason::TransportEnded);
                    }
                })
            }

            #[test]
            fn stdio_tool_added_from_a_handler_is_announced_then_listed() {
                io::run(|| $($async_ move)? {
                    let (client, server) = in_memory(config(), registry()) $($aw)* .unwrap();
                    let rx = client.notifications();
                    assert_eq!(text_of(&client, "install", json!({})) $($aw)*, "installed");
                    tools_changed(&rx) $($aw)*;
                    assert_eq!(text_of(&client, "late", json!({"text": "x"})) $($aw)*, "late x");
                    client.close() $($aw)* .unwrap();
                    assert_eq!(server.stopped() $($aw)*, CloseReason::TransportEnded);
                })
            }

            #[test]
            fn stdio_resource_updates_need_a_subscription_and_logs_name_their_logger() {
                io::run(|| $($async_ move)? {
                    let (client, server) = in_memory(config(), registry()) $($aw)* .unwrap();
                    let rx = client.notifications();
                    let handle = server.handle();
                    handle.resource_updated("file:///notes");
                    marker(&handle);
                    let n = very_next(&rx) $($aw)*;
                    assert!(is_marker(&n), "not subscribed: no update before the marker: {n:?}");
                    client.subscribe("file:///notes") $($aw)* .unwrap();
                    handle.resource_updated("file:///other");
                    handle.resource_updated("file:///notes");
                    let n = very_next(&rx) $($aw)*;
                    assert!(
                        matches!(&n, ServerNotification::ResourceUpdated(u) if u.uri == "file:///notes"),
                        "{n:?}"
                    );
                    handle.log_as("db", LoggingLevel::Warning, json!({"slow": true}));
                    let n = very_next(&rx) $($aw)*;
                    let ServerNotification::LoggingMessage(m) = n else { panic!("{n:?}") };
                    assert_eq!(
                        (m.logger.as_deref(), m.level, m.data),
                        (Some("db"), LoggingLevel::Warning, json!({"slow": true}))
                    );
                    client.close() $($aw)* .unwrap();
                    assert_eq!(server.stopped() $($aw)*, CloseReason::TransportEnded);
                })
            }

            #[test]
            fn a_handler_sees_the_clients_info_and_capabilities() {
                io::run(|| $($async_ move)? {
                    let (client, server) = in_memory(config(), registry()) $($aw)* .unwrap();
                    let whoami = text_of(&client, "whoami", json!({})) $($aw)*;
                    assert_eq!(whoami, "zest-in-memory samples=false");
                    client.close() $($aw)* .unwrap();
                    assert_eq!(server.stopped() $($aw)*, CloseReason::TransportEnded);
                })
            }

            #[test]
            fn capabilities_declare_changes_only_with_a_handle() {
                io::run(|| $($async_ move)? {
                    let (client, server) = in_memory(config(), registry()) $($aw)* .unwrap();
                    let caps = &client.negotiated().capabilities;
                    assert_eq!(caps.tools.as_ref().and_then(|t| t.list_changed), Some(true));
                    assert_eq!(caps.resources.as_ref().and_then(|r| r.subscribe), Some(true));
                    let prompts = caps.prompts.as_ref().and_then(|p| p.list_changed);
                    assert_eq!(prompts, Some(true), "declared empty");
                    client.close() $($aw)* .unwrap();
                    assert_eq!(server.stopped() $($aw)*, CloseReason::TransportEnded);

                    // Plain `serve`: nobody outside can change anything, so nothing is
                    // promised, in either era (in 2026-07-28 the client itself refuses a
                    // subscription nothing would answer).
                    for config in both_eras() {
                        let (served, reader, writer) = io::serve_piped(config, registry());
                        let options = ClientOptions::new("plain", "1");
                        let client = Client::over(reader, writer, options) $($aw)* .unwrap();
                        let caps = &client.negotiated().capabilities;
                        assert_eq!(caps.tools.as_ref().map(|t| t.list_changed), Some(None));
                        let resources = caps.resources.as_ref().map(|r| (r.subscribe, r.list_changed));
                        assert_eq!(resources, Some((None, None)));
                        assert!(caps.prompts.is_none());
                        let subscribed = client.subscribe("file:///notes") $($aw)*;
                        assert!(subscribed.is_err(), "subscribe is not offered");
                        client.close() $($aw)* .unwrap();
                        assert_eq!(served.stopped() $($aw)*, CloseReason::TransportEnded);
                    }
                })
            }

            #[test]
            fn http_tool_added_from_outside_reaches_every_session() {
                io::run(|| $($async_ move)? {
                    let server = serve_http("127.0.0.1:0", config(), registry()) $($aw)* .unwrap();
                    let (handle, a, b) = http_pair(&server) $($aw)*;
                    let (rx_a, rx_b) = (a.notifications(), b.notifications());
                    let caps = &a.negotiated().capabilities;
                    assert_eq!(caps.tools.as_ref().and_then(|t| t.list_changed), Some(true));
                    handle.add_tool("late", "Added from outside", |Text { text }| {
                        $($async_ move)? { text }
                    });
                    for (client, rx) in [(&a, &rx_a), (&b, &rx_b)] {
                        tools_changed(rx) $($aw)*;
                        assert!(tool_names(client) $($aw)* .contains(&"late".to_owned()));
                    }
                    handle.remove_tool("late");
                    for (client, rx) in [(&a, &rx_a), (&b, &rx_b)] {
                        tools_changed(rx) $($aw)*;
                        assert!(!tool_names(client) $($aw)* .contains(&"late".to_owned()));
                    }
                    a.close() $($aw)* .unwrap();
                    b.close() $($aw)* .unwrap();
                    server.shutdown() $($aw)*;
                })
            }

            #[test]
            fn http_tool_added_from_a_handler_reaches_every_session() {
                io::run(|| $($async_ move)? {
                    let server = serve_http("127.0.0.1:0", config(), registry()) $($aw)* .unwrap();
                    let (_, a, b) = http_pair(&server) $($aw)*;
                    let (rx_a, rx_b) = (a.notifications(), b.notifications());
                    assert_eq!(text_of(&a, "install", json!({})) $($aw)*, "installed");
                    tools_changed(&rx_a) $($aw)*;
                    tools_changed(&rx_b) $($aw)*;
                    assert_eq!(text_of(&b, "late", json!({"text": "b"})) $($aw)*, "late b");
                    let whoami = text_of(&b, "whoami", json!({})) $($aw)*;
                    assert_eq!(whoami, "client-b samples=false");
                    a.close() $($aw)* .unwrap();
                    b.close() $($aw)* .unwrap();
                    server.shutdown() $($aw)*;
                })
            }

            #[test]
            fn http_resource_updates_reach_only_the_subscribed_session_and_logs_reach_all() {
                io::run(|| $($async_ move)? {
                    let server = serve_http("127.0.0.1:0", config(), registry()) $($aw)* .unwrap();
                    let (handle, a, b) = http_pair(&server) $($aw)*;
                    let (rx_a, rx_b) = (a.notifications(), b.notifications());
                    a.subscribe("file:///notes") $($aw)* .unwrap();
                    handle.resource_updated("file:///notes");
                    marker(&handle);
                    let n = very_next(&rx_a) $($aw)*;
                    assert!(
                        matches!(&n, ServerNotification::ResourceUpdated(u) if u.uri == "file:///notes"),
                        "{n:?}"
                    );
                    assert!(is_marker(&very_next(&rx_a) $($aw)*));
                    let n = very_next(&rx_b) $($aw)*;
                    assert!(is_marker(&n), "b did not subscribe: the marker comes first: {n:?}");
                    handle.log_as("db", LoggingLevel::Error, json!("down"));
                    for rx in [&rx_a, &rx_b] {
                        let n = very_next(rx) $($aw)*;
                        let ServerNotification::LoggingMessage(m) = n else { panic!("{n:?}") };
                        assert_eq!((m.logger.as_deref(), m.data), (Some("db"), json!("down")));
                    }
                    a.close() $($aw)* .unwrap();
                    b.close() $($aw)* .unwrap();
                    server.shutdown() $($aw)*;
                })
            }

            #[test]
            fn a_handle_kept_after_its_http_server_stopped_does_not_keep_the_server_alive() {
                io::run(|| $($async_ move)? {
                    // The registry's one tool holds `alive`: the router holding the registry
                    // is gone once only the test's own count is left.
                    let alive = Arc::new(());
                    let held = alive.clone();
                    let registry = Registry::new().tool("echo", "Echoes", move |Text { text }| {
                        let _ = &held;
                        $($async_ move)? { text }
                    });
                    let server = serve_http("127.0.0.1:0", config(), registry) $($aw)* .unwrap();
                    let handle = server.handle();
                    server.shutdown() $($aw)*;
                    let deadline = Instant::now() + LIMIT;
                    while Arc::strong_count(&alive) > 1 {
                        assert!(Instant::now() < deadline, "the handle keeps the server's router");
                        io::nap() $($aw)*;
                    }
                    // Telling a stopped server's sessions something is telling nobody.
                    handle.log(LoggingLevel::Info, json!("after the end"));
                })
            }
        }
    };
}

session_handle!(tokio, zest_tokio, on_tokio, [async], [.await]);
session_handle!(smol, zest_smol, on_smol, [async], [.await]);
session_handle!(blocking, zest_blocking, on_blocking, [], []);
