//! zest-smol's HTTP server under load on loopback, bounded in count and time: 200 sessions of
//! 50 calls each with nothing lost or duplicated, 1,000 sessions open and calling at once with
//! nothing lost or duplicated and nothing held after their DELETEs, a client gone mid-stream
//! leaving nothing behind, a client trickling its request body not stopping others being
//! served, a client that stops reading cut off once what waits for it passes its limit, one that
//! reads a large answer beside small messages not cut, the listen backlog.

mod common;
#[path = "../../tests/support/load.rs"]
mod load;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::run;
use load::{Ledger, CALLS, SESSIONS, WIDE_CALLS, WIDE_PATIENCE, WIDE_SESSIONS};
use serde_json::{json, Value};
use smol::Timer;
use zest_smol::core::jsonrpc::{codes, ErrorObject};
use zest_smol::core::runtime::http_server::LISTEN_BACKLOG;
use zest_smol::core::server::ServerConfig;
use zest_smol::schema::{CallToolParams, CallToolResult, LoggingLevel, Tool};
use zest_smol::{
    serve_http_with, Client, ClientApi, ClientOptions, HttpConfig, HttpServer, Registry,
};

/// Every text `echo` was called with, across this binary's tests.
static LEDGER: Ledger = Ledger::new();

/// `echo {text}` (recorded in [`LEDGER`]), `steps {n}` (a progress report every 20 ms) and
/// `loud {n}` (a log line, then [`load::loud_text`]).
fn registry() -> Registry {
    let mut r = Registry::default();
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    r.raw_tool(Tool::new("echo", "Echoes", schema), |_, p| async move {
        let text = arg(&p, "text").as_str().unwrap_or_default().to_owned();
        LEDGER.record(&text);
        Ok(CallToolResult::text(text))
    });
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    r.raw_tool(Tool::new("steps", "Reports progress", schema), |ctx, p| async move {
        let n = arg(&p, "n").as_u64().unwrap_or(0);
        for i in 1..=n {
            Timer::after(Duration::from_millis(20)).await;
            let report = ctx.progress(i as f64, Some(n as f64), None).await;
            report.map_err(|e| ErrorObject::new(codes::INTERNAL_ERROR, e.to_string()))?;
        }
        Ok(CallToolResult::text(format!("done after {n} steps")))
    });
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    r.raw_tool(
        Tool::new("loud", "Logs a line, then answers n bytes", schema),
        |ctx, p| async move {
            let n = arg(&p, "n").as_u64().unwrap_or(0) as usize;
            let logged = ctx.log(LoggingLevel::Info, json!("answering")).await;
            logged.map_err(|e| ErrorObject::new(codes::INTERNAL_ERROR, e.to_string()))?;
            Ok(CallToolResult::text(load::loud_text(n)))
        },
    );
    r
}

fn arg(p: &CallToolParams, name: &str) -> Value {
    p.arguments.as_ref().and_then(|a| a.get(name)).cloned().unwrap_or_default()
}

async fn server_with(http: HttpConfig) -> HttpServer {
    let config = ServerConfig::new("zest-load-test", "1.0");
    serve_http_with("127.0.0.1:0", config, http, registry()).await.expect("bind 127.0.0.1:0")
}

/// Session `session`'s client: connects, makes its calls one after another, closes. Returns
/// what each call sent and what came back.
async fn session(url: String, session: usize, calls: usize) -> Vec<(String, Option<String>)> {
    let client = Client::connect(&url, ClientOptions::new("load", "1")).await.expect("connect");
    let mut answers = Vec::with_capacity(calls);
    for call in 0..calls {
        let text = load::call_text(session, call);
        let result = client.call_tool("echo", json!({"text": text})).await.expect("a call");
        let echoed = result.content.first().and_then(|c| c.as_text()).map(str::to_owned);
        answers.push((text, echoed));
    }
    client.close().await.expect("close");
    answers
}

#[test]
fn two_hundred_sessions_of_fifty_calls_lose_and_duplicate_nothing() {
    run(300, async {
        let server = server_with(HttpConfig::new()).await;
        let clients: Vec<_> =
            (0..SESSIONS).map(|s| smol::spawn(session(server.url(), s, CALLS))).collect();
        let mut all = Vec::new();
        for client in clients {
            all.extend(client.await);
        }
        assert_eq!(all.len(), SESSIONS * CALLS);
        for (sent, echoed) in &all {
            assert_eq!(echoed.as_deref(), Some(sent.as_str()), "the answer to {sent}");
        }
        let sent: Vec<String> = all.into_iter().map(|(sent, _)| sent).collect();
        LEDGER.assert_each_once(&sent);
        load::settle("sessions after every client closed", Duration::from_secs(30), 0, || {
            server.session_count()
        });
        server.shutdown().await;
    });
}

