//! A short stdio soak CI runs so the bench's path stays working: 20,000 echo calls at
//! concurrency 8 from zest-blocking's client to the blocking fixture, each answered once with its
//! own text, and the memory of neither process growing without bound.

mod common;
#[path = "../../tests/support/soak.rs"]
mod soak;
#[path = "common/stdio_soak.rs"]
mod stdio_soak;

/// Calls in the soak, and between two samples.
const CALLS: usize = 20_000;
const EVERY: usize = 5_000;

/// A bound no run near its steady state reaches, even on a loaded machine (RSS does not
/// depend on speed): a leak of a kilobyte a call would pass it.
const MAX_GROWTH_KIB: i64 = 32 * 1024;

#[test]
fn twenty_thousand_stdio_calls_are_each_answered_once() {
    let soak = stdio_soak::run(&common::fixture(), CALLS, EVERY);
    assert_eq!(soak.answered, CALLS);
    assert_eq!(soak.samples.len(), CALLS / EVERY);
    let (client, server) = soak.growth_kib();
    assert!(client < MAX_GROWTH_KIB, "client RSS grew {client} KiB: {:?}", soak.samples);
    assert!(server < MAX_GROWTH_KIB, "server RSS grew {server} KiB: {:?}", soak.samples);
}
