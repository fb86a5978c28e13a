//! zest-smol's part of the stdio soak (`tests/support/soak.rs`, included beside this as
//! `soak`): a client driven by `smol::block_on`, its session on smol's global executor as in
//! the stdio bench, making each batch from [`CONCURRENCY`] tasks. Shared by
//! `benches/soak.rs` and `tests/soak.rs`.

use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use zest_smol::{Client, ClientApi, ClientOptions, StdioCommand};

use crate::soak::{self, Soak, CONCURRENCY};

/// Spawns `fixture`, makes `calls` echo calls sampled every `every`, closes. Bounded in time
/// by the client: a call unanswered for 60 s (its default request timeout) fails the soak.
pub(crate) fn run(fixture: &Path, calls: usize, every: usize) -> Soak {
    // The fixture exits as soon as its stdin ends: the grace is never waited out.
    let command =
        StdioCommand::new(fixture).on_stderr(|_| {}).shutdown_grace(Duration::from_secs(30));
    let client = smol::block_on(Client::spawn(command, ClientOptions::new("soak", "0")))
        .expect("the fixture starts");
    let soak = soak::run(calls, every, client.pid(), |range| smol::block_on(batch(&client, range)));
    smol::block_on(client.close()).expect("the fixture exits");
    soak
}

/// Calls `range` from [`CONCURRENCY`] tasks, each taking every CONCURRENCY-th call; returns
/// how many came back with their own text.
async fn batch(client: &Client, range: Range<usize>) -> usize {
    let tasks: Vec<_> = (0..CONCURRENCY)
        .map(|first| {
            let client = client.clone();
            let calls = range.clone().skip(first).step_by(CONCURRENCY);
            smol::spawn(async move {
                let mut answered = 0;
                for i in calls {
                    let result = client.call_tool("echo", soak::echo_args(i)).await;
                    soak::check_echo(i, result);
                    answered += 1;
                }
                answered
            })
        })
        .collect();
    let mut answered = 0;
    for task in tasks {
        answered += task.await;
    }
    answered
}
