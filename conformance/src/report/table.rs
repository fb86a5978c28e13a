//! The score table: one row per scenario, grouped by suite version, mode and runtime.

use std::fmt::Write;

use super::verdict::Verdict;

/// One judged scenario run.
#[derive(Clone, Debug)]
pub struct Row {
    /// The suite version.
    pub suite: String,
    /// `server` or `client`.
    pub mode: String,
    /// The runtime.
    pub runtime: String,
    /// The scenario.
    pub scenario: String,
    /// Its verdict.
    pub verdict: Verdict,
}

/// The table of `rows`, in their order, a heading line per group, then the problems and
/// known failures of each row, then `N passed, M failed`.
pub fn render(rows: &[Row]) -> String {
    let width = rows.iter().map(|r| r.scenario.len()).max().unwrap_or(8).max(8);
    let mut out = String::new();
    let mut group = None;
    for r in rows {
        let this = (&r.suite, &r.mode, &r.runtime);
        if group != Some(this) {
            group = Some(this);
            let _ = writeln!(out, "\n{} · {} · {}", r.suite, r.mode, r.runtime);
            let _ = writeln!(out, "  {:width$}  result  ok  fail  warn", "scenario");
        }
        let t = r.verdict.tally;
        let _ = writeln!(
            out,
            "  {:width$}  {:6}  {:>2}  {:>4}  {:>4}",
            r.scenario,
            r.verdict.label(),
            t.success,
            t.failure,
            t.warning
        );
    }
    let notes: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.verdict.problems.is_empty() || !r.verdict.excused.is_empty())
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(out, "\nwhy:");
    }
    for r in notes {
        let place = format!("{} {} {} {}", r.suite, r.mode, r.runtime, r.scenario);
        for p in &r.verdict.problems {
            let _ = writeln!(out, "  FAIL  {place}: {p}");
        }
        for e in &r.verdict.excused {
            let _ = writeln!(out, "  KNOWN {place}: {e}");
        }
    }
    let passed = rows.iter().filter(|r| r.verdict.passed()).count();
    let _ = writeln!(out, "\n{passed} passed, {} failed", rows.len() - passed);
    out
}
