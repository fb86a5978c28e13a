//! `cargo bench -p zest-smol --bench soak`: 1,000,000 `tools/call` echo calls of a 64-char text
//! over stdio (`ZEST_SOAK_CALLS` overrides the count) at concurrency 8, zest-smol's client (this
//! process, smol::block_on and the global executor) against the smol fixture server (a child
//! process). Prints calls/s and both processes' RSS every 100,000 calls, their peak RSS (VmHWM),
//! and the growth from the first sample to the last. Figures are printed, never asserted; every
//! call must come back with its own text or the bench panics.

#[path = "../../tests/support/soak.rs"]
mod soak;
#[path = "../tests/common/stdio_soak.rs"]
mod stdio_soak;

fn main() {
    let calls = soak::calls_from_env();
    let fixture = soak::fixture("smol");
    println!(
        "zest-smol stdio soak: {calls} tools/call echo calls of a 64-char text at \
         concurrency {}",
        soak::CONCURRENCY
    );
    println!(
        "client: this process, smol::block_on and the global executor; server: {}",
        fixture.display()
    );
    println!();
    stdio_soak::run(&fixture, calls, soak::SAMPLE_EVERY).print();
}
