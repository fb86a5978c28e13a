//! The write half of a stdio connection: a task that writes the frames a driver hands it.
//!
//! Writing happens off the driver's task so that a peer that stops reading can never stop
//! the driver from reading (the classic pipe deadlock). Frames queued together are written
//! together and flushed as soon as the queue is empty.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// A handle on the writer task.
pub(crate) struct Writer {
    frames: Option<mpsc::UnboundedSender<Bytes>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl Writer {
    /// Spawns the task writing to `sink`.
    pub(crate) fn spawn<W>(sink: W) -> Self
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(run(BufWriter::with_capacity(64 * 1024, sink), rx));
        Self { frames: Some(tx), task: Some(task) }
    }

    /// Queues one frame. After [`close`](Self::close) or a write failure it is dropped: the
    /// failure is reported once by [`failed`](Self::failed).
    pub(crate) fn send(&self, frame: Bytes) {
        if let Some(tx) = &self.frames {
            // The task only stops on a write error, which `failed` reports.
            let _ = tx.send(frame);
        }
    }

    /// Writes what is queued, then closes the sink (for a child: its stdin).
    pub(crate) fn close(&mut self) {
        self.frames = None;
    }

    /// Resolves when writing has failed; pends forever while writing works or after the sink
    /// was closed cleanly. Cancel-safe.
    pub(crate) async fn failed(&mut self) -> io::Error {
        let Some(task) = &mut self.task else { return std::future::pending().await };
        let outcome = task.await;
        self.task = None;
        self.frames = None;
        match outcome {
            Ok(Ok(())) => std::future::pending().await,
            Ok(Err(e)) => e,
            Err(join) => io::Error::other(format!("the writer task stopped: {join}")),
        }
    }

    /// Closes the sink after writing what is queued, waiting at most `limit`; past it the
    /// task is stopped, which closes the sink with frames unwritten.
    pub(crate) async fn finish(&mut self, limit: Duration) {
        self.frames = None;
        let Some(mut task) = self.task.take() else { return };
        if tokio::time::timeout(limit, &mut task).await.is_err() {
            task.abort();
            // Awaiting the aborted task makes sure the sink has been dropped (closed).
            let _ = task.await;
        }
    }
}

async fn run<W: AsyncWrite + Unpin>(
    mut sink: BufWriter<W>,
    mut frames: mpsc::UnboundedReceiver<Bytes>,
) -> io::Result<()> {
    while let Some(frame) = frames.recv().await {
        sink.write_all(&frame).await?;
        while let Ok(frame) = frames.try_recv() {
            sink.write_all(&frame).await?;
        }
        sink.flush().await?;
    }
    sink.shutdown().await
}
