//! The loop of one accepted connection on an async runtime, written once: socket bytes
//! through [`ServerConn`], its exchanges fed to the [`Hub`], the router's transmits for them
//! (through the connection's [`Inbox`]) back to the socket. The runtime supplies the read
//! half, its timer and the shutdown signal ([`AcceptedIo`]) and the write half as a
//! [`Writer`].

use std::future::poll_fn;
use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use super::{Hub, HubHost, Inbound, ServerConn, StreamIds};
use crate::http1::{self, Config};
use crate::io::Transmit;
use crate::runtime::{not_reading, Inbox, PollSink, Writer};

/// What an accepted connection's loop needs of its runtime besides the write half.
pub trait AcceptedIo {
    /// Reads from the client into `buf` (`Ok(0)`: the client closed its side).
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>>;
    /// Resolves at `at` or later (early is harmless: the connection ignores an early
    /// timeout).
    fn poll_timer(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()>;
    /// Resolves once the server has begun to shut down, and at every poll after that.
    fn poll_stopping(&mut self, cx: &mut Context<'_>) -> Poll<()>;
    /// The runtime's clock.
    fn now(&self) -> Instant;
}

/// What woke the loop.
enum Wake {
    Read(io::Result<usize>),
    Transmit(Transmit),
    Written(io::Result<()>),
    Timeout,
    Stopping,
}

/// Bytes read from a connection at once.
const READ_BUF: usize = 16 * 1024;

/// Serves one connection until it closes, or until shutdown finds it between requests
/// (nothing is lost by closing then). A client that does not take what it is sent past
/// `config.max_backlog_bytes` is cut off ([`not_reading`]); the session lives on.
pub async fn serve_accepted<H, I, S>(
    hub: Arc<Hub<H>>,
    mut io: I,
    mut writer: Writer<S>,
    config: Config,
    ids: Arc<StreamIds>,
) where
    H: HubHost<Conn = Inbox<Transmit>>,
    I: AcceptedIo,
    S: PollSink,
{
    let inbox: Arc<Inbox<Transmit>> = Arc::default();
    let backlog_limit = config.max_backlog_bytes;
    let mut conn = ServerConn::new(config, io.now(), ids);
    let mut buf = vec![0u8; READ_BUF];
    let mut inputs: Vec<Inbound> = Vec::new();
    let (mut read_open, mut stopping) = (true, false);
    loop {
        // Running: what this task sends itself through the hub needs no wake-up.
        inbox.awake();
        // Feed the router, then carry out what it sent this connection, until both settle
        // (an answer ending may release a pipelined request).
        loop {
            inputs.extend(std::iter::from_fn(|| conn.poll_inbound()));
            if !inputs.is_empty() {
                hub.feed(&inputs, &inbox);
                inputs.clear();
            }
            let mut moved = false;
            while let Some(transmit) = inbox.try_recv() {
                conn.handle_transmit(io.now(), transmit);
                moved = true;
            }
            if !moved {
                break;
            }
        }
        while let Some(t) = conn.poll_transmit() {
            match t {
                http1::Transmit::Write(bytes) => writer.send(bytes),
                http1::Transmit::Close => writer.close(),
            }
        }
        writer.try_progress();
        if writer.is_backlogged(backlog_limit) {
            // The client does not take what it is sent: stop holding it for the client.
            writer.abandon();
            conn.handle_failure(not_reading(backlog_limit));
            continue;
        }
        if conn.is_closed() && !writer.busy() {
            break;
        }
        if stopping && conn.stream().is_none() && !conn.is_closed() {
            conn.handle_failed("the server is shutting down".into());
            continue;
        }
        let reading = read_open && !conn.is_closed();
        let deadline = conn.poll_timeout();
        let wake = poll_fn(|cx| {
            if reading {
                if let Poll::Ready(read) = io.poll_read(cx, &mut buf) {
                    return Poll::Ready(Wake::Read(read));
                }
            }
            if let Poll::Ready(transmit) = inbox.poll_recv(cx) {
                return Poll::Ready(Wake::Transmit(transmit));
            }
            if writer.busy() {
                if let Poll::Ready(written) = writer.poll_progress(cx) {
                    return Poll::Ready(Wake::Written(written));
                }
            }
            if let Some(at) = deadline {
                if io.poll_timer(cx, at).is_ready() {
                    return Poll::Ready(Wake::Timeout);
                }
            }
            if !stopping && io.poll_stopping(cx).is_ready() {
                return Poll::Ready(Wake::Stopping);
            }
            Poll::Pending
        })
        .await;
        let now = io.now();
        match wake {
            Wake::Read(Ok(0)) => {
                read_open = false;
                conn.handle_end(now);
            }
            Wake::Read(Ok(n)) => conn.handle_data(now, &buf[..n]),
            Wake::Read(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
            Wake::Read(Err(e)) => {
                read_open = false;
                conn.handle_failed(format!("reading from the client failed: {e}"));
            }
            Wake::Transmit(transmit) => conn.handle_transmit(now, transmit),
            Wake::Written(Err(e)) => {
                conn.handle_failed(format!("writing to the client failed: {e}"))
            }
            Wake::Written(Ok(())) => {}
            Wake::Timeout => conn.handle_timeout(now),
            Wake::Stopping => stopping = true,
        }
    }
    // The router hears about an exchange cut short (a no-op when none is under way).
    conn.handle_failed("the connection closed".into());
    inputs.extend(std::iter::from_fn(|| conn.poll_inbound()));
    if !inputs.is_empty() {
        hub.feed(&inputs, &inbox);
    }
    // What the hub still sends this connection has nowhere to go.
    inbox.close();
}
