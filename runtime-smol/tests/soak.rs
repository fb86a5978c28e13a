//! A short stdio soak CI runs so the bench's path stays working: 20,000 echo calls at
//! concurrency 8 from zest-smol's client to the smol fixture, each answered once with its
//! own text, and the memory of neither process growing without bound.

mod common;
#[path = "../../tests/support/soak.rs"]
mod soak;
#[path = "common/stdio_soak.rs"]
mod stdio_soak;

#[test]
fn twenty_thousand_stdio_calls_are_each_answered_once() {
    stdio_soak::run(&common::fixture(), soak::SHORT_CALLS, soak::SHORT_EVERY).assert_short();
}
