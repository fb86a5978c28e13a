//! The official server suite run against a URL (a proxy in front of several processes).
#![allow(dead_code, unreachable_pub)] // a module of each test binary that uses it

/// Runs the official server suite `suite` (a runner `--suite` value) against `url` with the
/// runner's default baseline, or `baseline` (a file of `conformance/testdata/`), and checks
/// that every check passed or was excused.
pub fn server_suite_passes(url: &str, suite: &str, baseline: Option<&str>) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(
        root.join("harness/node_modules").exists(),
        "the conformance harness is missing: run scripts/conformance-install"
    );
    let out = std::env::temp_dir().join(format!("zest-proxied-suite-{}", std::process::id()));
    let mut runner = std::process::Command::new(env!("CARGO_BIN_EXE_conformance_runner"));
    runner.args(["--runtime", "tokio", "--mode", "server", "--suite", suite]);
    runner.args(["--url", url, "--out"]).arg(&out);
    if let Some(baseline) = baseline {
        runner.arg("--baseline").arg(root.join("testdata").join(baseline));
    }
    let run = runner.output().expect("the runner runs");
    let report = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{report}{}", String::from_utf8_lossy(&run.stderr));
    assert!(report.contains(" passed, 0 failed"), "{report}");
    let _ = std::fs::remove_dir_all(out);
}
