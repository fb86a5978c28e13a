//! Every runtime's HTTP server under load on loopback (with the client of its own runtime
//! where a client is needed), bounded in count and time: 200 sessions of 50 calls each with
//! nothing lost or duplicated, 1,000 sessions open and calling at once with nothing lost or
//! duplicated and nothing held after their DELETEs, a client gone mid-stream leaving nothing
//! behind, a client trickling its request body not stopping others being served, a client
//! that stops reading cut off once what waits for it passes its limit, one that reads a
//! large answer beside small messages not cut, the listen backlog.

#[macro_use]
#[path = "support/clients.rs"]
mod clients;
#[path = "../../tests/support/load.rs"]
mod load;
#[path = "support/served.rs"]
mod served;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use clients::{text, Peer};
use load::{Ledger, CALLS, SESSIONS, WIDE_CALLS, WIDE_PATIENCE, WIDE_SESSIONS};
use serde_json::json;
use served::Served;
use zest_core::jsonrpc::ErrorObject;
use zest_core::runtime::http_server::LISTEN_BACKLOG;
use zest_core::schema::{CallToolParams, CallToolResult, LoggingLevel};
use zest_tokio::HttpConfig;

/// Every text `echo` was called with on each runtime's servers, across this binary's tests
/// (the three runtimes' checks run at once and send the same texts).
static LEDGERS: [Ledger; 3] = [Ledger::new(), Ledger::new(), Ledger::new()];

/// The ledger of runtime `C`'s servers.
fn ledger<C: Peer>() -> &'static Ledger {
    let index = ["tokio", "smol", "blocking"].iter().position(|r| *r == C::RUNTIME);
    &LEDGERS[index.expect("a known runtime")]
}

/// Taken by the checks that open hundreds of sessions, so that only one runs at a time.
static HEAVY: Mutex<()> = Mutex::new(());

fn heavy() -> MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The load tests' `echo` on runtime `C`: answers its text and notes it in `C`'s ledger.
fn echo<C: Peer>(p: &CallToolParams) -> Result<CallToolResult, ErrorObject> {
    let text = p.arguments.as_ref().and_then(|a| a.get("text")).and_then(|t| t.as_str());
    let text = text.unwrap_or_default().to_owned();
    ledger::<C>().record(&text);
    Ok(CallToolResult::text(text))
}

/// The load tests' tools served by the runtime of client `C`.
fn server<C: Peer>(http: HttpConfig) -> Served {
    Served::start_load(served::runtime_of::<C>(), http, echo::<C>)
}

/// Session `session`'s client: connects, makes its calls one after another, closes. Returns
/// what each call sent and what came back.
fn session<C: Peer>(url: &str, session: usize, calls: usize) -> Vec<(String, String)> {
    let client = C::connect(url);
    let answers = (0..calls)
        .map(|call| {
            let sent = load::call_text(session, call);
            let echoed = text(&client.call("echo", json!({"text": sent})));
            (sent, echoed)
        })
        .collect();
    client.close();
    answers
}

/// `sessions` sessions of `calls` calls each, on `lanes` threads at once (each runs its
/// sessions one after another), all within `within`.
fn sessions<C: Peer>(
    url: &str,
    first: usize,
    sessions: usize,
    calls: usize,
    lanes: usize,
    within: Duration,
) -> Vec<(String, String)> {
    let (done, answers) = mpsc::channel();
    for lane in 0..lanes {
        let (url, done) = (url.to_owned(), done.clone());
        thread::spawn(move || {
            for s in (lane..sessions).step_by(lanes) {
                let _ = done.send(session::<C>(&url, first + s, calls));
            }
        });
    }
    let deadline = Instant::now() + within;
    let mut all = Vec::new();
    for _ in 0..sessions {
        let left = deadline.saturating_duration_since(Instant::now());
        all.extend(
            answers
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("{}: sessions not done within {within:?}", C::RUNTIME)),
        );
    }
    all
}

fn two_hundred_sessions_of_fifty_calls_lose_and_duplicate_nothing<C: Peer>() {
    let _one_at_a_time = heavy();
    let server = server::<C>(HttpConfig::new());
    let all = sessions::<C>(&server.url(), 0, SESSIONS, CALLS, 20, Duration::from_secs(300));
    assert_eq!(all.len(), SESSIONS * CALLS);
    for (sent, echoed) in &all {
        assert_eq!(echoed, sent, "{}: the answer to {sent}", C::RUNTIME);
    }
    let sent: Vec<String> = all.into_iter().map(|(sent, _)| sent).collect();
    ledger::<C>().assert_each_once(&sent);
    load::settle("sessions after every client closed", Duration::from_secs(30), 0, || {
        server.session_count()
    });
    server.shutdown();
}

