//! Progress callbacks off the session's lock and its IO threads.
//!
//! A report is drained under the session lock, on whichever thread fed it (the stdout
//! reader, an exchange's reader). Run there, a callback that calls the client would wait for
//! an answer only that thread can read, or for the lock it holds. So the callback the
//! machine's call table keeps only queues the report in the call's [`CallProgress`] and
//! kicks one thread per session (started with the first callback), which runs the app's
//! callback. The caller, once it has the outcome, runs what is still queued itself before it
//! returns: every report that came before the answer has been seen by then. Reports of one
//! call run in order, one at a time; a callback may call the client.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use zest_core::api::ProgressFn;
use zest_core::schema::ProgressParams;

/// One call's progress: the reports not yet run, and the app's callback.
pub(crate) struct CallProgress {
    reports: Mutex<VecDeque<ProgressParams>>,
    callback: Mutex<ProgressFn>,
}

impl CallProgress {
    /// Runs every queued report, in order; returns once none is left. A callback that
    /// panics gets no more reports.
    pub(crate) fn run_queued(&self) {
        let mut callback = self.callback.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let next = self.reports.lock().unwrap_or_else(PoisonError::into_inner).pop_front();
            let Some(params) = next else { return };
            if catch_unwind(AssertUnwindSafe(|| (*callback)(params))).is_err() {
                *callback = Box::new(|_| {});
            }
        }
    }
}

/// Where a session's calls queue their reports; see the [module docs](self).
#[derive(Default)]
pub(crate) struct ProgressRunner {
    /// The runner thread's kicks, once it is started.
    kicks: Mutex<Option<Sender<Arc<CallProgress>>>>,
}

impl ProgressRunner {
    /// Splits the app's callback `f` into the one to file with the call (it queues each
    /// report and kicks the runner) and the call's queue, for its caller to settle with
    /// [`CallProgress::run_queued`] once the outcome is in.
    pub(crate) fn wrap(&self, f: ProgressFn) -> (ProgressFn, Arc<CallProgress>) {
        let progress = Arc::new(CallProgress {
            reports: Mutex::new(VecDeque::new()),
            callback: Mutex::new(f),
        });
        let kicks = self.kicks();
        let queued = progress.clone();
        let filed: ProgressFn = Box::new(move |params| {
            queued.reports.lock().unwrap_or_else(PoisonError::into_inner).push_back(params);
            // Without a runner thread (it could not start), the caller runs them at the end.
            if let Some(kicks) = &kicks {
                let _ = kicks.send(queued.clone());
            }
        });
        (filed, progress)
    }

    fn kicks(&self) -> Option<Sender<Arc<CallProgress>>> {
        let mut kicks = self.kicks.lock().unwrap_or_else(PoisonError::into_inner);
        if kicks.is_none() {
            let (tx, rx) = channel();
            let spawned = thread::Builder::new().name("zest-progress".into()).spawn(|| run(rx));
            *kicks = spawned.ok().map(|_| tx);
        }
        kicks.clone()
    }
}

/// Runs kicked calls' reports until every sender is gone.
fn run(kicks: Receiver<Arc<CallProgress>>) {
    for call in kicks {
        call.run_queued();
    }
}
