//! The client's session: the core machine under one lock, driven by whichever thread has an
//! input (see [`crate::link`]):
//!
//! - a caller locks it, sends its request, drains, and writes the frames to the child's stdin
//!   itself, then waits on its own [`Slot`];
//! - the stdout reader feeds bytes, drains, and completes the callers' slots directly;
//! - a handler thread (a server request) feeds its answer and writes it;
//! - the supervisor feeds due deadlines (`poll_timeout`, and the grace after stdin broke),
//!   has what the reader queued written on a worker thread, and ends the session: it owns
//!   the child and reaps it.
//!
//! Every lock holder drains the machine before unlocking. No app code runs under the lock:
//! progress callbacks run on a thread of their own (see [`super::progress`]). Outcomes are
//! delivered and dropped waiters released after unlocking.

use std::collections::HashMap;
use std::io::{self, Write};
use std::process::{Child, ChildStdin};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use zest_core::api::{CallError, ProgressFn};
use zest_core::auth::Tokens;
use zest_core::client::{self, Event, Negotiated, ServerNotification, ServerRequest};
use zest_core::error::{CloseReason, ProtocolViolation, Rejection};
use zest_core::handler::SyncClientHandlers;
use zest_core::io::{HttpRequest, Input, Receive, StreamEvent, StreamId, TransportFailure};
use zest_core::jsonrpc::{ErrorObject, RawJson, RequestId};
use zest_core::runtime::http_client::{HttpClientOutput, HttpClientOutputs};
use zest_core::runtime::{answer_caught, authorization_blocking, ClientCommand};
use zest_core::runtime::{
    ClientDispatch, ClientStep, ConnectError, Delivery, OwnedEvent, HTTP_CLOSE_GRACE,
};
use zest_core::runtime::{StdioOutput, StdioOutputs};
use zest_core::RequestOptions;

use super::connector::{AbortCell, Emit, Exchanger};
use super::progress::{CallProgress, ProgressRunner};
use crate::link::{self, lock, CallSlot, Outbox, Role, Signal, Slot, Wake};
use crate::workers::Workers;

/// Where one call's outcome is delivered.
pub(crate) type Outcome = Arc<Slot<Result<RawJson, CallError>>>;

/// Where the handshake's outcome is delivered.
pub(crate) type ReadySlot = Arc<Slot<Result<Negotiated, ConnectError>>>;

pub(crate) struct Session {
    me: Weak<Self>,
    /// Why the session ended, once it has; set under the machine lock before any caller
    /// learns of a failure.
    close_reason: Arc<OnceLock<CloseReason>>,
    state: Mutex<State>,
    out: Arc<Outbox<Pipe>>,
    grace: Duration,
    /// Over HTTP: opens and reuses the connections the machine's exchanges run on.
    http: Option<Arc<dyn Exchanger>>,
    /// Rung when an exchange ends (the closing supervisor waits for the DELETE).
    exchange_ended: Signal,
    /// Runs the app's progress callbacks, off the lock.
    progress: ProgressRunner,
}

/// Where the machine's frames go: the child's stdin, a writer of the caller's
/// ([`Client::over`](super::Client::over)), or nowhere (over HTTP the machine asks for
/// exchanges instead, and the outbox is only the supervisor's wake-up).
pub(crate) enum Pipe {
    Stdin(ChildStdin),
    Stream(Box<dyn Write + Send>),
    Http,
}

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Stdin(stdin) => stdin.write(buf),
            Self::Stream(stream) => stream.write(buf),
            Self::Http => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Stdin(stdin) => stdin.flush(),
            Self::Stream(stream) => stream.flush(),
            Self::Http => Ok(()),
        }
    }
}

/// An exchange to open: its stream, its request, the cell that aborts it.
type Open = (StreamId, HttpRequest, Arc<AbortCell>);

