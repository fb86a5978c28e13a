//! The clients. Each starts its server (this binary again, `serve <sdk> <transport>`): over
//! stdio its SDK spawns it as a child process; over HTTP this process spawns it and connects
//! to the address it prints. Then the handshake, `warmup` calls one at a time, and `calls`
//! timed calls with `concurrency` in flight (async clients: that many futures joined on one
//! task; zest-blocking: that many threads), every reply's text checked, and close.

use std::future::Future;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::measure::{only_child, Clock, Measured};
use crate::{floor, tokio_runtime, Load, Sdk, Transport};

/// One run of `client` against `server` over `transport`.
pub(crate) fn run(client: Sdk, server: Sdk, transport: Transport, load: &Load) -> Measured {
    let exe = std::env::current_exe().expect("this binary");
    let started = Instant::now();
    let spawned = (transport == Transport::Http).then(|| HttpServer::spawn(&exe, server));
    let target = match &spawned {
        Some(http) => Target::Http(http.url(), http.child.id()),
        None => Target::Stdio(exe.as_path(), ["serve", server.name(), "stdio"]),
    };
    let text = load.text();
    let arguments = json!({ "text": text });
    let measured = match client {
        Sdk::Floor => floor_client(&exe, spawned.as_ref(), load, started),
        Sdk::Rmcp => {
            tokio_runtime().block_on(crate::rmcp_client::run(target, &text, load, started))
        }
        Sdk::ZestTokio => tokio_runtime().block_on(async {
            use zest_tokio::{Client, ClientApi, ClientOptions, StdioCommand};
            let options = ClientOptions::new("compare", "0");
            let client = match target {
                Target::Stdio(exe, args) => {
                    let command = StdioCommand::new(exe).args(args).on_stderr(|_| {});
                    Client::spawn(command, options).await
                }
                Target::Http(url, _) => Client::connect(&url, options).await,
            };
            let client = client.expect("the server answers");
            let ready = started.elapsed();
            let (client, arguments, text) = (&client, &arguments, text.as_str());
            let measured = timed_async(load, server_pid(&spawned), ready, || async move {
                let result = client.call_tool("echo", arguments.clone()).await.expect("echo");
                check_zest(&result.content, text);
            })
            .await;
            client.close().await.expect("closes");
            measured
        }),
        Sdk::ZestSmol => smol::block_on(async {
            use zest_smol::{Client, ClientApi, ClientOptions, StdioCommand};
            let options = ClientOptions::new("compare", "0");
            let client = match target {
                Target::Stdio(exe, args) => {
                    let command = StdioCommand::new(exe).args(args).on_stderr(|_| {});
                    Client::spawn(command, options).await
                }
                Target::Http(url, _) => Client::connect(&url, options).await,
            };
            let client = client.expect("the server answers");
            let ready = started.elapsed();
            let (client, arguments, text) = (&client, &arguments, text.as_str());
            let measured = timed_async(load, server_pid(&spawned), ready, || async move {
                let result = client.call_tool("echo", arguments.clone()).await.expect("echo");
                check_zest(&result.content, text);
            })
            .await;
            client.close().await.expect("closes");
            measured
        }),
        Sdk::ZestBlocking => {
            use zest_blocking::{Client, ClientApi, ClientOptions, StdioCommand};
            let options = ClientOptions::new("compare", "0");
            let client = match target {
                Target::Stdio(exe, args) => {
                    let command = StdioCommand::new(exe).args(args).on_stderr(|_| {});
                    Client::spawn(command, options)
                }
                Target::Http(url, _) => Client::connect(&url, options),
            };
            let client = client.expect("the server answers");
            let ready = started.elapsed();
            let call = || {
                let result = client.call_tool("echo", arguments.clone()).expect("echo");
                check_zest(&result.content, &text);
            };
            for _ in 0..load.warmup {
                call();
            }
            let clock = Clock::start(server_pid(&spawned));
            let per_worker = load.calls / load.concurrency;
            let latencies = std::thread::scope(|scope| {
                let workers: Vec<_> = (0..load.concurrency)
                    .map(|_| scope.spawn(|| timed_calls(per_worker, &call)))
                    .collect();
                workers.into_iter().flat_map(|w| w.join().expect("a worker")).collect()
            });
            let measured = clock.stop(ready, latencies);
            client.close().expect("closes");
            measured
        }
    };
    if let Some(http) = spawned {
        http.stop();
    }
    measured
}

