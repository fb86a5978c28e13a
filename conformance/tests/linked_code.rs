//! What a program links is what it keeps resident (on a kernel that maps whole large folios,
//! nearly all of its code: see `scripts/measure-rss`), so each side links only what it uses:
//!
//! - a program that only speaks stdio as a client links none of the HTTP client's transport,
//!   OAuth or TLS code (a fifth to a third of a client's code): the client machine holds its
//!   HTTP side as a trait object made only by `Client::new_http`, and zest-blocking's session
//!   performs its exchanges (HTTP/1.1, TLS) through a connector object made only by
//!   `connect_to`;
//! - a stdio server links no HTTP code, and an HTTP server none of the HTTP client's;
//! - a client links the decoders of sampling and elicitation requests and the encoders of
//!   their answers (about 180 KB) only if it sets a handler for them: the client machine
//!   hands those requests on undecoded.
//!
//! Checked on each runtime's examples by their symbol tables. Each name looked for is shown
//! present where its code is linked (the HTTP client and server examples; the demos, which
//! answer sampling; the conformance client, which answers elicitations), so the check can
//! see it.

use std::process::Command;

#[path = "../../tests/support/soak.rs"]
mod soak;

/// Symbol fragments of code that only an HTTP client reaches.
const HTTP_CLIENT: [&str; 5] = ["rustls", "HttpTransport", "AuthFlow", "DpopSigner", "ureq_proto"];
/// Symbol fragments of code that only an HTTP server reaches.
const HTTP_SERVER: [&str; 3] = ["http::server::Router", "http_server::hub::Hub", "ureq_proto"];
/// Symbol fragments of the decoding of a sampling request, which a sampling handler reaches.
const SAMPLING: [&str; 1] = ["Deserialize for zest_core::schema::sampling::CreateMessageParams"];
/// Symbol fragments of the decoding and completing of an elicitation, which an elicitation
/// handler reaches.
const ELICITATION: [&str; 2] =
    ["Deserialize for zest_core::schema::elicitation::ElicitFormParams", "complete_form_answer"];
const RUNTIMES: [&str; 3] = ["tokio", "smol", "blocking"];

/// The demangled symbol table of `runtime`'s example `<runtime>_<kind>`.
fn symbols(runtime: &str, kind: &str) -> String {
    symbols_of(&soak::example(runtime, kind))
}

/// The demangled symbol table of the program at `path`.
fn symbols_of(path: &std::path::Path) -> String {
    let out = Command::new("nm").arg("-C").arg(path).output().expect("nm (binutils) runs");
    assert!(out.status.success(), "nm {}: {}", path.display(), out.status);
    let symbols = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(symbols.lines().count() > 1000, "{} has no symbol table", path.display());
    symbols
}

fn assert_present(what: &str, symbols: &str, fragments: &[&str]) {
    for fragment in fragments {
        assert!(symbols.contains(fragment), "{what} has no `{fragment}` names");
    }
}

fn assert_absent(what: &str, symbols: &str, fragments: &[&str]) {
    for fragment in fragments {
        let linked: Vec<&str> = symbols.lines().filter(|l| l.contains(fragment)).collect();
        assert!(
            linked.is_empty(),
            "{what} links {} `{fragment}` symbols, e.g. {:?}",
            linked.len(),
            &linked[..linked.len().min(3)]
        );
    }
}

#[test]
fn a_stdio_only_client_links_no_http_transport_oauth_or_tls() {
    for runtime in RUNTIMES {
        let http = symbols(runtime, "http_client");
        assert_present(&format!("{runtime}'s HTTP client"), &http, &HTTP_CLIENT);
        let stdio = symbols(runtime, "demo");
        assert_absent(&format!("{runtime}'s stdio demo"), &stdio, &HTTP_CLIENT);
    }
}

#[test]
fn a_stdio_server_links_no_http_code_and_an_http_server_no_client_code() {
    let client_only = &HTTP_CLIENT[..4];
    for runtime in RUNTIMES {
        let http = symbols(runtime, "http_server");
        assert_present(&format!("{runtime}'s HTTP server"), &http, &HTTP_SERVER);
        assert_absent(&format!("{runtime}'s HTTP server"), &http, client_only);
        let stdio = symbols(runtime, "stdio_server");
        assert_absent(&format!("{runtime}'s stdio server"), &stdio, &HTTP_SERVER);
        assert_absent(&format!("{runtime}'s stdio server"), &stdio, &HTTP_CLIENT);
    }
}

#[test]
fn a_client_links_sampling_and_elicitation_decoders_only_with_a_handler_for_them() {
    // The conformance client answers elicitations; the demos answer sampling.
    let eliciting = symbols_of(env!("CARGO_BIN_EXE_conformance_client").as_ref());
    assert_present("the conformance client", &eliciting, &ELICITATION);
    for runtime in RUNTIMES {
        let sampling = symbols(runtime, "demo");
        assert_present(&format!("{runtime}'s demo"), &sampling, &SAMPLING);
        let neither = symbols(runtime, "http_client");
        let what = format!("{runtime}'s HTTP client (no handlers)");
        assert_absent(&what, &neither, &SAMPLING);
        assert_absent(&what, &neither, &ELICITATION);
    }
}