struct State {
    machine: client::Client,
    handlers: SyncClientHandlers,
    /// Dropped once the session closes, so readers of notifications see the end.
    notifications: Option<SyncSender<ServerNotification>>,
    ready: Option<ReadySlot>,
    /// Our requests in flight; records the close reason. Handler threads cannot be
    /// stopped: a cancelled one's answer is refused by the machine.
    dispatch: ClientDispatch<CallSlot, ()>,
    /// Why writing to the child failed, and until when we wait for its stdout to end so the
    /// answers it wrote are not lost.
    broken: Option<(String, Instant)>,
    /// Frames drained but not yet queued in the outbox.
    pending: Vec<Bytes>,
    closed: bool,
    workers: Workers,
    /// Over HTTP: the exchanges under way, and what to open and cut once unlocked.
    exchanges: HashMap<StreamId, Arc<AbortCell>>,
    to_open: Vec<Open>,
    to_abort: Vec<Arc<AbortCell>>,
}

/// Outcomes to deliver once the lock is released (and waiters to drop there: a progress
/// callback may hold the last `Client`).
#[derive(Default)]
struct Deliveries {
    outcomes: Vec<Delivery<CallSlot>>,
    ready: Option<(ReadySlot, Result<Negotiated, ConnectError>)>,
    /// Reported to the handlers' violation sink once the lock is released.
    violations: Vec<(SyncClientHandlers, ProtocolViolation)>,
    /// New OAuth tokens for the handlers' cache, handed over once the lock is released.
    tokens: Vec<(SyncClientHandlers, Tokens)>,
}

