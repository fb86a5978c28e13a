//! The server's child process: spawning it in its own process group, delivering its stderr
//! lines, and ending it (close stdin → wait → SIGTERM → wait → SIGKILL → reap), with a
//! synchronous fallback for when the runtime is gone before the sequence could run.

use std::io;
use std::panic::AssertUnwindSafe;
use std::process::ExitStatus;
use std::time::Duration;

use rustix::process::{kill_process_group, Pid, Signal};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};

use zest_core::runtime::ConnectError;
use zest_core::stdio::{StderrFn, StdioCommand};

/// Longest stderr line delivered whole; longer lines arrive in pieces of this size.
const MAX_STDERR_LINE: u64 = 64 * 1024;

/// How long the synchronous fallback waits for a SIGKILLed child to be reapable.
const FALLBACK_REAP_LIMIT: Duration = Duration::from_secs(5);

/// The child, owned by the session driver. Dropping it before [`shutdown`](Self::shutdown)
/// finished (the runtime shut down, the driver panicked) SIGKILLs the process group and reaps
/// the child synchronously.
pub(crate) struct Child {
    child: tokio::process::Child,
    pid: Pid,
    reaped: bool,
}

/// The child's stdin and stdout, for the driver.
pub(crate) struct Pipes {
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
}

/// Starts the program with piped stdio in a new process group; its stderr lines go to the
/// command's callback from a task of their own.
pub(crate) fn spawn(mut command: StdioCommand) -> Result<(Child, Pipes), ConnectError> {
    let program = command.program_name();
    let mut cmd = Command::from(zest_net::child_command(&command));
    cmd.kill_on_drop(false);
    let mut child = cmd.spawn().map_err(|e| ConnectError::spawn(program.clone(), &e))?;
    let taken = (child.id(), child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (Some(id), Some(stdin), Some(stdout), Some(stderr)) = taken else {
        unreachable!("a freshly spawned child with piped stdio has an id and all three pipes")
    };
    zest_net::widen_pipe(&stdin);
    zest_net::widen_pipe(&stdout);
    let pid = i32::try_from(id).ok().and_then(Pid::from_raw);
    let pid = pid.expect("the kernel gives children positive pids that fit an i32");
    let on_stderr = command.take_stderr_sink().unwrap_or_else(|| {
        let prefix = format!("[{program}] ");
        Box::new(move |line| eprintln!("{prefix}{line}"))
    });
    tokio::spawn(deliver_stderr(stderr, on_stderr));
    Ok((Child { child, pid, reaped: false }, Pipes { stdin, stdout }))
}

impl Child {
    /// The child's process id (also its process group id).
    pub(crate) fn id(&self) -> u32 {
        self.pid.as_raw_nonzero().get().unsigned_abs()
    }

    /// Ends the child once its stdin is closing: waits `grace` (counted from the call) for it
    /// to exit, then SIGTERMs its process group and waits `grace` again, then SIGKILLs the
    /// group; reaps it in every case.
    pub(crate) async fn shutdown(
        &mut self,
        grace: Duration,
        close_stdin: impl std::future::Future<Output = ()>,
    ) -> io::Result<ExitStatus> {
        let deadline = tokio::time::Instant::now() + grace;
        let exited = async {
            close_stdin.await;
            self.child.wait().await
        };
        if let Ok(status) = tokio::time::timeout_at(deadline, exited).await {
            return self.reaped(status);
        }
        self.signal(Signal::TERM);
        if let Ok(status) = tokio::time::timeout(grace, self.child.wait()).await {
            return self.reaped(status);
        }
        self.signal(Signal::KILL);
        let status = self.child.wait().await;
        self.reaped(status)
    }

    fn reaped(&mut self, status: io::Result<ExitStatus>) -> io::Result<ExitStatus> {
        self.reaped = status.is_ok();
        status
    }

    /// Signals the whole group. Only called before the child is reaped, so the group id
    /// cannot have been reused; a group already gone (ESRCH) is fine.
    fn signal(&self, signal: Signal) {
        let _ = kill_process_group(self.pid, signal);
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.reaped || matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        self.signal(Signal::KILL);
        // `try_wait` records the status in tokio's handle, so tokio never queues it as an
        // orphan; SIGKILL ends a process within milliseconds unless it is stuck in the kernel.
        let start = std::time::Instant::now();
        while start.elapsed() < FALLBACK_REAP_LIMIT {
            match self.child.try_wait() {
                Ok(None) => std::thread::sleep(Duration::from_millis(1)),
                Ok(Some(_)) | Err(_) => return,
            }
        }
    }
}

async fn deliver_stderr(stderr: ChildStderr, mut on_line: StderrFn) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader).take(MAX_STDERR_LINE).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                while matches!(line.last(), Some(b'\n' | b'\r')) {
                    line.pop();
                }
                let text = String::from_utf8_lossy(&line).into_owned();
                // A panicking callback must not stop the draining: a child whose stderr pipe
                // closes may die of SIGPIPE.
                let _ = std::panic::catch_unwind(AssertUnwindSafe(|| on_line(text)));
            }
        }
    }
}
