//! The app's roots: a list the client answers `roots/list` with, which the app may change
//! while the session runs (each runtime's `Client::set_roots`).

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::error::UsageError;
use crate::schema::{ListRootsResult, Root};

/// A shared, changeable list of roots. Clones share the list: the client's handlers answer
/// `roots/list` from it, and the runtime's `Client::set_roots` replaces it (and tells the
/// server with `notifications/roots/list_changed`).
#[derive(Clone, Default)]
pub struct Roots {
    list: Arc<Mutex<Vec<Root>>>,
}

impl Roots {
    /// A list holding `roots`, unchecked (see [`check_roots`]; `roots/list` fails while one
    /// is invalid).
    pub fn new(roots: Vec<Root>) -> Self {
        Self { list: Arc::new(Mutex::new(roots)) }
    }

    /// Replaces the list, if every root passes [`check_roots`]; otherwise leaves it alone.
    pub fn set(&self, roots: Vec<Root>) -> Result<(), UsageError> {
        check_roots(&roots).map_err(UsageError::InvalidConfig)?;
        *self.lock() = roots;
        Ok(())
    }

    /// The current list.
    pub fn get(&self) -> Vec<Root> {
        self.lock().clone()
    }

    /// The answer to `roots/list`: the current list, or why it cannot be sent.
    pub fn answer(&self) -> Result<ListRootsResult, String> {
        let roots = self.get();
        check_roots(&roots)?;
        Ok(ListRootsResult { roots, ..ListRootsResult::default() })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Root>> {
        // A panic while holding the lock cannot leave the Vec half-written: keep using it.
        self.list.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl fmt::Debug for Roots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.get().iter().map(|r| &r.uri)).finish()
    }
}

/// What each runtime's `Client::set_roots` does to the list before it tells the server:
/// replaces `list` with `roots` if they pass [`check_roots`]. `Err` when the client was given
/// no root list to change (`ClientOptions::roots`), or a root is invalid.
pub fn replace_roots(list: Option<&Roots>, roots: Vec<Root>) -> Result<(), UsageError> {
    let Some(list) = list else {
        let why = "this client has no root list to change: give one with ClientOptions::roots";
        return Err(UsageError::InvalidConfig(why.to_owned()));
    };
    list.set(roots)
}

/// Checks roots as the spec asks of a client: each is a `file://` URI (the only scheme the
/// session-era revisions allow) with no `..` segment, plain or percent-encoded, that could
/// walk out of it.
pub fn check_roots(roots: &[Root]) -> Result<(), String> {
    for root in roots {
        let Some(path) = root.uri.strip_prefix("file://") else {
            return Err(format!("root {:?} is not a file:// URI", root.uri));
        };
        let decoded = path.replace("%2e", ".").replace("%2E", ".");
        if decoded.split(['/', '\\']).any(|segment| segment == "..") {
            return Err(format!("root {:?} has a `..` segment", root.uri));
        }
    }
    Ok(())
}
