//! One accepted connection: a reader thread moving socket bytes into a channel, and the
//! connection's own thread that owns zest-core's
//! [`ServerConn`](zest_core::runtime::http_server::ServerConn), feeds its exchanges to the hub
//! and writes the router's transmits for them to the socket. A client that stops reading
//! blocks only this connection's thread; shutdown cuts it by shutting the socket down.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use zest_core::http1::{self, Config};
use zest_core::io::Transmit;
use zest_core::runtime::http_server::{Inbound, ServerConn, StreamIds};

use super::hub::Hub;

/// What a connection's thread is woken for.
pub(super) enum ConnMsg {
    /// Bytes read from the socket.
    Data(Vec<u8>),
    /// The client closed its side.
    End,
    /// Reading failed.
    Failed(String),
    /// A router transmit for the stream this connection carries.
    Transmit(Transmit),
    /// The server is shutting down: close when between requests.
    Stop,
}

/// What the hub sends a connection.
pub(super) type ToConn = Sender<ConnMsg>;

const READ_BUF: usize = 16 * 1024;

/// What every connection of a server shares.
#[derive(Clone)]
pub(super) struct Shared {
    pub(super) hub: Arc<Hub>,
    pub(super) config: Config,
    pub(super) ids: Arc<StreamIds>,
    /// Set once the server shuts down.
    pub(super) stop: Arc<AtomicBool>,
}

/// Starts the threads of one accepted connection, woken through `channel`. `done` runs when
/// it has ended.
pub(super) fn spawn(
    shared: &Shared,
    socket: TcpStream,
    (tx, rx): (ToConn, Receiver<ConnMsg>),
    done: impl FnOnce() + Send + 'static,
) -> io::Result<()> {
    // Nagle would hold small SSE events and JSON answers back (DESIGN.md §5).
    let _ = socket.set_nodelay(true);
    let mut reading = socket.try_clone()?;
    let reader_tx = tx.clone();
    thread::Builder::new().name("zest-http-read".into()).spawn(move || {
        let mut buf = vec![0u8; READ_BUF];
        loop {
            let msg = match reading.read(&mut buf) {
                Ok(0) => ConnMsg::End,
                Ok(n) => ConnMsg::Data(buf[..n].to_vec()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => ConnMsg::Failed(format!("reading from the client failed: {e}")),
            };
            let last = !matches!(msg, ConnMsg::Data(_));
            if reader_tx.send(msg).is_err() || last {
                return;
            }
        }
    })?;
    let Shared { hub, config, ids, stop } = shared.clone();
    thread::Builder::new().name("zest-http-conn".into()).spawn(move || {
        serve(&hub, socket, config, ids, &stop, &tx, &rx);
        done();
    })?;
    Ok(())
}

/// Serves one connection until it closes, or until shutdown finds it between requests.
fn serve(
    hub: &Arc<Hub>,
    mut socket: TcpStream,
    config: Config,
    ids: Arc<StreamIds>,
    stop: &AtomicBool,
    tx: &ToConn,
    rx: &Receiver<ConnMsg>,
) {
    let mut conn = ServerConn::new(config, Instant::now(), ids);
    let mut inputs: Vec<Inbound> = Vec::new();
    let mut write_failed = false;
    loop {
        // Feed the router, then carry out what it sent this connection, until both settle
        // (an answer ending may release a pipelined request).
        loop {
            inputs.extend(std::iter::from_fn(|| conn.poll_inbound()));
            if !inputs.is_empty() {
                hub.feed(&inputs, tx);
                inputs.clear();
            }
            let mut moved = false;
            while let Ok(msg) = rx.try_recv() {
                apply(&mut conn, msg);
                moved = true;
            }
            if !moved {
                break;
            }
        }
        while let Some(t) = conn.poll_transmit() {
            let written = match t {
                http1::Transmit::Write(bytes) if !write_failed => socket.write_all(&bytes),
                http1::Transmit::Write(_) => Ok(()),
                http1::Transmit::Close => {
                    let _ = socket.flush();
                    let _ = socket.shutdown(Shutdown::Write);
                    Ok(())
                }
            };
            if let Err(e) = written {
                write_failed = true;
                conn.handle_failed(format!("writing to the client failed: {e}"));
            }
        }
        if conn.is_closed() {
            break;
        }
        if stop.load(Ordering::Acquire) && conn.stream().is_none() {
            // Shutting down and between requests: nothing is lost by closing now.
            conn.handle_failed("the server is shutting down".into());
            continue;
        }
        let msg = match conn.poll_timeout() {
            Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(msg) => Some(msg),
                Err(RecvTimeoutError::Timeout) => None,
                // We hold a sender ourselves.
                Err(RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(msg) => Some(msg),
                Err(_) => break,
            },
        };
        match msg {
            Some(msg) => apply(&mut conn, msg),
            None => conn.handle_timeout(Instant::now()),
        }
    }
    // The reader thread ends with the socket.
    let _ = socket.shutdown(Shutdown::Both);
    // The router hears about an exchange cut short (a no-op when none is under way).
    conn.handle_failed("the connection closed".into());
    inputs.extend(std::iter::from_fn(|| conn.poll_inbound()));
    if !inputs.is_empty() {
        hub.feed(&inputs, tx);
    }
}

fn apply(conn: &mut ServerConn, msg: ConnMsg) {
    match msg {
        ConnMsg::Data(bytes) => conn.handle_data(Instant::now(), &bytes),
        ConnMsg::End => conn.handle_end(Instant::now()),
        ConnMsg::Failed(why) => conn.handle_failed(why),
        ConnMsg::Transmit(transmit) => conn.handle_transmit(Instant::now(), transmit),
        // The loop looks at the flag.
        ConnMsg::Stop => {}
    }
}

/// Creates a connection's channel.
pub(super) fn channel() -> (ToConn, Receiver<ConnMsg>) {
    mpsc::channel()
}
