//! What a stdio client runs: [`StdioCommand`] describes the server program, and
//! [`ClientOptions`] how the client presents itself. Both are plain data; each runtime turns
//! them into a child process (own process group, piped stdin/stdout/stderr) and a session.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::client::ClientConfig;
use crate::handler::{
    AsyncClientHandlers, AsyncSamplingPolicy, SyncClientHandlers, SyncSamplingPolicy,
};
use crate::schema::Root;

/// Receives each line the child writes to stderr (without the line ending, lossy UTF-8).
pub type StderrFn = Box<dyn FnMut(String) + Send + 'static>;

/// A server program to run as a child process and speak MCP with over its stdin/stdout.
///
/// The child inherits this process's environment and working directory unless changed here;
/// its stderr is delivered line by line and never mixed into the protocol stream.
pub struct StdioCommand {
    program: OsString,
    args: Vec<OsString>,
    /// In order; `None` removes the variable.
    env: Vec<(OsString, Option<OsString>)>,
    current_dir: Option<PathBuf>,
    on_stderr: Option<StderrFn>,
    grace: Duration,
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

    /// Sets an environment variable for the child (the rest is inherited).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Removes an inherited environment variable.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// Sets the child's working directory.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.current_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// Receives each stderr line of the child. Runtimes call it from their own task or thread:
    /// keep it short. Default: each line goes to our stderr as `[<program>] <line>`.
    pub fn on_stderr(mut self, f: impl FnMut(String) + Send + 'static) -> Self {
        self.on_stderr = Some(Box::new(f));
        self
    }

    /// How long shutdown waits after closing stdin, and again after SIGTERM, before the next
    /// step (SIGTERM, then SIGKILL). Default 2 s. Also how long a session waits for the
    /// child's stdout to end after its stdin broke, so answers it wrote are not lost.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// The program to run.
    pub fn program(&self) -> &OsStr {
        &self.program
    }

    /// The program, for messages.
    pub fn program_name(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    /// The arguments, in order.
    pub fn arguments(&self) -> &[OsString] {
        &self.args
    }

    /// Environment changes, in order: `Some` sets, `None` removes.
    pub fn env_changes(&self) -> &[(OsString, Option<OsString>)] {
        &self.env
    }

    /// The working directory, if set.
    pub fn working_dir(&self) -> Option<&Path> {
        self.current_dir.as_deref()
    }

    /// The shutdown grace period.
    pub fn grace(&self) -> Duration {
        self.grace
    }

    /// Takes the stderr callback, if one was set (the runtime supplies the default).
    pub fn take_stderr_sink(&mut self) -> Option<StderrFn> {
        self.on_stderr.take()
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

/// How a client presents itself (`config`) and which server requests it answers (`H`, the
/// runtime's client handlers: sampling, elicitation, roots).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClientOptions<H> {
    /// The client machine's configuration (name, version, timeouts, limits, capabilities).
    pub config: ClientConfig,
    handlers: H,
}

impl<H: Default> ClientOptions<H> {
    /// Options with our name and version and every default; no server request is answered.
    pub fn new(name: &str, version: &str) -> Self {
        Self { config: ClientConfig::new(name, version), handlers: H::default() }
    }
}

impl<H> ClientOptions<H> {
    /// Answers sampling, elicitation and roots requests with `handlers`; the capabilities
    /// they serve are declared in `initialize` on top of `config.capabilities`.
    pub fn handlers(mut self, handlers: H) -> Self {
        self.handlers = handlers;
        self
    }

    /// Changes the client's config in one expression:
    /// `options.with_config(|c| c.request_timeout(d).max_in_flight(64))`.
    #[must_use]
    pub fn with_config(mut self, change: impl FnOnce(ClientConfig) -> ClientConfig) -> Self {
        self.config = change(self.config);
        self
    }

    /// The config and the handlers, for the runtime that starts the session.
    pub fn into_parts(self) -> (ClientConfig, H) {
        (self.config, self.handlers)
    }
}

impl ClientOptions<AsyncClientHandlers> {
    /// Answers sampling through `policy` (see [`AsyncClientHandlers::sampling_policy`]);
    /// without this or a sampling handler, sampling is not declared.
    pub fn sampling(mut self, policy: AsyncSamplingPolicy) -> Self {
        self.handlers = self.handlers.sampling_policy(policy);
        self
    }

    /// Answers `roots/list` with `roots`, which the client's `set_roots` may replace (see
    /// [`AsyncClientHandlers::roots`]).
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.handlers = self.handlers.roots(roots);
        self
    }
}

impl ClientOptions<SyncClientHandlers> {
    /// Answers sampling through `policy` (see [`SyncClientHandlers::sampling_policy`]);
    /// without this or a sampling handler, sampling is not declared.
    pub fn sampling(mut self, policy: SyncSamplingPolicy) -> Self {
        self.handlers = self.handlers.sampling_policy(policy);
        self
    }

    /// Answers `roots/list` with `roots`, which the client's `set_roots` may replace (see
    /// [`SyncClientHandlers::roots`]).
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.handlers = self.handlers.roots(roots);
        self
    }
}
