//! The client's handlers for what the server sends: requests (sampling, elicitation, roots;
//! registering one declares the matching client capability) and, optionally, a sink for the
//! server's protocol violations (banner lines, unknown response ids …), which the session
//! otherwise survives silently.

use std::future::Future;
use std::sync::Arc;

use super::{BoxFuture, HandlerResult};
use crate::client::ServerRequest;
use crate::error::{ProtocolViolation, Rejection};
use crate::jsonrpc::{ErrorObject, RawJson};
use crate::schema::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult,
    ElicitationCapability, ListRootsResult, RootsCapability, SamplingCapability,
};

type AsyncFn<P, R> = Arc<dyn Fn(P) -> BoxFuture<'static, HandlerResult<R>> + Send + Sync>;
type SyncFn<P, R> = Arc<dyn Fn(P) -> HandlerResult<R> + Send + Sync>;
type ViolationFn = Arc<dyn Fn(&ProtocolViolation) + Send + Sync>;

/// Async handlers for server requests (zest-tokio, zest-smol).
#[derive(Clone, Default)]
pub struct AsyncClientHandlers {
    sampling: Option<AsyncFn<CreateMessageParams, CreateMessageResult>>,
    elicitation: Option<AsyncFn<ElicitParams, ElicitResult>>,
    roots: Option<AsyncFn<(), ListRootsResult>>,
    violation: Option<ViolationFn>,
}

/// Blocking handlers for server requests (zest-blocking): plain functions or closures.
#[derive(Clone, Default)]
pub struct SyncClientHandlers {
    sampling: Option<SyncFn<CreateMessageParams, CreateMessageResult>>,
    elicitation: Option<SyncFn<ElicitParams, ElicitResult>>,
    roots: Option<SyncFn<(), ListRootsResult>>,
    violation: Option<ViolationFn>,
}

impl std::fmt::Debug for AsyncClientHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        describe(
            f,
            "AsyncClientHandlers",
            [self.sampling.is_some(), self.elicitation.is_some(), self.roots.is_some()],
        )
    }
}

impl std::fmt::Debug for SyncClientHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        describe(
            f,
            "SyncClientHandlers",
            [self.sampling.is_some(), self.elicitation.is_some(), self.roots.is_some()],
        )
    }
}

impl AsyncClientHandlers {
    /// Receives each protocol violation of the server (the session goes on). Called on the
    /// runtime's own task or thread: keep it short.
    pub fn on_violation(mut self, f: impl Fn(&ProtocolViolation) + Send + Sync + 'static) -> Self {
        self.violation = Some(Arc::new(f));
        self
    }

    /// Hands `violation` to the sink, if one was set.
    pub fn report_violation(&self, violation: &ProtocolViolation) {
        if let Some(f) = &self.violation {
            f(violation);
        }
    }

    /// Answers `sampling/createMessage`.
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<CreateMessageResult>> + Send + 'static,
    {
        self.sampling = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }

    /// Answers `elicitation/create` (form mode; URL mode too if the handler accepts it).
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ElicitResult>> + Send + 'static,
    {
        self.elicitation = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }

    /// Answers `roots/list`.
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ListRootsResult>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move |()| Box::pin(f())));
        self
    }

    /// `base` plus the capabilities these handlers serve.
    pub fn capabilities(&self, base: ClientCapabilities) -> ClientCapabilities {
        declare(base, self.sampling.is_some(), self.elicitation.is_some(), self.roots.is_some())
    }

    /// Runs the matching handler; its output goes to `Client::respond`.
    pub fn run(&self, request: ServerRequest) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
        match request {
            ServerRequest::CreateMessage(p) => match &self.sampling {
                Some(f) => serialize(f(*p)),
                None => missing("sampling/createMessage"),
            },
            ServerRequest::Elicit(p) => match &self.elicitation {
                Some(f) => serialize(f(*p)),
                None => missing("elicitation/create"),
            },
            ServerRequest::ListRoots(_) => match &self.roots {
                Some(f) => serialize(f(())),
                None => missing("roots/list"),
            },
        }
    }
}

