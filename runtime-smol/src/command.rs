//! What to run ([`StdioCommand`]) and how the client behaves ([`ClientOptions`]).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use zest_core::client::ClientConfig;
use zest_core::handler::AsyncClientHandlers;

/// A callback that receives each line the child writes to stderr.
pub(crate) type StderrFn = Box<dyn FnMut(String) + Send + 'static>;

/// A server program to spawn and speak MCP with over its stdin/stdout.
///
/// The child gets its own process group, piped stdin/stdout/stderr, and the environment and
/// working directory of this process unless changed here.
pub struct StdioCommand {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    /// In order; `None` removes the variable.
    pub(crate) env: Vec<(OsString, Option<OsString>)>,
    pub(crate) current_dir: Option<PathBuf>,
    pub(crate) on_stderr: Option<StderrFn>,
    pub(crate) grace: Duration,
}

impl StdioCommand {
    /// The default time allowed after closing stdin, and again after SIGTERM.
    pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

    /// Runs `program` (looked up in `PATH` when it has no slash).
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
            on_stderr: None,
            grace: Self::DEFAULT_GRACE,
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

    /// Sets the child's working directory.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// Receives each line the child writes to stderr (without the line ending, lossy UTF-8,
    /// cut into pieces of at most 64 KiB). Called on smol's executor: keep it short.
    /// Default: forwarded to our stderr prefixed with `[<program>] `.
    pub fn on_stderr(mut self, f: impl FnMut(String) + Send + 'static) -> Self {
        self.on_stderr = Some(Box::new(f));
        self
    }

    /// How long shutdown waits after closing stdin, and again after SIGTERM, before
    /// escalating. Default 2 s.
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
            .field("current_dir", &self.current_dir)
            .field("on_stderr", &self.on_stderr.is_some())
            .field("grace", &self.grace)
            .finish()
    }
}

/// How a [`Client`](crate::Client) behaves: the core's config and the handlers that answer
/// the server's requests (sampling, elicitation, roots).
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// The client machine's configuration (name, version, timeouts, limits).
    pub config: ClientConfig,
    pub(crate) handlers: AsyncClientHandlers,
}

impl ClientOptions {
    /// Options with our name and version and every default; no handlers.
    pub fn new(name: &str, version: &str) -> Self {
        Self { config: ClientConfig::new(name, version), handlers: AsyncClientHandlers::default() }
    }

    /// Sets the handlers for the server's requests. The capabilities they serve are declared
    /// in `initialize` on top of `config.capabilities`.
    pub fn handlers(mut self, handlers: AsyncClientHandlers) -> Self {
        self.handlers = handlers;
        self
    }
}