/// Where the client finds its server.
pub(crate) enum Target<'a> {
    /// Spawn this program with these arguments and speak over its stdio.
    Stdio(&'a Path, [&'a str; 3]),
    /// Connect to this Streamable HTTP endpoint, served by this process.
    Http(String, u32),
}

/// A server this process spawned for an HTTP run; it ends when its stdin closes.
pub(crate) struct HttpServer {
    child: Child,
    addr: SocketAddr,
}

impl HttpServer {
    fn spawn(exe: &Path, sdk: Sdk) -> Self {
        let mut child = Command::new(exe)
            .args(["serve", sdk.name(), "http"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("re-executing this binary as a server");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped");
        BufReader::new(stdout).read_line(&mut line).expect("the server's address");
        let addr = line.trim().strip_prefix("listening ").and_then(|a| a.parse().ok());
        let addr = addr.unwrap_or_else(|| panic!("the {} server said {line:?}", sdk.name()));
        Self { child, addr }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Closes its stdin and reaps it.
    fn stop(mut self) {
        drop(self.child.stdin.take());
        self.child.wait().expect("the server exits");
    }
}

/// The server's pid: the one this process spawned for HTTP, else the child its SDK spawned.
fn server_pid(spawned: &Option<HttpServer>) -> u32 {
    spawned.as_ref().map_or_else(only_child, |http| http.child.id())
}

fn floor_client(exe: &Path, http: Option<&HttpServer>, load: &Load, started: Instant) -> Measured {
    if let Some(http) = http {
        return floor::http_client(&http.child, http.addr, load, started.elapsed());
    }
    let mut child = Command::new(exe)
        .args(["serve", Sdk::Floor.name(), "stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("re-executing this binary as the floor server");
    let (stdin, stdout) = (child.stdin.take().expect("piped"), child.stdout.take().expect("piped"));
    let measured = floor::stdio_client(&child, stdin, stdout, load, started);
    child.wait().expect("the floor server exits at EOF");
    measured
}

/// `calls` calls one after another; each one's latency.
fn timed_calls(calls: usize, call: &(impl Fn() + Sync)) -> Vec<Duration> {
    (0..calls)
        .map(|_| {
            let t = Instant::now();
            call();
            t.elapsed()
        })
        .collect()
}

/// The async clients' run: warm-up calls one at a time, then the timed calls with
/// `load.concurrency` futures joined on this task.
pub(crate) async fn timed_async<F, Fut>(
    load: &Load,
    server: u32,
    ready: Duration,
    call: F,
) -> Measured
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..load.warmup {
        call().await;
    }
    let clock = Clock::start(server);
    let per_worker = load.calls / load.concurrency;
    let workers = (0..load.concurrency).map(|_| async {
        let mut latencies = Vec::with_capacity(per_worker);
        for _ in 0..per_worker {
            let t = Instant::now();
            call().await;
            latencies.push(t.elapsed());
        }
        latencies
    });
    let latencies = futures::future::join_all(workers).await.into_iter().flatten().collect();
    clock.stop(ready, latencies)
}

fn check_zest(content: &[zest_tokio::schema::ContentBlock], text: &str) {
    match content {
        [zest_tokio::schema::ContentBlock::Text(t)] => assert!(t.text == text, "echoed text"),
        _ => panic!("one text block expected"),
    }
}