impl Session {
    pub(crate) fn new(
        machine: client::Client,
        pipe: Pipe,
        http: Option<Arc<dyn Exchanger>>,
        handlers: SyncClientHandlers,
        notifications: SyncSender<ServerNotification>,
        ready: ReadySlot,
        grace: Duration,
    ) -> Arc<Self> {
        let close_reason = Arc::new(OnceLock::new());
        let state = State {
            machine,
            handlers,
            notifications: Some(notifications),
            ready: Some(ready),
            dispatch: ClientDispatch::new(close_reason.clone()),
            broken: None,
            pending: Vec::new(),
            closed: false,
            workers: Workers::new("zest-client-handler"),
            exchanges: HashMap::new(),
            to_open: Vec::new(),
            to_abort: Vec::new(),
        };
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            close_reason,
            state: Mutex::new(state),
            out: Outbox::new(pipe),
            grace,
            http,
            exchange_ended: Signal::default(),
            progress: ProgressRunner::default(),
        })
    }

    /// Sends a request; its outcome goes to `slot`. Returns its id. A caller that `waits`
    /// for the outcome anyway performs the request's HTTP exchange itself, up to its head or
    /// (JSON) its whole answer; one that does not (`start`) returns once it is sent.
    pub(crate) fn request(
        &self,
        method: &'static str,
        params: RawJson,
        opts: RequestOptions,
        on_progress: Option<ProgressFn>,
        slot: Outcome,
        waits: bool,
    ) -> Result<RequestId, CallError> {
        let answered = waits.then(|| slot.clone());
        self.drive_as(Role::WritesHere, answered.as_ref(), |st, now, _| {
            let id =
                st.machine.request(now, method, Some(params), opts).map_err(CallError::Usage)?;
            st.dispatch.insert(id.clone(), None, CallSlot(slot), on_progress);
            Ok(id)
        })
    }

    /// The callback to file for `on_progress` (it queues reports for the session's progress
    /// thread) and the call's queue, which its caller settles once the outcome is in.
    pub(crate) fn wrap_progress(
        &self,
        on_progress: Option<ProgressFn>,
    ) -> (Option<ProgressFn>, Option<Arc<CallProgress>>) {
        match on_progress.map(|f| self.progress.wrap(f)) {
            Some((filed, progress)) => (Some(filed), Some(progress)),
            None => (None, None),
        }
    }

    /// Tells the server the app's roots changed, when the session declared
    /// `roots.listChanged` (the core decides).
    pub(crate) fn roots_changed(&self) -> Result<(), zest_core::error::UsageError> {
        self.drive(Role::WritesHere, |st, now| st.machine.roots_changed(now).map(drop))
    }

    /// Cancels a request (a no-op once it has finished).
    pub(crate) fn cancel(&self, id: &RequestId) {
        // UnknownRequest: it already finished, which is fine.
        self.drive(Role::WritesHere, |st, now| {
            let _ = st.machine.cancel(now, id, None);
        });
    }

    /// Drains what the machine queued at creation (the `initialize` request).
    pub(crate) fn start(&self) {
        self.drive(Role::WritesHere, |_, _| ());
    }

    /// Feeds one read of the child's stdout (or the caller's reader) on the reader thread;
    /// false once the session is over.
    pub(crate) fn feed_stdout(&self, event: StreamEvent<'_>) -> bool {
        self.drive(Role::WritesAside, |st, now| {
            let receive = Receive { stream: StreamId::STDIO, event };
            st.machine.handle_input(Input::Receive(now, receive));
            !st.closed
        })
    }

    /// The child's stdin, unless a writer holds it (used when the supervisor cannot start).
    pub(crate) fn take_stdin(&self) -> Option<ChildStdin> {
        match self.out.take_writer() {
            Some(Pipe::Stdin(stdin)) => Some(stdin),
            _ => None,
        }
    }

    /// Why the session ended, once it has.
    pub(crate) fn close_reason(&self) -> Option<CloseReason> {
        self.close_reason.get().cloned()
    }

    /// Asks the supervisor to end the session.
    pub(crate) fn ask_close(&self) {
        self.out.ask_close();
    }

    /// The supervisor: runs until the session closes, then shuts the child down (close stdin,
    /// wait, SIGTERM, wait, SIGKILL) and reaps it.
    pub(crate) fn supervise(&self, child: &mut Child) -> io::Result<std::process::ExitStatus> {
        self.supervise_until_closed();
        // What is still queued is written, then stdin closed, within the first grace period.
        let deadline = Instant::now() + self.grace;
        let stdin = match self.out.finish(deadline) {
            Some(Pipe::Stdin(stdin)) => Some(stdin),
            _ => None,
        };
        super::process::shutdown(child, stdin, deadline, self.grace)
    }

    /// The supervisor of a session over a caller's streams: runs until the session closes,
    /// then writes what is still queued and drops (closes) the writer, within the grace
    /// period. Returns a success status.
    pub(crate) fn supervise_streams(&self) -> std::process::ExitStatus {
        self.supervise_until_closed();
        drop(self.out.finish(Instant::now() + self.grace));
        std::process::ExitStatus::default()
    }

    /// Feeds due deadlines (and the grace after stdin broke), writes what the reader queued
    /// and the close asked for, until the session has closed.
    fn supervise_until_closed(&self) {
        loop {
            match self.out.next() {
                Wake::Write => self.write_aside(),
                Wake::Due => self.drive(Role::WritesAside, |st, now| {
                    if st.broken.as_ref().is_some_and(|(_, at)| *at <= now) {
                        // The child's stdout did not end in time after its stdin broke.
                        let why = st.broken.take().map(|(why, _)| why).unwrap_or_default();
                        let receive = Receive {
                            stream: StreamId::STDIO,
                            event: StreamEvent::Failed(TransportFailure::Reset(why)),
                        };
                        st.machine.handle_input(Input::Receive(now, receive));
                    } else if st.machine.poll_timeout().is_some_and(|at| at <= now) {
                        st.machine.handle_input(Input::Timeout(now));
                    }
                }),
                Wake::CloseAsked => self.drive(Role::WritesAside, |st, now| st.machine.close(now)),
                Wake::Closed => return,
            }
        }
    }

    /// Locks the machine, runs `f`, drains, unlocks; then delivers outcomes and writes the
    /// frames (or, on the reader, has them written).
    fn drive<T>(&self, role: Role, f: impl FnOnce(&mut State, Instant) -> T) -> T {
        self.drive_as(role, None, |st, now, _| f(st, now))
    }

    /// [`drive`](Self::drive), where `f` may also drain between inputs (into the
    /// deliveries it is given); with the slot of a call whose caller waits for it, an HTTP
    /// exchange this drive alone opened is performed on this thread (see
    /// [`perform_http`](Self::perform_http)).
    fn drive_as<T>(
        &self,
        role: Role,
        waits: Option<&Outcome>,
        f: impl FnOnce(&mut State, Instant, &mut Deliveries) -> T,
    ) -> T {
        let mut deliveries = Deliveries::default();
        let (out, exchanges, queued) = link::no_join(|| {
            let mut st = lock(&self.state);
            let out = f(&mut st, Instant::now(), &mut deliveries);
            let queued = self.drain(&mut st, &mut deliveries);
            // Taken here, so that this thread performs only what its own drain opened.
            let exchanges = (std::mem::take(&mut st.to_open), std::mem::take(&mut st.to_abort));
            (out, exchanges, queued)
        });
        for delivery in deliveries.outcomes {
            delivery.deliver();
        }
        if let Some((slot, result)) = deliveries.ready {
            slot.set(result);
        }
        for (handlers, violation) in deliveries.violations {
            handlers.report_violation(&violation);
        }
        for (handlers, tokens) in deliveries.tokens {
            handlers.tokens_changed(&tokens);
        }
        if self.http.is_some() {
            self.perform_http(exchanges, waits);
        } else if queued || role == Role::WritesHere {
            // A thread that writes aside asks for a write only for frames it queued: what
            // waits otherwise was queued by a thread that writes here, which writes it next
            // (asking would wake the supervisor and a worker thread for nothing).
            self.write(role);
        }
        out
    }

    /// Writes what the reader queued on a worker thread: a peer that stopped reading then
    /// blocks that thread, never the supervisor, which must stay free to end the session.
    fn write_aside(&self) {
        let workers = lock(&self.state).workers.clone();
        let Some(me) = self.me.upgrade() else { return };
        if workers.run(move || me.write(Role::WritesHere)).is_err() {
            self.write(Role::WritesHere);
        }
    }

    fn write(&self, role: Role) {
        if let Some(e) = self.out.flush(role == Role::WritesHere) {
            self.stdin_broke(&e);
        }
    }

    /// Stops writing. The session fails once the child's stdout ends (usually at once: the
    /// child died), or after `grace` if it does not, so answers it wrote first still arrive.
    fn stdin_broke(&self, e: &io::Error) {
        let mut st = lock(&self.state);
        let why = format!("writing to the server failed: {e}");
        let at = st.broken.get_or_insert((why, Instant::now() + self.grace)).1;
        self.out.wake_by(Some(at));
    }

    /// Drains the machine: frames to the outbox, events to their waiters. Returns whether it
    /// queued frames (or the stream's close).
    fn drain(&self, st: &mut State, deliveries: &mut Deliveries) -> bool {
        let mut close = false;
        if self.http.is_some() {
            self.drain_http(st, deliveries);
        } else {
            let mut outputs = StdioOutputs::new();
            while let Some(output) = outputs.next(&mut st.machine, Instant::now()) {
                match output {
                    StdioOutput::Write(bytes) => st.pending.push(bytes),
                    StdioOutput::Close => close = true,
                    StdioOutput::Event(event) => self.event(st, event, deliveries),
                }
            }
        }
        let State { pending, .. } = st;
        let queued = self.out.queue(pending, close);
        // The last written frame's buffer goes back to the machine for the next large one.
        if let Some(spare) = self.out.take_spare() {
            st.machine.recycle(spare);
        }
        let broken = st.broken.as_ref().map(|(_, at)| *at);
        self.out.wake_by(match (st.machine.poll_timeout(), broken) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        });
        queued
    }

    /// Routes one event and performs its steps; outcomes and violations wait in
    /// `deliveries` for the lock to be released.
    fn event(&self, st: &mut State, event: Event, deliveries: &mut Deliveries) {
        st.dispatch.route(event);
        while let Some(step) = st.dispatch.poll_step() {
            match step {
                ClientStep::Connected(result) => {
                    if let Some(ready) = st.ready.take() {
                        deliveries.ready = Some((ready, result.map(|negotiated| *negotiated)));
                    }
                }
                ClientStep::Deliver(delivery) => deliveries.outcomes.push(delivery),
                ClientStep::Serve { id, request } => self.serve_request(st, id, request),
                ClientStep::Authorize { url } => self.authorize(st, url),
                ClientStep::StoreTokens(tokens) => {
                    deliveries.tokens.push((st.handlers.clone(), tokens));
                }
                ClientStep::LoadTokens => {
                    let cached = ClientCommand::CachedTokens(st.handlers.load_tokens());
                    st.dispatch.apply(&mut st.machine, Instant::now(), cached);
                }
                // A thread cannot be stopped; the machine refuses its late answer.
                ClientStep::Stop(()) => {}
                ClientStep::Notify(n) => {
                    // A full queue means nobody reads notifications; dropping beats blocking.
                    if let Some(notifications) = &st.notifications {
                        let _ = notifications.try_send(n);
                    }
                }
                ClientStep::Violation(v) => deliveries.violations.push((st.handlers.clone(), v)),
                ClientStep::Closed(_) => {
                    st.closed = true;
                    st.notifications = None;
                    self.out.set_closed();
                }
            }
        }
    }

    /// Runs the app's OAuth authorization handler on its own thread, which then answers.
    fn authorize(&self, st: &mut State, url: String) {
        let handlers = st.handlers.clone();
        let me = self.me.clone();
        let answer = |st: &mut State, now, verdict| {
            st.dispatch.apply(&mut st.machine, now, ClientCommand::Authorized(verdict));
        };
        let spawned = st.workers.run(move || {
            let verdict = authorization_blocking(&handlers, url);
            if let Some(session) = me.upgrade() {
                session.drive(Role::WritesHere, |st, now| answer(st, now, verdict));
            }
        });
        if let Err(e) = spawned {
            answer(st, Instant::now(), Err(format!("cannot start a handler thread: {e}")));
        }
    }

    /// Runs the app's handler for a server request on its own thread, which then answers.
    fn serve_request(&self, st: &mut State, id: RequestId, request: ServerRequest) {
        let handlers = st.handlers.clone();
        let me = self.me.clone();
        let reply_id = id.clone();
        let spawned = st.workers.run(move || {
            let result = answer_caught(|| handlers.run(request));
            if let Some(session) = me.upgrade() {
                // Err: the server cancelled it or the session closed; nothing to send.
                session.drive(Role::WritesHere, |st, now| {
                    let _ = st.machine.respond(now, reply_id, result);
                });
            }
        });
        if let Err(e) = spawned {
            let result = Err(internal(&format!("cannot start a handler thread: {e}")));
            let _ = st.machine.respond(Instant::now(), id, result);
        }
    }
}

