//! How each runtime runs a test body written once for all three (as in runtime_contract.rs: a
//! macro adds `async` and `.await` for the async runtimes), and how it runs work beside the
//! body. Every body runs on a thread of its own, so that a hang fails its test after [`HANG`]
//! instead of holding the suite.
#![allow(dead_code, unreachable_pub)] // a module of each test binary that uses it

use std::future::Future;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

/// Far above what any test body takes; only there to turn a hang into a failure.
pub const HANG: Duration = Duration::from_secs(120);

/// Runs `body` on a current-thread tokio runtime of its own (as `#[tokio::test]` does).
pub fn on_tokio<F: Future<Output = ()>>(body: impl FnOnce() -> F + Send + 'static) {
    within(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        rt.block_on(body());
    });
}

/// Runs `body` with `smol::block_on`; the sessions' tasks run on smol's global executor.
pub fn on_smol<F: Future<Output = ()>>(body: impl FnOnce() -> F + Send + 'static) {
    within(move || smol::block_on(body()));
}

/// Runs `body` as it is: every call blocks.
pub fn on_blocking(body: impl FnOnce() + Send + 'static) {
    within(body);
}

/// Runs `work` as a tokio task.
pub fn tokio_spawn<T, F>(work: impl FnOnce() -> F) -> tokio::task::JoinHandle<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    tokio::spawn(work())
}

/// What a task of [`tokio_spawn`] returned.
pub async fn tokio_join<T>(task: tokio::task::JoinHandle<T>) -> T {
    match task.await {
        Ok(value) => value,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(e) => panic!("the task did not finish: {e}"),
        },
    }
}

/// Runs `work` as a task on smol's global executor.
pub fn smol_spawn<T, F>(work: impl FnOnce() -> F) -> smol::Task<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    smol::spawn(work())
}

/// What a task of [`smol_spawn`] returned.
pub async fn smol_join<T>(task: smol::Task<T>) -> T {
    task.await
}

/// Runs `work` on a thread.
pub fn thread_spawn<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    thread::spawn(work)
}

/// What a thread of [`thread_spawn`] returned; its panic, if it panicked.
pub fn thread_join<T>(thread: thread::JoinHandle<T>) -> T {
    thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Runs `f` on a thread of its own, failing if it takes longer than [`HANG`].
fn within(f: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let runner = thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    match finished.recv_timeout(HANG) {
        Ok(()) => runner.join().expect("joined"),
        // The body panicked: show its panic.
        Err(RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(runner.join().expect_err("it panicked"))
        }
        Err(RecvTimeoutError::Timeout) => panic!("still running after {HANG:?}"),
    }
}

/// Sleeps `wait` on smol's timer.
pub async fn smol_pause(wait: Duration) {
    smol::Timer::after(wait).await;
}

/// The zest-tokio client's next notification, if one comes within `wait`.
pub async fn tokio_next_note(
    client: &zest_tokio::Client,
    wait: Duration,
) -> Option<zest_core::client::ServerNotification> {
    let notes = client.notifications();
    tokio::time::timeout(wait, notes.recv()).await.ok()?.ok()
}

/// The zest-smol client's next notification, if one comes within `wait`.
pub async fn smol_next_note(
    client: &zest_smol::Client,
    wait: Duration,
) -> Option<zest_core::client::ServerNotification> {
    use smol::future::FutureExt as _;
    let notes = client.notifications();
    async { notes.recv().await.ok() }
        .or(async {
            smol::Timer::after(wait).await;
            None
        })
        .await
}
