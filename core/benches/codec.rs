//! Codec micro-benchmark: decode + encode of a typical `tools/call` request and its result,
//! through zest's JSON-RPC codec and, beside it, through plain `serde_json::Value`.
//!
//! Then large messages, as a server sees them: one `tools/call` whose string argument is 64 KiB
//! or 1 MiB, decoded from a stdio line fed in 64 KiB reads (`LineDecoder` + `decode`), and the
//! result echoing it, encoded as a line.
//!
//! `cargo bench -p zest-core --bench codec [ROUNDS]` prints messages/s and MB/s; nothing is
//! asserted. `ROUNDS` (default 200,000) applies to the small messages; large ones scale it down.
#![allow(clippy::disallowed_methods)] // A benchmark reads the clock.

use std::hint::black_box;
use std::time::{Duration, Instant};

use zest_core::framing::lines::{LineDecoder, LineEvent};
use zest_core::jsonrpc::{decode, encode_line, Frame, Message, RawJson, RequestId};
use zest_core::schema::CallToolParams;

const REQUEST: &str = r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"search_issues","arguments":{"query":"label:bug state:open sort:updated","limit":25,"include_closed":false,"fields":["title","number","labels","assignee"]},"_meta":{"progressToken":42}}}"#;
const RESULT: &str = r#"{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Found 3 issues: #1201 Crash when the SSE stream ends without a response; #1188 Session id not sent on GET; #1175 Timeout ignores progress notifications"}],"structuredContent":{"total":3,"items":[{"number":1201,"title":"Crash when the SSE stream ends"},{"number":1188,"title":"Session id not sent on GET"},{"number":1175,"title":"Timeout ignores progress"}]},"isError":false}}"#;

fn measure(name: &str, rounds: u32, mut f: impl FnMut() -> usize) -> f64 {
    // Warm up, then time a fixed number of rounds, best of five runs.
    for _ in 0..rounds / 10 {
        black_box(f());
    }
    let mut best = Duration::MAX;
    let mut bytes = 0;
    for _ in 0..5 {
        let start = Instant::now();
        bytes = 0;
        for _ in 0..rounds {
            bytes += black_box(f());
        }
        best = best.min(start.elapsed());
    }
    report(name, rounds, 2, bytes, best)
}

fn report(name: &str, rounds: u32, per_round: u32, bytes: usize, best: Duration) -> f64 {
    let per_sec = f64::from(rounds) * f64::from(per_round) / best.as_secs_f64();
    let mb_s = bytes as f64 / best.as_secs_f64() / 1e6;
    println!("{name:<44} {per_sec:>12.0} msg/s {mb_s:>9.1} MB/s");
    per_sec
}

fn main() {
    let rounds = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(200_000u32);
    println!(
        "decode + encode of one tools/call request and one result ({rounds} pairs, best of 5)"
    );
    let zest = measure("zest codec (envelope; params/results raw)", rounds, || {
        let mut n = 0;
        for text in [REQUEST, RESULT] {
            let Ok(Frame::Single(m)) = decode(text.as_bytes()) else { unreachable!() };
            n += encode_line(&m).len();
        }
        n
    });
    let value = measure("serde_json::Value round trip", rounds, || {
        let mut n = 0;
        for text in [REQUEST, RESULT] {
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            n += serde_json::to_vec(&v).unwrap().len() + 1;
        }
        n
    });
    let typed = measure("zest codec + typed CallToolParams view", rounds, || {
        let mut n = 0;
        for text in [REQUEST, RESULT] {
            let Ok(Frame::Single(m)) = decode(text.as_bytes()) else { unreachable!() };
            if let Message::Request(r) = &m {
                let p: CallToolParams = r.params.as_ref().unwrap().parse().unwrap();
                n += p.name.len();
            }
            n += encode_line(&m).len();
        }
        n
    });
    println!("zest codec / Value path: {:.2}x", zest / value);
    println!("zest codec with typed params / Value path: {:.2}x", typed / value);
    for size in [64 * 1024, 1024 * 1024] {
        large(size, (rounds / (size as u32 / 256)).max(20));
    }
}

/// Decode and encode rows for a `tools/call` whose `text` argument is `size` bytes of base64.
fn large(size: usize, rounds: u32) {
    let payload: String = (0..size)
        .map(|i| {
            char::from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i % 64])
        })
        .collect();
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{payload}"}}}}}}"#
    ) + "\n";
    let label = if size >= 1024 * 1024 {
        format!("{} MiB", size >> 20)
    } else {
        format!("{} KiB", size >> 10)
    };
    println!("large messages: {label} string argument ({rounds} rounds, best of 5)");
    let mut decoder = LineDecoder::default();
    best_of(&format!("decode a {label} line (64 KiB reads)"), rounds, || {
        let mut n = 0;
        for chunk in line.as_bytes().chunks(64 * 1024) {
            decoder.feed(chunk, &mut |ev| {
                let LineEvent::Frame(frame) = ev else { unreachable!() };
                let Ok(Frame::Single(m)) = decode(frame) else { unreachable!() };
                n += frame.len() + 1;
                black_box(m);
            });
        }
        n
    });
    let result = serde_json::json!({"content": [{"type": "text", "text": payload}]});
    best_of(&format!("serialize a {label} result (RawJson)"), rounds, || {
        RawJson::from_serialize(&result).get().len()
    });
    let reply = Message::result(RequestId::Number(7), RawJson::from_serialize(&result));
    best_of(&format!("encode a {label} result line"), rounds, || encode_line(&reply).len());
}

fn best_of(name: &str, rounds: u32, mut f: impl FnMut() -> usize) {
    black_box(f());
    let mut best = Duration::MAX;
    let mut bytes = 0;
    for _ in 0..5 {
        let start = Instant::now();
        bytes = 0;
        for _ in 0..rounds {
            bytes += black_box(f());
        }
        best = best.min(start.elapsed());
    }
    report(name, rounds, 1, bytes, best);
}
