//! The fixture server every runtime's tests and demo use (docs/runtime-contract.md).
//!
//! Tools `echo`, `add`, `long_running`, `sample`, `fail`, `crash`; resource `zest://readme`;
//! template `zest://items/{id}`; prompt `greet`. Flags: `--banner` (two non-JSON lines on
//! stdout first), `--giant-line` (one 10 MiB line on stdout first), `--linger` (stay alive
//! after stdin ends). Logs go to stderr only.

use std::io::Write;
use std::thread;
use std::time::Duration;

use zest_blocking::{serve_stdio, ServerConfig};

#[path = "support/fixture.rs"]
mod fixture;

fn main() {
    let flags: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| flags.iter().any(|f| f == flag);
    let mut stdout = std::io::stdout().lock();
    if has("--banner") {
        let _ = writeln!(stdout, "fixture server starting up");
        let _ = writeln!(stdout, "this line is not JSON either");
    }
    if has("--giant-line") {
        let _ = stdout.write_all(&vec![b'x'; 10 * 1024 * 1024]);
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
    drop(stdout);

    eprintln!("fixture: serving on stdio (pid {})", std::process::id());
    let reason = serve_stdio(ServerConfig::new("zest-fixture", "1.0.0"), fixture::registry());
    eprintln!("fixture: session closed: {reason}");
    if has("--linger") {
        eprintln!("fixture: lingering");
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
}
