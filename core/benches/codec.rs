//! Codec micro-benchmark: decode + encode of a typical `tools/call` request and its result,
//! through zest's JSON-RPC codec and, beside it, through plain `serde_json::Value`.
//!
//! `cargo bench -p zest-core --bench codec` prints messages/s and MB/s; nothing is asserted.
#![allow(clippy::disallowed_methods)] // A benchmark reads the clock.

use std::hint::black_box;
use std::time::{Duration, Instant};

use zest_core::jsonrpc::{decode, encode_line, Frame, Message};
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
    let per_sec = f64::from(rounds) * 2.0 / best.as_secs_f64();
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
}
