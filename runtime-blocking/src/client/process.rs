//! The child process: spawning it with its pipes, reading them on threads, and ending it
//! (close stdin → wait → SIGTERM to the group → wait → SIGKILL → reap).

use std::io::{self, BufRead, BufReader, Read};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{kill_process_group, Pid, Signal};

use zest_core::io::{StreamEvent, TransportFailure};

use crate::link;
use zest_core::stdio::{StderrFn, StdioCommand};

/// A spawned child and its pipes.
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    pub(crate) stderr: ChildStderr,
}

pub(crate) fn spawn(command: &StdioCommand) -> io::Result<Spawned> {
    let mut child = zest_net::child_command(command).spawn()?;
    // Invariant: `child_command` pipes all three.
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    zest_net::widen_pipe(&stdin);
    zest_net::widen_pipe(&stdout);
    Ok(Spawned { child, stdin, stdout, stderr })
}

/// Size of the read buffer of a stream's reader thread.
pub(crate) const READ_BUF: usize = 64 * 1024;

/// Reads `stream` on a thread of its own until EOF or error, handing each read to `feed`
/// (bytes, then exactly one `End` or `Failed`). `feed` returns false to stop early. The
/// thread is a session thread: a handle dropped on it does not wait for the session's end.
pub(crate) fn read_stream<R, F>(mut stream: R, mut feed: F) -> io::Result<()>
where
    R: Read + Send + 'static,
    F: FnMut(StreamEvent<'_>) -> bool + Send + 'static,
{
    let reader = thread::Builder::new().name("zest-reader".into());
    reader.spawn(move || {
        link::no_join(|| {
            let mut buf = vec![0u8; READ_BUF];
            while read_once(&mut stream, &mut buf, &mut feed) {}
        });
    })?;
    Ok(())
}

/// Reads `stream` once and feeds what came (bytes, its end, a failure); false once nothing
/// more will come or `feed` wants no more.
pub(crate) fn read_once(
    stream: &mut (impl Read + ?Sized),
    buf: &mut [u8],
    feed: &mut impl FnMut(StreamEvent<'_>) -> bool,
) -> bool {
    match stream.read(buf) {
        Ok(0) => {
            feed(StreamEvent::End);
            false
        }
        Ok(n) => feed(StreamEvent::Data(&buf[..n])),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => true,
        Err(e) => {
            feed(StreamEvent::Failed(TransportFailure::Reset(format!("reading: {e}"))));
            false
        }
    }
}

/// Delivers each stderr line to `f` until EOF.
pub(crate) fn read_stderr(stderr: ChildStderr, mut f: StderrFn) -> io::Result<()> {
    thread::Builder::new().name("zest-stderr".into()).spawn(move || {
        let mut lines = BufReader::new(stderr);
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    while matches!(line.last(), Some(b'\n' | b'\r')) {
                        line.pop();
                    }
                    f(String::from_utf8_lossy(&line).into_owned());
                }
            }
        }
    })?;
    Ok(())
}

/// Ends the child: drops `stdin` (EOF), waits until `first` (the end of the first grace
/// period, which began when stdin was being closed), sends SIGTERM to its process group,
/// waits `grace`, sends SIGKILL, then reaps it. Returns its exit status.
pub(crate) fn shutdown(
    child: &mut Child,
    stdin: Option<ChildStdin>,
    first: Instant,
    grace: Duration,
) -> io::Result<ExitStatus> {
    drop(stdin);
    if let Some(status) = wait_until(child, first)? {
        return Ok(status);
    }
    signal_group(child, Signal::TERM);
    if let Some(status) = wait_until(child, Instant::now() + grace)? {
        return Ok(status);
    }
    signal_group(child, Signal::KILL);
    child.wait()
}

/// Signals the child's process group (its id: it was spawned with `process_group(0)`).
fn signal_group(child: &Child, signal: Signal) {
    let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else { return };
    // ESRCH (the group is already gone) is the only expected failure, and harmless.
    let _ = kill_process_group(pid, signal);
}

/// Polls for the child's exit until `deadline`.
fn wait_until(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}