/// Over HTTP: exchanges (on the caller's thread or threads of their own) instead of frames
/// on a pipe.
impl Session {
    /// Feeds events of exchange `stream` (on its thread; taken out of `events`) in one turn
    /// of the lock, draining the machine after each; false once nobody wants more.
    fn feed_http(&self, stream: StreamId, events: &mut Vec<OwnedEvent>) -> bool {
        self.drive_as(Role::WritesAside, None, |st, now, deliveries| {
            for event in events.drain(..) {
                let end = matches!(event, OwnedEvent::End | OwnedEvent::Failed(_));
                if end && st.exchanges.remove(&stream).is_some() {
                    self.exchange_ended.notify_all();
                }
                st.machine.handle_input(event.input(now, stream));
                self.drain(st, deliveries);
            }
            !st.closed
        })
    }

    /// Drains the machine over HTTP (under the lock): the exchanges to open and cut are
    /// noted for [`perform_http`], events routed.
    fn drain_http(&self, st: &mut State, deliveries: &mut Deliveries) {
        let mut outputs = HttpClientOutputs::new();
        while let Some(output) = outputs.next(&mut st.machine, Instant::now()) {
            match output {
                HttpClientOutput::Open { stream, request } => {
                    let cell = Arc::new(AbortCell::default());
                    st.exchanges.insert(stream, cell.clone());
                    st.to_open.push((stream, *request, cell));
                }
                HttpClientOutput::Abort { stream } => {
                    if let Some(cell) = st.exchanges.remove(&stream) {
                        st.to_abort.push(cell);
                    }
                }
                HttpClientOutput::Event(event) => self.event(st, event, deliveries),
            }
        }
    }

