//! The report logic on `checks.json` files captured from real runs of the pinned suite
//! (conformance/testdata: the suite against `@modelcontextprotocol/server-everything` over
//! Streamable HTTP, and a client scenario run with a client that never connects).

use super::baseline::{Baseline, Place};
use super::checks::{parse, Status, Tally};
use super::table::{render, Row};
use super::verdict::{judge, RunOutput, Verdict};

const SSE_POLLING: &str =
    include_str!("../../testdata/server-sse-polling-0.2.0-alpha.12-server-everything.json");
const TOOLS_LIST: &str =
    include_str!("../../testdata/tools-list-0.2.0-alpha.12-server-everything.json");
const SIMPLE_TEXT_0_1: &str =
    include_str!("../../testdata/tools-call-simple-text-0.1.16-server-everything.json");
const SILENT_CLIENT: &str =
    include_str!("../../testdata/client-initialize-0.2.0-alpha.12-silent-client.json");

fn place(scenario: &str) -> Place<'_> {
    Place { mode: "server", scenario, suite: "0.2.0-alpha.12", runtime: "tokio" }
}

fn run(exit: i32, json: &str) -> RunOutput {
    RunOutput { exit: Some(exit), checks: parse(json) }
}

fn baseline(json: &str) -> Baseline {
    Baseline::parse(json).expect("a valid baseline")
}

#[test]
fn real_checks_parse_with_their_statuses() {
    let checks = parse(SSE_POLLING).unwrap();
    assert_eq!(checks.len(), 9);
    assert_eq!(Tally::of(&checks), Tally { success: 1, failure: 1, warning: 1, other: 6 });
    let failure = checks.iter().find(|c| c.status == Status::Failure).unwrap();
    assert_eq!(failure.id, "incoming-sse-event");
    assert_eq!(failure.error_message.as_deref(), Some("Tool call failed"));
    let old = parse(SIMPLE_TEXT_0_1).unwrap();
    assert_eq!((old.len(), old[0].status), (1, Status::Success));
    assert_eq!(parse(SILENT_CLIENT).unwrap(), []);
}

#[test]
fn an_unknown_status_counts_as_a_failure() {
    let checks =
        parse(r#"[{"id": "x", "status": "SUCCESS"}, {"id": "y", "status": "MAYBE"}]"#).unwrap();
    assert_eq!(checks[1].status, Status::Unknown);
    let v =
        judge(place("s"), &RunOutput { exit: Some(0), checks: Ok(checks) }, &Baseline::default());
    assert_eq!(v.problems, ["UNKNOWN y: "]);
}

#[test]
fn failures_and_warnings_fail_a_run_unless_the_baseline_lists_each() {
    let none = judge(place("server-sse-polling"), &run(1, SSE_POLLING), &Baseline::default());
    assert_eq!(none.label(), "FAIL");
    assert_eq!(none.problems.len(), 2, "{:?}", none.problems);
    assert_eq!(none.problems[0], "FAILURE incoming-sse-event: Tool call failed");
    assert!(
        none.problems[1].starts_with("WARNING server-sse-retry-field: Server did not send retry")
    );

    let one = baseline(
        r#"{"entries": [{"mode": "server", "scenario": "server-sse-polling",
            "check": "server-sse-retry-field", "reason": "no retry field yet"}]}"#,
    );
    let partly = judge(place("server-sse-polling"), &run(1, SSE_POLLING), &one);
    assert_eq!(partly.label(), "FAIL");
    assert_eq!(partly.problems.len(), 1);
    assert_eq!(partly.excused.len(), 1);
    assert!(partly.excused[0].ends_with("(baseline: no retry field yet)"));

    let whole = baseline(
        r#"{"entries": [{"mode": "server", "scenario": "server-sse-polling", "reason": "pending"}]}"#,
    );
    let known = judge(place("server-sse-polling"), &run(1, SSE_POLLING), &whole);
    assert_eq!((known.label(), known.excused.len()), ("KNOWN", 2));
}

#[test]
fn baseline_entries_match_only_their_suite_runtime_and_mode() {
    let entry = r#"{"entries": [{"mode": "server", "scenario": "server-sse-polling",
        "suite": "0.1.16", "runtime": "blocking", "reason": "r"}]}"#;
    let b = baseline(entry);
    let elsewhere = judge(place("server-sse-polling"), &run(1, SSE_POLLING), &b);
    assert_eq!(elsewhere.problems.len(), 2);
    let there = Place { suite: "0.1.16", runtime: "blocking", ..place("server-sse-polling") };
    assert!(judge(there, &run(1, SSE_POLLING), &b).passed());
    let client = Place { mode: "client", ..there };
    assert!(!judge(client, &run(1, SSE_POLLING), &b).passed());
}

