//! Response bytes (arbitrary, or built from HTTP pieces), cut points, limits and an optional
//! EOF → `http1::ClientConnection` after it sent a request.
//!
//! Never panics; the events (adjacent data joined) are the same however the bytes are cut
//! (STYLE rule 14); they form `Head, Data*, End` or end in one `Failed`; the body never exceeds
//! the limit; a failure or a non-reusable end queues a close, and nothing follows a close.
#![no_main]

use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use bytes::Bytes;
use http::{Method, Request};
use libfuzzer_sys::fuzz_target;
use zest_core::http1::{ClientConnection, ClientEvent, Config, Transmit};
use zest_fuzz::http1::{render, Piece};

#[derive(Arbitrary, Debug)]
struct Case {
    method: u8,
    max_head: u16,
    max_body: Option<u16>,
    /// Seconds after the request at which a timeout is delivered, before any EOF.
    timeout: Option<u8>,
    eof: bool,
    cuts: Vec<u16>,
    pieces: Vec<Piece>,
}

/// What one run observed: events with data joined, and whether a close was queued.
#[derive(Debug, PartialEq)]
struct Seen {
    events: Vec<ClientEvent>,
    closed: bool,
}

fn run(case: &Case, t0: Instant, chunks: &[&[u8]]) -> Seen {
    let mut config = Config::default();
    config.max_head_bytes = match case.max_head {
        0 => config.max_head_bytes,
        n => usize::from(n.max(16)),
    };
    config.max_body_bytes = case.max_body.map(u64::from);
    let method = [Method::GET, Method::HEAD, Method::POST, Method::DELETE]
        [usize::from(case.method % 4)]
    .clone();
    let body = if method == Method::POST { Bytes::from_static(b"{}") } else { Bytes::new() };
    let request = Request::builder().method(method).uri("http://fuzz.test/mcp").body(body);
    let mut c = ClientConnection::new(config);
    c.send_request(t0, request.unwrap()).unwrap();
    let mut closed = false;
    let mut events = Vec::new();
    let mut drain = |c: &mut ClientConnection, events: &mut Vec<ClientEvent>| {
        while let Some(t) = c.poll_transmit() {
            assert!(!closed, "a transmit after a close: {t:?}");
            closed = t == Transmit::Close;
        }
        events.extend(std::iter::from_fn(|| c.poll_event()));
    };
    drain(&mut c, &mut events);
    for chunk in chunks {
        c.handle_data(chunk);
        drain(&mut c, &mut events);
    }
    if let Some(secs) = case.timeout {
        c.handle_timeout(t0 + Duration::from_secs(secs.into()));
        drain(&mut c, &mut events);
    }
    if case.eof {
        c.handle_end();
        drain(&mut c, &mut events);
    }
    Seen { events: joined(events), closed }
}

fn joined(events: Vec<ClientEvent>) -> Vec<ClientEvent> {
    let mut out: Vec<ClientEvent> = Vec::new();
    for e in events {
        match (out.last_mut(), e) {
            (Some(ClientEvent::Data(prev)), ClientEvent::Data(next)) => {
                *prev = Bytes::from([&prev[..], &next[..]].concat());
            }
            (_, e) => out.push(e),
        }
    }
    out
}

/// The shape every run must have.
fn check(case: &Case, seen: &Seen) {
    let mut rest = &seen.events[..];
    if let [ClientEvent::Head(_), tail @ ..] = rest {
        rest = tail;
        if let [ClientEvent::Data(body), tail @ ..] = rest {
            if let Some(limit) = case.max_body {
                assert!(body.len() <= usize::from(limit), "{} > {limit}", body.len());
            }
            rest = tail;
        }
        if let [ClientEvent::End { reusable }, tail @ ..] = rest {
            assert!(*reusable || seen.closed, "an end without reuse closes");
            if tail.is_empty() && !case.eof {
                assert_eq!(seen.closed, !reusable, "a reusable connection stays open");
            }
            rest = tail;
        }
    }
    match rest {
        [] => {}
        [ClientEvent::Failed(_)] => assert!(seen.closed, "a failure closes"),
        other => panic!("unexpected events {other:?} in {:?}", seen.events),
    }
}

fuzz_target!(|case: Case| {
    let bytes = render(&case.pieces);
    let t0 = Instant::now();
    let whole = run(&case, t0, &[&bytes]);
    check(&case, &whole);
    let mut cuts: Vec<usize> =
        case.cuts.iter().map(|&c| usize::from(c) % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain([bytes.len()]) {
        chunks.push(&bytes[start..cut]);
        start = cut;
    }
    assert_eq!(run(&case, t0, &chunks), whole, "cut into {chunks:?}");
});
