//! Memory of idle Streamable HTTP sessions: 10,000 sessions go through the handshake in one
//! [`Router`], then sit idle; the bench prints the heap bytes each one holds (a counting
//! allocator, so the figure is exact for this build) and the router's throughput for the
//! handshake itself. Then every session gets a request to its client with a deadline, and
//! the bench prints what finding the router's next deadline costs (`poll_timeout`, which a
//! runtime asks after every operation) and what a timer tick with nothing due costs: with
//! a heap of deadlines neither grows with the number of sessions.
//!
//! `cargo bench -p zest-core --bench sessions` prints the figures; nothing is asserted.
#![allow(clippy::disallowed_methods)] // A benchmark reads the clock.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http::{HeaderMap, HeaderValue, Method};
use serde_json::json;
use zest_core::http::server::{Router, RouterConfig};
use zest_core::io::{Input, Output, Receive, RequestHead, StreamEvent, StreamId, Transmit};
use zest_core::schema::Tool;
use zest_core::server::{Registry, ServerConfig};
use zest_core::RequestOptions;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to the system allocator unchanged; the counter only observes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's layout contract is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const SESSIONS: usize = 10_000;

fn exchange(
    router: &mut Router<u8>,
    next: &mut u64,
    session: Option<&str>,
    body: &[u8],
) -> Option<String> {
    let stream = StreamId(*next);
    *next += 1;
    let mut headers = HeaderMap::new();
    headers.insert("host", HeaderValue::from_static("127.0.0.1"));
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    headers.insert("accept", HeaderValue::from_static("application/json, text/event-stream"));
    if let Some(id) = session {
        headers.insert("mcp-session-id", HeaderValue::from_str(id).unwrap());
    }
    let head = RequestHead { method: Method::POST, uri: "/mcp".parse().unwrap(), headers };
    let now = Instant::now();
    router.handle_input(Input::Receive(
        now,
        Receive { stream, event: StreamEvent::Accept(Box::new(head)) },
    ));
    router.handle_input(zest_core::io::data(now, stream, body));
    router.handle_input(Input::Receive(now, Receive { stream, event: StreamEvent::End }));
    let mut id = None;
    while let Some(out) = router.poll_output() {
        if let Output::Transmit(Transmit::Respond { head, .. }) = out {
            id = head.headers.get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
        }
    }
    id
}

fn main() {
    let mut registry = Registry::default();
    for i in 0..50 {
        let tool = Tool::new(format!("tool_{i}"), "a tool", json!({"type":"object"}));
        registry.add_tool(tool, 0u8);
    }
    let mut config = RouterConfig::new([3; 32]);
    config.max_sessions = SESSIONS;
    let mut router = Router::new(ServerConfig::new("bench", "1"), config, registry);
    let init = serde_json::to_vec(&json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{"sampling":{},"roots":{}},
        "clientInfo":{"name":"bench-client","version":"1.0.0"}}}))
    .unwrap();
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let mut next = 1;
    // One session first, so the router's own tables have their first allocation.
    let first = exchange(&mut router, &mut next, None, &init).unwrap();
    exchange(&mut router, &mut next, Some(&first), initialized);
    let before = LIVE.load(Ordering::Relaxed);
    let start = Instant::now();
    for _ in 1..SESSIONS {
        let id = exchange(&mut router, &mut next, None, &init).expect("a session id");
        exchange(&mut router, &mut next, Some(&id), initialized);
    }
    let took = start.elapsed();
    let after = LIVE.load(Ordering::Relaxed);
    assert_eq!(router.session_count(), SESSIONS);
    let per = (after - before) as f64 / (SESSIONS - 1) as f64;
    println!("sessions held: {}", router.session_count());
    println!(
        "heap per idle session: {per:.0} bytes (registry of 50 tools shared, replay buffers empty)"
    );
    println!(
        "handshakes: {:.0}/s (initialize + initialized, two POSTs each, in memory)",
        (SESSIONS - 1) as f64 / took.as_secs_f64()
    );
    deadlines(&mut router);
}

/// Gives every session a request to its client with a deadline, then times the router's
/// deadline look-ups.
fn deadlines(router: &mut Router<u8>) {
    let now = Instant::now();
    let ids: Vec<_> = router.sessions().cloned().collect();
    for (i, id) in ids.iter().enumerate() {
        let session = router.session_mut(id).expect("held");
        let timeout = Duration::from_secs(600) + Duration::from_millis(i as u64);
        let opts = RequestOptions::default().timeout(timeout);
        session.request(now, None, "ping", None, opts).expect("the session is open");
    }
    while router.poll_output().is_some() {}
    let first = router.poll_timeout().expect("a deadline");
    assert!(first <= now + Duration::from_secs(600));
    const LOOKUPS: u32 = 100_000;
    let start = Instant::now();
    let mut soonest = first;
    for _ in 0..LOOKUPS {
        soonest = soonest.min(std::hint::black_box(router.poll_timeout()).unwrap());
    }
    let lookup = start.elapsed() / LOOKUPS;
    const TICKS: u32 = 10_000;
    let start = Instant::now();
    for _ in 0..TICKS {
        router.handle_input(Input::Timeout(now));
        while router.poll_output().is_some() {}
    }
    let tick = start.elapsed() / TICKS;
    println!("deadlines held: {} (one request to the client per session)", ids.len());
    println!("next deadline (poll_timeout): {} ns per look-up", lookup.as_nanos());
    println!("timer tick with nothing due: {} ns", tick.as_nanos());
}
