//! zest-blocking's HTTP server under load on loopback, bounded in count and time: 200
//! sessions of 50 calls each with nothing lost or duplicated, 1,000 sessions open and calling
//! at once with nothing lost or duplicated and nothing held after their DELETEs, a client gone
//! mid-stream leaving nothing behind, a client trickling its request body not stopping others
//! being served, a client that stops reading cut off once what waits for it passes its
//! limit, one that reads a large answer beside small messages not cut, the listen backlog.

#[path = "../../tests/support/load.rs"]
mod load;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use load::{Ledger, CALLS, SESSIONS, WIDE_CALLS, WIDE_PATIENCE, WIDE_SESSIONS};
use serde_json::{json, Value};
use zest_blocking::core::jsonrpc::{codes, ErrorObject};
use zest_blocking::core::runtime::http_server::LISTEN_BACKLOG;
use zest_blocking::core::server::ServerConfig;
use zest_blocking::schema::{CallToolParams, CallToolResult, LoggingLevel, Tool};
use zest_blocking::{
    serve_http_with, Client, ClientApi, ClientOptions, HttpConfig, HttpServer, Registry,
};

/// Every text `echo` was called with, across this binary's tests.
static LEDGER: Ledger = Ledger::new();

/// `echo {text}` (recorded in [`LEDGER`]), `steps {n}` (a progress report every 20 ms) and
/// `loud {n}` (a log line, then [`load::loud_text`]).
fn registry() -> Registry {
    let mut r = Registry::default();
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    r.raw_tool(Tool::new("echo", "Echoes", schema), |_, p| {
        let text = arg(&p, "text").as_str().unwrap_or_default().to_owned();
        LEDGER.record(&text);
        Ok(CallToolResult::text(text))
    });
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    r.raw_tool(Tool::new("steps", "Reports progress", schema), |ctx, p| {
        let n = arg(&p, "n").as_u64().unwrap_or(0);
        for i in 1..=n {
            thread::sleep(Duration::from_millis(20));
            let report = ctx.progress(i as f64, Some(n as f64), None);
            report.map_err(|e| ErrorObject::new(codes::INTERNAL_ERROR, e.to_string()))?;
        }
        Ok(CallToolResult::text(format!("done after {n} steps")))
    });
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    r.raw_tool(Tool::new("loud", "Logs a line, then answers n bytes", schema), |ctx, p| {
        let n = arg(&p, "n").as_u64().unwrap_or(0) as usize;
        let logged = ctx.log(LoggingLevel::Info, json!("answering"));
        logged.map_err(|e| ErrorObject::new(codes::INTERNAL_ERROR, e.to_string()))?;
        Ok(CallToolResult::text(load::loud_text(n)))
    });
    r
}

fn arg(p: &CallToolParams, name: &str) -> Value {
    p.arguments.as_ref().and_then(|a| a.get(name)).cloned().unwrap_or_default()
}

fn server_with(http: HttpConfig) -> HttpServer {
    let config = ServerConfig::new("zest-load-test", "1.0");
    serve_http_with("127.0.0.1:0", config, http, registry()).expect("bind 127.0.0.1:0")
}

/// What one call sent and what came back.
type Answer = (String, Option<String>);

/// Starts session `session`'s client on a thread of its own: it connects, makes its calls one
/// after another, closes, and sends what it got on `done`.
fn session(url: String, session: usize, calls: usize, done: mpsc::Sender<Vec<Answer>>) {
    thread::spawn(move || {
        let client = Client::connect(&url, ClientOptions::new("load", "1")).expect("connect");
        let mut answers = Vec::with_capacity(calls);
        for call in 0..calls {
            let text = load::call_text(session, call);
            let result = client.call_tool("echo", json!({"text": text})).expect("a call");
            let echoed = result.content.first().and_then(|c| c.as_text()).map(str::to_owned);
            answers.push((text, echoed));
        }
        client.close().expect("close");
        let _ = done.send(answers);
    });
}

/// Gathers `sessions` answers from `done` until `deadline`; fewer if it passes (or a client
/// thread panicked).
fn gather(done: &mpsc::Receiver<Vec<Answer>>, sessions: usize, deadline: Instant) -> Vec<Answer> {
    let mut all = Vec::new();
    for _ in 0..sessions {
        let left = deadline.saturating_duration_since(Instant::now());
        match done.recv_timeout(left) {
            Ok(answers) => all.extend(answers),
            Err(_) => break,
        }
    }
    all
}

