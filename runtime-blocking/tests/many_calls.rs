//! 4,096 concurrent calls on one client, four times the default `max_in_flight`: all started
//! at once with `start`, the ones past the limit wait for a slot (backpressure in core), and
//! every call gets its own answer once. Prints the client's resident memory before and after.

mod common;

use std::collections::BTreeSet;

use serde_json::json;
use zest_blocking::core::RequestOptions;
use zest_blocking::schema::methods::CallTool;
use zest_blocking::schema::CallToolParams;

const CALLS: usize = 4_096;

/// This process's resident set size in KiB, from /proc.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("VmRSS: 0 kB");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}

#[test]
fn four_thousand_concurrent_calls_all_complete() {
    let client = common::spawn_fixture(&[]);
    let before = rss_kib();
    let pending: Vec<_> = (0..CALLS)
        .map(|i| {
            let params: CallToolParams = serde_json::from_value(
                json!({"name": "echo", "arguments": {"text": i.to_string()}}),
            )
            .unwrap();
            client.start::<CallTool>(params, RequestOptions::default())
        })
        .collect();
    let mut texts = BTreeSet::new();
    for call in pending {
        let result = call.wait().expect("every call is answered");
        let text = result.content[0].as_text().unwrap_or_default().to_owned();
        assert!(texts.insert(text.clone()), "{text} answered twice");
    }
    let expected: BTreeSet<String> = (0..CALLS).map(|i| i.to_string()).collect();
    assert_eq!(texts, expected, "each call got its own answer");
    println!("client RSS: {before} KiB before, {} KiB after {CALLS} concurrent calls", rss_kib());
    client.close().expect("closes");
}
