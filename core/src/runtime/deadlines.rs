//! The deadlines of the runtime contract (docs/runtime-contract.md), defined once so every
//! runtime waits exactly as long as the others.

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
