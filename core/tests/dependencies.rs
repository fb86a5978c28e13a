//! The core does no IO: no async runtime, HTTP client, TLS or socket crate may enter its
//! dependency tree (docs/design-notes.md#sans-io-core).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)] // This test runs cargo itself.

use std::process::Command;

const BANNED: &[&str] = &[
    "tokio",
    "smol",
    "async-",
    "futures-",
    "hyper",
    "ureq ",
    "tiny_http",
    "mio",
    "socket2",
    "rustls",
    "reqwest",
    "native-tls",
    "openssl",
    "getrandom",
];

#[test]
fn core_dependency_tree_has_no_runtime_http_or_tls_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "-p", "zest-core", "-e", "normal,build", "--prefix", "none", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(tree.contains("zest-core"), "unexpected cargo tree output: {tree}");
    for line in tree.lines() {
        let name = format!("{} ", line.split_whitespace().next().unwrap_or(""));
        for banned in BANNED {
            assert!(!name.starts_with(banned), "zest-core depends on {line}, which does IO");
        }
    }
}
