//! The fixture MCP server of docs/runtime-contract.md, served over stdio with zest-smol.
//!
//! Tools `echo`, `add`, `long_running`, `sample`, `fail`, `crash`; resource `zest://readme`;
//! template `zest://items/{id}`; prompt `greet`. Flags: `--banner` (two non-JSON lines on
//! stdout first), `--giant-line` (one 10 MiB line of `x` first), `--linger` (stay alive after
//! stdin ends). Logs go to stderr only.

use std::io::Write as _;
use std::time::Duration;

use zest_smol::{serve_stdio, ServerConfig};

#[path = "support/fixture.rs"]
mod fixture;

use fixture::registry;

fn main() {
    let flags: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| flags.iter().any(|f| f == flag);
    let mut stdout = std::io::stdout().lock();
    if has("--banner") {
        writeln!(stdout, "zest-smol fixture server starting").expect("stdout is writable");
        writeln!(stdout, "(this banner is not JSON-RPC)").expect("stdout is writable");
    }
    if has("--giant-line") {
        stdout.write_all(&vec![b'x'; 10 * 1024 * 1024]).expect("stdout is writable");
        stdout.write_all(b"\n").expect("stdout is writable");
    }
    stdout.flush().expect("stdout is writable");
    drop(stdout);

    let config = ServerConfig::new("zest-smol-fixture", env!("CARGO_PKG_VERSION"));
    let reason = smol::block_on(serve_stdio(config, registry()));
    eprintln!("fixture: session ended: {reason}");
    if has("--linger") {
        eprintln!("fixture: lingering");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}
