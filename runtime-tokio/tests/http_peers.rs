//! The fixture served over HTTP by zest-tokio in-process, on a loopback port, driven by the
//! official TypeScript and Python SDK clients (tests/peers; install with
//! scripts/install-peers) over Streamable HTTP and over legacy HTTP+SSE.

#[path = "../examples/support/fixture.rs"]
mod fixture;
#[path = "../../tests/support/peers.rs"]
mod peers;

use std::time::Duration;

use peers::{drive_fixture, Sdk, Target};
use zest_tokio::{serve_http_with, HttpConfig, ServerConfig};

/// Which of the server's two HTTP transports the client uses.
#[derive(Clone, Copy)]
enum Transport {
    StreamableHttp,
    LegacySse,
}

/// Serves the fixture on 127.0.0.1:0 with legacy HTTP+SSE on, lets `sdk`'s client drive it
/// over `transport`, then shuts the server down (a hang guard of 30 s).
fn serve_and_drive(sdk: Sdk, transport: Transport) {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut http = HttpConfig::new();
    http.router.legacy_sse_path = Some("/sse".into());
    let config = ServerConfig::new("tokio_http_server", "1.0");
    let server = rt
        .block_on(serve_http_with("127.0.0.1:0", config, http, fixture::registry()))
        .expect("bind 127.0.0.1:0");
    let (mcp, sse) = (server.url(), format!("http://{}/sse", server.local_addr()));
    match transport {
        Transport::StreamableHttp => drive_fixture(sdk, Target::StreamableHttp(&mcp)),
        Transport::LegacySse => drive_fixture(sdk, Target::LegacySse(&sse)),
    }
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(30), server.shutdown())
            .await
            .expect("the server shuts down within 30 s")
    });
}

#[test]
fn typescript_sdk_client_over_streamable_http() {
    serve_and_drive(Sdk::TypeScript, Transport::StreamableHttp);
}

#[test]
fn typescript_sdk_client_over_legacy_sse() {
    serve_and_drive(Sdk::TypeScript, Transport::LegacySse);
}

#[test]
fn python_sdk_client_over_streamable_http() {
    serve_and_drive(Sdk::Python, Transport::StreamableHttp);
}

#[test]
fn python_sdk_client_over_legacy_sse() {
    serve_and_drive(Sdk::Python, Transport::LegacySse);
}
