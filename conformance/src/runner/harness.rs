//! The pinned suite in `conformance/harness/` (installed by `scripts/conformance-install`):
//! which versions run, how to call each, and which scenarios each lists.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Mode;

/// The spec revision the server runs are scored at, on the suite versions that take one.
pub const SPEC_VERSION: &str = "2025-11-25";

/// The client scenarios that need no authorization server; the client fixture plays these.
pub const NON_AUTH_CLIENT_SCENARIOS: [&str; 11] = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "json-schema-2020-12-preservation",
    "json-schema-ref-no-deref",
    "request-metadata",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "sep-2322-client-request-state",
];

/// Whether the client fixture plays client scenario `name`: those above, and every
/// `auth/*` one (the fixture authorizes through `client_auth`).
pub fn client_plays(name: &str) -> bool {
    NON_AUTH_CLIENT_SCENARIOS.contains(&name) || name.starts_with("auth/")
}

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
    /// Whether its client scenarios run too.
    pub client: bool,
}

/// The revision without sessions, scored by a suite of its own.
pub const MODERN: &str = "2026-07-28";

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
        spec_version: Some(MODERN),
        client: true,
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
    /// The revision to run a client scenario at in `suite`, `Some(None)` for none named (an
    /// old list), `None` to leave it to another suite. A suite scored at a revision runs the
    /// scenarios that list it, at it; the others run at [`SPEC_VERSION`] when it applies,
    /// else the newest dated revision listed other than [`MODERN`], whose suite has it.
    pub fn client_spec_version(&self, suite: &Suite) -> Option<Option<&str>> {
        let lists = |revision: &str| self.revisions.iter().any(|r| r == revision);
        if suite.spec_version == Some(MODERN) {
            return lists(MODERN).then_some(Some(MODERN));
        }
        if lists(SPEC_VERSION) {
            return Some(Some(SPEC_VERSION));
        }
        let dated: Vec<&String> = self.revisions.iter().filter(|r| r.starts_with("20")).collect();
        match dated.iter().filter(|r| r.as_str() != MODERN).max() {
            Some(newest) => Some(Some(newest.as_str())),
            None if dated.is_empty() => Some(None),
            None => None,
        }
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
