//! What to run ([`StdioCommand`]) and how to talk to it ([`ClientOptions`]).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use zest_core::client::ClientConfig;
use zest_core::handler::AsyncClientHandlers;

/// A callback that receives each line the server writes to its stderr.
pub(crate) type StderrFn = Box<dyn FnMut(String) + Send>;

/// How long [`StdioCommand::shutdown_grace`] waits by default.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// A server program to start as a child process and speak MCP to over its stdin and stdout.
///
/// The child gets its own process group; stderr is captured line by line (see
/// [`on_stderr`](Self::on_stderr)) and never mixed into the protocol stream.
pub struct StdioCommand {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, Option<OsString>)>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) on_stderr: Option<StderrFn>,
    pub(crate) grace: Duration,
}

impl StdioCommand {
    /// Runs `program` (looked up in `PATH` unless it contains a `/`).
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            on_stderr: None,
            grace: DEFAULT_GRACE,
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable for the child.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Removes an environment variable from the child's environment.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// Runs the child in `dir`.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    /// Receives each stderr line of the child (without its line ending; invalid UTF-8 is
    /// replaced). Default: each line goes to our stderr, prefixed with `[<program>] `.
    pub fn on_stderr(mut self, f: impl FnMut(String) + Send + 'static) -> Self {
        self.on_stderr = Some(Box::new(f));
        self
    }

    /// How long shutdown waits after closing the child's stdin, and again after SIGTERM,
    /// before escalating. Default 2 s.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// The program, for messages.
    pub(crate) fn program_name(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }
}

impl fmt::Debug for StdioCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioCommand")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &self.env)
            .field("cwd", &self.cwd)
            .field("on_stderr", &self.on_stderr.is_some())
            .field("grace", &self.grace)
            .finish()
    }
}

/// How the client presents itself and which server requests it answers.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClientOptions {
    /// The core machine's configuration (name, version, timeouts, limits, capabilities).
    pub config: ClientConfig,
    pub(crate) handlers: AsyncClientHandlers,
}

impl ClientOptions {
    /// Options with our name and version and every default; no server request is answered.
    pub fn new(name: &str, version: &str) -> Self {
        Self { config: ClientConfig::new(name, version), handlers: AsyncClientHandlers::default() }
    }

    /// Answers sampling, elicitation and roots requests with `handlers`; the capabilities
    /// they serve are declared in `initialize`.
    pub fn handlers(mut self, handlers: AsyncClientHandlers) -> Self {
        self.handlers = handlers;
        self
    }
}
