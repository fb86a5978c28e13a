//! This process's stdin and stdout as async streams, for [`serve_stdio`](crate::serve_stdio).
//!
//! A server spawned by an MCP client has pipes for stdin and stdout. Those are put in
//! non-blocking mode and driven by async-io's reactor like a socket ([`Pipe`]): a read or a
//! write costs no thread hop and no buffer of its own. Non-blocking mode belongs to the pipe,
//! not to this process, so it is switched back off when the session ends ([`Restore`]).
//!
//! Anything else keeps blocking mode and goes through a thread of smol's blocking pool
//! ([`Unblock`]): a terminal or a file (other programs may share them), and a stdout shared
//! with stderr (`2>&1`: our log writes to stderr would then see `WouldBlock`).

use std::io::{self, Write as _};
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
use smol::io::{AsyncRead, AsyncWrite};
use smol::Unblock;

use crate::pipe::Pipe;

/// The read half.
pub(crate) type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// The write half.
pub(crate) type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// Buffer of the thread-backed fallback, each way (`Unblock`'s default is 8 MiB, which a
/// busy session fills over time: it is a ring).
const FALLBACK_BUFFER: usize = 64 * 1024;

/// Puts stdin and stdout back in blocking mode when dropped, for those this module switched.
pub(crate) struct Restore {
    stdin: bool,
    stdout: bool,
}

/// Opens stdin and stdout, reactor-driven where they are pipes of their own (see the module
/// docs). Whatever std's stdout still buffers is flushed first, so it precedes our frames.
pub(crate) fn open() -> (Reader, Writer, Restore) {
    let _ = io::stdout().flush();
    zest_net::widen_stdio();
    let own = zest_net::own_stdio_pipes();
    let mut restore = Restore { stdin: false, stdout: false };
    let reader: Reader = match own.stdin.then(|| reactor(io::stdin().as_fd())) {
        Some(Some((pipe, switched))) => {
            restore.stdin = switched;
            Box::new(pipe)
        }
        _ => Box::new(Unblock::with_capacity(FALLBACK_BUFFER, io::stdin())),
    };
    let writer: Writer = match own.stdout.then(|| reactor(io::stdout().as_fd())) {
        Some(Some((pipe, switched))) => {
            restore.stdout = switched;
            Box::new(pipe)
        }
        _ => Box::new(Unblock::with_capacity(FALLBACK_BUFFER, io::stdout())),
    };
    (reader, writer, restore)
}

impl Drop for Restore {
    fn drop(&mut self) {
        // Best effort: a descriptor that cannot be switched back is left as it is.
        if self.stdin {
            set_blocking(io::stdin().as_fd());
        }
        if self.stdout {
            set_blocking(io::stdout().as_fd());
        }
    }
}

/// A duplicate of `fd` registered with the reactor (which makes it non-blocking), and whether
/// that switched the pipe (false when it was non-blocking already). `None` if any step fails;
/// the pipe is then left as it was.
fn reactor(fd: BorrowedFd<'_>) -> Option<(Pipe, bool)> {
    let was_nonblocking = fcntl_getfl(fd).ok()?.contains(OFlags::NONBLOCK);
    match Pipe::new(fd.try_clone_to_owned().ok()?) {
        Ok(pipe) => Some((pipe, !was_nonblocking)),
        Err(_) => {
            if !was_nonblocking {
                set_blocking(fd);
            }
            None
        }
    }
}

fn set_blocking(fd: BorrowedFd<'_>) {
    if let Ok(flags) = fcntl_getfl(fd) {
        let _ = fcntl_setfl(fd, flags - OFlags::NONBLOCK);
    }
}