    /// Opens and cuts the exchanges a drain asked for (unlocked). A caller that waits for its
    /// answer (`waits`, its slot) anyway performs the one exchange its drain opened itself:
    /// a JSON answer whole, an event stream until it ends or, once the answer is in, until it
    /// pauses ([`Exchanger::exchange`]), its rest then read on a thread of its own. Every
    /// other exchange runs on a thread of its own.
    fn perform_http(
        &self,
        (mut opens, aborts): (Vec<Open>, Vec<Arc<AbortCell>>),
        waits: Option<&Outcome>,
    ) {
        for cell in aborts {
            cell.abort();
        }
        let Some(connector) = &self.http else { return };
        let here = if waits.is_some() && opens.len() == 1 { opens.pop() } else { None };
        for (stream, request, cell) in opens {
            let connector = connector.clone();
            self.elsewhere(stream, cell.clone(), move |emit| {
                // Read whole here: nothing comes back to finish elsewhere.
                if let Some(rest) = connector.exchange(stream, request, &cell, emit, None) {
                    rest(&cell, emit);
                }
            });
        }
        let (Some((stream, request, cell)), Some(slot)) = (here, waits) else { return };
        let mut emit = Self::emitter(self.me.clone());
        let answered = || slot.is_set();
        let rest = link::no_join(|| {
            connector.clone().exchange(stream, request, &cell, &mut emit, Some(&answered))
        });
        match rest {
            Some(rest) => {
                let cell_here = cell.clone();
                self.elsewhere(stream, cell, move |emit| rest(&cell_here, emit));
            }
            None => Self::exchange_done(&self.me, stream, &cell),
        }
    }

