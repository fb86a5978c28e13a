//! Every runtime's fixture served over HTTP by its `<runtime>_http_server` example (a process
//! of its own on a loopback port), driven by the official TypeScript and Python SDK clients
//! (tests/peers; install with scripts/install-peers) over Streamable HTTP and over legacy
//! HTTP+SSE; each server then shuts down gracefully once its stdin closes.

#[path = "../../tests/support/peers.rs"]
mod peers;
#[path = "../../tests/support/soak.rs"]
mod soak;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use peers::{drive_fixture, Sdk, Target};

/// Which of the server's two HTTP transports the client uses.
#[derive(Clone, Copy)]
enum Transport {
    StreamableHttp,
    LegacySse,
}

/// Starts `runtime`'s HTTP example on a free port, lets `sdk`'s client drive it over
/// `transport`, then closes its stdin and expects it to exit cleanly within 30 s.
fn serve_and_drive(runtime: &str, sdk: Sdk, transport: Transport) {
    let mut server = Command::new(soak::example(runtime, "http_server"))
        .args(["--port", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the example starts");
    let mut first = String::new();
    let stdout = server.stdout.take().expect("piped");
    BufReader::new(stdout).read_line(&mut first).expect("it prints its URL");
    let mcp = first.trim().to_owned();
    let sse = mcp.replace("/mcp", "/sse");
    match transport {
        Transport::StreamableHttp => drive_fixture(sdk, Target::StreamableHttp(&mcp)),
        Transport::LegacySse => drive_fixture(sdk, Target::LegacySse(&sse)),
    }
    drop(server.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = server.try_wait().expect("its status") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = server.kill();
            panic!("{runtime}: the server did not shut down within 30 s");
        }
        thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{runtime}: {status:?}");
}

macro_rules! sdk_drives_http_fixture {
    ($($name:ident: $runtime:literal, $sdk:expr, $transport:expr;)*) => {$(
        #[test]
        fn $name() {
            serve_and_drive($runtime, $sdk, $transport);
        }
    )*};
}

sdk_drives_http_fixture! {
    typescript_sdk_drives_tokio_over_streamable_http: "tokio", Sdk::TypeScript, Transport::StreamableHttp;
    typescript_sdk_drives_tokio_over_legacy_sse: "tokio", Sdk::TypeScript, Transport::LegacySse;
    python_sdk_drives_tokio_over_streamable_http: "tokio", Sdk::Python, Transport::StreamableHttp;
    python_sdk_drives_tokio_over_legacy_sse: "tokio", Sdk::Python, Transport::LegacySse;
    typescript_sdk_drives_smol_over_streamable_http: "smol", Sdk::TypeScript, Transport::StreamableHttp;
    typescript_sdk_drives_smol_over_legacy_sse: "smol", Sdk::TypeScript, Transport::LegacySse;
    python_sdk_drives_smol_over_streamable_http: "smol", Sdk::Python, Transport::StreamableHttp;
    python_sdk_drives_smol_over_legacy_sse: "smol", Sdk::Python, Transport::LegacySse;
    typescript_sdk_drives_blocking_over_streamable_http: "blocking", Sdk::TypeScript, Transport::StreamableHttp;
    typescript_sdk_drives_blocking_over_legacy_sse: "blocking", Sdk::TypeScript, Transport::LegacySse;
    python_sdk_drives_blocking_over_streamable_http: "blocking", Sdk::Python, Transport::StreamableHttp;
    python_sdk_drives_blocking_over_legacy_sse: "blocking", Sdk::Python, Transport::LegacySse;
}
