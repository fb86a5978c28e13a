//! Fixtures and a runner for the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, pinned in `conformance/harness/`).
//!
//! - [`fixture`]: the "everything" server the suite's server scenarios test, built once and
//!   served by any runtime (`everything_server`).
//! - [`client_scenarios`]: what the client fixture (`conformance_client`) does per scenario.
//! - [`report`]: reading the suite's `checks.json`, the baseline of known failures, and the
//!   verdict and score table the runner (`conformance_runner`) prints.

pub mod client_auth;
pub mod client_scenarios;
pub mod fixture;
pub mod report;
pub mod runner;

use std::fmt;
use std::str::FromStr;

/// The README's Rust examples, compiled as doctests here because this crate depends on all
/// three runtimes (the README shows each).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// The zest runtimes a fixture can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// zest-tokio.
    Tokio,
    /// zest-smol.
    Smol,
    /// zest-blocking.
    Blocking,
}

impl Runtime {
    /// Every runtime.
    pub const ALL: [Self; 3] = [Self::Tokio, Self::Smol, Self::Blocking];

    /// `tokio`, `smol` or `blocking`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Tokio => "tokio",
            Self::Smol => "smol",
            Self::Blocking => "blocking",
        }
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Runtime {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| format!("unknown runtime {s:?} (tokio, smol or blocking)"))
    }
}
