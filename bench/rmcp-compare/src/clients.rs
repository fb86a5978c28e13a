//! The four clients. Each spawns its server (this binary again, `serve <sdk>`) as a child
//! process over stdio, completes the handshake, makes `warmup` calls, then `calls` timed calls
//! one after another (concurrency 1), checks every reply's text, and closes.

use std::future::Future;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::{tokio_runtime, Sdk};

/// What one client run measured.
pub(crate) struct Measured {
    /// Spawn to handshake done.
    pub(crate) ready: Duration,
    /// The timed calls, all of them.
    pub(crate) elapsed: Duration,
    /// Each timed call's latency.
    pub(crate) latencies: Vec<Duration>,
}

/// One run of `client` against `server`, echoing `text`.
pub(crate) fn run(client: Sdk, server: Sdk, text: &str, calls: usize, warmup: usize) -> Measured {
    let exe = std::env::current_exe().expect("this binary");
    let args = ["serve", server.name()];
    let arguments = json!({ "text": text });
    match client {
        Sdk::Rmcp => tokio_runtime().block_on(rmcp_client(&exe, args, text, calls, warmup)),
        Sdk::ZestTokio => tokio_runtime().block_on(async {
            use zest_tokio::{Client, ClientApi, ClientOptions, StdioCommand};
            let started = Instant::now();
            let command = StdioCommand::new(&exe).args(args).on_stderr(|_| {});
            let client = Client::spawn(command, ClientOptions::new("compare", "0"))
                .await
                .expect("the server starts");
            let ready = started.elapsed();
            let (client, arguments) = (&client, &arguments);
            let (elapsed, latencies) = timed_async(calls, warmup, || async move {
                let result = client.call_tool("echo", arguments.clone()).await.expect("echo");
                check_zest(&result.content, text);
            })
            .await;
            client.close().await.expect("the server exits");
            Measured { ready, elapsed, latencies }
        }),
        Sdk::ZestSmol => smol::block_on(async {
            use zest_smol::{Client, ClientApi, ClientOptions, StdioCommand};
            let started = Instant::now();
            let command = StdioCommand::new(&exe).args(args).on_stderr(|_| {});
            let client = Client::spawn(command, ClientOptions::new("compare", "0"))
                .await
                .expect("the server starts");
            let ready = started.elapsed();
            let (client, arguments) = (&client, &arguments);
            let (elapsed, latencies) = timed_async(calls, warmup, || async move {
                let result = client.call_tool("echo", arguments.clone()).await.expect("echo");
                check_zest(&result.content, text);
            })
            .await;
            client.close().await.expect("the server exits");
            Measured { ready, elapsed, latencies }
        }),
        Sdk::ZestBlocking => {
            use zest_blocking::{Client, ClientApi, ClientOptions, StdioCommand};
            let started = Instant::now();
            let command = StdioCommand::new(&exe).args(args).on_stderr(|_| {});
            let client =
                Client::spawn(command, ClientOptions::new("compare", "0")).expect("the server");
            let ready = started.elapsed();
            let mut latencies = Vec::with_capacity(calls);
            let mut timed_from = Instant::now();
            for i in 0..warmup + calls {
                if i == warmup {
                    timed_from = Instant::now();
                }
                let t0 = Instant::now();
                let result = client.call_tool("echo", arguments.clone()).expect("echo");
                latencies.push(t0.elapsed());
                check_zest(&result.content, text);
            }
            let elapsed = timed_from.elapsed();
            latencies.drain(..warmup);
            client.close().expect("the server exits");
            Measured { ready, elapsed, latencies }
        }
    }
}

/// Makes `warmup` untimed calls, then `calls` timed ones; returns the wall time of the timed
/// calls and each one's latency.
async fn timed_async<F, Fut>(calls: usize, warmup: usize, mut call: F) -> (Duration, Vec<Duration>)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..warmup {
        call().await;
    }
    let mut latencies = Vec::with_capacity(calls);
    let started = Instant::now();
    for _ in 0..calls {
        let t0 = Instant::now();
        call().await;
        latencies.push(t0.elapsed());
    }
    (started.elapsed(), latencies)
}

fn check_zest(content: &[zest_tokio::schema::ContentBlock], text: &str) {
    match content {
        [zest_tokio::schema::ContentBlock::Text(t)] => assert!(t.text == text, "echoed text"),
        _ => panic!("one text block expected"),
    }
}

async fn rmcp_client(
    exe: &Path,
    args: [&str; 2],
    text: &str,
    calls: usize,
    warmup: usize,
) -> Measured {
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;

    let started = Instant::now();
    let mut command = tokio::process::Command::new(exe);
    command.args(args);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let client = ().serve(transport).await.expect("the handshake");
    let ready = started.elapsed();
    let arguments = json!({ "text": text }).as_object().expect("an object").clone();
    let (client_ref, arguments) = (&client, &arguments);
    let (elapsed, latencies) = timed_async(calls, warmup, || async move {
        let params = CallToolRequestParams::new("echo").with_arguments(arguments.clone());
        let result = client_ref.call_tool(params).await.expect("echo");
        match result.content.as_slice() {
            [block] => {
                let echoed = block.as_text().expect("a text block");
                assert!(echoed.text == text, "echoed text");
            }
            _ => panic!("one text block expected"),
        }
    })
    .await;
    let _ = client.cancel().await;
    Measured { ready, elapsed, latencies }
}
