//! What to spawn: program, arguments, environment, and how to end it.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Receives each line the child writes to stderr (without the line ending).
pub(crate) type StderrFn = Box<dyn FnMut(String) + Send>;

/// A server program to run over stdio.
///
/// The child gets piped stdin, stdout and stderr and runs in its own process group, so a
/// terminal's Ctrl-C does not reach it and shutdown signals reach its whole group.
pub struct StdioCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    cwd: Option<PathBuf>,
    pub(crate) on_stderr: Option<StderrFn>,
    pub(crate) shutdown_grace: Duration,
}

impl StdioCommand {
    /// Runs `program` (looked up in `PATH` when it has no slash).
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            on_stderr: None,
            shutdown_grace: Duration::from_secs(2),
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
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Receives each stderr line, on a thread of its own. Default: written to our stderr as
    /// `[<program>] <line>`.
    pub fn on_stderr(mut self, f: impl FnMut(String) + Send + 'static) -> Self {
        self.on_stderr = Some(Box::new(f));
        self
    }

    /// How long shutdown waits after closing stdin, and again after SIGTERM, before the
    /// next step (SIGTERM, then SIGKILL). Default 2 s. Also how long the session waits for
    /// the child's stdout to end after its stdin broke, so answers it wrote are not lost.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// The program, for messages.
    pub fn program(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        for (key, value) in &self.env {
            match value {
                Some(v) => cmd.env(key, v),
                None => cmd.env_remove(key),
            };
        }
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        cmd
    }
}

impl fmt::Debug for StdioCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioCommand")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &self.env)
            .field("cwd", &self.cwd)
            .field("shutdown_grace", &self.shutdown_grace)
            .finish_non_exhaustive()
    }
}
