//! MCP over HTTP as a [`tower_service::Service`] (feature `tower`): the same hub and
//! [`Router`] as [`serve_http`](super::serve_http), fed by requests an HTTP stack (hyper,
//! axum) has already read instead of by connections of its own.
//!
//! ```text
//!  axum/hyper ──Request<B>──▶ McpService::call ──Accept / Data… / End on stream S──▶ Hub
//!                                  ▲                                               │ Router
//!  axum/hyper ◀──Response<McpBody>─┘◀── Respond / Write… / Close on S (own channel) ┘
//! ```
//!
//! Each request becomes one router exchange with a fresh [`StreamId`]: its head is accepted,
//! its body chunks and end are fed as they arrive, and the router's transmits for that
//! exchange come back on a channel of the request's own. A JSON answer is gathered until it
//! ends and sent whole (with `Content-Length`, as the listener does); an SSE answer
//! (`text/event-stream`) becomes a body that yields each event as the router writes it.
//! Dropping the exchange before it ended (the response future or body dropped: the client
//! went away) fails it, as a closed connection does, so the router detaches its stream.

use std::convert::Infallible;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use http::header::{CONTENT_TYPE, HOST};
use http::{HeaderValue, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use tokio::task::AbortHandle;
use zest_core::http::server::Router;
use zest_core::io::{RequestHead, ResponseHead, StreamId, Transmit, TransportFailure};
use zest_core::runtime::http_server::{Inbound, StreamIds};
use zest_core::runtime::{transmit_bytes, Inbox, OwnedEvent};
use zest_core::server::{ListKind, ServerConfig};

use super::hub::{Hub, TokioHub};
use super::{timer, wind_down, HttpConfig, ServerStats};
use crate::server::{announcing, http_handle, Registry, ServerHandle};

/// MCP over HTTP as a `tower::Service<http::Request<B>>`, to mount in an axum app (or any
/// hyper-based stack) beside other routes. Needs the `tower` feature.
///
/// It serves exactly what [`serve_http`](crate::serve_http) serves, with the same
/// [`HttpConfig`]: Streamable HTTP at the router's `path` (`/mcp` by default; the request
/// path must match it, so mount with `route_service("/mcp", ..)`, not `nest_service`),
/// legacy HTTP+SSE at `/sse` and `/messages` and `GET /health` when the service also sees
/// those paths (e.g. as a `fallback_service`). Host and Origin checks, the body limit (413),
/// session ids from OS entropy and idle expiry are the router's, as on the listener.
/// `HttpConfig::http1` applies only for `max_backlog_bytes` (what an SSE body holds for a
/// client that does not read): the HTTP stack reads the requests.
///
/// Clones share one router: sessions, streams and handlers are the same whichever clone a
/// request reaches. The router's timers run in a task while a clone (or a response body)
/// is alive. To stop, call [`shutdown`](Self::shutdown) before (or in) the HTTP server's own
/// graceful shutdown, so that long-lived SSE streams end and the server can drain:
///
/// ```no_run
/// # #[cfg(feature = "tower")]
/// # async fn run() -> std::io::Result<()> {
/// use zest_tokio::{McpService, Registry, ServerConfig};
///
/// let mcp = McpService::new(ServerConfig::new("my-server", "1.0"), Registry::new());
/// let app = axum::Router::new()
///     .route_service("/mcp", mcp.clone())
///     .route("/", axum::routing::get(|| async { "hello" }));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// axum::serve(listener, app)
///     .with_graceful_shutdown(async move {
///         let _ = tokio::signal::ctrl_c().await;
///         mcp.shutdown().await; // handlers finish, sessions end, streams close
///     })
///     .await
/// # }
/// ```
#[derive(Clone)]
pub struct McpService {
    inner: Arc<Inner>,
}

/// What every clone of a service and every exchange in flight shares.
struct Inner {
    hub: Arc<Hub>,
    ids: StreamIds,
    /// Set by `shutdown`: new requests get 503.
    stopping: AtomicBool,
    grace: Duration,
    timer: AbortHandle,
    /// `http1.max_backlog_bytes`: what an SSE body holds for a client that does not read.
    backlog_limit: usize,
}

impl McpService {
    /// A service with every [`HttpConfig`] default (session ids seeded from the OS). Must
    /// be called within a tokio runtime (the router's timer runs in a task).
    pub fn new(config: ServerConfig, registry: Registry) -> Self {
        Self::new_with(config, HttpConfig::new(), registry)
    }

    /// [`new`](Self::new) with explicit HTTP settings.
    pub fn new_with(config: ServerConfig, http: HttpConfig, registry: Registry) -> Self {
        let hub = Hub::new(
            Router::new(zest_net::with_request_state(announcing(config)), http.router, registry),
            TokioHub::default(),
        );
        let timer = tokio::spawn(timer(hub.clone())).abort_handle();
        let inner = Inner {
            hub,
            ids: StreamIds::new(),
            stopping: AtomicBool::new(false),
            grace: http.shutdown_grace,
            timer,
            backlog_limit: http.http1.max_backlog_bytes,
        };
        Self { inner: Arc::new(inner) }
    }

    /// Changes the registry every session shares, and tells each session's client that the
    /// lists named in `changed` changed (`notifications/*/list_changed`, on its GET stream).
    pub fn change_registry(&self, changed: &[ListKind], change: impl FnOnce(&mut Registry)) {
        self.inner.hub.change_registry(changed, change);
    }

    /// The handle on this service's sessions, as [`HttpServer::handle`] gives.
    ///
    /// [`HttpServer::handle`]: crate::HttpServer::handle
    pub fn handle(&self) -> ServerHandle {
        http_handle(&self.inner.hub)
    }

    /// Ends every session now: their streams close and their ids get 404 from now on (a
    /// client then starts a new session).
    pub fn close_sessions(&self) {
        self.inner.hub.close_sessions();
    }

    /// How many sessions the service holds now.
    pub fn session_count(&self) -> usize {
        self.inner.hub.session_count()
    }

    /// What the service holds now, as [`HttpServer::stats`](crate::HttpServer::stats): each
    /// count returns to its baseline once what it counts is gone (`exchanges` is 0 once
    /// every client has gone).
    pub fn stats(&self) -> ServerStats {
        self.inner.hub.stats()
    }

    /// Stops gracefully, as [`HttpServer::shutdown`](crate::HttpServer::shutdown) does for
    /// what the service owns: from now on requests get 503; running handlers may finish (up
    /// to `HttpConfig::shutdown_grace`); then every session ends, so its streams close.
    /// Connections are the HTTP server's: stop accepting and drain them there (axum's
    /// `with_graceful_shutdown`).
    pub async fn shutdown(&self) {
        self.inner.stopping.store(true, Ordering::Release);
        wind_down(&self.inner.hub, self.inner.grace).await;
    }
}

impl<B> tower_service::Service<Request<B>> for McpService
where
    B: Body + Send + 'static,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    /// Always ready: the router bounds what it holds (sessions, bodies) itself.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let inner = self.inner.clone();
        Box::pin(async move { Ok(serve(inner, request).await) })
    }
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService").finish_non_exhaustive()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.timer.abort();
    }
}

