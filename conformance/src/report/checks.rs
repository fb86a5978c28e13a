//! The suite's `checks.json`: one JSON array of checks per scenario run.

use serde::Deserialize;

/// A check's status as the suite writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// The check passed.
    Success,
    /// The check failed.
    Failure,
    /// A SHOULD was not met; counts as a failure here unless the baseline lists it.
    Warning,
    /// A record of what happened (a request seen, a stream closed); never a verdict.
    Info,
    /// Not applicable to this run.
    Skipped,
    /// A status this runner does not know; counts as a failure, so a new suite version
    /// cannot pass silently.
    #[serde(other)]
    Unknown,
}

impl Status {
    /// True for the statuses that fail a scenario unless the baseline lists them.
    pub fn is_problem(self) -> bool {
        matches!(self, Self::Failure | Self::Warning | Self::Unknown)
    }

    /// The name the suite uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Success => "SUCCESS",
            Self::Failure => "FAILURE",
            Self::Warning => "WARNING",
            Self::Info => "INFO",
            Self::Skipped => "SKIPPED",
            Self::Unknown => "UNKNOWN",
        }
    }
}

/// One check of a scenario run.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// The check's id, e.g. `tools-call-simple-text` (several checks may share one).
    pub id: String,
    /// What the check looks at.
    #[serde(default)]
    pub description: String,
    /// The verdict.
    pub status: Status,
    /// Why it failed, when it did.
    #[serde(default)]
    pub error_message: Option<String>,
}

/// Parses a `checks.json` file's text.
pub fn parse(json: &str) -> Result<Vec<Check>, String> {
    serde_json::from_str(json).map_err(|e| format!("checks.json is not a list of checks: {e}"))
}

/// How many checks had each status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// SUCCESS.
    pub success: usize,
    /// FAILURE and unknown statuses.
    pub failure: usize,
    /// WARNING.
    pub warning: usize,
    /// INFO and SKIPPED.
    pub other: usize,
}

impl Tally {
    /// Counts `checks`.
    pub fn of(checks: &[Check]) -> Self {
        let mut t = Self::default();
        for c in checks {
            match c.status {
                Status::Success => t.success += 1,
                Status::Failure | Status::Unknown => t.failure += 1,
                Status::Warning => t.warning += 1,
                Status::Info | Status::Skipped => t.other += 1,
            }
        }
        t
    }
}