#[test]
fn two_hundred_sessions_of_fifty_calls_lose_and_duplicate_nothing() {
    let server = server_with(HttpConfig::new());
    let (tx, done) = mpsc::channel();
    for s in 0..SESSIONS {
        session(server.url(), s, CALLS, tx.clone());
    }
    let all = gather(&done, SESSIONS, Instant::now() + Duration::from_secs(300));
    assert_eq!(all.len(), SESSIONS * CALLS, "every session done within 300 s");
    for (sent, echoed) in &all {
        assert_eq!(echoed.as_deref(), Some(sent.as_str()), "the answer to {sent}");
    }
    let sent: Vec<String> = all.into_iter().map(|(sent, _)| sent).collect();
    LEDGER.assert_each_once(&sent);
    load::settle("sessions after every client closed", Duration::from_secs(30), 0, || {
        server.session_count()
    });
    server.shutdown();
}

#[test]
fn a_thousand_sessions_at_once_lose_duplicate_and_keep_nothing() {
    let mut http = HttpConfig::new();
    // A session's connection waits idle while the others open: on a slow machine, perhaps
    // longer than the 30 s a request head may take to come by default.
    http.http1.head_timeout = WIDE_PATIENCE;
    let server = server_with(http);
    let baseline = server.stats();
    let wide =
        load::wide_sessions(server.local_addr(), WIDE_SESSIONS, WIDE_CALLS, || server.stats());
    assert_eq!(wide.at_peak.sessions, WIDE_SESSIONS, "held with every call answered");
    LEDGER.assert_each_once(&wide.assert_each_answered(WIDE_SESSIONS, WIDE_CALLS));
    load::settle("what the server holds", Duration::from_secs(30), baseline, || server.stats());
    server.shutdown();
}

#[test]
fn a_client_gone_mid_stream_leaves_nothing_behind() {
    let mut http = HttpConfig::new();
    // Sweeps every second; the abandoned session expires 2 s after its handler ends.
    http.router.idle_timeout = Duration::from_secs(2);
    let server = server_with(http);
    let baseline = server.stats();
    assert_eq!(baseline.sessions, 0);
    assert_eq!(baseline.events_held, Some(0), "the memory store tells its count");
    load::drop_mid_stream(server.local_addr(), 25);
    let during = server.stats();
    assert_eq!(during.sessions, 1, "the session outlives its stream: {during:?}");
    // The handler goes on (a client may resume); its reports wait in the event store, then
    // the idle session expires and takes them with it.
    load::settle("what the server holds", Duration::from_secs(20), baseline, || server.stats());
    server.shutdown();
}

#[test]
fn a_trickling_client_does_not_stop_others() {
    let server = server_with(HttpConfig::new());
    let addr = server.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let trickle_stop = stop.clone();
    let trickler =
        thread::spawn(move || load::trickle_call(addr, Duration::from_millis(100), &trickle_stop));
    let (tx, done) = mpsc::channel();
    for s in 0..20 {
        session(server.url(), 1000 + s, 5, tx.clone());
    }
    let served = gather(&done, 20, Instant::now() + Duration::from_secs(30)).len();
    assert!(!trickler.is_finished(), "the trickler is still sending its body");
    stop.store(true, Ordering::SeqCst);
    let (sent, whole) = trickler.join().unwrap();
    assert_eq!(served, 20 * 5, "the others are served within 30 s");
    assert!(sent < whole, "the others finished while the body was still arriving");
    server.shutdown();
}

#[test]
fn a_client_that_does_not_read_is_cut_off_once_its_backlog_is_full() {
    let mut http = HttpConfig::new();
    http.http1.max_backlog_bytes = 1024 * 1024;
    let server = server_with(http);
    let handle = server.handle();
    load::assert_a_client_that_does_not_read_is_cut_off(server.local_addr(), |record| {
        handle.log(LoggingLevel::Info, record);
    });
    server.shutdown();
}

#[test]
fn the_listener_lets_a_burst_of_connections_wait() {
    let server = server_with(HttpConfig::new());
    load::assert_listen_backlog(server.local_addr(), LISTEN_BACKLOG);
    server.shutdown();
}

#[test]
fn a_large_answer_beside_small_messages_is_not_cut() {
    let mut http = HttpConfig::new();
    http.http1.max_backlog_bytes = 64 * 1024;
    let server = server_with(http);
    load::assert_a_large_answer_beside_small_messages_is_not_cut(server.local_addr());
    server.shutdown();
}
