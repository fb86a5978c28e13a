//! Known failures: `conformance/baseline.json`, where every entry says why.
//!
//! ```json
//! {"entries": [{
//!   "mode": "server", "scenario": "server-sse-polling", "check": "server-sse-retry-field",
//!   "suite": "0.1.16", "runtime": "blocking",
//!   "reason": "why this cannot pass yet, and what would make it pass"
//! }]}
//! ```
//!
//! `mode`, `scenario` and `reason` are required; `check`, `suite` and `runtime` narrow the
//! entry (absent: any). An entry excuses FAILURE and WARNING checks it matches, and a run
//! that produced no checks at all when it names no `check`.

use serde::Deserialize;

/// One known failure.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// `server` or `client`.
    pub mode: String,
    /// The scenario's name.
    pub scenario: String,
    /// The check's id; absent: every check of the scenario.
    #[serde(default)]
    pub check: Option<String>,
    /// The suite version, e.g. `0.1.16`; absent: every version.
    #[serde(default)]
    pub suite: Option<String>,
    /// `tokio`, `smol` or `blocking`; absent: every runtime.
    #[serde(default)]
    pub runtime: Option<String>,
    /// Why it fails. Required, and not blank.
    pub reason: String,
    /// It fails only sometimes (where requests land decides): passing is no stale entry.
    #[serde(default)]
    pub sometimes: bool,
}

/// Where a scenario ran: what a baseline entry is matched against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place<'a> {
    /// `server` or `client`.
    pub mode: &'a str,
    /// The scenario.
    pub scenario: &'a str,
    /// The suite version.
    pub suite: &'a str,
    /// The runtime.
    pub runtime: &'a str,
}

impl Entry {
    /// True when this entry covers `check` (None: the run as a whole) at `place`.
    pub fn covers(&self, place: Place<'_>, check: Option<&str>) -> bool {
        let same = |want: &Option<String>, got: &str| want.as_deref().is_none_or(|w| w == got);
        self.mode == place.mode
            && self.scenario == place.scenario
            && same(&self.suite, place.suite)
            && same(&self.runtime, place.runtime)
            && match (&self.check, check) {
                (None, _) => true,
                (Some(want), Some(got)) => want == got,
                (Some(_), None) => false,
            }
    }
}

/// The known failures.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The entries.
    pub entries: Vec<Entry>,
}

impl Baseline {
    /// Parses a baseline file's text; every entry must give a reason.
    pub fn parse(json: &str) -> Result<Self, String> {
        let baseline: Self =
            serde_json::from_str(json).map_err(|e| format!("baseline is not valid: {e}"))?;
        for e in &baseline.entries {
            if e.reason.trim().is_empty() {
                return Err(format!(
                    "baseline entry for {} {} gives no reason",
                    e.mode, e.scenario
                ));
            }
            if e.mode != "server" && e.mode != "client" {
                return Err(format!(
                    "baseline entry for {}: mode must be server or client",
                    e.scenario
                ));
            }
        }
        Ok(baseline)
    }

    /// The first entry that covers `check` at `place`.
    pub fn excuse(&self, place: Place<'_>, check: Option<&str>) -> Option<&Entry> {
        self.entries.iter().find(|e| e.covers(place, check))
    }
}
