//! The runner's parsing of `conformance list`, on output captured from the pinned suite.

use super::harness::{parse_list, MODERN, NON_AUTH_CLIENT_SCENARIOS, SPEC_VERSION, SUITES};
use super::process::find_checks;

const SERVER_0_2: &str = include_str!("../../testdata/list-server-2025-11-25-0.2.0-alpha.12.txt");
const SERVER_0_1: &str = include_str!("../../testdata/list-server-0.1.16.txt");
const CLIENT_0_2: &str = include_str!("../../testdata/list-client-0.2.0-alpha.12.txt");
const CLIENT_0_1: &str = include_str!("../../testdata/list-client-0.1.16.txt");

#[test]
fn server_lists_parse_to_every_scenario_with_its_revisions() {
    let new = parse_list(SERVER_0_2);
    assert_eq!(new.len(), 33);
    assert_eq!(new[0].name, "server-initialize");
    assert_eq!(new[0].revisions, ["2025-06-18", "2025-11-25"]);
    assert!(new.iter().any(|l| l.name == "server-session-lifecycle"));
    assert!(new.iter().any(|l| l.name == "dns-rebinding-protection"));
    let old = parse_list(SERVER_0_1);
    assert_eq!(old.len(), 32);
    assert!(!old.iter().any(|l| l.name == "server-session-lifecycle"));
}

#[test]
fn client_scenarios_run_at_2025_11_25_unless_they_start_later() {
    let listed = parse_list(CLIENT_0_2);
    let ours: Vec<_> =
        listed.iter().filter(|l| NON_AUTH_CLIENT_SCENARIOS.contains(&l.name.as_str())).collect();
    assert_eq!(ours.len(), 11, "{ours:?}");
    let [current, modern, old] = SUITES;
    for l in &ours {
        let in_current = l.client_spec_version(&current);
        let in_modern = l.client_spec_version(&modern);
        match l.name.as_str() {
            // Scenarios of the 2026-07-28 revision alone run in its suite only.
            "json-schema-ref-no-deref"
            | "request-metadata"
            | "http-standard-headers"
            | "http-custom-headers"
            | "http-invalid-tool-headers"
            | "sep-2322-client-request-state" => {
                assert_eq!(in_current, None, "{}", l.name);
                assert_eq!(in_modern, Some(Some(MODERN)), "{}", l.name);
            }
            "tools_call" | "json-schema-2020-12-preservation" => {
                assert_eq!(in_current, Some(Some(SPEC_VERSION)), "{}", l.name);
                assert_eq!(in_modern, Some(Some(MODERN)), "{}", l.name);
            }
            _ => {
                assert_eq!(in_current, Some(Some(SPEC_VERSION)), "{}", l.name);
                assert_eq!(in_modern, None, "{}", l.name);
            }
        }
    }
    let old_list = parse_list(CLIENT_0_1);
    let old_ours = old_list.iter().filter(|l| NON_AUTH_CLIENT_SCENARIOS.contains(&l.name.as_str()));
    assert_eq!(old_ours.count(), 4);
    let draft = old_list.iter().find(|l| l.name == "auth/resource-mismatch").unwrap();
    assert_eq!(draft.client_spec_version(&old), Some(None));
}

#[test]
fn checks_json_is_found_nested_once() {
    let root = std::env::temp_dir().join(format!("zest-find-checks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let nested = root.join("auth/metadata-default-2026-12-01T12-01-36-018Z");
    std::fs::create_dir_all(&nested).unwrap();
    assert!(find_checks(&root).unwrap_err().starts_with("no checks.json"));
    std::fs::write(nested.join("checks.json"), "[]").unwrap();
    assert_eq!(find_checks(&root).unwrap(), nested.join("checks.json"));
    std::fs::create_dir_all(root.join("other")).unwrap();
    std::fs::write(root.join("other/checks.json"), "[]").unwrap();
    assert!(find_checks(&root).unwrap_err().starts_with("2 checks.json"));
    std::fs::remove_dir_all(&root).unwrap();
}
