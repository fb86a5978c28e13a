//! 4,096 concurrent calls on one client, four times the default `max_in_flight`: the ones past
//! the limit wait for a slot (backpressure in core) and every call gets its own answer once.
//! Prints the client's resident memory before and after.

mod common;

use std::collections::BTreeSet;

use serde_json::json;
use zest_smol::{ClientApi, ClientOptions};

use common::{fixture_cmd, run};

const CALLS: usize = 4_096;

/// This process's resident set size in KiB, from /proc.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("VmRSS: 0 kB");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}

#[test]
fn four_thousand_concurrent_calls_all_complete() {
    run(120, async {
        let (command, _stderr) = fixture_cmd(&[]);
        let options = ClientOptions::new("zest-smol-many-calls", "0.0.0");
        let client = zest_smol::Client::spawn(command, options).await.expect("starts");
        let before = rss_kib();
        let calls = (0..CALLS).map(|i| {
            let client = client.clone();
            smol::spawn(async move {
                let result = client.call_tool("echo", json!({"text": i.to_string()})).await;
                result.map(|r| r.content[0].as_text().unwrap_or_default().to_owned())
            })
        });
        let tasks: Vec<_> = calls.collect();
        let mut texts = BTreeSet::new();
        for task in tasks {
            let text = task.await.expect("every call is answered");
            assert!(texts.insert(text.clone()), "{text} answered twice");
        }
        let expected: BTreeSet<String> = (0..CALLS).map(|i| i.to_string()).collect();
        assert_eq!(texts, expected, "each call got its own answer");
        println!(
            "client RSS: {before} KiB before, {} KiB after {CALLS} concurrent calls",
            rss_kib()
        );
        client.close().await.expect("closes");
    });
}
