//! What an app's server handle asks of every open session, outside any request: change the
//! shared registry and announce it, report a resource update, log. Defined once here; a
//! runtime only carries a [`Broadcast`] to its loop (a stdio session's driver, the HTTP
//! router's lock) and applies it there.

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::{ListKind, Registry, Session};
use crate::http::server::{FleetMessage, Router};
use crate::schema::LoggingLevel;

/// How many logs and resource updates a server handle lets wait for a session loop that has
/// not taken them yet (a stdio or in-memory session's; see [`BroadcastBudget`]). Past it,
/// newer ones are dropped: a handle never blocks the app, and a loop that falls behind does
/// not hold more and more. Registry changes are never dropped. Over HTTP the router applies
/// each command at once; a session's messages then wait for its GET stream, at most
/// `RouterConfig::max_backlog` of them (the oldest goes first).
pub const BROADCAST_QUEUE: usize = 256;

/// The [`BROADCAST_QUEUE`] rule for one session's queue, shared (cloned) by its handles,
/// which [`admit`](Self::admit) each command, and its loop, which says when it has
/// [`taken`](Self::taken) one.
#[derive(Clone, Debug, Default)]
pub struct BroadcastBudget(Arc<AtomicUsize>);

impl BroadcastBudget {
    /// A budget with nothing waiting.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `command` may be queued for the loop (counted when it may): always for a
    /// registry change; for a log or a resource update, while fewer than
    /// [`BROADCAST_QUEUE`] of those wait.
    pub fn admit<H>(&self, command: &Broadcast<H>) -> bool {
        if !command.may_be_dropped() {
            return true;
        }
        let below = |n: usize| (n < BROADCAST_QUEUE).then_some(n + 1);
        self.0.fetch_update(Ordering::AcqRel, Ordering::Acquire, below).is_ok()
    }

    /// The loop took `command` off its queue (to apply it).
    pub fn taken<H>(&self, command: &Broadcast<H>) {
        if command.may_be_dropped() {
            let less = |n: usize| Some(n.saturating_sub(1));
            let _ = self.0.fetch_update(Ordering::AcqRel, Ordering::Acquire, less);
        }
    }

    /// Logs and resource updates admitted and not taken yet.
    pub fn waiting(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }
}

/// A change to the registry, applied where the registry lives.
pub type RegistryChange<H> = Box<dyn FnOnce(&mut Registry<H>) + Send>;

/// One command of a server handle, for every session of a server.
#[non_exhaustive]
pub enum Broadcast<H> {
    /// Changes the registry the sessions share (a change that panics is dropped: the
    /// registry stays as it was and nothing is sent), then sends
    /// `notifications/{tools,resources,prompts}/list_changed` for each list in `changed` to
    /// every session that was told lists may change (see
    /// [`ServerConfig::announce_changes`](super::ServerConfig::announce_changes)).
    ChangeRegistry {
        /// The lists the change touches.
        changed: Vec<ListKind>,
        /// The change.
        change: RegistryChange<H>,
    },
    /// A log record (`notifications/message`) related to no request, to every open session
    /// whose log level admits `level`.
    Log {
        /// The record's severity.
        level: LoggingLevel,
        /// The name of the logger, if any.
        logger: Option<String>,
        /// The record.
        data: Value,
    },
    /// `notifications/resources/updated` for `uri`, to the sessions subscribed to it.
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
    },
    /// What another process of a fleet sent this one (HTTP servers in a fleet only; see
    /// [`Fleet`](crate::http::server::Fleet)); a stdio session ignores it.
    Fleet(FleetMessage),
}

impl<H> Broadcast<H> {
    /// True for what a full queue drops (logs, resource updates); false for a registry
    /// change.
    pub fn may_be_dropped(&self) -> bool {
        match self {
            Self::ChangeRegistry { .. } | Self::Fleet(_) => false,
            Self::Log { .. } | Self::ResourceUpdated { .. } => true,
        }
    }
}

impl<H: Clone> Broadcast<H> {
    /// Applies the command to one session (a stdio [`Server`](super::Server) derefs to its
    /// session); drain the machine afterwards. Sessions the command does not concern (not
    /// subscribed, a higher log level, not open yet, closed) send nothing.
    pub fn apply(self, now: Instant, session: &mut Session<H>) {
        match self {
            Self::ChangeRegistry { changed, change } => {
                let Some(next) = changed_copy(session.registry(), change) else { return };
                *session.registry_mut() = next;
                for kind in changed {
                    session.notify_list_changed(now, kind);
                }
            }
            Self::Log { level, logger, data } => {
                // Err when the session is not open, or logging is not declared: nobody to tell.
                let _ = session.log(now, None, level, logger.as_deref(), data);
            }
            Self::ResourceUpdated { uri } => session.resource_updated(now, &uri),
            Self::Fleet(_) => {}
        }
    }

    /// Applies the command to every session of `router` (the registry once, shared); drain
    /// the router afterwards.
    pub fn apply_all(self, now: Instant, router: &mut Router<H>) {
        match self {
            Self::ChangeRegistry { changed, change } => {
                let Some(next) = changed_copy(router.registry(), change) else { return };
                router.change_registry(now, &changed, |registry| *registry = next);
            }
            Self::Log { level, logger, data } => router.each_session(now, |session| {
                // Err when the session is not open, or logging is not declared.
                let _ = session.log(now, None, level, logger.as_deref(), data.clone());
            }),
            Self::ResourceUpdated { uri } => {
                router.each_session(now, |session| session.resource_updated(now, &uri))
            }
            Self::Fleet(message) => router.handle_fleet(now, message),
        }
    }
}

/// `registry` with `change` made to a copy of it; `None` if the change panicked (a typed
/// tool whose schema cannot be a tool's, a `State` the registry does not hold): the loop that
/// applies it goes on, with the registry as it was and nothing announced.
fn changed_copy<H: Clone>(
    registry: &Registry<H>,
    change: RegistryChange<H>,
) -> Option<Registry<H>> {
    let mut next = registry.clone();
    panic::catch_unwind(AssertUnwindSafe(|| change(&mut next))).ok()?;
    Some(next)
}

impl<H> fmt::Debug for Broadcast<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ChangeRegistry { changed, .. } => {
                f.debug_struct("ChangeRegistry").field("changed", changed).finish_non_exhaustive()
            }
            Self::Log { level, logger, data } => f
                .debug_struct("Log")
                .field("level", level)
                .field("logger", logger)
                .field("data", data)
                .finish(),
            Self::ResourceUpdated { uri } => {
                f.debug_struct("ResourceUpdated").field("uri", uri).finish()
            }
            Self::Fleet(message) => f.debug_tuple("Fleet").field(message).finish(),
        }
    }
}

#[cfg(test)]
mod tests;
