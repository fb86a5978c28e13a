//! Why a runtime's `Client::spawn` failed, the same type in every runtime.

use std::fmt;
use std::io;
use std::process::ExitStatus;

use crate::auth::AuthError;
use crate::error::CloseReason;
use crate::io::TransportFailure;
use crate::jsonrpc::ErrorObject;

/// Why spawning a stdio server, or the handshake with it, failed.
///
/// Every runtime re-exports this type as `ConnectError`. The session's
/// [`CloseReason`] before the handshake finished becomes a variant by
/// [`from_close`](Self::from_close), so the same failure is the same variant everywhere.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ConnectError {
    /// The server ended the connection before the handshake finished: it exited or closed
    /// its stdout ([`CloseReason::TransportEnded`]), or a pipe broke
    /// ([`CloseReason::TransportFailed`]).
    Exited {
        /// How the connection ended.
        reason: CloseReason,
        /// The child's exit status, when the runtime reaped it before returning (zest-smol
        /// and zest-blocking do; zest-tokio returns at once and leaves it `None`).
        status: Option<ExitStatus>,
    },
    /// The server asked for authorization and the OAuth flow failed (with OAuth configured;
    /// see [`AuthError::kind`](crate::auth::AuthError::kind)).
    Auth(AuthError),
    /// The HTTP server answered `initialize` with an error status (401 and 403 included:
    /// authorization is needed, see `www_authenticate`).
    HttpStatus {
        /// The status code.
        status: http::StatusCode,
        /// The `WWW-Authenticate` challenge, if the server sent one.
        www_authenticate: Option<String>,
    },
    /// The handshake failed otherwise: the session was closed locally (the `spawn` was
    /// abandoned, or the runtime's driver stopped), or for a reason this version does not
    /// name.
    Handshake(CloseReason),
    /// The `initialize` result was unusable (bad shape or unsupported revision).
    Invalid(String),
    /// The server answered `initialize` with an error.
    Rejected(ErrorObject),
    /// The program could not be started (not found, not executable, bad directory), or the
    /// runtime could not start what drives it (a thread).
    Spawn {
        /// The program as given.
        program: String,
        /// The OS error's kind.
        kind: io::ErrorKind,
        /// The OS error's message.
        message: String,
    },
    /// No answer to `initialize` within the configured `init_timeout`.
    TimedOut,
    /// The HTTP server could not be reached or spoken to: the connection was refused or
    /// timed out, the TLS handshake failed (a wrong certificate), or the bytes were not HTTP.
    Transport(TransportFailure),
    /// The URL or the HTTP options cannot be used (not an absolute `http`/`https` URL, a
    /// header or token that is not a valid header value, a bad root certificate).
    InvalidConfig(String),
}

impl ConnectError {
    /// Starting `program` (or what drives it) failed with `error`.
    pub fn spawn(program: impl Into<String>, error: &io::Error) -> Self {
        Self::Spawn { program: program.into(), kind: error.kind(), message: error.to_string() }
    }

    /// The session closed with `reason` before the handshake finished; `status` is the
    /// child's exit status if it was reaped already.
    pub fn from_close(reason: CloseReason, status: Option<ExitStatus>) -> Self {
        match reason {
            CloseReason::Auth(error) => Self::Auth(error),
            CloseReason::InitializeInvalid(detail) => Self::Invalid(detail),
            CloseReason::InitializeRejected(error) => Self::Rejected(error),
            CloseReason::InitializeTimedOut => Self::TimedOut,
            CloseReason::TransportFailed(
                failure @ (TransportFailure::Refused(_)
                | TransportFailure::Tls(_)
                | TransportFailure::TimedOut),
            ) => Self::Transport(failure),
            CloseReason::HttpStatus { status, www_authenticate } => {
                Self::HttpStatus { status, www_authenticate }
            }
            reason @ (CloseReason::TransportEnded | CloseReason::TransportFailed(_)) => {
                Self::Exited { reason, status }
            }
            reason => Self::Handshake(reason),
        }
    }
}

