//! How a command fails: a message for the person at the terminal and an exit code that
//! scripts can test.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | done |
//! | 1 | the server answered with an error (a tool's `isError` result, a JSON-RPC error) |
//! | 2 | the command line is wrong (bad flag, no target, unknown server name) |
//! | 3 | could not connect: the server would not start, could not be reached, or refused the handshake |
//! | 4 | the session broke during the command (transport failure, timeout, server gone) |

use std::fmt;
use std::process::ExitCode;

use zest_blocking::core::error::RequestError;
use zest_blocking::CallError;

/// What went wrong, and the exit code that says so.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl Failure {
    /// The server answered with an error: exit 1.
    pub(crate) fn answered(message: impl Into<String>) -> Self {
        Self { code: 1, message: message.into() }
    }

    /// The command line is wrong: exit 2.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self { code: 2, message: message.into() }
    }

    /// No session could be had: exit 3.
    pub(crate) fn connect(message: impl Into<String>) -> Self {
        Self { code: 3, message: message.into() }
    }

    /// The session broke during the command: exit 4.
    pub(crate) fn broke(message: impl Into<String>) -> Self {
        Self { code: 4, message: message.into() }
    }

    /// `what` failed with `e`: exit 1 when the server answered it with an error, 4 when the
    /// session broke.
    pub(crate) fn call(what: &str, e: &CallError) -> Self {
        let message = format!("{what}: {e}");
        match e {
            CallError::Request(
                RequestError::Remote(_)
                | RequestError::InvalidResult(_)
                | RequestError::OutputSchemaMismatch { .. },
            ) => Self::answered(message),
            _ => Self::broke(message),
        }
    }

    /// The process's exit code.
    pub(crate) fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.code)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
