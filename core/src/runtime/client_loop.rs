//! The one loop of a client session on an async runtime, written once for stdio (and any
//! pair of byte streams) and for HTTP: drain the machine's outputs, then wait for bytes, a
//! command, an exchange's report, a write's progress or a deadline, and feed exactly one of
//! them back. The runtime supplies a [`ClientHost`] (its command queue, its timer, how it
//! runs client handlers and hands over what the session reports) and its IO.
//!
//! ```text
//!  loop { drain poll_output ─▶ wait { read | command | written | exchange | deadline } ─▶ feed }
//!  on Closed: the host closes its command queue; over HTTP the last exchanges may finish
//!  (within the close grace); then the runtime finishes writing and shuts its child down.
//! ```

use std::future::poll_fn;
use std::io;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::http_client::{exchange, Connector, Dialer, HttpClientOutput, HttpClientOutputs};
use super::{
    ClientCommand, ClientDispatch, ClientStep, ConnectError, Exchanges, PollRead, PollSink,
    ReplySlot, StdioOutput, StdioOutputs, Writer, HTTP_CLOSE_GRACE,
};
use crate::auth::Tokens;
use crate::client::{Client, Event, Negotiated, ServerNotification, ServerRequest};
use crate::error::{CloseReason, ProtocolViolation};
use crate::io::{Input, Receive, StreamEvent, StreamId, TransportFailure};
use crate::jsonrpc::RequestId;

/// What a client session's loop needs of its runtime.
pub trait ClientHost {
    /// Where a call's outcome goes.
    type Reply: ReplySlot;
    /// A running client handler (dropped or aborted by [`stop`](Self::stop)).
    type Task;

