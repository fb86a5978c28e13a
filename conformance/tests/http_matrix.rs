//! The 3×3 matrix over HTTP: every zest client runtime against every zest server runtime,
//! each serving the everything fixture in-process on a loopback port, with one body of checks:
//! the handshake, a tool's text, an error result, progress and log records on the call's
//! stream, a sampling request to the client mid-call, a resource, a prompt, and the DELETE on
//! close ending the server's session.

#[path = "support/clients.rs"]
mod clients;

use std::sync::mpsc;
use std::thread;

use clients::{text, Blocking, Peer, Smol, Tokio, LIMIT};
use serde_json::{json, Value};
use zest_conformance::fixture::content::{self, LOG_LINES, PROGRESS_STEPS, SIMPLE_TEXT};
use zest_conformance::fixture::{self, asynchronous, blocking};
use zest_conformance::Runtime;
use zest_core::schema::ResourceContents;

/// The everything fixture served over HTTP on 127.0.0.1 by one runtime, in this process.
enum Served {
    /// With the runtime its tasks run on.
    Tokio(tokio::runtime::Runtime, zest_tokio::HttpServer),
    /// Its tasks run on smol's global executor.
    Smol(zest_smol::HttpServer),
    /// Its threads are its own.
    Blocking(zest_blocking::HttpServer),
}

impl Served {
    fn start(runtime: Runtime) -> Self {
        let config = fixture::server_config(runtime.name());
        let addr = "127.0.0.1:0";
        match runtime {
            Runtime::Tokio => {
                let registry = fixture::registry(asynchronous::adapt::<zest_tokio::RequestContext>);
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("a tokio runtime");
                let server = rt.block_on(zest_tokio::serve_http(addr, config, registry));
                Self::Tokio(rt, server.expect("bind 127.0.0.1:0"))
            }
            Runtime::Smol => {
                let registry = fixture::registry(asynchronous::adapt::<zest_smol::RequestContext>);
                let server = smol::block_on(zest_smol::serve_http(addr, config, registry));
                Self::Smol(server.expect("bind 127.0.0.1:0"))
            }
            Runtime::Blocking => {
                let registry = fixture::registry(blocking::adapt);
                Self::Blocking(zest_blocking::serve_http(addr, config, registry).expect("bind"))
            }
        }
    }

    fn url(&self) -> String {
        match self {
            Self::Tokio(_, s) => s.url(),
            Self::Smol(s) => s.url(),
            Self::Blocking(s) => s.url(),
        }
    }

    fn session_count(&self) -> usize {
        match self {
            Self::Tokio(_, s) => s.session_count(),
            Self::Smol(s) => s.session_count(),
            Self::Blocking(s) => s.session_count(),
        }
    }

    /// Shuts the server down gracefully, failing the test if that takes over [`LIMIT`].
    fn shutdown(self) {
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

/// The client of runtime `C` against the server of runtime `server`.
fn pair<C: Peer>(server: Runtime) {
    let served = Served::start(server);
    let client = C::connect(&served.url());
    let on = format!("{} client, {server} server", C::RUNTIME);
    assert_eq!(client.server_name(), "zest-conformance-everything", "{on}");
    assert_eq!(served.session_count(), 1, "{on}");

    assert_eq!(text(&client.call("test_simple_text", json!({}))), SIMPLE_TEXT, "{on}");
    let failed = client.call("test_error_handling", json!({}));
    assert!(failed.is_error() && text(&failed) == content::ERROR_TEXT, "{on}: {failed:?}");

    let (done, progress) = client.call_with_progress("test_tool_with_progress", json!({}));
    assert_eq!(text(&done), text(&content::progress_done()), "{on}");
    assert_eq!(progress, PROGRESS_STEPS, "{on}");

    let logged = client.call("test_tool_with_logging", json!({}));
    assert_eq!(text(&logged), text(&content::logging_done()), "{on}");
    let logs: Vec<Value> = client.logs(LOG_LINES.len()).into_iter().map(|m| m.data).collect();
    assert_eq!(logs, LOG_LINES.map(Value::from), "{on}");

    let sampled = client.call("test_sampling", json!({"prompt": "from the matrix"}));
    assert_eq!(text(&sampled), "LLM response: canned: from the matrix", "{on}");

    let read = client.read_resource("test://static-text");
    let Some(ResourceContents::Text(read)) = read.contents.first() else {
        panic!("{on}: {read:?}")
    };
    assert_eq!(read.text, content::STATIC_TEXT, "{on}");
    let prompt = client.get_prompt("test_simple_prompt", &[]);
    let said = prompt.messages.first().and_then(|m| m.content.as_text());
    assert_eq!(said, Some("This is a simple prompt for testing."), "{on}");

    client.close();
    assert_eq!(served.session_count(), 0, "{on}: the DELETE on close ended the session");
    served.shutdown();
}

#[test]
fn tokio_client_against_tokio_server() {
    pair::<Tokio>(Runtime::Tokio);
}

#[test]
fn tokio_client_against_smol_server() {
    pair::<Tokio>(Runtime::Smol);
}

#[test]
fn tokio_client_against_blocking_server() {
    pair::<Tokio>(Runtime::Blocking);
}

#[test]
fn smol_client_against_tokio_server() {
    pair::<Smol>(Runtime::Tokio);
}

#[test]
fn smol_client_against_smol_server() {
    pair::<Smol>(Runtime::Smol);
}

#[test]
fn smol_client_against_blocking_server() {
    pair::<Smol>(Runtime::Blocking);
}

#[test]
fn blocking_client_against_tokio_server() {
    pair::<Blocking>(Runtime::Tokio);
}

#[test]
fn blocking_client_against_smol_server() {
    pair::<Blocking>(Runtime::Smol);
}

#[test]
fn blocking_client_against_blocking_server() {
    pair::<Blocking>(Runtime::Blocking);
}
