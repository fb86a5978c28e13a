//! The child process: spawning it in its own group, pumping its stderr, and ending it.
//!
//! ```text
//!  shutdown: stdin closed ──grace──▶ SIGTERM to the group ──grace──▶ SIGKILL to the group
//!               │ exited                   │ exited                         │
//!               └──────────────────────────┴────────────── reaped ◀─────────┘
//! ```

use std::future::Future;
use std::io;
use std::os::fd::OwnedFd;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use rustix::process::{kill_process_group, Pid, Signal};
use smol::future::FutureExt as _;
use smol::io::{AsyncBufReadExt as _, AsyncReadExt as _};
use smol::process::{Child, ChildStderr, Stdio};
use smol::{Task, Timer};

use crate::pipe::Pipe;
use zest_core::stdio::{StderrFn, StdioCommand};

/// Longest piece of a stderr line delivered at once.
const MAX_STDERR_LINE: usize = 64 * 1024;

/// A running child, its pipes split off (stdin and stdout as [`Pipe`]s, which read only
/// once the reactor reported data).
pub(crate) struct Spawned {
    pub(crate) supervisor: Supervisor,
    pub(crate) stdin: Pipe,
    pub(crate) stdout: Pipe,
}

/// Owns the child and its stderr pump until the child is reaped.
pub(crate) struct Supervisor {
    child: Child,
    grace: Duration,
    stderr: Task<()>,
}

/// Starts `cmd` with piped stdio in a new process group; stderr lines go to its callback.
pub(crate) fn spawn(mut cmd: StdioCommand) -> io::Result<Spawned> {
    let program = cmd.program_name();
    // async-process keeps its own record of the pipes asked for: they are asked again.
    let mut child = smol::process::Command::from(zest_net::child_command(&cmd))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .reap_on_drop(true)
        .spawn()?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        unreachable!("all three pipes were requested");
    };
    zest_net::widen_pipe(&stdin);
    zest_net::widen_pipe(&stdout);
    let stdin = Pipe::new(OwnedFd::try_from(stdin)?)?;
    let stdout = Pipe::new(OwnedFd::try_from(stdout)?)?;
    let sink = cmd.take_stderr_sink().unwrap_or_else(|| {
        Box::new(move |line: String| eprintln!("[{program}] {line}")) as StderrFn
    });
    let stderr = smol::spawn(pump_stderr(stderr, sink));
    Ok(Spawned { supervisor: Supervisor { child, grace: cmd.grace(), stderr }, stdin, stdout })
}

impl Supervisor {
    /// How long each shutdown step waits.
    pub(crate) fn grace(&self) -> Duration {
        self.grace
    }

    /// The child's process id (also its process group id).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Ends the child and reaps it. `stdin_closed` resolves once stdin is closed (the writer
    /// finished) and closes it when dropped; it gets `grace` together with the child's own
    /// exit. Then SIGTERM to the group, `grace` again, SIGKILL, reap. Finally waits up to
    /// `grace` for the last stderr lines.
    pub(crate) async fn shutdown(
        mut self,
        stdin_closed: impl Future<Output = ()>,
    ) -> io::Result<ExitStatus> {
        let deadline = Instant::now() + self.grace;
        stdin_closed.or(sleep_until(deadline)).await;
        let status = match self.wait_until(deadline).await? {
            Some(status) => status,
            None => {
                self.signal(Signal::TERM);
                match self.wait_until(Instant::now() + self.grace).await? {
                    Some(status) => status,
                    None => {
                        self.signal(Signal::KILL);
                        self.child.status().await?
                    }
                }
            }
        };
        self.stderr.or(sleep_until(Instant::now() + self.grace)).await;
        Ok(status)
    }

    /// The exit status if the child exits before `deadline`.
    async fn wait_until(&mut self, deadline: Instant) -> io::Result<Option<ExitStatus>> {
        let exited = async { self.child.status().await.map(Some) };
        let timer = async {
            Timer::at(deadline).await;
            Ok(None)
        };
        exited.or(timer).await
    }

    /// Signals the child's process group. The child is not yet reaped, so the group id
    /// cannot have been reused; a group that is already gone is not an error.
    fn signal(&self, signal: Signal) {
        let Some(pid) = i32::try_from(self.pid()).ok().and_then(Pid::from_raw) else { return };
        let _ = kill_process_group(pid, signal);
    }
}

/// Delivers stderr lines until EOF.
async fn pump_stderr(stderr: ChildStderr, mut sink: StderrFn) {
    let mut reader = smol::io::BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        let mut limited = (&mut reader).take(MAX_STDERR_LINE as u64);
        match limited.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                }
                sink(String::from_utf8_lossy(&line).into_owned());
            }
        }
    }
}

async fn sleep_until(deadline: Instant) {
    Timer::at(deadline).await;
}
