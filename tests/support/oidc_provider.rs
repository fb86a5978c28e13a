//! `oidc-provider` (tests/peers/oidc_as.mjs) on loopback, as an OAuth authorization server for
//! the tests: dynamic registration, PKCE, resource indicators (JWT access tokens), rotated
//! refresh tokens, client credentials for `machine` / `machine-secret`, the public client
//! `zest-app`, access tokens living `ttl` seconds. Killed when dropped.
#![allow(dead_code, unreachable_pub)] // a module of each test binary that uses it

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub struct Provider {
    child: Child,
    pub issuer: String,
}

impl Provider {
    /// Issues JWT access tokens.
    pub fn start(ttl: u64) -> Self {
        Self::start_with(ttl, "jwt")
    }

    /// Issues opaque access tokens, which the server introspects as `resource-server` /
    /// `rs-secret`.
    pub fn start_opaque(ttl: u64) -> Self {
        Self::start_with(ttl, "opaque")
    }

    fn start_with(ttl: u64, token_format: &str) -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let peers = root.join("tests/peers");
        assert!(
            peers.join("node_modules/oidc-provider").exists(),
            "oidc-provider is missing: run scripts/install-peers"
        );
        let mut child = Command::new(node22())
            .arg(peers.join("oidc_as.mjs"))
            .env("ACCESS_TTL", ttl.to_string())
            .env("TOKEN_FORMAT", token_format)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped")).read_line(&mut line).expect("issuer");
        Self { child, issuer: line.trim().to_owned() }
    }
}

/// Node 22, which oidc-provider wants: the one tests/peers pins (the machine's otherwise).
pub fn node22() -> std::path::PathBuf {
    let pinned =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers/node_modules/node/bin/node");
    if pinned.exists() {
        pinned
    } else {
        "node".into()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
