//! What a suite written once needs from each runtime beside zest's own API, under the same
//! names in `on_tokio`, `on_smol` and `on_blocking` (async in the first two, blocking in the
//! third): how a test's body runs, `serve` on a task or thread of its own over a pipe or
//! given IO, a client that speaks raw JSON lines, a bounded wait for a notification, a short
//! pause, and IO that never takes a byte or fails at once. Every wait is bounded by
//! [`LIMIT`]: a panic, not a hang.
#![allow(dead_code, unreachable_pub)] // a module of each test binary that uses it

use std::time::Duration;

use serde_json::Value;

/// The longest any one step may take before the test fails instead of hanging.
pub const LIMIT: Duration = Duration::from_secs(30);

/// The pause between two looks at a state that changes without an event to wait for.
const NAP: Duration = Duration::from_millis(5);

/// One line read from a server: one JSON-RPC message.
fn message(line: &str) -> Value {
    let message: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("every line is a JSON-RPC message ({e}): {line:?}"));
    assert_eq!(message["jsonrpc"], "2.0", "{message}");
    message
}

/// `message` as one line.
fn line(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).expect("JSON");
    line.push(b'\n');
    line
}

pub mod on_tokio {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::Duration;

    use serde_json::Value;
    use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
    use tokio::io::{BufReader, DuplexStream, Lines, ReadBuf, ReadHalf, WriteHalf};
    use tokio::task::JoinHandle;
    use zest_tokio::core::client::ServerNotification;
    use zest_tokio::core::error::CloseReason;
    use zest_tokio::{serve, Notifications, Registry, RequestContext, ServerConfig};

    use super::{line, message, LIMIT, NAP};

    /// Runs a test's body on a current-thread runtime, as `#[tokio::test]` does.
    pub fn run<F: Future>(body: impl FnOnce() -> F) -> F::Output {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
        rt.expect("a tokio runtime").block_on(body())
    }

    /// The client's end of a pipe.
    pub type Reader = ReadHalf<DuplexStream>;
    pub type Writer = WriteHalf<DuplexStream>;

    /// `serve` on a task of its own.
    pub struct Served(JoinHandle<CloseReason>);

    impl Served {
        /// How the session ended, once `serve` returned.
        pub async fn stopped(self) -> CloseReason {
            let served = tokio::time::timeout(LIMIT, self.0).await;
            served.expect("serve returns within 30 s").expect("serve does not panic")
        }
    }

    /// `serve` over `reader` and `writer` on a task of its own.
    pub fn serve_on<R, W>(config: ServerConfig, registry: Registry, reader: R, writer: W) -> Served
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Served(tokio::spawn(serve(config, registry, reader, writer)))
    }

    /// `serve` on a task of its own over one end of a pipe; the other end.
    pub fn serve_piped(config: ServerConfig, registry: Registry) -> (Served, Reader, Writer) {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (reader, writer) = tokio::io::split(theirs);
        let served = serve_on(config, registry, reader, writer);
        let (reader, writer) = tokio::io::split(ours);
        (served, reader, writer)
    }

    /// The client's side of a pipe, in raw JSON lines.
    pub struct LinePeer {
        to_server: Writer,
        from_server: Lines<BufReader<Reader>>,
    }

    impl LinePeer {
        pub fn new(reader: Reader, writer: Writer) -> Self {
            Self { to_server: writer, from_server: BufReader::new(reader).lines() }
        }

        pub async fn send(&mut self, message: Value) {
            self.to_server.write_all(&line(&message)).await.expect("the server reads");
        }

        /// The next message, within [`LIMIT`].
        pub async fn recv(&mut self) -> Value {
            let next = tokio::time::timeout(LIMIT, self.from_server.next_line()).await;
            let next = next.expect("a message within 30 s").expect("readable");
            message(&next.expect("not the end"))
        }

        /// Ends the server's input; what it wrote after, up to the end of its output.
        pub async fn end(mut self) -> String {
            self.to_server.shutdown().await.expect("the pipe closes");
            let mut rest = String::new();
            let mut from_server = self.from_server.into_inner();
            let read = from_server.read_to_string(&mut rest);
            tokio::time::timeout(LIMIT, read).await.expect("the end within 30 s").expect("read");
            rest
        }
    }

    /// The next notification, if one comes within `wait`.
    pub async fn next_within(rx: &Notifications, wait: Duration) -> Option<ServerNotification> {
        let next = tokio::time::timeout(wait, rx.recv()).await.ok()?;
        Some(next.expect("the session is open"))
    }

    /// A pause between two looks at a state with no event to wait for.
    pub async fn nap() {
        tokio::time::sleep(NAP).await;
    }

    /// Waits, in a handler, until the handler is stopped from outside.
    pub async fn hold(_: &RequestContext) {
        std::future::pending::<()>().await;
    }

    /// The bytes of `input` as a reader.
    pub fn bytes_in(input: Vec<u8>) -> std::io::Cursor<Vec<u8>> {
        std::io::Cursor::new(input)
    }

    /// A client that never reads: every write stays pending.
    pub struct NeverReads;

    impl AsyncWrite for NeverReads {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            Poll::Pending
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Pending
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Pending
        }
    }

    /// Input whose every read fails with "wire cut".
    pub struct Broken;

    impl AsyncRead for Broken {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            Poll::Ready(Err(std::io::Error::other("wire cut")))
        }
    }

    /// Output that takes everything.
    pub fn sink() -> tokio::io::Sink {
        tokio::io::sink()
    }
}

