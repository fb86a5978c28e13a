//! The deadlines of the runtime contract (docs/runtime-contract.md), defined once so every
//! runtime waits exactly as long as the others.

use std::io;
use std::time::Duration;

/// How long a server session's last frames may take to reach its client once the session
/// is over (stdio and in memory), before the writer is dropped.
pub const FINAL_FLUSH_LIMIT: Duration = Duration::from_secs(5);

/// How long a stdio peer with more than `max_backlog_bytes` waiting for it may take no byte
/// before it is cut off as not reading ([`BacklogWatch`](super::BacklogWatch)); while it
/// reads, however slowly, nothing more is read from it instead.
pub const BACKLOG_STALL: Duration = Duration::from_secs(5);

/// How long the last exchanges of a closing HTTP client session (its DELETE) may take
/// before they and their connections are dropped.
pub const HTTP_CLOSE_GRACE: Duration = Duration::from_secs(2);

/// The default of an HTTP server's `shutdown_grace`: how long `shutdown` waits for handlers
/// still running, and then for connections to finish their answers, before it cuts them.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The default grace of a stdio client, from
/// [`StdioCommand::DEFAULT_GRACE`](crate::stdio::StdioCommand::DEFAULT_GRACE): each step of
/// a child's shutdown (stdin closed, then SIGTERM, then SIGKILL) waits this long, and after
/// writing to its stdin failed, its stdout may still deliver answers for this long.
pub const DEFAULT_GRACE: Duration = crate::stdio::StdioCommand::DEFAULT_GRACE;

/// How long an HTTP server stops accepting after `accept` failed for want of resources (out
/// of file descriptors, kernel buffers or memory). The connection waiting in the backlog
/// keeps the listener readable, so accepting again at once would spin a core until a
/// descriptor is free; it is accepted after the pause instead.
pub const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// What an HTTP server does after `accept` failed with `error`: `None` to go on at once (the
/// failure was one connection's own: reset or aborted before it was accepted, refused by a
/// firewall, its network gone, or an interrupted call), or how long to stop accepting
/// ([`ACCEPT_PAUSE`]) after any other failure, a shortage of descriptors, buffers or memory
/// among them.
pub fn accept_pause(error: &io::Error) -> Option<Duration> {
    use io::ErrorKind::*;
    match error.kind() {
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock | PermissionDenied
        | NetworkDown | NetworkUnreachable | HostUnreachable => None,
        _ => Some(ACCEPT_PAUSE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_failure_of_the_server_itself_pauses_accepting() {
        let pause = |e: io::Error| accept_pause(&e);
        // EMFILE, ENFILE, ENOMEM: the server is short of something.
        #[cfg(unix)]
        for errno in [24, 23, 12] {
            assert_eq!(pause(io::Error::from_raw_os_error(errno)), Some(ACCEPT_PAUSE), "{errno}");
        }
        assert_eq!(pause(io::ErrorKind::OutOfMemory.into()), Some(ACCEPT_PAUSE));
        for kind in [
            io::ErrorKind::ConnectionAborted,
            io::ErrorKind::ConnectionReset,
            io::ErrorKind::Interrupted,
            io::ErrorKind::WouldBlock,
            io::ErrorKind::PermissionDenied,
            io::ErrorKind::NetworkDown,
            io::ErrorKind::NetworkUnreachable,
            io::ErrorKind::HostUnreachable,
        ] {
            assert_eq!(pause(kind.into()), None, "{kind:?}");
        }
    }
}