fn a_thousand_sessions_at_once_lose_duplicate_and_keep_nothing<C: Peer>() {
    let _one_at_a_time = heavy();
    let mut http = HttpConfig::new();
    // A session's connection waits idle while the others open: on a slow machine, perhaps
    // longer than the 30 s a request head may take to come by default.
    http.http1.head_timeout = WIDE_PATIENCE;
    let server = server::<C>(http);
    let baseline = server.stats();
    let wide =
        load::wide_sessions(server.local_addr(), WIDE_SESSIONS, WIDE_CALLS, || server.stats());
    assert_eq!(
        wide.at_peak.sessions,
        WIDE_SESSIONS,
        "{}: held with every call answered",
        C::RUNTIME
    );
    ledger::<C>().assert_each_once(&wide.assert_each_answered(WIDE_SESSIONS, WIDE_CALLS));
    load::settle("what the server holds", Duration::from_secs(30), baseline, || server.stats());
    server.shutdown();
}

fn a_client_gone_mid_stream_leaves_nothing_behind<C: Peer>() {
    let mut http = HttpConfig::new();
    // Sweeps every second; the abandoned session expires 2 s after its handler ends.
    http.router.idle_timeout = Duration::from_secs(2);
    let server = server::<C>(http);
    let baseline = server.stats();
    assert_eq!(baseline.sessions, 0);
    assert_eq!(baseline.events_held, Some(0), "the memory store tells its count");
    load::drop_mid_stream(server.local_addr(), 25);
    let during = server.stats();
    assert_eq!(during.sessions, 1, "{}: the session outlives its stream: {during:?}", C::RUNTIME);
    // The handler goes on (a client may resume); its reports wait in the event store, then
    // the idle session expires and takes them with it.
    load::settle("what the server holds", Duration::from_secs(20), baseline, || server.stats());
    server.shutdown();
}

fn a_trickling_client_does_not_stop_others<C: Peer>() {
    let server = server::<C>(HttpConfig::new());
    let addr = server.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let trickle_stop = stop.clone();
    let trickler =
        thread::spawn(move || load::trickle_call(addr, Duration::from_millis(100), &trickle_stop));
    let served = sessions::<C>(&server.url(), 1000, 20, 5, 20, Duration::from_secs(30)).len();
    assert!(!trickler.is_finished(), "{}: the trickler is still sending its body", C::RUNTIME);
    stop.store(true, Ordering::SeqCst);
    let (sent, whole) = trickler.join().expect("the trickler's thread");
    assert_eq!(served, 20 * 5, "{}: the others are served", C::RUNTIME);
    assert!(sent < whole, "{}: the others finished while the body was still arriving", C::RUNTIME);
    server.shutdown();
}

fn a_client_that_does_not_read_is_cut_off_once_its_backlog_is_full<C: Peer>() {
    let mut http = HttpConfig::new();
    http.http1.max_backlog_bytes = 1024 * 1024;
    let server = server::<C>(http);
    load::assert_a_client_that_does_not_read_is_cut_off(server.local_addr(), |record| {
        server.log(LoggingLevel::Info, record)
    });
    server.shutdown();
}

fn the_listener_lets_a_burst_of_connections_wait<C: Peer>() {
    let server = server::<C>(HttpConfig::new());
    load::assert_listen_backlog(server.local_addr(), LISTEN_BACKLOG);
    server.shutdown();
}

fn a_large_answer_beside_small_messages_is_not_cut<C: Peer>() {
    let mut http = HttpConfig::new();
    http.http1.max_backlog_bytes = 64 * 1024;
    let server = server::<C>(http);
    load::assert_a_large_answer_beside_small_messages_is_not_cut(server.local_addr());
    server.shutdown();
}

with_every_client!(
    two_hundred_sessions_of_fifty_calls_lose_and_duplicate_nothing,
    a_thousand_sessions_at_once_lose_duplicate_and_keep_nothing,
    a_client_gone_mid_stream_leaves_nothing_behind,
    a_trickling_client_does_not_stop_others,
    a_client_that_does_not_read_is_cut_off_once_its_backlog_is_full,
    the_listener_lets_a_burst_of_connections_wait,
    a_large_answer_beside_small_messages_is_not_cut,
);