    /// The next command of the session's handles or handler tasks. A queue whose handles
    /// are all gone answers [`ClientCommand::Close`].
    fn poll_command(&mut self, cx: &mut Context<'_>) -> Poll<ClientCommand<Self::Reply>>;
    /// A command already queued, without waiting (commands queued together go in one turn,
    /// so that their frames leave in one write).
    fn try_command(&mut self) -> Option<ClientCommand<Self::Reply>>;
    /// Resolves at `at` or later (early is harmless: the loop re-checks its deadlines).
    fn poll_timer(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()>;
    /// The runtime's clock.
    fn now(&self) -> Instant;
    /// Starts the client handler for the server's request `id`; its answer comes back as
    /// [`ClientCommand::Respond`] (a panic answered as an internal error).
    fn serve(&mut self, id: RequestId, request: ServerRequest) -> Self::Task;
    /// Starts the OAuth authorization handler for `url`; its answer comes back as
    /// [`ClientCommand::Authorized`].
    fn authorize(&mut self, url: String) -> Self::Task;
    /// New OAuth tokens, for the application's cache.
    fn tokens_changed(&mut self, tokens: &Tokens);
    /// What the shared OAuth token cache holds now (asked before each refresh).
    fn load_tokens(&mut self) -> Option<Tokens>;
    /// Stops a handler whose answer is no longer wanted.
    fn stop(&mut self, task: Self::Task);
    /// The handshake's one outcome, for whoever waits for the connection.
    fn connected(&mut self, outcome: Result<Negotiated, ConnectError>);
    /// A server notification for the application's queue (never waits: full drops it).
    fn notify(&mut self, note: ServerNotification);
    /// A protocol violation by the server, for the application's hook.
    fn violation(&mut self, violation: &ProtocolViolation);
    /// The session is over: close the command queue, so that calls made from now on fail at
    /// once, and drop what waits in it (each caller then sees its reply dropped).
    fn close_queue(&mut self);
}

/// A client machine, its dispatch and its runtime's host: one session.
pub struct ClientLoop<H: ClientHost> {
    core: Client,
    dispatch: ClientDispatch<H::Reply, H::Task>,
    host: H,
}

/// What woke the loop.
enum Wake<R> {
    Read(io::Result<usize>),
    Command(ClientCommand<R>),
    Written(io::Result<()>),
    Reported,
    Timeout,
}

impl<H: ClientHost> ClientLoop<H> {
    /// A session of `core` whose close reason goes to `close_reason` (the handles read it).
    pub fn new(core: Client, close_reason: Arc<OnceLock<CloseReason>>, host: H) -> Self {
        Self { core, dispatch: ClientDispatch::new(close_reason), host }
    }

    /// The runtime's host.
    pub fn host_mut(&mut self) -> &mut H {
        &mut self.host
    }

    /// Runs the session over a byte stream until the machine closes. When writing fails,
    /// answers the server wrote before may still arrive: reading goes on until the stream
    /// ends, or for `grace` at most, before the session fails.
    pub async fn run_stdio<R: PollRead, S: PollSink>(
        &mut self,
        reader: &mut R,
        writer: &mut Writer<S>,
        grace: Duration,
    ) {
        let mut buf = vec![0u8; 64 * 1024];
        let mut read_open = true;
        let mut broken: Option<(Instant, String)> = None;
        loop {
            // The last written frame's buffer goes back to the machine for the next large one.
            if let Some(spare) = writer.take_spare() {
                self.core.recycle(spare);
            }
            if self.drain_stdio(writer) {
                return self.host.close_queue();
            }
            writer.try_progress();
            let deadline = match (self.core.poll_timeout(), broken.as_ref().map(|b| b.0)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let wake = poll_fn(|cx| {
                if read_open {
                    if let Poll::Ready(read) = reader.poll_read(cx, &mut buf) {
                        return Poll::Ready(Wake::Read(read));
                    }
                }
                if writer.busy() {
                    if let Poll::Ready(written) = writer.poll_progress(cx) {
                        return Poll::Ready(Wake::Written(written));
                    }
                }
                self.poll_wake(cx, deadline)
            })
            .await;
            let now = self.host.now();
            match wake {
                Wake::Read(Ok(0)) => {
                    read_open = false;
                    self.feed_stdio(now, StreamEvent::End);
                }
                Wake::Read(Ok(n)) => self.feed_stdio(now, StreamEvent::Data(&buf[..n])),
                Wake::Read(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Wake::Read(Err(e)) => {
                    read_open = false;
                    let why = format!("reading from the server failed: {e}");
                    self.feed_stdio(now, StreamEvent::Failed(TransportFailure::Reset(why)));
                }
                Wake::Written(Err(e)) => {
                    let why = format!("writing to the server failed: {e}");
                    broken.get_or_insert((now + grace, why));
                }
                Wake::Timeout if broken.as_ref().is_some_and(|b| now >= b.0) => {
                    let why = broken.take().map(|b| b.1).unwrap_or_default();
                    self.feed_stdio(now, StreamEvent::Failed(TransportFailure::Reset(why)));
                }
                wake => self.handle_wake(now, wake),
            }
        }
    }

    /// Runs the session over HTTP until the machine closes, each exchange it asks for
    /// performed inside this future (polled beside the commands); then lets what it sent
    /// last (the DELETE that ends the session) finish within [`HTTP_CLOSE_GRACE`], drops
    /// the rest and the idle connections.
    pub async fn run_http<D: Dialer>(&mut self, connector: &Arc<Connector<D>>) {
        let mut exchanges = Exchanges::default();
        loop {
            if self.drain_http(connector, &mut exchanges) {
                self.host.close_queue();
                break;
            }
            // What the exchanges reported, one event per drain.
            if let Some((stream, event)) = exchanges.try_event() {
                self.core.handle_input(event.input(self.host.now(), stream));
                continue;
            }
            let deadline = self.core.poll_timeout();
            let wake = poll_fn(|cx| {
                if exchanges.poll_reported(cx).is_ready() {
                    return Poll::Ready(Wake::Reported);
                }
                self.poll_wake(cx, deadline)
            })
            .await;
            self.handle_wake(self.host.now(), wake);
        }
        let until = self.host.now() + HTTP_CLOSE_GRACE;
        poll_fn(|cx| {
            if exchanges.poll_finished(cx).is_ready() {
                return Poll::Ready(());
            }
            self.host.poll_timer(cx, until)
        })
        .await;
        exchanges.close();
        connector.clear();
    }

    /// Polls the sources every transport shares: commands, then the deadline.
    fn poll_wake(
        &mut self,
        cx: &mut Context<'_>,
        deadline: Option<Instant>,
    ) -> Poll<Wake<H::Reply>> {
        if let Poll::Ready(command) = self.host.poll_command(cx) {
            return Poll::Ready(Wake::Command(command));
        }
        match deadline {
            Some(at) => self.host.poll_timer(cx, at).map(|()| Wake::Timeout),
            None => Poll::Pending,
        }
    }

    /// Feeds what woke the loop, for the wakes every transport shares.
    fn handle_wake(&mut self, now: Instant, wake: Wake<H::Reply>) {
        match wake {
            Wake::Command(command) => {
                self.dispatch.apply(&mut self.core, now, command);
                while let Some(command) = self.host.try_command() {
                    self.dispatch.apply(&mut self.core, now, command);
                }
            }
            // An early timer is harmless: the machine ignores a timeout before its deadline.
            Wake::Timeout => self.core.handle_input(Input::Timeout(now)),
            // Reads and writes are the stdio loop's; reports are fed at the top of the loop.
            Wake::Read(_) | Wake::Written(_) | Wake::Reported => {}
        }
    }

    fn feed_stdio(&mut self, now: Instant, event: StreamEvent<'_>) {
        self.core.handle_input(Input::Receive(now, Receive { stream: StreamId::STDIO, event }));
    }

    /// Performs every pending output; true once the session is closed.
    fn drain_stdio<S: PollSink>(&mut self, writer: &mut Writer<S>) -> bool {
        let mut closed = false;
        // One reading of the clock for the whole drain: `next` needs it only for a failure.
        let (mut outputs, now) = (StdioOutputs::new(), self.host.now());
        while let Some(output) = outputs.next(&mut self.core, now) {
            match output {
                StdioOutput::Write(bytes) => writer.send(bytes),
                StdioOutput::Close => writer.close(),
                StdioOutput::Event(event) => closed |= self.handle_event(event),
            }
        }
        closed
    }

    /// Performs every pending output; true once the session is closed.
    fn drain_http<D: Dialer>(
        &mut self,
        connector: &Arc<Connector<D>>,
        exchanges: &mut Exchanges,
    ) -> bool {
        let mut closed = false;
        // One reading of the clock for the whole drain: `next` needs it only for a failure.
        let (mut outputs, now) = (HttpClientOutputs::new(), self.host.now());
        while let Some(output) = outputs.next(&mut self.core, now) {
            match output {
                HttpClientOutput::Open { stream, request } => {
                    let work = exchange(connector.clone(), stream, *request, exchanges.events());
                    exchanges.start(stream, work);
                }
                HttpClientOutput::Abort { stream } => exchanges.abort(stream),
                HttpClientOutput::Event(event) => closed |= self.handle_event(event),
            }
        }
        closed
    }

    /// Routes one event and performs its steps; true once the session is closed.
    fn handle_event(&mut self, event: Event) -> bool {
        self.dispatch.route(event);
        let mut closed = false;
        while let Some(step) = self.dispatch.poll_step() {
            match step {
                ClientStep::Connected(outcome) => self.host.connected(outcome.map(|n| *n)),
                ClientStep::Deliver(delivery) => delivery.deliver(),
                ClientStep::Serve { id, request } => {
                    let task = self.host.serve(id.clone(), request);
                    self.dispatch.serving(id, task);
                }
                ClientStep::Stop(task) => self.host.stop(task),
                ClientStep::Authorize { url } => {
                    let task = self.host.authorize(url);
                    self.dispatch.authorizing(task);
                }
                ClientStep::StoreTokens(tokens) => self.host.tokens_changed(&tokens),
                ClientStep::LoadTokens => {
                    let cached = ClientCommand::CachedTokens(self.host.load_tokens());
                    self.dispatch.apply(&mut self.core, self.host.now(), cached);
                }
                ClientStep::Notify(note) => self.host.notify(note),
                ClientStep::Violation(violation) => self.host.violation(&violation),
                ClientStep::Closed(_) => closed = true,
            }
        }
        closed
    }
}
