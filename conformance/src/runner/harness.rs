//! The pinned suite in `conformance/harness/` (installed by `scripts/conformance-install`):
//! which versions run, how to call each, and which scenarios each lists.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Mode;

/// The spec revision the server runs are scored at, on the suite versions that take one.
pub const SPEC_VERSION: &str = "2025-11-25";

/// The client scenarios that need no authorization server; the client fixture plays these.
pub const NON_AUTH_CLIENT_SCENARIOS: [&str; 6] = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "json-schema-2020-12-preservation",
    "json-schema-ref-no-deref",
];

/// One pinned version of the suite, scored at one revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Suite {
    /// Its name, as the baseline and the table give it: the version, and `@revision` for a
    /// second revision of the same version.
    pub version: &'static str,
    /// Its package directory under `node_modules` (the second one is an npm alias).
    pub package: &'static str,
    /// The revision `server` is scored at (`--spec-version`); `None` where the suite runs
    /// its whole list (0.1.16).
    pub spec_version: Option<&'static str>,
    /// Whether its client scenarios run too (the client fixture does not speak 2026-07-28
    /// yet, so that revision's run is server-only).
    pub client: bool,
}

/// The versions the runner knows, newest first.
pub const SUITES: [Suite; 3] = [
    Suite {
        version: "0.2.0-alpha.12",
        package: "@modelcontextprotocol/conformance",
        spec_version: Some(SPEC_VERSION),
        client: true,
    },
    Suite {
        version: "0.2.0-alpha.12@2026-07-28",
        package: "@modelcontextprotocol/conformance",
        spec_version: Some("2026-07-28"),
        client: false,
    },
    Suite { version: "0.1.16", package: "conformance-0-1", spec_version: None, client: true },
];

/// Where the harness is installed.
#[derive(Clone, Debug)]
pub struct Harness {
    root: PathBuf,
}

impl Harness {
    /// The harness at `root` (`conformance/harness`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// Node 22, from the harness's own `node` package.
    pub fn node(&self) -> PathBuf {
        self.root.join("node_modules/node/bin/node")
    }

    /// A command that runs `suite`'s CLI with Node 22 first on PATH.
    pub fn command(&self, suite: Suite) -> Command {
        let mut command = Command::new(self.node());
        command.arg(self.root.join("node_modules").join(suite.package).join("dist/index.js"));
        let node_bin = self.node().parent().map(Path::to_path_buf).unwrap_or_default();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![node_bin];
        paths.extend(std::env::split_paths(&path));
        if let Ok(joined) = std::env::join_paths(paths) {
            command.env("PATH", joined);
        }
        command
    }

    /// Checks that the harness is installed, with a hint when it is not.
    pub fn check(&self) -> Result<(), String> {
        for suite in SUITES {
            let entry = self.root.join("node_modules").join(suite.package).join("dist/index.js");
            if !entry.is_file() {
                return Err(format!(
                    "{} is missing: run scripts/conformance-install",
                    entry.display()
                ));
            }
        }
        if !self.node().is_file() {
            return Err(format!(
                "{} is missing: run scripts/conformance-install",
                self.node().display()
            ));
        }
        Ok(())
    }

    /// The scenarios `suite` lists for `mode`, with their revisions.
    pub fn list(&self, suite: Suite, mode: Mode) -> Result<Vec<Listed>, String> {
        let mut command = self.command(suite);
        command.args(["list", &format!("--{}", mode.name())]);
        if let (Mode::Server, Some(revision)) = (mode, suite.spec_version) {
            command.args(["--spec-version", revision]);
        }
        let out = command.output().map_err(|e| format!("cannot run the suite: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`conformance list` failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(parse_list(&String::from_utf8_lossy(&out.stdout)))
    }
}

/// A scenario as `conformance list` prints it: `  - name [2025-06-18,2025-11-25]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// The scenario's name.
    pub name: String,
    /// The revisions (or `draft`, `extension`) it applies to.
    pub revisions: Vec<String>,
}

impl Listed {
    /// The revision to run a client scenario at: [`SPEC_VERSION`] when it applies, else
    /// the newest dated revision it lists (`json-schema-ref-no-deref` is 2026-07-28 only).
    pub fn client_spec_version(&self) -> Option<&str> {
        if self.revisions.iter().any(|r| r == SPEC_VERSION) {
            return Some(SPEC_VERSION);
        }
        self.revisions.iter().filter(|r| r.starts_with("20")).max().map(String::as_str)
    }
}

/// Parses `conformance list` output.
pub fn parse_list(text: &str) -> Vec<Listed> {
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .map(|rest| {
            let (name, revisions) = match rest.split_once(" [") {
                Some((name, tail)) => (name, tail.trim_end_matches(']')),
                None => (rest, ""),
            };
            let revisions =
                revisions.split(',').filter(|r| !r.is_empty()).map(str::to_owned).collect();
            Listed { name: name.trim().to_owned(), revisions }
        })
        .collect()
}
