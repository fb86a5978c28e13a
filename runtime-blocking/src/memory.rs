//! A server and a client joined in memory, for testing server code without a process: the
//! server's [`serve`](crate::serve) on a thread of its own and the client's session, joined by two bounded
//! in-memory byte pipes (no file descriptors), with the same framing as stdio.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use zest_core::error::CloseReason;
use zest_core::runtime::ConnectError;
use zest_core::server::ServerConfig;

use crate::client::{Client, ClientOptions};
use crate::server::{Registry, ServerHandle, StdioServer};

/// How many bytes each direction buffers before a writer waits for its reader.
const PIPE_CAPACITY: usize = 64 * 1024;

/// The server half of an [`in_memory`] pair: a [`StdioServer`] over in-memory pipes, whose
/// session runs on a thread of its own and ends when the client closes (or the last
/// [`Client`] clone is dropped). Dropping this handle lets the server run on.
#[derive(Debug)]
pub struct InMemoryServer(StdioServer);

impl InMemoryServer {
    /// The handle on the server: change its lists, report resource updates, log.
    pub fn handle(&self) -> ServerHandle {
        self.0.handle()
    }

    /// Waits for the server's session to end and returns why it ended (the client closing
    /// shows as the end of its input). A panic on the server's thread is resumed here.
    pub fn stopped(self) -> CloseReason {
        self.0.stopped()
    }

    /// True once the server's session has ended.
    pub fn is_stopped(&self) -> bool {
        self.0.is_stopped()
    }
}

/// Serves `registry` in this process and connects a client to it, with no process and no
/// socket: returns once the handshake is done. The client is the same [`Client`] as over
/// stdio or HTTP (with [`pid`](Client::pid) 0); its [`close`](Client::close) ends the server
/// too. The client presents itself as `zest-in-memory` and answers no server requests; see
/// [`in_memory_with`] for options of your own (sampling, elicitation, roots handlers). The
/// server runs as a [`StdioServer`], so it declares `listChanged` and resource `subscribe`,
/// and [`InMemoryServer::handle`] changes its lists, reports resource updates and logs.
///
/// ```no_run
/// # use zest_blocking::{ClientApi, Registry, ServerConfig};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Hello { name: String }
/// # fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::new()
///     .tool("hello", "Greets", |Hello { name }| format!("Hello, {name}!"));
/// let (client, server) = zest_blocking::in_memory(ServerConfig::new("demo", "1.0"), registry)?;
/// let result = client.call_tool("hello", serde_json::json!({"name": "Ada"}))?;
/// assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
/// client.close()?;
/// server.stopped();
/// # Ok(()) }
/// ```
pub fn in_memory(
    config: ServerConfig,
    registry: Registry,
) -> Result<(Client, InMemoryServer), ConnectError> {
    let options = ClientOptions::new("zest-in-memory", env!("CARGO_PKG_VERSION"));
    in_memory_with(config, registry, options)
}

/// [`in_memory`] with the client's own options and handlers.
pub fn in_memory_with(
    config: ServerConfig,
    registry: Registry,
    options: ClientOptions,
) -> Result<(Client, InMemoryServer), ConnectError> {
    let (server_reader, client_writer) = pipe();
    let (client_reader, server_writer) = pipe();
    // A server thread that cannot start drops its pipe ends: the client then fails typed.
    let server = InMemoryServer(StdioServer::start(config, registry, server_reader, server_writer));
    let client = Client::over(client_reader, client_writer, options)?;
    Ok((client, server))
}

/// A bounded byte pipe: [`PipeWriter`] blocks while [`PIPE_CAPACITY`] bytes are unread;
/// dropping the writer is the reader's end of input, dropping the reader makes writes fail
/// with `BrokenPipe`.
fn pipe() -> (PipeReader, PipeWriter) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State { bytes: VecDeque::new(), reader: true, writer: true }),
        changed: Condvar::new(),
    });
    (PipeReader(shared.clone()), PipeWriter(shared))
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

struct State {
    bytes: VecDeque<u8>,
    /// The reader, or the writer, is still there.
    reader: bool,
    writer: bool,
}

struct PipeReader(Arc<Shared>);

struct PipeWriter(Arc<Shared>);

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(
        &self,
        state: std::sync::MutexGuard<'a, State>,
    ) -> std::sync::MutexGuard<'a, State> {
        self.changed.wait(state).unwrap_or_else(PoisonError::into_inner)
    }
}

impl Read for PipeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut state = self.0.lock();
        while state.bytes.is_empty() && state.writer && !buf.is_empty() {
            state = self.0.wait(state);
        }
        let n = buf.len().min(state.bytes.len());
        for (slot, byte) in buf.iter_mut().zip(state.bytes.drain(..n)) {
            *slot = byte;
        }
        self.0.changed.notify_all();
        Ok(n)
    }
}

impl Write for PipeWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut state = self.0.lock();
        loop {
            if !state.reader {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            if buf.is_empty() || state.bytes.len() < PIPE_CAPACITY {
                break;
            }
            state = self.0.wait(state);
        }
        let n = buf.len().min(PIPE_CAPACITY - state.bytes.len());
        state.bytes.extend(&buf[..n]);
        self.0.changed.notify_all();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        self.0.lock().reader = false;
        self.0.changed.notify_all();
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        self.0.lock().writer = false;
        self.0.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::thread;

    use super::*;

    #[test]
    fn bytes_pass_in_order_and_the_writers_drop_ends_the_input() {
        let (mut reader, mut writer) = pipe();
        let big: Vec<u8> = (0..3 * PIPE_CAPACITY).map(|i| i as u8).collect();
        let sent = big.clone();
        // More than the capacity: the writer waits for the reader.
        let writing = thread::spawn(move || writer.write_all(&sent));
        let mut got = Vec::new();
        reader.read_to_end(&mut got).unwrap();
        writing.join().unwrap().unwrap();
        assert_eq!(got, big);
    }

    #[test]
    fn writing_after_the_readers_drop_fails() {
        let (reader, mut writer) = pipe();
        drop(reader);
        let e = writer.write(b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }
}