pub mod on_smol {
    use std::future::Future;
    use std::net::Shutdown;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::Duration;

    use serde_json::Value;
    use smol::io::{
        AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
    };
    use smol::net::unix::UnixStream;
    use smol::{Task, Timer};
    use zest_smol::core::client::ServerNotification;
    use zest_smol::core::error::CloseReason;
    use zest_smol::{serve, Notifications, Registry, RequestContext, ServerConfig};

    use super::{line, message, LIMIT, NAP};

    /// Runs a test's body on this thread with `smol::block_on`.
    pub fn run<F: Future>(body: impl FnOnce() -> F) -> F::Output {
        smol::block_on(body())
    }

    /// `fut`'s output, or a panic saying `what` did not come within [`LIMIT`].
    async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
        smol::future::or(fut, async {
            Timer::after(LIMIT).await;
            panic!("{what} did not come within {LIMIT:?}")
        })
        .await
    }

    /// The client's end of a pipe.
    pub type Reader = UnixStream;
    pub type Writer = UnixStream;

    /// `serve` on a task of smol's global executor.
    pub struct Served(Task<CloseReason>);

    impl Served {
        /// How the session ended, once `serve` returned.
        pub async fn stopped(self) -> CloseReason {
            within("the end of serve", self.0).await
        }
    }

    /// `serve` over `reader` and `writer` on a task of its own.
    pub fn serve_on<R, W>(config: ServerConfig, registry: Registry, reader: R, writer: W) -> Served
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Served(smol::spawn(serve(config, registry, reader, writer)))
    }

    /// `serve` on a task of its own over one end of a socket pair; the other end.
    pub fn serve_piped(config: ServerConfig, registry: Registry) -> (Served, Reader, Writer) {
        let (ours, theirs) = UnixStream::pair().expect("a socket pair");
        let served = serve_on(config, registry, theirs.clone(), theirs);
        (served, ours.clone(), ours)
    }

    /// The client's side of a pipe, in raw JSON lines.
    pub struct LinePeer {
        out: Writer,
        lines: BufReader<Reader>,
    }

    impl LinePeer {
        pub fn new(reader: Reader, writer: Writer) -> Self {
            Self { out: writer, lines: BufReader::new(reader) }
        }

        pub async fn send(&mut self, message: Value) {
            self.out.write_all(&line(&message)).await.expect("the server reads");
        }

        /// The next message, within [`LIMIT`].
        pub async fn recv(&mut self) -> Value {
            let mut line = String::new();
            let read = within("a message", self.lines.read_line(&mut line)).await;
            assert!(read.expect("readable") > 0, "not the end");
            message(&line)
        }

        /// Ends the server's input; what it wrote after, up to the end of its output.
        pub async fn end(mut self) -> String {
            self.out.shutdown(Shutdown::Write).expect("the socket closes");
            let mut rest = String::new();
            within("the end", self.lines.read_to_string(&mut rest)).await.expect("read");
            rest
        }
    }

    /// The next notification, if one comes within `wait`.
    pub async fn next_within(rx: &Notifications, wait: Duration) -> Option<ServerNotification> {
        let next = async { Some(rx.recv().await.expect("the session is open")) };
        smol::future::or(next, async {
            Timer::after(wait).await;
            None
        })
        .await
    }

    /// A pause between two looks at a state with no event to wait for.
    pub async fn nap() {
        Timer::after(NAP).await;
    }

    /// Waits, in a handler, until the handler is stopped from outside.
    pub async fn hold(_: &RequestContext) {
        smol::future::pending::<()>().await;
    }

    /// The bytes of `input` as a reader.
    pub fn bytes_in(input: Vec<u8>) -> smol::io::Cursor<Vec<u8>> {
        smol::io::Cursor::new(input)
    }

    /// A client that never reads: every write stays pending.
    pub struct NeverReads;

    impl AsyncWrite for NeverReads {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            Poll::Pending
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Pending
        }

        fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Pending
        }
    }

    /// Input whose every read fails with "wire cut".
    pub struct Broken;

    impl AsyncRead for Broken {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &mut [u8],
        ) -> Poll<std::io::Result<usize>> {
            Poll::Ready(Err(std::io::Error::other("wire cut")))
        }
    }

    /// Output that takes everything.
    pub fn sink() -> smol::io::Sink {
        smol::io::sink()
    }
}

