//! One accepted connection's task: socket bytes through zest-core's
//! [`ServerConn`](zest_core::runtime::http_server::ServerConn), its exchanges fed to the hub,
//! the router's transmits for them (through the connection's inbox) back to the socket.

use std::future::poll_fn;
use std::sync::Arc;
use std::time::Instant;

use smol::channel::Receiver;
use smol::future::{self, FutureExt as _};
use smol::net::TcpStream;
use zest_core::http1::{self, Config};
use zest_core::io::Transmit;
use zest_core::runtime::http_server::{Inbound, ServerConn, StreamIds};
use zest_core::runtime::not_reading;

use super::hub::{Hub, ToConn};
use super::stopping;
use crate::wire::{self, Alarm, ReadOutcome};
use crate::writer;

enum Wake {
    Read(ReadOutcome),
    Transmit(Transmit),
    Written(std::io::Result<()>),
    Timeout,
    Stop,
}

/// Serves one connection until it closes, or until shutdown finds it between requests.
pub(super) async fn serve(
    hub: Arc<Hub>,
    socket: TcpStream,
    config: Config,
    ids: Arc<StreamIds>,
    stop: Receiver<()>,
) {
    // Nagle would hold small SSE events and JSON answers back
    // (docs/design-notes.md#latency-tcp_nodelay).
    let _ = socket.set_nodelay(true);
    let mut reader = socket.clone();
    let mut writer = writer::over(socket);
    let inbox: ToConn = Arc::default();
    let backlog_limit = config.max_backlog_bytes;
    let mut conn = ServerConn::new(config, Instant::now(), ids);
    let mut buf = vec![0u8; 16 * 1024];
    let mut inputs: Vec<Inbound> = Vec::new();
    let mut read_open = true;
    let mut alarm = Alarm::default();
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
        let stopped = stop.is_closed();
        if stopped && conn.stream().is_none() && !conn.is_closed() {
            // Shutting down and between requests: nothing is lost by closing now.
            conn.handle_failed("the server is shutting down".into());
            continue;
        }
        alarm.arm(conn.poll_timeout());
        let reading = read_open && !conn.is_closed();
        let writing = writer.busy();
        let (reader, buf, writer, alarm) = (&mut reader, &mut buf, &mut writer, &mut alarm);
        let wake = async {
            if reading {
                Wake::Read(wire::read_some(reader, buf).await)
            } else {
                future::pending().await
            }
        }
        .race(async { Wake::Transmit(poll_fn(|cx| inbox.poll_recv(cx)).await) })
        .race(async {
            if writing {
                Wake::Written(writer.progress().await)
            } else {
                future::pending().await
            }
        })
        .race(async {
            alarm.fired().await;
            Wake::Timeout
        })
        .race(async {
            if stopped {
                future::pending().await
            } else {
                stopping(&stop).await;
                Wake::Stop
            }
        })
        .await;
        let now = Instant::now();
        match wake {
            Wake::Read(ReadOutcome::End) => {
                read_open = false;
                conn.handle_end(now);
            }
            Wake::Read(ReadOutcome::Data(n)) => conn.handle_data(now, &buf[..n]),
            Wake::Read(ReadOutcome::Failed(failure)) => {
                read_open = false;
                conn.handle_failed(format!("reading from the client failed: {failure}"));
            }
            Wake::Transmit(transmit) => conn.handle_transmit(now, transmit),
            Wake::Written(Err(e)) => {
                conn.handle_failed(format!("writing to the client failed: {e}"));
            }
            Wake::Written(Ok(())) => {}
            // Early alarms are harmless: the machine ignores a timeout before its deadline.
            Wake::Timeout => conn.handle_timeout(now),
            Wake::Stop => {}
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