    /// Runs (the rest of) exchange `stream` on a worker thread, reporting through the
    /// session; then notes that it ended.
    fn elsewhere(
        &self,
        stream: StreamId,
        cell: Arc<AbortCell>,
        job: impl FnOnce(&mut Emit<'_>) + Send + 'static,
    ) {
        let me = self.me.clone();
        let workers = lock(&self.state).workers.clone();
        let work = move || {
            let mut emit = Self::emitter(me.clone());
            link::no_join(|| job(&mut emit));
            Self::exchange_done(&me, stream, &cell);
        };
        if let Err(e) = workers.run(work) {
            let failure = TransportFailure::Other(format!("cannot start a thread: {e}"));
            self.feed_http(stream, &mut vec![OwnedEvent::Failed(failure)]);
        }
    }

    /// Where an exchange reports its events: the session, while it lives (false once
    /// nobody wants more).
    fn emitter(me: Weak<Self>) -> impl FnMut(StreamId, &mut Vec<OwnedEvent>) -> bool {
        move |s, events| me.upgrade().is_some_and(|session| session.feed_http(s, events))
    }

    /// Exchange `stream` ended, with or without a last event (cut, or nobody wanted the
    /// rest): it is no longer open.
    fn exchange_done(me: &Weak<Self>, stream: StreamId, cell: &Arc<AbortCell>) {
        if let Some(session) = me.upgrade() {
            let mut st = lock(&session.state);
            if st.exchanges.get(&stream).is_some_and(|c| Arc::ptr_eq(c, cell)) {
                st.exchanges.remove(&stream);
            }
            session.exchange_ended.notify_all();
        }
    }

    /// The supervisor of an HTTP session: feeds due deadlines and the close asked for, then
    /// lets the last exchanges (the DELETE) finish, within [`HTTP_CLOSE_GRACE`].
    pub(crate) fn supervise_http(&self) -> std::process::ExitStatus {
        loop {
            match self.out.next() {
                Wake::Write => {}
                Wake::Due => self.drive(Role::WritesAside, |st, now| {
                    if st.machine.poll_timeout().is_some_and(|at| at <= now) {
                        st.machine.handle_input(Input::Timeout(now));
                    }
                }),
                Wake::CloseAsked => self.drive(Role::WritesAside, |st, now| st.machine.close(now)),
                Wake::Closed => break,
            }
        }
        let deadline = Instant::now() + HTTP_CLOSE_GRACE;
        let mut st = lock(&self.state);
        while !st.exchanges.is_empty() {
            let now = Instant::now();
            if now >= deadline {
                for (_, cell) in st.exchanges.drain() {
                    cell.abort();
                }
                break;
            }
            st = self.exchange_ended.wait_timeout(st, deadline - now).0;
        }
        drop(st);
        if let Some(connector) = &self.http {
            connector.clear();
        }
        std::process::ExitStatus::default()
    }
}

fn internal(detail: &str) -> ErrorObject {
    Rejection::Internal(detail.to_owned()).to_jsonrpc()
}
