//! A reply slot for the dispatch tests.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use super::{Outcome, ReplySlot};
use crate::error::CloseReason;

/// One delivered outcome, beside the close reason recorded by the time it arrived.
pub(crate) type Seen = (Outcome, Option<CloseReason>);

/// Records what it is given, and what the session's close reason was by then.
#[derive(Clone)]
pub(crate) struct Recorder {
    pub(crate) outcomes: Rc<RefCell<Vec<Seen>>>,
    pub(crate) reason: Arc<OnceLock<CloseReason>>,
}

impl Recorder {
    /// A recorder reading `reason`, the lock a dispatch under test records into.
    pub(crate) fn new(reason: Arc<OnceLock<CloseReason>>) -> Self {
        Self { outcomes: Rc::default(), reason }
    }
}

impl ReplySlot for Recorder {
    fn deliver(self, outcome: Outcome) {
        let seen = self.reason.get().cloned();
        self.outcomes.borrow_mut().push((outcome, seen));
    }
}
