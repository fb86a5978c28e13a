//! The HTTP exchanges of one client session, polled inside the session's own task.
//!
//! An async runtime performs each exchange the client machine asks for as a future (connect
//! or reuse a connection, write, read the response). Spawning a task per exchange costs two
//! task hand-offs per call (the session task to the exchange task and back), and each can
//! wake another worker thread. [`Exchanges`] keeps those futures in the session's task
//! instead: [`Exchanges::poll_reported`] polls the ones whose wakers fired, and their events
//! wait in an [`Inbox`] the session drains between two drains of its machine.

use std::collections::HashMap;
use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

use super::{Inbox, OwnedEvent};
use crate::io::StreamId;

/// Where an exchange reports its response: one event at a time, in order, ending with
/// [`OwnedEvent::End`] or [`OwnedEvent::Failed`].
pub type ExchangeEvents = Arc<Inbox<(StreamId, OwnedEvent)>>;

type Work = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The exchanges under way in one session; each can be cut by its stream.
pub struct Exchanges {
    slots: Vec<Option<Running>>,
    /// Each slot's waker, made once and handed to every exchange the slot runs: a timer or
    /// socket that an exchange leaves registered with it, as a pooled connection's read
    /// timeout does, then sees the same waker in the next exchange and need not register
    /// again (async-io wakes its reactor thread for every timer registered).
    wakers: Vec<Waker>,
    free: Vec<usize>,
    /// The exchange cut by each stream's abort, until it reported its end.
    by_stream: HashMap<StreamId, usize>,
    woken: Arc<Woken>,
    events: ExchangeEvents,
}

struct Running {
    stream: StreamId,
    work: Work,
}

/// The slots whose wakers fired, and the session task to wake for them.
#[derive(Default)]
struct Woken {
    ready: Mutex<Vec<usize>>,
    task: Mutex<Option<Waker>>,
}

/// The waker of one slot. A late wake of a slot since reused only polls its new exchange
/// once more, which futures allow.
struct SlotWaker {
    slot: usize,
    woken: Arc<Woken>,
}

impl Wake for SlotWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        lock(&self.woken.ready).push(self.slot);
        let task = lock(&self.woken.task).clone();
        if let Some(task) = task {
            task.wake();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing under these locks can panic halfway.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Default for Exchanges {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Exchanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchanges").field("running", &self.len()).finish_non_exhaustive()
    }
}

impl Exchanges {
    /// No exchanges.
    pub fn new() -> Self {
        Self {
            slots: Vec::new(),
            wakers: Vec::new(),
            free: Vec::new(),
            by_stream: HashMap::new(),
            woken: Arc::default(),
            events: Arc::default(),
        }
    }

    /// Where the exchanges report: hand a clone to each exchange's future.
    pub fn events(&self) -> ExchangeEvents {
        self.events.clone()
    }

    /// Adds the exchange on `stream`. It first runs at the next
    /// [`poll_reported`](Self::poll_reported), which the session's loop polls anyway.
    pub fn start(&mut self, stream: StreamId, work: impl Future<Output = ()> + Send + 'static) {
        let slot = self.free.pop().unwrap_or_else(|| {
            let slot = self.slots.len();
            self.slots.push(None);
            let woken = self.woken.clone();
            self.wakers.push(Waker::from(Arc::new(SlotWaker { slot, woken })));
            slot
        });
        self.slots[slot] = Some(Running { stream, work: Box::pin(work) });
        self.by_stream.insert(stream, slot);
        lock(&self.woken.ready).push(slot);
    }

    /// Cuts the exchange on `stream`: its future, and with it its connection, is dropped.
    /// Nothing happens once it has reported its end (it may be returning its connection).
    pub fn abort(&mut self, stream: StreamId) {
        if let Some(slot) = self.by_stream.remove(&stream) {
            self.slots[slot] = None;
            self.free.push(slot);
        }
    }

    /// How many exchanges run.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// True when no exchange runs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next event reported, without waiting.
    pub fn try_event(&mut self) -> Option<(StreamId, OwnedEvent)> {
        let (stream, event) = self.events.try_recv()?;
        if matches!(event, OwnedEvent::End | OwnedEvent::Failed(_)) {
            self.by_stream.remove(&stream);
        }
        Some((stream, event))
    }

    /// Polls the exchanges whose wakers fired until each waits; ready once one of them has
    /// reported. The exchanges send to the inbox only while polled here, so this task needs
    /// no waking for it: the exchanges' own wakers wake it.
    pub fn poll_reported(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_woken(cx);
        if self.events.is_empty() {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }

    /// Polls until no exchange is left, dropping what they report.
    pub fn poll_finished(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_woken(cx);
        while self.events.try_recv().is_some() {}
        if self.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    /// Drops every exchange and refuses later events.
    pub fn close(&mut self) {
        self.slots.clear();
        self.wakers.clear();
        self.free.clear();
        self.by_stream.clear();
        self.events.close();
    }

    fn poll_woken(&mut self, cx: &mut Context<'_>) {
        {
            let mut task = lock(&self.woken.task);
            match &mut *task {
                Some(waker) => waker.clone_from(cx.waker()),
                None => *task = Some(cx.waker().clone()),
            }
        }
        // An exchange that wakes itself while polled is polled again, within a budget that
        // keeps one busy exchange from holding the task: past it, the task is woken anew.
        let mut budget = 2 * self.slots.len() + 2;
        loop {
            let ready = mem::take(&mut *lock(&self.woken.ready));
            if ready.is_empty() {
                return;
            }
            for slot in ready {
                if budget == 0 {
                    lock(&self.woken.ready).push(slot);
                    continue;
                }
                budget -= 1;
                let Some(Some(running)) = self.slots.get_mut(slot) else { continue };
                let mut slot_cx = Context::from_waker(&self.wakers[slot]);
                if running.work.as_mut().poll(&mut slot_cx).is_ready() {
                    let stream = running.stream;
                    self.slots[slot] = None;
                    self.free.push(slot);
                    if self.by_stream.get(&stream) == Some(&slot) {
                        self.by_stream.remove(&stream);
                    }
                }
            }
            if budget == 0 {
                cx.waker().wake_by_ref();
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests;
