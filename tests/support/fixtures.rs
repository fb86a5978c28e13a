//! Finds a runtime's fixture server (`<runtime>_stdio_server`, an example of zest-<runtime>)
//! next to the running test binary, building it with cargo when it is missing, so the cross
//! matrix never silently skips a server. Shared by the runtime crates' tests through
//! `#[path = "../../tests/support/fixtures.rs"] mod fixtures;`.
#![allow(dead_code, clippy::disallowed_methods)]

use std::path::PathBuf;
use std::process::Command;

/// The fixture binary of `runtime` ("tokio", "smol" or "blocking"), built if needed.
pub(crate) fn stdio_server(runtime: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's own path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps");
    let name = format!("{runtime}_stdio_server");
    let path = profile_dir.join("examples").join(&name);
    if path.exists() {
        return path;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = Command::new(cargo);
    build.args(["build", "-p", &format!("zest-{runtime}"), "--example", &name]);
    if profile_dir.file_name().is_some_and(|p| p == "release") {
        build.arg("--release");
    }
    let status = build.status().expect("cargo runs");
    assert!(status.success() && path.exists(), "could not build {}", path.display());
    path
}
