//! A program that only speaks stdio links none of the HTTP client's transport, OAuth or TLS
//! code (about a fifth of a client's code, which is nearly all resident: see
//! `scripts/measure-rss`). The client machine holds its HTTP side as a trait object made
//! only by `Client::new_http`, and zest-blocking's TLS handshake is installed only by
//! `connect`. Checked on each runtime's stdio demo, a stdio-only client, by its symbol table.

use std::process::Command;

#[path = "../../tests/support/soak.rs"]
mod soak;

/// Symbol fragments of code that only an HTTP session reaches.
const HTTP_ONLY: [&str; 4] = ["rustls", "HttpTransport", "AuthFlow", "DpopSigner"];

#[test]
fn a_stdio_only_client_links_no_http_transport_oauth_or_tls() {
    for runtime in ["tokio", "smol", "blocking"] {
        let demo = soak::example(runtime, "demo");
        let out = Command::new("nm").arg("-C").arg(&demo).output().expect("nm (binutils) runs");
        assert!(out.status.success(), "nm {}: {}", demo.display(), out.status);
        let symbols = String::from_utf8_lossy(&out.stdout);
        assert!(symbols.lines().count() > 1000, "{} has no symbol table", demo.display());
        for fragment in HTTP_ONLY {
            let linked: Vec<&str> = symbols.lines().filter(|l| l.contains(fragment)).collect();
            assert!(
                linked.is_empty(),
                "{runtime}'s stdio demo links {} `{fragment}` symbols, e.g. {:?}",
                linked.len(),
                &linked[..linked.len().min(3)]
            );
        }
    }
}