#[test]
fn a_thousand_sessions_at_once_lose_duplicate_and_keep_nothing() {
    run(600, async {
        let mut http = HttpConfig::new();
        // A session's connection waits idle while the others open: on a slow machine,
        // perhaps longer than the 30 s a request head may take to come by default.
        http.http1.head_timeout = WIDE_PATIENCE;
        let server = server_with(http).await;
        let baseline = server.stats();
        // The server runs on smol's global executor threads: the raw clients blocking this
        // one (the test's block_on) hold nothing up.
        let addr = server.local_addr();
        let wide = load::wide_sessions(addr, WIDE_SESSIONS, WIDE_CALLS, || server.stats());
        assert_eq!(wide.at_peak.sessions, WIDE_SESSIONS, "held with every call answered");
        LEDGER.assert_each_once(&wide.assert_each_answered(WIDE_SESSIONS, WIDE_CALLS));
        load::settle("what the server holds", Duration::from_secs(30), baseline, || server.stats());
        server.shutdown().await;
    });
}

#[test]
fn a_client_gone_mid_stream_leaves_nothing_behind() {
    run(60, async {
        let mut http = HttpConfig::new();
        // Sweeps every second; the abandoned session expires 2 s after its handler ends.
        http.router.idle_timeout = Duration::from_secs(2);
        let server = server_with(http).await;
        let baseline = server.stats();
        assert_eq!(baseline.sessions, 0);
        assert_eq!(baseline.events_held, Some(0), "the memory store tells its count");
        // The server runs on smol's global executor threads: blocking this one (the test's
        // block_on) with the raw std-socket driver and the settling wait holds nothing up.
        load::drop_mid_stream(server.local_addr(), 25);
        let during = server.stats();
        assert_eq!(during.sessions, 1, "the session outlives its stream: {during:?}");
        // The handler goes on (a client may resume); its reports wait in the event store,
        // then the idle session expires and takes them with it.
        load::settle("what the server holds", Duration::from_secs(20), baseline, || server.stats());
        server.shutdown().await;
    });
}

#[test]
fn a_trickling_client_does_not_stop_others() {
    run(120, async {
        let server = server_with(HttpConfig::new()).await;
        let addr = server.local_addr();
        let stop = Arc::new(AtomicBool::new(false));
        let trickle_stop = stop.clone();
        let trickler = std::thread::spawn(move || {
            load::trickle_call(addr, Duration::from_millis(100), &trickle_stop)
        });
        let others: Vec<_> =
            (0..20).map(|s| smol::spawn(session(server.url(), 1000 + s, 5))).collect();
        let served = async {
            let mut served = 0;
            for other in others {
                served += other.await.len();
            }
            Some(served)
        };
        let timeout = async {
            Timer::after(Duration::from_secs(30)).await;
            None
        };
        let served = smol::future::or(served, timeout).await;
        assert!(!trickler.is_finished(), "the trickler is still sending its body");
        stop.store(true, Ordering::SeqCst);
        let (sent, whole) = trickler.join().unwrap();
        assert_eq!(served, Some(20 * 5), "the others are served within 30 s");
        assert!(sent < whole, "the others finished while the body was still arriving");
        server.shutdown().await;
    });
}

#[test]
fn a_client_that_does_not_read_is_cut_off_once_its_backlog_is_full() {
    run(60, async {
        let mut http = HttpConfig::new();
        http.http1.max_backlog_bytes = 1024 * 1024;
        let server = server_with(http).await;
        // The server runs on smol's global executor threads: the raw std-socket driver may
        // block this one.
        let handle = server.handle();
        load::assert_a_client_that_does_not_read_is_cut_off(server.local_addr(), |record| {
            handle.log(LoggingLevel::Info, record);
        });
        server.shutdown().await;
    });
}

#[test]
fn the_listener_lets_a_burst_of_connections_wait() {
    run(60, async {
        let server = server_with(HttpConfig::new()).await;
        load::assert_listen_backlog(server.local_addr(), LISTEN_BACKLOG);
        server.shutdown().await;
    });
}

#[test]
fn a_large_answer_beside_small_messages_is_not_cut() {
    run(60, async {
        let mut http = HttpConfig::new();
        http.http1.max_backlog_bytes = 64 * 1024;
        let server = server_with(http).await;
        load::assert_a_large_answer_beside_small_messages_is_not_cut(server.local_addr());
        server.shutdown().await;
    });
}