#[test]
fn a_clean_real_run_passes() {
    let v = judge(place("tools-list"), &run(0, TOOLS_LIST), &Baseline::default());
    assert_eq!(
        v,
        Verdict {
            tally: Tally { success: 3, ..Tally::default() },
            problems: vec![],
            excused: vec![]
        }
    );
    assert_eq!(v.label(), "PASS");
}

#[test]
fn exit_zero_with_no_checks_is_not_a_pass() {
    let client = Place { mode: "client", ..place("initialize") };
    let v = judge(client, &run(0, SILENT_CLIENT), &Baseline::default());
    assert_eq!(v.problems, ["no check succeeded"]);
}

#[test]
fn a_nonzero_exit_without_failing_checks_fails() {
    let v = judge(place("tools-list"), &run(2, TOOLS_LIST), &Baseline::default());
    assert_eq!(v.problems, ["the suite exited 2"]);
}

#[test]
fn a_run_without_checks_fails_unless_a_scenario_wide_entry_excuses_it() {
    let missing = RunOutput { exit: None, checks: Err("no checks.json under out/".into()) };
    let v = judge(place("ping"), &missing, &Baseline::default());
    assert_eq!(v.problems, ["no checks: no checks.json under out/"]);
    let b = baseline(
        r#"{"entries": [{"mode": "server", "scenario": "ping", "reason": "HTTP pending"}]}"#,
    );
    let known = judge(place("ping"), &missing, &b);
    assert_eq!((known.label(), known.excused.len()), ("KNOWN", 1));
    let killed = RunOutput { exit: None, checks: parse(TOOLS_LIST) };
    let v = judge(place("tools-list"), &killed, &Baseline::default());
    assert_eq!(v.problems, ["the suite was killed (timeout) or did not start"]);
}

#[test]
fn a_baseline_entry_for_a_passing_run_is_stale() {
    let b =
        baseline(r#"{"entries": [{"mode": "server", "scenario": "tools-list", "reason": "old"}]}"#);
    let v = judge(place("tools-list"), &run(0, TOOLS_LIST), &b);
    assert_eq!(v.problems, ["stale baseline entry: the run no longer fails (old)"]);
}

#[test]
fn every_baseline_entry_needs_a_reason_and_known_fields() {
    let blank = r#"{"entries": [{"mode": "server", "scenario": "ping", "reason": "  "}]}"#;
    assert!(Baseline::parse(blank).unwrap_err().contains("gives no reason"));
    let missing = r#"{"entries": [{"mode": "server", "scenario": "ping"}]}"#;
    assert!(Baseline::parse(missing).is_err());
    let typo =
        r#"{"entries": [{"mode": "server", "scenario": "ping", "reason": "r", "chek": "x"}]}"#;
    assert!(Baseline::parse(typo).is_err());
    let mode = r#"{"entries": [{"mode": "both", "scenario": "ping", "reason": "r"}]}"#;
    assert!(Baseline::parse(mode).is_err());
}

#[test]
fn the_table_groups_rows_and_ends_with_the_counts() {
    let row = |scenario: &str, json: &str, exit: i32| Row {
        suite: "0.2.0-alpha.12".into(),
        mode: "server".into(),
        runtime: "tokio".into(),
        scenario: scenario.into(),
        verdict: judge(place(scenario), &run(exit, json), &Baseline::default()),
    };
    let text =
        render(&[row("tools-list", TOOLS_LIST, 0), row("server-sse-polling", SSE_POLLING, 1)]);
    assert!(text.contains("0.2.0-alpha.12 · server · tokio"), "{text}");
    assert!(text.contains("  tools-list          PASS     3     0     0"), "{text}");
    assert!(text.contains("  server-sse-polling  FAIL     1     1     1"), "{text}");
    assert!(text.contains(
        "FAIL  0.2.0-alpha.12 server tokio server-sse-polling: FAILURE incoming-sse-event"
    ));
    assert!(text.trim_end().ends_with("1 passed, 1 failed"), "{text}");
}
