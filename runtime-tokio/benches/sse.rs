//! `cargo bench -p zest-tokio --bench sse [MB] [runs] [row]`: decode speed of zest-core's SSE
//! decoder beside the `eventsource-stream` and `sse-stream` crates, on the same ~50 MB stream
//! of typical MCP events fed in 64 KiB chunks. Figures are printed, never asserted. `row` keeps
//! only the rows whose name starts with it (for profiling).
//!
//! The stream, made with zest-core's encoder from a fixed seed: progress and log
//! notifications, tool results of 0.2 to 4 KB (some non-ASCII text), pretty-printed results
//! spread over many `data` lines, keep-alive comments, and a priming event with `retry` every
//! 1,000 events. Every event has an id. The async parsers are driven by
//! `futures::executor::block_on` over an in-memory stream, so no IO is timed.
//!
//! zest lends each event to a callback without allocating; the two crates hand out owned
//! events. The "zest + owned copy" row copies data, type and id into `String`s per event, so
//! the comparison with them is like for like.
#![allow(clippy::disallowed_methods)] // A benchmark reads the clock and its arguments.

use std::convert::Infallible;
use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::executor::block_on;
use futures::StreamExt;
use serde_json::json;
use zest_core::framing::sse::{self, SseDecoder, SseItem};

const CHUNK: usize = 64 * 1024;

/// What a decoder saw: events fired and bytes of their data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tally {
    events: usize,
    data_bytes: usize,
}

/// Decodes a whole stream given as chunks.
type Decode = fn(&[Bytes]) -> Tally;

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with('-'));
    let megabytes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(50);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let only = args.next().unwrap_or_default();
    let stream = build_stream(megabytes * 1_000_000);
    let chunks: Vec<Bytes> = (0..stream.len())
        .step_by(CHUNK)
        .map(|at| stream.slice(at..stream.len().min(at + CHUNK)))
        .collect();
    let zest = decode_zest(&chunks);
    println!(
        "SSE decode of {:.1} MB ({} events, {:.1} MB of data) in {} KiB chunks, best of {runs}",
        stream.len() as f64 / 1e6,
        zest.events,
        zest.data_bytes as f64 / 1e6,
        CHUNK / 1024
    );
    let rows: [(&str, Decode); 4] = [
        ("zest", decode_zest),
        ("zest + owned copy", decode_zest_owned),
        ("eventsource-stream", decode_eventsource_stream),
        ("sse-stream", decode_sse_stream),
    ];
    for (name, decode) in rows.into_iter().filter(|(name, _)| name.starts_with(&*only)) {
        let (best, tally) = measure(runs, || decode(&chunks));
        let mb_s = stream.len() as f64 / best.as_secs_f64() / 1e6;
        let note = if tally == zest { String::new() } else { format!("  (saw {tally:?})") };
        println!("sse decode {name}: {mb_s:.0} MB/s{note}");
    }
}

fn measure(runs: usize, mut decode: impl FnMut() -> Tally) -> (Duration, Tally) {
    let mut tally = black_box(decode()); // Warm-up.
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        tally = black_box(decode());
        best = best.min(start.elapsed());
    }
    (best, tally)
}

fn decode_zest(chunks: &[Bytes]) -> Tally {
    let mut decoder = SseDecoder::default();
    let mut tally = Tally::default();
    let mut sink = |item: SseItem<'_>| {
        if let SseItem::Event(event) = item {
            tally.events += 1;
            tally.data_bytes += black_box(event.data).len();
        }
    };
    for chunk in chunks {
        decoder.feed(chunk, &mut sink);
    }
    decoder.finish();
    tally
}

fn decode_zest_owned(chunks: &[Bytes]) -> Tally {
    let mut decoder = SseDecoder::default();
    let mut tally = Tally::default();
    let mut sink = |item: SseItem<'_>| {
        if let SseItem::Event(event) = item {
            let owned =
                (event.event_type.to_owned(), event.data.to_owned(), event.id.map(str::to_owned));
            tally.events += 1;
            tally.data_bytes += black_box(owned).1.len();
        }
    };
    for chunk in chunks {
        decoder.feed(chunk, &mut sink);
    }
    decoder.finish();
    tally
}

fn decode_eventsource_stream(chunks: &[Bytes]) -> Tally {
    let body = futures::stream::iter(chunks.iter().cloned().map(Ok::<_, Infallible>));
    let mut events = body.eventsource();
    block_on(async {
        let mut tally = Tally::default();
        while let Some(event) = events.next().await {
            let Ok(event) = event else { continue };
            tally.events += 1;
            tally.data_bytes += black_box(event).data.len();
        }
        tally
    })
}

fn decode_sse_stream(chunks: &[Bytes]) -> Tally {
    let body = futures::stream::iter(chunks.iter().cloned().map(Ok::<_, Infallible>));
    let mut events = sse_stream::SseStream::from_bytes_stream(body);
    block_on(async {
        let mut tally = Tally::default();
        while let Some(event) = events.next().await {
            let Ok(event) = event else { continue };
            if let Some(data) = &black_box(event).data {
                tally.events += 1;
                tally.data_bytes += data.len();
            }
        }
        tally
    })
}

/// A deterministic generator (64-bit LCG), so every run measures the same bytes.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

const WORDS: [&str; 16] = [
    "resource",
    "tool",
    "stream",
    "session",
    "request",
    "cancelled",
    "progress",
    "héllo",
    "naïve",
    "—",
    "résumé",
    "data",
    "result",
    "schema",
    "😀",
    "index",
];

/// Words up to at least `min` bytes plus a random part of `spread`.
fn sentence(rng: &mut Lcg, min: usize, spread: u64) -> String {
    let bytes = min + rng.below(spread.max(1)) as usize;
    let mut text = String::with_capacity(bytes + 16);
    while text.len() < bytes {
        text.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
        text.push(' ');
    }
    text
}

fn build_stream(target: usize) -> Bytes {
    let mut rng = Lcg(0x5eed);
    let mut out = Vec::with_capacity(target + 8192);
    let mut n = 0u64;
    while out.len() < target {
        let id = format!("s{}-{n}", n / 1000);
        if n % 1000 == 0 {
            let priming = sse::encode_priming(&id, Some(Duration::from_secs(3)));
            out.extend_from_slice(&priming.expect("ids have no line breaks"));
            n += 1;
            continue;
        }
        let message = match rng.below(20) {
            0..=7 => json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": format!("tok-{}", n / 50), "progress": n % 100, "total": 100,
                "message": format!("Indexed {} of 100 files", n % 100)}})
            .to_string(),
            8..=12 => json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                "level": "info", "logger": "indexer",
                "data": sentence(&mut rng, 100, 200)}})
            .to_string(),
            13..=18 => json!({"jsonrpc": "2.0", "id": n, "result": {"content": [{
                "type": "text", "text": sentence(&mut rng, 200, 3800)}],
                "isError": false}})
            .to_string(),
            _ => serde_json::to_string_pretty(&json!({"jsonrpc": "2.0", "id": n, "result": {
                "structuredContent": {"items": (0..8).map(|i| json!({"number": i,
                "title": sentence(&mut rng, 40, 0)})).collect::<Vec<_>>()}}}))
            .expect("a Value serializes"),
        };
        let event = sse::encode_event(Some(&id), None, &message);
        out.extend_from_slice(&event.expect("ids have no line breaks"));
        if rng.below(20) == 0 {
            out.extend_from_slice(&sse::encode_comment("keep-alive"));
        }
        n += 1;
    }
    Bytes::from(out)
}
