//! The verdict on one scenario run: passed, passed with known failures, or failed, and why.
//!
//! A run passes when the suite exited 0 and its `checks.json` holds at least one SUCCESS and
//! no FAILURE or WARNING. The suite's own exit code is not enough: in client mode a client
//! that never connects gets `0/0 passed` and exit 0. A FAILURE or WARNING the baseline lists
//! is excused (reported, not failed); so is a run without checks, or a non-zero exit, when a
//! baseline entry names the scenario without a check. A baseline entry that excused nothing
//! in a run it covers is stale, and that fails the run too, so the baseline only shrinks.

use super::baseline::{Baseline, Entry, Place};
use super::checks::{Check, Tally};

/// What came out of one scenario run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    /// The suite's exit code; `None` when it was killed (timeout) or did not start.
    pub exit: Option<i32>,
    /// The parsed `checks.json`, or why there is none.
    pub checks: Result<Vec<Check>, String>,
}

/// The verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// How many checks had each status (zero when there were none).
    pub tally: Tally,
    /// Why the run fails: each unexcused problem, one line each. Empty: it passes.
    pub problems: Vec<String>,
    /// The known failures it had, each with the baseline's reason.
    pub excused: Vec<String>,
}

impl Verdict {
    /// True when nothing fails the run.
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }

    /// `PASS`, `KNOWN` (passed thanks to the baseline) or `FAIL`.
    pub fn label(&self) -> &'static str {
        match (self.passed(), self.excused.is_empty()) {
            (false, _) => "FAIL",
            (true, true) => "PASS",
            (true, false) => "KNOWN",
        }
    }
}

/// Judges `output` of the run at `place` against `baseline`.
pub fn judge(place: Place<'_>, output: &RunOutput, baseline: &Baseline) -> Verdict {
    let mut problems = Vec::new();
    let mut excused = Vec::new();
    let mut used: Vec<&Entry> = Vec::new();
    let mut excuse = |what: String, check: Option<&str>, problems: &mut Vec<String>| match baseline
        .excuse(place, check)
    {
        Some(entry) => {
            excused.push(format!("{what} (baseline: {})", entry.reason));
            used.push(entry);
        }
        None => problems.push(what),
    };
    let checks: &[Check] = match &output.checks {
        Ok(checks) => checks,
        Err(why) => {
            excuse(format!("no checks: {why}"), None, &mut problems);
            &[]
        }
    };
    let tally = Tally::of(checks);
    for c in checks.iter().filter(|c| c.status.is_problem()) {
        let message = c.error_message.as_deref().unwrap_or(&c.description);
        excuse(format!("{} {}: {message}", c.status.name(), c.id), Some(&c.id), &mut problems);
    }
    let failed_checks = tally.failure + tally.warning > 0;
    if output.checks.is_ok() && tally.success == 0 && !failed_checks {
        excuse("no check succeeded".into(), None, &mut problems);
    }
    match output.exit {
        Some(0) => {}
        // The failing checks above already say why the suite exited non-zero.
        Some(_) if failed_checks || output.checks.is_err() => {}
        Some(code) => excuse(format!("the suite exited {code}"), None, &mut problems),
        // Without checks, the missing checks already say why.
        None if output.checks.is_err() => {}
        None => {
            excuse("the suite was killed (timeout) or did not start".into(), None, &mut problems)
        }
    }
    for entry in baseline.entries.iter().filter(|e| e.covers(place, e.check.as_deref())) {
        if !entry.sometimes && !used.iter().any(|u| std::ptr::eq(*u, entry)) {
            let check = entry.check.as_deref().unwrap_or("the run");
            problems
                .push(format!("stale baseline entry: {check} no longer fails ({})", entry.reason));
        }
    }
    Verdict { tally, problems, excused }
}
