//! `resources/updated` for files: every file read as a resource is watched (its size and
//! modification time polled), and a change is announced to the sessions subscribed to it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, SystemTime};

use zest_blocking::ServerHandle;

/// How often watched files are looked at.
const POLL: Duration = Duration::from_millis(200);
/// The most files watched at once; files read past it are not watched.
const MAX_WATCHED: usize = 1000;

/// What a file looked like when last seen.
type Stamp = Option<(u64, SystemTime)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// The files to watch, by URI; shared by the resource handler and the watching thread.
#[derive(Clone, Default)]
pub(crate) struct Watched(Arc<Mutex<BTreeMap<String, (PathBuf, Stamp)>>>);

impl Watched {
    /// Starts watching `path` as `uri` (a no-op if watched already or at the limit).
    pub(crate) fn add(&self, uri: &str, path: &Path) {
        let mut files = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if files.len() < MAX_WATCHED && !files.contains_key(uri) {
            files.insert(uri.to_owned(), (path.to_path_buf(), stamp(path)));
        }
    }

    /// Polls the watched files on a thread of its own for as long as the process lives, and
    /// tells `handle` of each change.
    pub(crate) fn announce_on(self, handle: ServerHandle) {
        thread::spawn(move || loop {
            thread::sleep(POLL);
            let changed: Vec<String> = {
                let mut files = self.0.lock().unwrap_or_else(|p| p.into_inner());
                files
                    .iter_mut()
                    .filter_map(|(uri, (path, seen))| {
                        let now = stamp(path);
                        (now != *seen).then(|| {
                            *seen = now;
                            uri.clone()
                        })
                    })
                    .collect()
            };
            for uri in changed {
                handle.resource_updated(&uri);
            }
        });
    }
}
