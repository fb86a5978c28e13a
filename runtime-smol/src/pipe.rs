//! One end of a pipe, non-blocking and driven by async-io's reactor.
//!
//! [`Async`]'s own `poll_read` tries the `read(2)` first each time it is polled, and a driver
//! loop polls its read once per turn, also when a command or a timer woke it: most turns
//! would cost a `read` that fails with `EAGAIN`. [`Pipe`] reads only while data may be there
//! (until a read comes back short, or fails with `WouldBlock`) and then waits for the
//! reactor's readiness event first. No wake-up is lost: re-arming the (one-shot) interest
//! reports data that arrived in between at once.
//!
//! Writes likewise: a write that comes back short filled the pipe, so the next one waits for
//! the reactor's word that there is room instead of failing with `EAGAIN` first. A 1 MiB
//! message into a reader that takes 8 KiB at a time made two `write`s per wake-up before.

use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use smol::io::{AsyncRead, AsyncWrite};
use smol::Async;

/// A pipe end registered with the reactor; dropping it deregisters and closes it.
pub(crate) struct Pipe {
    io: Async<File>,
    /// Data may be waiting: read before asking the reactor.
    maybe_readable: bool,
    /// There may be room: write before asking the reactor.
    maybe_writable: bool,
}

impl Pipe {
    /// Registers `fd` with the reactor, which puts it in non-blocking mode.
    pub(crate) fn new(fd: OwnedFd) -> io::Result<Self> {
        Ok(Self { io: Async::new(File::from(fd))?, maybe_readable: true, maybe_writable: true })
    }
}

impl AsyncRead for Pipe {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            if !self.maybe_readable {
                ready!(self.io.poll_readable(cx))?;
                self.maybe_readable = true;
            }
            match self.io.get_ref().read(buf) {
                Ok(n) => {
                    // A short read emptied the pipe (or met its end).
                    self.maybe_readable = n == buf.len() && n > 0;
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.maybe_readable = false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for Pipe {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            if !self.maybe_writable {
                ready!(self.io.poll_writable(cx))?;
                self.maybe_writable = true;
            }
            match self.io.get_ref().write(buf) {
                Ok(n) => {
                    // A short write filled the pipe.
                    self.maybe_writable = n == buf.len();
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.maybe_writable = false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_close(cx)
    }
}
