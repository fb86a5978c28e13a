//! One accepted connection's task: socket bytes through zest-core's
//! [`ServerConn`](zest_core::runtime::http_server::ServerConn), its exchanges fed to the hub,
//! the router's transmits for them (through the connection's inbox) back to the socket.

use std::future::poll_fn;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::sync::watch;
use zest_core::http1::{self, Config};
use zest_core::runtime::http_server::{Inbound, ServerConn, StreamIds};
use zest_core::runtime::not_reading;

use super::hub::{Hub, ToConn};
use crate::writer;

/// Serves one connection until it closes, or until shutdown finds it between requests.
pub(super) async fn serve(
    hub: Arc<Hub>,
    socket: TcpStream,
    config: Config,
    ids: Arc<StreamIds>,
    mut stop: watch::Receiver<bool>,
) {
    // Nagle would hold small SSE events and JSON answers back
    // (docs/design-notes.md#latency-tcp_nodelay).
    let _ = socket.set_nodelay(true);
    let (mut reader, writer) = socket.into_split();
    let mut writer = writer::over(writer);
    let inbox: ToConn = Arc::default();
    let backlog_limit = config.max_backlog_bytes;
    let mut conn = ServerConn::new(config, Instant::now(), ids);
    let mut buf = vec![0u8; 16 * 1024];
    let mut inputs: Vec<Inbound> = Vec::new();
    let mut read_open = true;
    let sleep = tokio::time::sleep(Duration::from_secs(3600));
    tokio::pin!(sleep);
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
                conn.handle_transmit(Instant::now(), transmit);
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
        if *stop.borrow() && conn.stream().is_none() && !conn.is_closed() {
            // Shutting down and between requests: nothing is lost by closing now.
            conn.handle_failed("the server is shutting down".into());
            continue;
        }
        if let Some(at) = conn.poll_timeout() {
            let at = tokio::time::Instant::from_std(at);
            if sleep.deadline() != at {
                sleep.as_mut().reset(at);
            }
        }
        tokio::select! {
            read = reader.read(&mut buf), if read_open && !conn.is_closed() => match read {
                Ok(0) => {
                    read_open = false;
                    conn.handle_end(Instant::now());
                }
                Ok(n) => conn.handle_data(Instant::now(), &buf[..n]),
                Err(e) => {
                    read_open = false;
                    conn.handle_failed(format!("reading from the client failed: {e}"));
                }
            },
            transmit = poll_fn(|cx| inbox.poll_recv(cx)) => {
                conn.handle_transmit(Instant::now(), transmit);
            }
            written = writer.progress(), if writer.busy() => {
                if let Err(e) = written {
                    conn.handle_failed(format!("writing to the client failed: {e}"));
                }
            }
            () = &mut sleep, if conn.poll_timeout().is_some() => {
                conn.handle_timeout(Instant::now());
            }
            _ = stop.changed(), if !*stop.borrow() => {}
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
