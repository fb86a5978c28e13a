//! The server side: per-session machines ([`Session`]) over a shared registry, and
//! [`Server`], one session on a stdio stream.
//!
//! ```text
//!  AwaitingInitialize ──initialize──▶ AwaitingInitialized ──notifications/initialized──▶ Ready
//!        │ other requests: -32600        │ requests accepted (strict: -32600)               │
//!        └───────────────── EOF / close ─┴──────────────────────────────────────▶ Closed ◀──┘
//! ```
//!
//! The machines never run app code. A session validates a request, looks up the handler the
//! app registered (of any type `H`: a boxed closure, an async trait object, an enum) and
//! reports [`Event::Call`]; the runtime runs the handler and calls [`Session::respond`].
//! Everything a handler sends while serving a request (progress, log lines, requests to the
//! client) names that request, so over Streamable HTTP it travels on the request's stream.

mod ask;
mod broadcast;
mod call_params;
mod config;
mod dispatch;
mod events;
mod handle;
mod listen;
mod registry;
mod request_state;
mod saved;
mod session;
mod stateless;
mod uri_template;

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Instant;

pub use ask::Round;
pub use broadcast::{Broadcast, BroadcastBudget, RegistryChange, BROADCAST_QUEUE};
pub use config::{ServerConfig, SessionInfo};
pub use events::{Call, CallContext, ClientNotification, Event};
pub use handle::{BroadcastSink, ServerHandle};
pub use registry::{ListKind, Registry};
pub(crate) use request_state::{Binding, LazyBinding};
pub use request_state::{RequestStateConfig, RequestStateKey};
pub use session::Session;
pub(crate) use session::Shared;
pub(crate) use stateless::{meta_text, meta_version, LastMeta};
pub use uri_template::{UriTemplate, MAX_URI_LEN};

use crate::io::{Input, Output};
use crate::transport::StdioTransport;

/// One MCP session on a stdio stream, sans IO: a [`Session`] plus newline framing. Every
/// session command ([`log`](Session::log), [`respond`](Session::respond), …) is available
/// on it directly.
///
/// Calling contract: feed inputs with [`handle_input`](Self::handle_input), issue commands,
/// then drain [`poll_output`](Self::poll_output) to `None` and sleep until
/// [`poll_timeout`](Session::poll_timeout).
#[derive(Debug)]
pub struct Server<H> {
    session: Session<H>,
    transport: StdioTransport,
    /// `close` was called: close the stream once every queued message is out.
    closing: bool,
}

impl<H: Clone> Server<H> {
    /// A session on a stdio stream, waiting for `initialize`.
    pub fn new(config: ServerConfig, registry: Registry<H>, now: Instant) -> Self {
        let transport = StdioTransport::new(config.max_line);
        let shared = Arc::new(Shared::new(config, registry));
        Self { session: Session::with_shared(shared, now), transport, closing: false }
    }

    /// Hands back the buffer of a frame the runtime has written (from
    /// [`WriteQueue::take_spare`](crate::runtime::WriteQueue::take_spare)), so that the next
    /// large message is encoded into it instead of into fresh memory. Optional: without it
    /// every frame allocates its own buffer. A buffer larger than
    /// [`KEPT_BUFFER_MAX`](crate::framing::KEPT_BUFFER_MAX) is dropped, not kept.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        self.session.endpoint.recycle(buf);
    }

    /// Feeds one input. Never fails: the client's mistakes are answered with JSON-RPC errors
    /// and reported as [`Event::Violation`]. Then drain [`poll_output`](Self::poll_output).
    pub fn handle_input(&mut self, input: Input<'_>) {
        debug_assert!(
            !self.session.has_output() && !self.closing,
            "drain poll_output to None before feeding the next input"
        );
        if self.session.is_closed() {
            return;
        }
        match input {
            Input::Timeout(now) => self.session.handle_timeout(now),
            Input::Receive(now, r) => {
                let (frames, ended) = self.transport.receive(r.event);
                for incoming in frames {
                    self.session.handle_decoded(now, r.stream, incoming);
                }
                if let Some(reason) = ended {
                    self.session.close_with(reason);
                }
            }
        }
    }

    /// Ends the session and closes our side of the stream once every queued message is out:
    /// our pending requests fail with `Closed(Local)`, then `Event::Closed(Local)`.
    /// Idempotent.
    pub fn close(&mut self, now: Instant) {
        if !self.session.is_closed() {
            self.closing = true;
            self.session.close(now);
        }
    }

    /// The next effect or event; `None` when drained.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<Output<Event<H>>> {
        if let Some(out) = self.session.poll_outgoing() {
            return Some(Output::Transmit(StdioTransport::transmit(out)));
        }
        if std::mem::take(&mut self.closing) {
            return Some(Output::Transmit(StdioTransport::close()));
        }
        self.session.poll_event().map(Output::Event)
    }
}

/// A stdio server is one session: its commands are the session's.
impl<H> Deref for Server<H> {
    type Target = Session<H>;

    fn deref(&self) -> &Session<H> {
        &self.session
    }
}

impl<H> DerefMut for Server<H> {
    fn deref_mut(&mut self) -> &mut Session<H> {
        &mut self.session
    }
}
