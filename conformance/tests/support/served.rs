//! The everything fixture served over HTTP by any runtime, in the test's process.
#![allow(dead_code, unreachable_pub)] // a module of each test binary that uses it

use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread;

use serde_json::{json, Value};
use zest_conformance::fixture::content::PureTool;
use zest_conformance::fixture::{self, asynchronous, blocking};
use zest_conformance::Runtime;
use zest_core::runtime::http_server::ServerStats;
use zest_core::schema::{CallToolResult, LoggingLevel, Tool};
use zest_core::server::{ListKind, Registry};
use zest_tokio::HttpConfig;

use super::clients::{Peer, LIMIT};

/// The runtime of client `C`.
pub fn runtime_of<C: Peer>() -> Runtime {
    let runtime = Runtime::ALL.into_iter().find(|r| r.name() == C::RUNTIME);
    runtime.expect("a runtime of that name")
}

/// Which tools a [`Served`] server offers.
#[derive(Clone, Copy)]
enum Tools {
    /// The everything fixture's.
    Everything,
    /// The load tests', `echo` answered by this function.
    Load(PureTool),
}

impl Tools {
    fn registry<H>(self, adapt: impl FnMut(fixture::Behaviour) -> H) -> Registry<H> {
        match self {
            Self::Everything => fixture::registry(adapt),
            Self::Load(echo) => fixture::load_registry(adapt, echo),
        }
    }
}

/// The everything fixture served over HTTP on 127.0.0.1 by one runtime, in this process.
pub enum Served {
    /// With the runtime its tasks run on.
    Tokio(tokio::runtime::Runtime, zest_tokio::HttpServer),
    /// Its tasks run on smol's global executor.
    Smol(zest_smol::HttpServer),
    /// Its threads are its own.
    Blocking(zest_blocking::HttpServer),
}

impl Served {
    pub fn start(runtime: Runtime) -> Self {
        Self::start_with(runtime, HttpConfig::new())
    }

    /// Serves with `http`'s settings.
    pub fn start_with(runtime: Runtime, http: HttpConfig) -> Self {
        Self::serving(runtime, http, Tools::Everything)
    }

    /// Serves the load tests' tools ([`fixture::load_registry`]), `echo` answered by `echo`.
    pub fn start_load(runtime: Runtime, http: HttpConfig, echo: PureTool) -> Self {
        Self::serving(runtime, http, Tools::Load(echo))
    }

    fn serving(runtime: Runtime, http: HttpConfig, tools: Tools) -> Self {
        let config = fixture::server_config(runtime.name());
        let addr = "127.0.0.1:0";
        match runtime {
            Runtime::Tokio => {
                let registry = tools.registry(asynchronous::adapt::<zest_tokio::RequestContext>);
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("a tokio runtime");
                let server = rt.block_on(zest_tokio::serve_http_with(addr, config, http, registry));
                Self::Tokio(rt, server.expect("bind 127.0.0.1:0"))
            }
            Runtime::Smol => {
                let registry = tools.registry(asynchronous::adapt::<zest_smol::RequestContext>);
                let server =
                    smol::block_on(zest_smol::serve_http_with(addr, config, http, registry));
                Self::Smol(server.expect("bind 127.0.0.1:0"))
            }
            Runtime::Blocking => {
                let registry = tools.registry(blocking::adapt);
                let server = zest_blocking::serve_http_with(addr, config, http, registry);
                Self::Blocking(server.expect("bind 127.0.0.1:0"))
            }
        }
    }

    /// Where the server listens.
    pub fn local_addr(&self) -> SocketAddr {
        match self {
            Self::Tokio(_, s) => s.local_addr(),
            Self::Smol(s) => s.local_addr(),
            Self::Blocking(s) => s.local_addr(),
        }
    }

    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        match self {
            Self::Tokio(_, s) => s.url(),
            Self::Smol(s) => s.url(),
            Self::Blocking(s) => s.url(),
        }
    }

    /// What the server holds now.
    pub fn stats(&self) -> ServerStats {
        match self {
            Self::Tokio(_, s) => s.stats(),
            Self::Smol(s) => s.stats(),
            Self::Blocking(s) => s.stats(),
        }
    }

    /// Sends a log record to every session, through the server's handle.
    pub fn log(&self, level: LoggingLevel, data: Value) {
        match self {
            Self::Tokio(_, s) => s.handle().log(level, data),
            Self::Smol(s) => s.handle().log(level, data),
            Self::Blocking(s) => s.handle().log(level, data),
        }
    }

    pub fn session_count(&self) -> usize {
        match self {
            Self::Tokio(_, s) => s.session_count(),
            Self::Smol(s) => s.session_count(),
            Self::Blocking(s) => s.session_count(),
        }
    }

    /// Ends every session now (their ids get 404 from then on).
    pub fn close_sessions(&self) {
        match self {
            Self::Tokio(_, s) => s.close_sessions(),
            Self::Smol(s) => s.close_sessions(),
            Self::Blocking(s) => s.close_sessions(),
        }
    }

    /// Adds the tool `name` (answering with its name) and announces `tools/list_changed`.
    pub fn add_tool(&self, name: &'static str) {
        let tool = Tool::new(name, "Added while running", json!({"type": "object"}));
        let answer = move || Ok(CallToolResult::text(name));
        match self {
            Self::Tokio(_, s) => s.change_registry(&[ListKind::Tools], move |r| {
                r.raw_tool(tool, move |_, _| async move { answer() });
            }),
            Self::Smol(s) => s.change_registry(&[ListKind::Tools], move |r| {
                r.raw_tool(tool, move |_, _| async move { answer() });
            }),
            Self::Blocking(s) => s.change_registry(&[ListKind::Tools], move |r| {
                r.raw_tool(tool, move |_, _| answer());
            }),
        }
    }

    /// Shuts the server down gracefully, failing the test if that takes over [`LIMIT`].
    pub fn shutdown(self) {
        let (done, stopped) = mpsc::channel();
        thread::spawn(move || {
            match self {
                Self::Tokio(rt, s) => rt.block_on(s.shutdown()),
                Self::Smol(s) => smol::block_on(s.shutdown()),
                Self::Blocking(s) => s.shutdown(),
            }
            let _ = done.send(());
        });
        stopped.recv_timeout(LIMIT).expect("the server shuts down within 30 s");
    }
}
