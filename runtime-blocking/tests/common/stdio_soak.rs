//! zest-blocking's part of the stdio soak (`tests/support/soak.rs`, included beside this as
//! `soak`): one client making each batch from [`CONCURRENCY`] threads. Shared by
//! `benches/soak.rs` and `tests/soak.rs`.

use std::ops::Range;
use std::path::Path;
use std::thread;
use std::time::Duration;

use zest_blocking::{Client, ClientApi, ClientOptions, StdioCommand};

use crate::soak::{self, Soak, CONCURRENCY};

/// Spawns `fixture`, makes `calls` echo calls sampled every `every`, closes. Bounded in time
/// by the client: a call unanswered for 60 s (its default request timeout) fails the soak.
pub(crate) fn run(fixture: &Path, calls: usize, every: usize) -> Soak {
    // The fixture exits as soon as its stdin ends: the grace is never waited out.
    let command =
        StdioCommand::new(fixture).on_stderr(|_| {}).shutdown_grace(Duration::from_secs(30));
    let client =
        Client::spawn(command, ClientOptions::new("soak", "0")).expect("the fixture starts");
    let soak = soak::run(calls, every, client.pid(), |range| batch(&client, range));
    client.close().expect("the fixture exits");
    soak
}

/// Calls `range` from [`CONCURRENCY`] threads, each taking every CONCURRENCY-th call; returns
/// how many came back with their own text.
fn batch(client: &Client, range: Range<usize>) -> usize {
    thread::scope(|scope| {
        let threads: Vec<_> = (0..CONCURRENCY)
            .map(|first| {
                let calls = range.clone().skip(first).step_by(CONCURRENCY);
                scope.spawn(move || {
                    let mut answered = 0;
                    for i in calls {
                        let result = client.call_tool("echo", soak::echo_args(i));
                        soak::check_echo(i, result);
                        answered += 1;
                    }
                    answered
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().expect("a soak thread")).sum()
    })
}
