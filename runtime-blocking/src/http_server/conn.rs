//! One accepted connection: a reader thread moving socket bytes into a channel, and the
//! connection's own thread that owns zest-core's
//! [`ServerConn`](zest_core::runtime::http_server::ServerConn), feeds its exchanges to the hub,
//! runs the handlers a request asks for (its exchange waits for them anyway) and writes the
//! router's transmits to the socket, also while a handler runs. A client that stops reading
//! blocks only this connection's thread; shutdown cuts it by shutting the socket down.

use std::cell::RefCell;
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

use super::hub::{Hub, Start};

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
        serve(&hub, socket, config, ids, &stop, &tx, rx);
        done();
    })?;
    Ok(())
}

/// The connection's end of things, owned by its thread (lent to [`INLINE`] while that thread
/// runs handlers).
struct Io {
    conn: ServerConn,
    socket: TcpStream,
    rx: Receiver<ConnMsg>,
    write_failed: bool,
}

impl Io {
    /// Applies what arrived on the channel; true when anything did.
    fn take_messages(&mut self) -> bool {
        let mut moved = false;
        while let Ok(msg) = self.rx.try_recv() {
            apply(&mut self.conn, msg);
            moved = true;
        }
        moved
    }

    /// Writes what the connection has to send (a client that stops reading blocks only
    /// this thread).
    fn write_out(&mut self) {
        while let Some(t) = self.conn.poll_transmit() {
            let written = match t {
                http1::Transmit::Write(bytes) if !self.write_failed => {
                    self.socket.write_all(&bytes)
                }
                http1::Transmit::Write(_) => Ok(()),
                http1::Transmit::Close => {
                    let _ = self.socket.flush();
                    let _ = self.socket.shutdown(Shutdown::Write);
                    Ok(())
                }
            };
            if let Err(e) = written {
                self.write_failed = true;
                self.conn.handle_failed(format!("writing to the client failed: {e}"));
            }
        }
    }
}

thread_local! {
    /// The connection whose handlers this thread is running, if any.
    static INLINE: RefCell<Option<Io>> = const { RefCell::new(None) };
}

/// Called after every hub operation: on a connection thread running a handler, applies and
/// writes what the router sent its connection meanwhile (a progress report, the answer),
/// in the order the router sent it.
pub(super) fn flush_inline() {
    INLINE.with(|cell| {
        if let Ok(mut io) = cell.try_borrow_mut() {
            if let Some(io) = io.as_mut() {
                io.take_messages();
                io.write_out();
            }
        }
    });
}

/// Runs the handlers a request asked for on its connection's thread: the connection is held
/// by that exchange until they answer anyway, so no thread is handed the call and back.
fn run_inline(hub: &Arc<Hub>, io: Io, starts: Vec<Start>) -> Io {
    INLINE.with(|cell| *cell.borrow_mut() = Some(io));
    hub.run(starts);
    let io = INLINE.with(|cell| cell.borrow_mut().take());
    io.expect("the connection lent to INLINE above comes back")
}

/// Serves one connection until it closes, or until shutdown finds it between requests.
fn serve(
    hub: &Arc<Hub>,
    socket: TcpStream,
    config: Config,
    ids: Arc<StreamIds>,
    stop: &AtomicBool,
    tx: &ToConn,
    rx: Receiver<ConnMsg>,
) {
    let conn = ServerConn::new(config, Instant::now(), ids);
    let mut io = Io { conn, socket, rx, write_failed: false };
    let mut inputs: Vec<Inbound> = Vec::new();
    loop {
        // Feed the router, then carry out what it sent this connection, until both settle
        // (an answer ending may release a pipelined request).
        loop {
            inputs.extend(std::iter::from_fn(|| io.conn.poll_inbound()));
            if !inputs.is_empty() {
                let fed = io.conn.stream();
                let starts = hub.feed(&inputs, tx);
                inputs.clear();
                io.take_messages();
                if fed.is_some() && io.conn.stream() == fed {
                    // The exchange waits for these handlers' answers: run them here.
                    io.write_out();
                    io = run_inline(hub, io, starts);
                } else {
                    // Answered already (a legacy POST's 202): the client may send its next
                    // request on this connection, so the handlers must not hold its thread.
                    hub.spawn(starts);
                }
                // Look again: what came in meanwhile may have begun the next request.
                continue;
            }
            if !io.take_messages() {
                break;
            }
        }
        io.write_out();
        if io.conn.is_closed() {
            break;
        }
        if stop.load(Ordering::Acquire) && io.conn.stream().is_none() {
            // Shutting down and between requests: nothing is lost by closing now.
            io.conn.handle_failed("the server is shutting down".into());
            continue;
        }
        let msg = match io.conn.poll_timeout() {
            Some(at) => match io.rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(msg) => Some(msg),
                Err(RecvTimeoutError::Timeout) => None,
                // We hold a sender ourselves.
                Err(RecvTimeoutError::Disconnected) => break,
            },
            None => match io.rx.recv() {
                Ok(msg) => Some(msg),
                Err(_) => break,
            },
        };
        match msg {
            Some(msg) => apply(&mut io.conn, msg),
            None => io.conn.handle_timeout(Instant::now()),
        }
    }
    // The reader thread ends with the socket.
    let _ = io.socket.shutdown(Shutdown::Both);
    // The router hears about an exchange cut short (a no-op when none is under way).
    io.conn.handle_failed("the connection closed".into());
    inputs.extend(std::iter::from_fn(|| io.conn.poll_inbound()));
    if !inputs.is_empty() {
        // Nothing asks for a handler on a failed exchange; spawn covers it anyway.
        hub.spawn(hub.feed(&inputs, tx));
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