impl SyncClientHandlers {
    /// Receives each protocol violation of the server (the session goes on). Called on the
    /// runtime's own task or thread: keep it short.
    pub fn on_violation(mut self, f: impl Fn(&ProtocolViolation) + Send + Sync + 'static) -> Self {
        self.violation = Some(Arc::new(f));
        self
    }

    /// Hands `violation` to the sink, if one was set.
    pub fn report_violation(&self, violation: &ProtocolViolation) {
        if let Some(f) = &self.violation {
            f(violation);
        }
    }

    /// Answers `sampling/createMessage`.
    pub fn on_sampling(
        mut self,
        f: impl Fn(CreateMessageParams) -> HandlerResult<CreateMessageResult> + Send + Sync + 'static,
    ) -> Self {
        self.sampling = Some(Arc::new(f));
        self
    }

    /// Answers `elicitation/create`.
    pub fn on_elicitation(
        mut self,
        f: impl Fn(ElicitParams) -> HandlerResult<ElicitResult> + Send + Sync + 'static,
    ) -> Self {
        self.elicitation = Some(Arc::new(f));
        self
    }

    /// Answers `roots/list`.
    pub fn on_roots(
        mut self,
        f: impl Fn() -> HandlerResult<ListRootsResult> + Send + Sync + 'static,
    ) -> Self {
        self.roots = Some(Arc::new(move |()| f()));
        self
    }

    /// `base` plus the capabilities these handlers serve.
    pub fn capabilities(&self, base: ClientCapabilities) -> ClientCapabilities {
        declare(base, self.sampling.is_some(), self.elicitation.is_some(), self.roots.is_some())
    }

    /// Runs the matching handler on this thread; its output goes to `Client::respond`.
    pub fn run(&self, request: ServerRequest) -> Result<RawJson, ErrorObject> {
        let method = request.method();
        let out = match request {
            ServerRequest::CreateMessage(p) => {
                self.sampling.as_ref().map(|f| f(*p).map(|r| ser(&r)))
            }
            ServerRequest::Elicit(p) => self.elicitation.as_ref().map(|f| f(*p).map(|r| ser(&r))),
            ServerRequest::ListRoots(_) => self.roots.as_ref().map(|f| f(()).map(|r| ser(&r))),
        };
        out.unwrap_or_else(|| Err(Rejection::MethodNotFound(method.to_owned()).to_jsonrpc()))
    }
}

fn declare(
    mut caps: ClientCapabilities,
    sampling: bool,
    elicitation: bool,
    roots: bool,
) -> ClientCapabilities {
    if sampling && caps.sampling.is_none() {
        caps.sampling = Some(SamplingCapability::default());
    }
    if elicitation && caps.elicitation.is_none() {
        caps.elicitation = Some(ElicitationCapability::default());
    }
    if roots && caps.roots.is_none() {
        caps.roots = Some(RootsCapability::default());
    }
    caps
}

fn ser<T: serde::Serialize>(value: &T) -> RawJson {
    RawJson::from_serialize(value)
}

fn serialize<R: serde::Serialize + Send + 'static>(
    fut: BoxFuture<'static, HandlerResult<R>>,
) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
    Box::pin(async move { fut.await.map(|r| ser(&r)) })
}

fn missing(method: &str) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
    let e = Rejection::MethodNotFound(method.to_owned()).to_jsonrpc();
    Box::pin(async move { Err(e) })
}

fn describe(f: &mut std::fmt::Formatter<'_>, name: &str, set: [bool; 3]) -> std::fmt::Result {
    f.debug_struct(name)
        .field("sampling", &set[0])
        .field("elicitation", &set[1])
        .field("roots", &set[2])
        .finish()
}