pub mod on_blocking {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::Shutdown;
    use std::os::unix::net::UnixStream;
    use std::sync::mpsc;
    use std::thread;
    use std::time::Duration;

    use serde_json::Value;
    use zest_blocking::core::client::ServerNotification;
    use zest_blocking::core::error::CloseReason;
    use zest_blocking::{serve, Notifications, Registry, RequestContext, ServerConfig};

    use super::{line, message, LIMIT, NAP};

    /// Runs a test's body on this thread.
    pub fn run<T>(body: impl FnOnce() -> T) -> T {
        body()
    }

    /// The client's end of a pipe.
    pub type Reader = UnixStream;
    pub type Writer = UnixStream;

    /// `serve` on a thread of its own.
    pub struct Served(mpsc::Receiver<CloseReason>);

    impl Served {
        /// How the session ended, once `serve` returned.
        pub fn stopped(self) -> CloseReason {
            self.0.recv_timeout(LIMIT).expect("serve returns within 30 s and does not panic")
        }
    }

    /// `serve` over `reader` and `writer` on a thread of its own.
    pub fn serve_on<R, W>(config: ServerConfig, registry: Registry, reader: R, writer: W) -> Served
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        let (done, stopped) = mpsc::channel();
        thread::spawn(move || {
            let _ = done.send(serve(config, registry, reader, writer));
        });
        Served(stopped)
    }

    /// `serve` on a thread of its own over two socket pairs, one each way (a client that
    /// closes its writer ends the server's input even while its reader is open); the
    /// client's ends.
    pub fn serve_piped(config: ServerConfig, registry: Registry) -> (Served, Reader, Writer) {
        let (server_reader, client_writer) = UnixStream::pair().expect("a socket pair");
        let (client_reader, server_writer) = UnixStream::pair().expect("a socket pair");
        let served = serve_on(config, registry, server_reader, server_writer);
        client_reader.set_read_timeout(Some(LIMIT)).expect("a read timeout");
        (served, client_reader, client_writer)
    }

    /// The client's side of a pipe, in raw JSON lines.
    pub struct LinePeer {
        out: Writer,
        lines: BufReader<Reader>,
    }

    impl LinePeer {
        pub fn new(reader: Reader, writer: Writer) -> Self {
            Self { out: writer, lines: BufReader::new(reader) }
        }

        pub fn send(&mut self, message: Value) {
            self.out.write_all(&line(&message)).expect("the server reads");
        }

        /// The next message, within [`LIMIT`] (the socket's read timeout).
        pub fn recv(&mut self) -> Value {
            let mut line = String::new();
            let read = self.lines.read_line(&mut line).expect("a message within 30 s");
            assert!(read > 0, "not the end");
            message(&line)
        }

        /// Ends the server's input; what it wrote after, up to the end of its output.
        pub fn end(mut self) -> String {
            self.out.shutdown(Shutdown::Write).expect("the socket closes");
            let mut rest = String::new();
            self.lines.read_to_string(&mut rest).expect("the end within 30 s");
            rest
        }
    }

    /// The next notification, if one comes within `wait`.
    pub fn next_within(rx: &Notifications, wait: Duration) -> Option<ServerNotification> {
        rx.recv_timeout(wait)
    }

    /// A pause between two looks at a state with no event to wait for.
    pub fn nap() {
        thread::sleep(NAP);
    }

    /// Waits, in a handler, until the handler is stopped from outside: a blocking handler
    /// cannot be dropped, so it returns once it sees its cancellation.
    pub fn hold(ctx: &RequestContext) {
        while !ctx.is_cancelled() {
            thread::sleep(Duration::from_millis(1));
        }
    }

    /// The bytes of `input` as a reader.
    pub fn bytes_in(input: Vec<u8>) -> std::io::Cursor<Vec<u8>> {
        std::io::Cursor::new(input)
    }

    /// A client that never reads: every write blocks for ever.
    pub struct NeverReads;

    impl Write for NeverReads {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            loop {
                thread::park();
            }
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Input whose every read fails with "wire cut".
    pub struct Broken;

    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("wire cut"))
        }
    }

    /// Output that takes everything.
    pub fn sink() -> std::io::Sink {
        std::io::sink()
    }
}
