//! This process's stdin and stdout as async streams.
//!
//! A server spawned by an MCP client has pipes for stdin and stdout; those are driven by the
//! reactor like any socket (`tokio::net::unix::pipe`), which costs no thread hop per read or
//! write. Anything else (a terminal, a file), or a stdout shared with stderr (`2>&1`, where
//! non-blocking mode would leak into stderr writes), falls back to tokio's thread-backed
//! stdio. Non-blocking mode is switched off again once the session is over.

use std::io;
use std::os::fd::AsFd;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// The read half.
pub(super) type Reader = Box<dyn AsyncRead + Send + Unpin>;
/// The write half.
pub(super) type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// Puts stdin and stdout back in blocking mode when dropped, if they were switched.
pub(super) struct Restore {
    stdin: bool,
    stdout: bool,
}

/// Opens stdin and stdout. Must be called within a runtime with IO enabled.
pub(super) fn open() -> (Reader, Writer, Restore) {
    zest_net::widen_stdio();
    let own = zest_net::own_stdio_pipes();
    let mut restore = Restore { stdin: false, stdout: false };
    let reader: Reader = match own.stdin.then(receiver).flatten() {
        Some(rx) => {
            restore.stdin = true;
            Box::new(rx)
        }
        None => Box::new(tokio::io::stdin()),
    };
    let writer: Writer = match own.stdout.then(sender).flatten() {
        Some(tx) => {
            restore.stdout = true;
            Box::new(tx)
        }
        None => Box::new(tokio::io::stdout()),
    };
    (reader, writer, restore)
}

impl Drop for Restore {
    fn drop(&mut self) {
        // Best effort: a descriptor that cannot be switched back is left as it is.
        if self.stdin {
            let _ = rustix::io::ioctl_fionbio(io::stdin(), false);
        }
        if self.stdout {
            let _ = rustix::io::ioctl_fionbio(io::stdout(), false);
        }
    }
}

fn receiver() -> Option<pipe::Receiver> {
    let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
    pipe::Receiver::from_owned_fd(fd).ok()
}

fn sender() -> Option<pipe::Sender> {
    let fd = io::stdout().as_fd().try_clone_to_owned().ok()?;
    pipe::Sender::from_owned_fd(fd).ok()
}
