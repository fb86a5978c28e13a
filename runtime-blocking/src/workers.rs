//! Threads for handlers: every job runs on a thread of its own at once (never queued behind a
//! running job); a thread that finishes waits a while for the next job before exiting, which
//! spares a thread spawn per request.

use std::collections::VecDeque;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

type Job = Box<dyn FnOnce() + Send>;

/// How long an idle thread waits for another job before it exits.
const IDLE: Duration = Duration::from_secs(5);

#[derive(Clone)]
pub(crate) struct Workers {
    shared: Arc<Shared>,
    name: &'static str,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    /// Threads waiting for a job.
    idle: usize,
}

impl Workers {
    pub(crate) fn new(name: &'static str) -> Self {
        let shared = Arc::new(Shared { state: Mutex::default(), wake: Condvar::new() });
        Self { shared, name }
    }

    /// Runs `job` on an idle thread, or on a new one when every thread is busy.
    pub(crate) fn run(&self, job: impl FnOnce() + Send + 'static) -> io::Result<()> {
        let mut state = self.shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        // Each queued job is matched with a distinct idle thread.
        if state.idle > state.queue.len() {
            state.queue.push_back(Box::new(job));
            // Woken after the unlock: woken under it, the thread would find the lock held
            // and sleep again at once (three more futex calls per job, a context switch
            // at worst).
            drop(state);
            self.shared.wake.notify_one();
            return Ok(());
        }
        drop(state);
        let shared = self.shared.clone();
        let first: Job = Box::new(job);
        thread::Builder::new().name(self.name.into()).spawn(move || work(&shared, first))?;
        Ok(())
    }
}

fn work(shared: &Shared, first: Job) {
    let mut job = first;
    loop {
        // A panic is the job's own business (the caller reports it); the thread goes on.
        let _ = catch_unwind(AssertUnwindSafe(job));
        let mut state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(next) = state.queue.pop_front() {
                job = next;
                break;
            }
            state.idle += 1;
            let (next, timeout) =
                shared.wake.wait_timeout(state, IDLE).unwrap_or_else(PoisonError::into_inner);
            state = next;
            state.idle -= 1;
            if timeout.timed_out() && state.queue.is_empty() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Instant;

    use super::*;

    #[test]
    fn a_job_never_waits_behind_a_running_one() {
        let workers = Workers::new("test");
        let (to_first, first_waits) = mpsc::channel::<()>();
        let (done_tx, done) = mpsc::channel();
        let first_done = done_tx.clone();
        workers
            .run(move || {
                let freed = first_waits.recv_timeout(Duration::from_secs(10)).is_ok();
                let _ = first_done.send(("first", freed));
            })
            .unwrap();
        workers.run(move || to_first.send(()).unwrap()).unwrap();
        assert_eq!(done.recv_timeout(Duration::from_secs(20)).unwrap(), ("first", true));
    }

    #[test]
    fn an_idle_thread_takes_the_next_job() {
        let workers = Workers::new("test");
        let (tx, rx) = mpsc::channel();
        let first = tx.clone();
        workers.run(move || first.send(thread::current().id()).unwrap()).unwrap();
        let first_id = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        // Wait (bounded) until that thread is idle, then the next job must reuse it.
        let deadline = Instant::now() + Duration::from_secs(10);
        while workers.shared.state.lock().unwrap().idle == 0 {
            assert!(Instant::now() < deadline, "the thread never went idle");
            thread::yield_now();
        }
        workers.run(move || tx.send(thread::current().id()).unwrap()).unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), first_id);
    }
}
