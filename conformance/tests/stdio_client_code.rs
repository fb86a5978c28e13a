//! A program that only speaks stdio links none of the HTTP client's transport, OAuth or TLS
//! code (a fifth to a third of a client's code, which is nearly all resident: see
//! `scripts/measure-rss`). The client machine holds its HTTP side as a trait object made
//! only by `Client::new_http`, and zest-blocking's session performs its exchanges (HTTP/1.1,
//! TLS) through a connector object made only by `connect_to`. Checked on each runtime's
//! stdio demo, a stdio-only client, by its symbol table; each runtime's HTTP client example
//! shows the same names are visible there when the code is linked.

use std::process::Command;

#[path = "../../tests/support/soak.rs"]
mod soak;

/// Symbol fragments of code that only an HTTP session reaches.
const HTTP_ONLY: [&str; 5] = ["rustls", "HttpTransport", "AuthFlow", "DpopSigner", "ureq_proto"];

/// The demangled symbol table of `runtime`'s example `<runtime>_<kind>`.
fn symbols(runtime: &str, kind: &str) -> String {
    let example = soak::example(runtime, kind);
    let out = Command::new("nm").arg("-C").arg(&example).output().expect("nm (binutils) runs");
    assert!(out.status.success(), "nm {}: {}", example.display(), out.status);
    let symbols = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(symbols.lines().count() > 1000, "{} has no symbol table", example.display());
    symbols
}

#[test]
fn a_stdio_only_client_links_no_http_transport_oauth_or_tls() {
    for runtime in ["tokio", "smol", "blocking"] {
        let (stdio, http) = (symbols(runtime, "demo"), symbols(runtime, "http_client"));
        for fragment in HTTP_ONLY {
            assert!(http.contains(fragment), "{runtime}'s HTTP client has no `{fragment}` names");
            let linked: Vec<&str> = stdio.lines().filter(|l| l.contains(fragment)).collect();
            assert!(
                linked.is_empty(),
                "{runtime}'s stdio demo links {} `{fragment}` symbols, e.g. {:?}",
                linked.len(),
                &linked[..linked.len().min(3)]
            );
        }
    }
}
