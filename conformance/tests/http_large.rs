//! Large answers over HTTP, once for every client runtime: one limit, `max_message`, for a
//! JSON body and an SSE event as for a stdio line, with the stdio default (64 MiB). An 8 MiB
//! answer arrives whole either way; past a smaller limit the call fails with
//! `RequestError::TooLarge` naming that limit, and the session goes on.

#[path = "support/clients.rs"]
mod clients;

use clients::{text, Blocking, Peer, Smol, Tokio};
use serde_json::json;
use zest_core::api::CallError;
use zest_core::error::RequestError;
use zest_core::runtime::http_client::HttpEndpoint;
use zest_core::schema::LoggingLevel;
use zest_tokio::{Registry, RequestContext, ServerConfig};

const MIB: usize = 1024 * 1024;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sized {
    /// How many bytes of text to answer with.
    bytes: usize,
    /// Send a log record first, so the answer comes as an SSE event, not a JSON body.
    stream: bool,
}

/// A zest-tokio server with the tool `sized`, on a runtime of its own (dropping it stops
/// the server).
struct Server {
    _rt: tokio::runtime::Runtime,
    server: zest_tokio::HttpServer,
}

impl Server {
    fn start() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let registry = Registry::new().tool(
            "sized",
            "Answers with `bytes` bytes of text",
            |Sized { bytes, stream }, ctx: RequestContext| async move {
                if stream {
                    let _ = ctx.log(LoggingLevel::Info, json!("the answer follows")).await;
                }
                "x".repeat(bytes)
            },
        );
        let config = ServerConfig::new("large", "1");
        let server = rt.block_on(zest_tokio::serve_http("127.0.0.1:0", config, registry));
        Self { _rt: rt, server: server.expect("bind 127.0.0.1:0") }
    }

    fn endpoint(&self) -> HttpEndpoint {
        HttpEndpoint::new(self.server.url())
    }
}

/// An 8 MiB answer, as a JSON body and as one SSE event, arrives whole.
fn eight_mib_arrives_whole<C: Peer>() {
    let server = Server::start();
    let client = C::connect_to(server.endpoint());
    for stream in [false, true] {
        let result = client.call("sized", json!({"bytes": 8 * MIB, "stream": stream}));
        assert_eq!(text(&result).len(), 8 * MIB, "{}, stream {stream}", C::RUNTIME);
    }
    client.close();
}

/// Past the client's limit the call fails typed, naming the limit; the next call succeeds.
fn past_the_limit_fails_typed<C: Peer>() {
    let server = Server::start();
    let client = C::connect_with(server.endpoint(), MIB);
    for stream in [false, true] {
        let outcome = client.try_call("sized", json!({"bytes": 2 * MIB, "stream": stream}));
        match outcome {
            Err(CallError::Request(RequestError::TooLarge { limit })) => assert_eq!(limit, MIB),
            other => panic!("{}, stream {stream}: expected TooLarge, got {other:?}", C::RUNTIME),
        }
        let small = client.call("sized", json!({"bytes": 3, "stream": stream}));
        assert_eq!(text(&small), "xxx", "{}: the session goes on", C::RUNTIME);
    }
    client.close();
}

#[test]
fn a_tokio_client_takes_8_mib_answers() {
    eight_mib_arrives_whole::<Tokio>();
}

#[test]
fn a_smol_client_takes_8_mib_answers() {
    eight_mib_arrives_whole::<Smol>();
}

#[test]
fn a_blocking_client_takes_8_mib_answers() {
    eight_mib_arrives_whole::<Blocking>();
}

#[test]
fn a_tokio_client_refuses_an_answer_past_its_limit_typed() {
    past_the_limit_fails_typed::<Tokio>();
}

#[test]
fn a_smol_client_refuses_an_answer_past_its_limit_typed() {
    past_the_limit_fails_typed::<Smol>();
}

#[test]
fn a_blocking_client_refuses_an_answer_past_its_limit_typed() {
    past_the_limit_fails_typed::<Blocking>();
}