/// Serves one request: feeds its head and body to the router until the router answers,
/// then returns that answer, whole or streaming.
async fn serve<B: Body>(inner: Arc<Inner>, request: Request<B>) -> Response<McpBody> {
    if inner.stopping.load(Ordering::Acquire) {
        return bare(StatusCode::SERVICE_UNAVAILABLE);
    }
    let (parts, body) = request.into_parts();
    let mut headers = parts.headers;
    // HTTP/2 carries the host in the URI (`:authority`): the router checks `Host`.
    if let (false, Some(authority)) = (headers.contains_key(HOST), parts.uri.authority()) {
        if let Ok(value) = HeaderValue::from_str(authority.as_str()) {
            headers.insert(HOST, value);
        }
    }
    let head = RequestHead { method: parts.method, uri: parts.uri, headers };
    let mut exchange = Exchange::open(inner, head);
    let mut body = pin!(body);
    let mut reading = true;
    let head = loop {
        tokio::select! {
            // An answer (or a refusal) stops the reading: the router wants no more body.
            biased;
            transmit = exchange.recv() => match transmit {
                Transmit::Respond { head, .. } => break head,
                // Bytes before a head: a router never sends them.
                Transmit::Write { .. } | Transmit::Http { .. } => {}
                Transmit::Close { .. } | Transmit::Abort { .. } => {
                    exchange.ended();
                    return bare(StatusCode::INTERNAL_SERVER_ERROR);
                }
            },
            frame = poll_fn(|cx| body.as_mut().poll_frame(cx)), if reading => match frame {
                Some(Ok(frame)) => {
                    // Trailers carry nothing MCP reads.
                    if let Ok(mut data) = frame.into_data() {
                        let bytes = data.copy_to_bytes(data.remaining());
                        if !bytes.is_empty() {
                            exchange.feed(OwnedEvent::Data(bytes));
                        }
                    }
                }
                None => {
                    reading = false;
                    exchange.feed(OwnedEvent::End);
                }
                Some(Err(_)) => {
                    exchange.fail("reading the request body failed");
                    return bare(StatusCode::BAD_REQUEST);
                }
            },
        }
    };
    if is_event_stream(&head) {
        return response(*head, McpBody { kind: Kind::Streaming(exchange) });
    }
    let mut whole = BytesMut::new();
    loop {
        match exchange.recv().await {
            Transmit::Write { bytes, .. } => whole.extend_from_slice(&bytes),
            Transmit::Close { .. } => break,
            Transmit::Abort { .. } => {
                exchange.ended();
                return bare(StatusCode::INTERNAL_SERVER_ERROR);
            }
            Transmit::Respond { .. } | Transmit::Http { .. } => {}
        }
    }
    exchange.ended();
    response(*head, McpBody { kind: Kind::Whole(Some(whole.freeze())) })
}