impl ConnectError {
    /// The OAuth failure behind it, if that is why the connection failed.
    pub fn auth(&self) -> Option<&AuthError> {
        match self {
            Self::Auth(e) | Self::Handshake(CloseReason::Auth(e)) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auth(e) => write!(f, "authorization failed: {e}"),
            Self::Exited { reason, status: Some(status) } => {
                write!(f, "the server went away during the handshake ({status}): {reason}")
            }
            Self::Exited { reason, status: None } => {
                write!(f, "the server went away during the handshake: {reason}")
            }
            Self::Handshake(reason) => write!(f, "handshake failed: {reason}"),
            Self::Invalid(detail) => write!(f, "unusable initialize result: {detail}"),
            Self::Rejected(error) => write!(f, "the server rejected initialize: {error}"),
            Self::Spawn { program, message, .. } => write!(f, "cannot start {program}: {message}"),
            Self::TimedOut => f.write_str("the server did not answer initialize in time"),
            Self::Transport(failure) => write!(f, "cannot reach the server: {failure}"),
            Self::HttpStatus { status, www_authenticate: Some(challenge) } => {
                let status = status.as_u16();
                write!(f, "the server answered initialize with HTTP {status} ({challenge})")
            }
            Self::HttpStatus { status, www_authenticate: None } => {
                let status = status.as_u16();
                write!(f, "the server answered initialize with HTTP {status}")
            }
            Self::InvalidConfig(why) => write!(f, "unusable http options: {why}"),
        }
    }
}

impl std::error::Error for ConnectError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_close_reason_before_the_handshake_has_its_variant() {
        let e = ErrorObject::new(-32602, "no");
        assert_eq!(
            ConnectError::from_close(CloseReason::InitializeRejected(e.clone()), None),
            ConnectError::Rejected(e)
        );
        assert_eq!(
            ConnectError::from_close(CloseReason::InitializeTimedOut, None),
            ConnectError::TimedOut
        );
        assert_eq!(
            ConnectError::from_close(CloseReason::InitializeInvalid("x".into()), None),
            ConnectError::Invalid("x".into())
        );
        let broke = CloseReason::TransportFailed(TransportFailure::Reset("pipe".into()));
        for reason in [CloseReason::TransportEnded, broke] {
            assert_eq!(
                ConnectError::from_close(reason.clone(), None),
                ConnectError::Exited { reason, status: None }
            );
        }
        for failure in [
            TransportFailure::Refused("no listener".into()),
            TransportFailure::Tls("bad certificate".into()),
            TransportFailure::TimedOut,
        ] {
            let reason = CloseReason::TransportFailed(failure.clone());
            let e = ConnectError::from_close(reason, None);
            assert!(e.to_string().starts_with("cannot reach the server: "), "{e}");
            assert_eq!(e, ConnectError::Transport(failure));
        }
        let reason = CloseReason::HttpStatus {
            status: http::StatusCode::UNAUTHORIZED,
            www_authenticate: Some("Bearer".into()),
        };
        assert_eq!(
            ConnectError::from_close(reason, None),
            ConnectError::HttpStatus {
                status: http::StatusCode::UNAUTHORIZED,
                www_authenticate: Some("Bearer".into())
            }
        );
        assert_eq!(
            ConnectError::from_close(CloseReason::Local, None),
            ConnectError::Handshake(CloseReason::Local)
        );
    }

    #[test]
    fn a_spawn_error_names_the_program() {
        let error = io::Error::from(io::ErrorKind::NotFound);
        let e = ConnectError::spawn("no-such-server", &error);
        assert!(matches!(&e, ConnectError::Spawn { kind: io::ErrorKind::NotFound, .. }));
        assert!(e.to_string().starts_with("cannot start no-such-server: "), "{e}");
    }
}
