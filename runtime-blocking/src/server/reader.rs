//! The stdio server's reader: it reads the client's bytes, feeds them to the session and runs
//! the handlers they start itself, then writes their answers together: a quick call is read,
//! served and answered on this one thread, with no other thread woken.
//!
//! The supervisor watches it: while the reader is busy it ticks every [`TICK`], and a
//! reader found busy with the same turn (a handler, or a write the client does not take) at
//! two ticks in a row is retired. A new reader takes the input over, the calls queued behind
//! the slow one go to threads of their own, and what the old reader had not yet written is
//! written aside; the old reader ends once its handler returns. A handler on the reader that
//! asks the client something hands reading over at once (the answer must be read).

use std::cell::RefCell;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use zest_core::io::StreamEvent;

use crate::client::process::{read_once, READ_BUF};
use crate::link::{self, lock};

/// How often the supervisor looks at a busy reader: a handler that runs longer than one to
/// two ticks no longer holds back the calls read after it.
pub(crate) const TICK: Duration = Duration::from_millis(5);

/// One reader thread's state: its busy turns (odd while in one), whether it was retired, and
/// whose reader it is (the address of its [`Reading`]).
#[derive(Default)]
pub(crate) struct Turns {
    retired: AtomicBool,
    count: AtomicU64,
    reading: usize,
}

thread_local! {
    /// On a reader thread: its state.
    static READER: RefCell<Option<Arc<Turns>>> = const { RefCell::new(None) };
}

/// What a session's readers share.
pub(crate) struct Reading {
    input: Mutex<Box<dyn Read + Send>>,
    /// The active reader's state.
    current: Mutex<Arc<Turns>>,
    /// Its turn count at the supervisor's last tick.
    seen: AtomicU64,
    /// The supervisor ticks (set by a reader when a busy turn starts and it does not).
    ticking: AtomicBool,
}

/// The session side of a reader: what it feeds and runs.
pub(crate) trait ReadInto: Send + Sync + 'static {
    /// Feeds one read; false once the session is over.
    fn feed(&self, event: StreamEvent<'_>) -> bool;
    /// Runs the next handler queued for the active reader; false when none is (or this
    /// reader was retired).
    fn run_next(&self) -> bool;
    /// Writes what the reader's turn left queued (the reader may block here).
    fn write_turn(&self);
    /// Has the supervisor tick within [`TICK`].
    fn tick_soon(&self);
}

impl Reading {
    pub(crate) fn new(input: impl Read + Send + 'static) -> Arc<Self> {
        Arc::new(Self {
            input: Mutex::new(Box::new(input)),
            current: Mutex::default(),
            seen: AtomicU64::new(0),
            ticking: AtomicBool::new(false),
        })
    }

    /// Whether this thread is this session's reader, not retired (a handler on one session's
    /// reader may feed another session).
    pub(crate) fn active_here(&self) -> bool {
        READER.with(|r| {
            r.borrow().as_ref().is_some_and(|turns| {
                turns.reading == std::ptr::from_ref(self) as usize && !turns.retired.load(SeqCst)
            })
        })
    }

    /// Starts a reader thread feeding `session`; it becomes the active reader.
    pub(crate) fn start(self: &Arc<Self>, session: Arc<dyn ReadInto>) -> io::Result<()> {
        let reading = Arc::as_ptr(self) as usize;
        let turns = Arc::new(Turns { reading, ..Turns::default() });
        let (reading, mine) = (self.clone(), turns.clone());
        let mut current = lock(&self.current);
        thread::Builder::new().name("zest-reader".into()).spawn(move || {
            READER.with(|r| *r.borrow_mut() = Some(mine.clone()));
            link::no_join(|| reading.read_loop(&*session, &mine));
        })?;
        *current = turns;
        self.seen.store(0, SeqCst);
        Ok(())
    }

    /// Starts a new reader and retires the one it replaces: that one reads no more, runs no
    /// more queued handlers, and writes what it still produces itself. Called under the
    /// session's lock (where handlers are queued for the active reader).
    pub(crate) fn hand_over(self: &Arc<Self>, session: Arc<dyn ReadInto>) -> io::Result<()> {
        let old = lock(&self.current).clone();
        self.start(session)?;
        old.retired.store(true, SeqCst);
        Ok(())
    }

    /// Reads and feeds (holding the input, so reads are fed in order across a hand-over),
    /// then runs what the read started and writes the answers, until the input ends or this
    /// reader is retired.
    fn read_loop(&self, session: &dyn ReadInto, turns: &Turns) {
        let mut buf = vec![0u8; READ_BUF];
        loop {
            let more = {
                let mut input = lock(&self.input);
                if turns.retired.load(SeqCst) {
                    return;
                }
                read_once(&mut *input, &mut buf, &mut |event| session.feed(event))
            };
            self.busy_turn(session, turns);
            if !more {
                return;
            }
        }
    }

    /// Runs the handlers the last read started, then writes their answers: one busy turn,
    /// which the supervisor watches.
    fn busy_turn(&self, session: &dyn ReadInto, turns: &Turns) {
        turns.count.fetch_add(1, SeqCst);
        if !self.ticking.swap(true, SeqCst) {
            session.tick_soon();
        }
        while session.run_next() {}
        if !turns.retired.load(SeqCst) {
            session.write_turn();
        }
        turns.count.fetch_add(1, SeqCst);
    }

    /// The supervisor's tick, every [`TICK`] while it returns [`Tick::Again`].
    pub(crate) fn tick(&self) -> Tick {
        let current = lock(&self.current).clone();
        let count = current.count.load(SeqCst);
        if self.seen.swap(count, SeqCst) != count {
            return Tick::Again;
        }
        if count % 2 == 1 {
            return Tick::Stuck;
        }
        self.ticking.store(false, SeqCst);
        // A turn that started meanwhile saw the flag still set: keep ticking for it.
        if current.count.load(SeqCst) != count && !self.ticking.swap(true, SeqCst) {
            return Tick::Again;
        }
        Tick::Idle
    }
}

/// What the supervisor learns at a tick.
pub(crate) enum Tick {
    /// The reader was busy since the last tick: tick again.
    Again,
    /// The reader is still in the busy turn it was in at the last tick: hand reading over.
    Stuck,
    /// The reader was idle since the last tick: no more ticks until its next busy turn.
    Idle,
}