/// The body of a [`McpService`] response: a whole JSON answer, or an SSE stream whose events
/// arrive as the router writes them. Dropping a stream before it ended tells the router the
/// client went away.
pub struct McpBody {
    kind: Kind,
}

enum Kind {
    /// Sent at once; `None` once taken.
    Whole(Option<Bytes>),
    Streaming(Exchange),
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match &mut self.get_mut().kind {
            Kind::Whole(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Streaming(exchange) => loop {
                if exchange.finished {
                    return Poll::Ready(None);
                }
                match ready!(exchange.poll_recv(cx)) {
                    Transmit::Write { bytes, .. } => {
                        return Poll::Ready(Some(Ok(Frame::data(bytes))));
                    }
                    Transmit::Close { .. } => exchange.ended(),
                    // The router's, or the inbox's when it gave up: the HTTP stack stopped
                    // polling this body (its client does not read) and too much waited.
                    Transmit::Abort { .. } => {
                        exchange.ended();
                        let error = io::Error::new(
                            io::ErrorKind::ConnectionAborted,
                            "the server cut the stream",
                        );
                        return Poll::Ready(Some(Err(error)));
                    }
                    Transmit::Respond { .. } | Transmit::Http { .. } => {}
                }
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Whole(bytes) => bytes.is_none(),
            Kind::Streaming(exchange) => exchange.finished,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Whole(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            Kind::Streaming(_) => SizeHint::default(),
        }
    }
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.kind {
            Kind::Whole(_) => "whole",
            Kind::Streaming(_) => "streaming",
        };
        f.debug_struct("McpBody").field("kind", &kind).finish()
    }
}

/// One request's exchange with the router: what it feeds, and the inbox its transmits
/// come back to. Dropped before it ended, it fails the exchange.
struct Exchange {
    inner: Arc<Inner>,
    stream: StreamId,
    inbox: Arc<Inbox<Transmit>>,
    /// The router closed the exchange, or heard that it failed: nothing more to tell it.
    finished: bool,
}

impl Exchange {
    /// Accepts `head` as a new exchange.
    fn open(inner: Arc<Inner>, head: RequestHead) -> Self {
        let stream = inner.ids.next();
        // Limited: hyper polls an SSE body only as its client reads.
        let inbox = Arc::new(Inbox::limited(inner.backlog_limit, transmit_bytes));
        let mut exchange = Self { inner, stream, inbox, finished: false };
        exchange.feed(OwnedEvent::Accept(Box::new(head)));
        exchange
    }

    /// The router's next transmit for this exchange.
    async fn recv(&self) -> Transmit {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The router's next transmit, or an `Abort` once the inbox gave up past its limit (the
    /// hub then failed the exchange). Checked after parking: a give-up before it is seen
    /// here, one after it wakes the task.
    fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<Transmit> {
        match self.inbox.poll_recv(cx) {
            Poll::Pending if self.inbox.passed_limit() => {
                Poll::Ready(Transmit::Abort { stream: self.stream })
            }
            polled => polled,
        }
    }

    fn feed(&mut self, event: OwnedEvent) {
        let input = Inbound { stream: self.stream, event };
        self.inner.hub.feed(&[input], &self.inbox);
    }

    /// The client cannot be answered any more: the router frees what the exchange held.
    fn fail(&mut self, why: &str) {
        if !self.finished {
            self.finished = true;
            self.feed(OwnedEvent::Failed(TransportFailure::Reset(why.into())));
        }
    }

    /// The router is done with the exchange.
    fn ended(&mut self) {
        self.finished = true;
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        self.fail("the client went away");
        self.inbox.close();
    }
}

fn is_event_stream(head: &ResponseHead) -> bool {
    head.headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"))
}

fn response(head: ResponseHead, body: McpBody) -> Response<McpBody> {
    let mut response = Response::new(body);
    *response.status_mut() = head.status;
    *response.headers_mut() = head.headers;
    response
}

/// A response with `status` and no body.
fn bare(status: StatusCode) -> Response<McpBody> {
    let mut response = Response::new(McpBody { kind: Kind::Whole(None) });
    *response.status_mut() = status;
    response
}
