//! The client's handlers for what the server sends: requests (sampling, elicitation, roots;
//! registering one declares the matching client capability) and, optionally, a sink for the
//! server's protocol violations (banner lines, unknown response ids …), which the session
//! otherwise survives silently.
//!
//! Sampling is declared only when the app sets a handler ([`on_sampling`], for embedders with
//! a policy of their own) or a [`sampling policy`](AsyncSamplingPolicy). A form answer is
//! completed and checked by [`complete_form_answer`] before it goes back; URL-mode requests
//! go to [`on_url_elicitation`], which declares `elicitation.url`. Roots come from a list the
//! app supplies ([`roots`]) and may change while the session runs.
//!
//! [`on_sampling`]: AsyncClientHandlers::on_sampling
//! [`on_url_elicitation`]: AsyncClientHandlers::on_url_elicitation
//! [`roots`]: AsyncClientHandlers::roots

mod authorize;
mod elicitation;
mod roots;
mod sampling;

use std::future::Future;
use std::sync::Arc;

pub use elicitation::complete_form_answer;
pub use roots::{check_roots, replace_roots, Roots};
pub use sampling::{
    AsyncSamplingPolicy, ContentKind, MessageShape, SamplingSummary, SyncSamplingPolicy,
};

use super::{BoxFuture, HandlerResult};
use crate::auth::Tokens;
use crate::client::{Outline, RawParams, ServerRequest};
use crate::error::{ProtocolViolation, Rejection};
use crate::jsonrpc::{ErrorObject, RawJson};
use crate::schema::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitFormParams, ElicitParams,
    ElicitResult, ElicitUrlParams, ElicitationCapability, ListRootsResult, Root, RootsCapability,
    SamplingCapability,
};

type AsyncFn<P, R> = Arc<dyn Fn(P) -> BoxFuture<'static, HandlerResult<R>> + Send + Sync>;
type SyncFn<P, R> = Arc<dyn Fn(P) -> HandlerResult<R> + Send + Sync>;
/// A sampling handler with the decoding of its request and the encoding of its answer: made
/// where the app sets one, so that a client without one links neither.
type AsyncSampling = AsyncFn<RawParams<CreateMessageParams>, RawJson>;
type SyncSampling = SyncFn<RawParams<CreateMessageParams>, RawJson>;
/// Decodes an elicitation and hands it to the handler for its mode; set with either handler
/// (for the same reason).
type AsyncElicit = fn(
    &AsyncClientHandlers,
    RawParams<ElicitParams>,
) -> BoxFuture<'static, Result<RawJson, ErrorObject>>;
type SyncElicit = fn(&SyncClientHandlers, RawParams<ElicitParams>) -> Result<RawJson, ErrorObject>;
type ViolationFn = Arc<dyn Fn(&ProtocolViolation) + Send + Sync>;
type AsyncAuthorizeFn =
    Arc<dyn Fn(String) -> BoxFuture<'static, Result<String, String>> + Send + Sync>;
type SyncAuthorizeFn = Arc<dyn Fn(String) -> Result<String, String> + Send + Sync>;
type TokensFn = Arc<dyn Fn(&Tokens) + Send + Sync>;
type LoadFn = Arc<dyn Fn() -> Option<Tokens> + Send + Sync>;

/// Async handlers for server requests (zest-tokio, zest-smol).
#[derive(Clone, Default)]
pub struct AsyncClientHandlers {
    sampling: Option<AsyncSampling>,
    elicit: Option<AsyncElicit>,
    elicitation: Option<AsyncFn<ElicitParams, ElicitResult>>,
    url_elicitation: Option<AsyncFn<ElicitUrlParams, ElicitResult>>,
    roots: Option<AsyncFn<(), ListRootsResult>>,
    declared: Declared,
    violation: Option<ViolationFn>,
    authorize: Option<AsyncAuthorizeFn>,
    tokens: Option<TokensFn>,
    load: Option<LoadFn>,
}

/// Blocking handlers for server requests (zest-blocking): plain functions or closures.
#[derive(Clone, Default)]
pub struct SyncClientHandlers {
    sampling: Option<SyncSampling>,
    elicit: Option<SyncElicit>,
    elicitation: Option<SyncFn<ElicitParams, ElicitResult>>,
    url_elicitation: Option<SyncFn<ElicitUrlParams, ElicitResult>>,
    roots: Option<SyncFn<(), ListRootsResult>>,
    declared: Declared,
    violation: Option<ViolationFn>,
    authorize: Option<SyncAuthorizeFn>,
    tokens: Option<TokensFn>,
    load: Option<LoadFn>,
}

/// What the handlers set so far declare, and the root list if the app gave one.
#[derive(Clone, Debug, Default)]
struct Declared {
    sampling: Option<SamplingCapability>,
    form: bool,
    url: bool,
    roots: Option<RootsCapability>,
    root_list: Option<Roots>,
}

impl std::fmt::Debug for AsyncClientHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncClientHandlers").field("declared", &self.declared).finish()
    }
}

impl std::fmt::Debug for SyncClientHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncClientHandlers").field("declared", &self.declared).finish()
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

    /// Answers `sampling/createMessage` with `f` and no policy of zest's: for embedders with
    /// their own review. Declares `sampling` (add `tools` to `config.capabilities` yourself
    /// to be offered tools). Replaces a [`sampling_policy`](Self::sampling_policy).
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<CreateMessageResult>> + Send + 'static,
    {
        let f = Arc::new(f);
        self.sampling = Some(Arc::new(move |p: RawParams<CreateMessageParams>| match p.decode() {
            Ok(p) => serialize(Box::pin(f(p))),
            Err(e) => refuse(e),
        }));
        self.declared.sampling = Some(SamplingCapability::default());
        self
    }

    /// Answers `sampling/createMessage` through `policy`: limits, a reviewer who sees a
    /// redacted summary, then the delegate. Declares `sampling` (with `tools` if the policy
    /// offers them). Replaces an [`on_sampling`](Self::on_sampling) handler.
    pub fn sampling_policy(mut self, policy: AsyncSamplingPolicy) -> Self {
        self.declared.sampling = Some(policy.capability());
        self.sampling = Some(Arc::new(move |p: RawParams<CreateMessageParams>| match p.decode() {
            Ok(p) => serialize(policy.run(p)),
            Err(e) => refuse(e),
        }));
        self
    }

    /// Answers form-mode `elicitation/create` (and URL mode too, when `config.capabilities`
    /// declares it and no [`on_url_elicitation`](Self::on_url_elicitation) handler is set).
    /// Declares form mode. An `accept` is completed by [`complete_form_answer`] (schema
    /// defaults for the fields left out) and refused (-32603) if it does not fit the schema.
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ElicitResult>> + Send + 'static,
    {
        self.elicitation = Some(Arc::new(move |p| Box::pin(f(p))));
        self.elicit = Some(Self::answer_elicitation);
        self.declared.form = true;
        self
    }

    /// Answers URL-mode `elicitation/create` (2025-11-25): show the user the whole URL and
    /// its host, and open it only with their consent; `accept` means they agreed. Declares
    /// `elicitation.url`.
    pub fn on_url_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ElicitUrlParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ElicitResult>> + Send + 'static,
    {
        self.url_elicitation = Some(Arc::new(move |p| Box::pin(f(p))));
        self.elicit = Some(Self::answer_elicitation);
        self.declared.url = true;
        self
    }

    /// Answers `roots/list` with `f`. Declares `roots` without `listChanged`.
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ListRootsResult>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move |()| Box::pin(f())));
        self.declared.roots = Some(RootsCapability::default());
        self.declared.root_list = None;
        self
    }

    /// Answers `roots/list` with `roots`, which the app may replace while the session runs
    /// (each runtime's `Client::set_roots`, which sends `notifications/roots/list_changed`).
    /// Declares `roots` with `listChanged`.
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        let list = Roots::new(roots);
        let answer = list.clone();
        self.roots = Some(Arc::new(move |()| {
            let result = answer.answer().map_err(|why| Rejection::Internal(why).to_jsonrpc());
            Box::pin(async move { result })
        }));
        self.declared.roots =
            Some(RootsCapability { list_changed: Some(true), ..Default::default() });
        self.declared.root_list = Some(list);
        self
    }

    /// The root list set with [`roots`](Self::roots), shared with the handler.
    pub fn root_list(&self) -> Option<Roots> {
        self.declared.root_list.clone()
    }

    /// `base` plus the capabilities these handlers serve.
    pub fn capabilities(&self, base: ClientCapabilities) -> ClientCapabilities {
        self.declared.apply(base)
    }

    /// Runs the matching handler; its output goes to `Client::respond`.
    pub fn run(&self, request: ServerRequest) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
        match request {
            ServerRequest::CreateMessage(p) => match &self.sampling {
                Some(f) => f(p),
                None => refuse(missing("sampling/createMessage")),
            },
            ServerRequest::Elicit(p) => match self.elicit {
                Some(answer) => answer(self, p),
                None => refuse(mode_not_declared(Outline::of(p.raw()).mode.as_deref())),
            },
            ServerRequest::ListRoots(_) => match &self.roots {
                Some(f) => serialize(f(())),
                None => refuse(missing("roots/list")),
            },
        }
    }

    /// Decodes an elicitation and runs the handler for its mode.
    fn answer_elicitation(
        &self,
        p: RawParams<ElicitParams>,
    ) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
        let p = match p.decode() {
            Ok(p) => p,
            Err(e) => return refuse(e),
        };
        match (p, &self.elicitation, &self.url_elicitation) {
            (ElicitParams::Url(p), _, Some(f)) => url_answer(f(p)),
            (ElicitParams::Url(p), Some(f), None) => url_answer(f(ElicitParams::Url(p))),
            (ElicitParams::Form(form), Some(f), _) => {
                let answer = f(ElicitParams::Form(form.clone()));
                Box::pin(async move { form_answer(&form, answer.await?) })
            }
            (p, _, _) => refuse(mode_not_declared(Some(mode_of(&p)))),
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

    /// Answers `sampling/createMessage` with `f` and no policy of zest's, as
    /// [`AsyncClientHandlers::on_sampling`].
    pub fn on_sampling(
        mut self,
        f: impl Fn(CreateMessageParams) -> HandlerResult<CreateMessageResult> + Send + Sync + 'static,
    ) -> Self {
        self.sampling = Some(Arc::new(move |p: RawParams<CreateMessageParams>| {
            f(p.decode()?).map(|r| ser(&r))
        }));
        self.declared.sampling = Some(SamplingCapability::default());
        self
    }

    /// Answers `sampling/createMessage` through `policy`, as
    /// [`AsyncClientHandlers::sampling_policy`].
    pub fn sampling_policy(mut self, policy: SyncSamplingPolicy) -> Self {
        self.declared.sampling = Some(policy.capability());
        self.sampling = Some(Arc::new(move |p: RawParams<CreateMessageParams>| {
            policy.run(p.decode()?).map(|r| ser(&r))
        }));
        self
    }

    /// Answers form-mode `elicitation/create`, as [`AsyncClientHandlers::on_elicitation`].
    pub fn on_elicitation(
        mut self,
        f: impl Fn(ElicitParams) -> HandlerResult<ElicitResult> + Send + Sync + 'static,
    ) -> Self {
        self.elicitation = Some(Arc::new(f));
        self.elicit = Some(Self::answer_elicitation);
        self.declared.form = true;
        self
    }

    /// Answers URL-mode `elicitation/create`, as [`AsyncClientHandlers::on_url_elicitation`].
    pub fn on_url_elicitation(
        mut self,
        f: impl Fn(ElicitUrlParams) -> HandlerResult<ElicitResult> + Send + Sync + 'static,
    ) -> Self {
        self.url_elicitation = Some(Arc::new(f));
        self.elicit = Some(Self::answer_elicitation);
        self.declared.url = true;
        self
    }

    /// Answers `roots/list` with `f`. Declares `roots` without `listChanged`.
    pub fn on_roots(
        mut self,
        f: impl Fn() -> HandlerResult<ListRootsResult> + Send + Sync + 'static,
    ) -> Self {
        self.roots = Some(Arc::new(move |()| f()));
        self.declared.roots = Some(RootsCapability::default());
        self.declared.root_list = None;
        self
    }

    /// Answers `roots/list` with `roots`, as [`AsyncClientHandlers::roots`].
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        let list = Roots::new(roots);
        let answer = list.clone();
        self.roots = Some(Arc::new(move |()| {
            answer.answer().map_err(|why| Rejection::Internal(why).to_jsonrpc())
        }));
        self.declared.roots =
            Some(RootsCapability { list_changed: Some(true), ..Default::default() });
        self.declared.root_list = Some(list);
        self
    }

    /// The root list set with [`roots`](Self::roots), shared with the handler.
    pub fn root_list(&self) -> Option<Roots> {
        self.declared.root_list.clone()
    }

    /// `base` plus the capabilities these handlers serve.
    pub fn capabilities(&self, base: ClientCapabilities) -> ClientCapabilities {
        self.declared.apply(base)
    }

    /// Runs the matching handler on this thread; its output goes to `Client::respond`.
    pub fn run(&self, request: ServerRequest) -> Result<RawJson, ErrorObject> {
        match request {
            ServerRequest::CreateMessage(p) => match &self.sampling {
                Some(f) => f(p),
                None => Err(missing("sampling/createMessage")),
            },
            ServerRequest::Elicit(p) => match self.elicit {
                Some(answer) => answer(self, p),
                None => Err(mode_not_declared(Outline::of(p.raw()).mode.as_deref())),
            },
            ServerRequest::ListRoots(_) => match &self.roots {
                Some(f) => f(()).map(|r| ser(&r)),
                None => Err(missing("roots/list")),
            },
        }
    }

    /// Decodes an elicitation and runs the handler for its mode.
    fn answer_elicitation(&self, p: RawParams<ElicitParams>) -> Result<RawJson, ErrorObject> {
        match (p.decode()?, &self.elicitation, &self.url_elicitation) {
            (ElicitParams::Url(p), _, Some(f)) => f(p).map(without_content),
            (ElicitParams::Url(p), Some(f), None) => f(ElicitParams::Url(p)).map(without_content),
            (ElicitParams::Form(form), Some(f), _) => {
                form_answer(&form, f(ElicitParams::Form(form.clone()))?)
            }
            (p, _, _) => Err(mode_not_declared(Some(mode_of(&p)))),
        }
    }
}

impl Declared {
    /// `caps` plus what is declared here; what `caps` already says is kept.
    fn apply(&self, mut caps: ClientCapabilities) -> ClientCapabilities {
        if caps.sampling.is_none() {
            caps.sampling.clone_from(&self.sampling);
        }
        if (self.form || self.url) && caps.elicitation.is_none() {
            let flag = |on: bool| on.then(Default::default);
            caps.elicitation = Some(if self.url {
                ElicitationCapability {
                    form: flag(self.form),
                    url: flag(true),
                    ..Default::default()
                }
            } else {
                // `{}` means form mode, and is what 2025-06-18 servers expect.
                ElicitationCapability::default()
            });
        }
        if caps.roots.is_none() {
            caps.roots.clone_from(&self.roots);
        }
        caps
    }
}

/// The app's answer to a form, completed and checked.
fn form_answer(form: &ElicitFormParams, mut answer: ElicitResult) -> Result<RawJson, ErrorObject> {
    match complete_form_answer(form, &mut answer) {
        Ok(()) => Ok(ser(&answer)),
        Err(why) => {
            Err(Rejection::Internal(format!("the answer does not fit the requested schema: {why}"))
                .to_jsonrpc())
        }
    }
}

/// A URL-mode answer: the action alone (the interaction's data never passes the client).
fn without_content(mut answer: ElicitResult) -> RawJson {
    answer.content = None;
    ser(&answer)
}

fn url_answer(
    fut: BoxFuture<'static, HandlerResult<ElicitResult>>,
) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
    Box::pin(async move { fut.await.map(without_content) })
}

fn mode_of(p: &ElicitParams) -> &'static str {
    match p {
        ElicitParams::Form(_) => "form",
        _ => "url",
    }
}

/// -32602 for an elicitation in a mode no handler answers (`None`: form, the default).
fn mode_not_declared(mode: Option<&str>) -> ErrorObject {
    let why = match mode.unwrap_or("form") {
        mode @ ("form" | "url") => format!("this client does not support {mode}-mode elicitation"),
        _ => "unknown elicitation mode".to_owned(),
    };
    Rejection::InvalidParams(why).to_jsonrpc()
}

fn ser<T: serde::Serialize>(value: &T) -> RawJson {
    RawJson::from_serialize(value)
}

fn serialize<R: serde::Serialize + Send + 'static>(
    fut: BoxFuture<'static, HandlerResult<R>>,
) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
    Box::pin(async move { fut.await.map(|r| ser(&r)) })
}

fn missing(method: &str) -> ErrorObject {
    Rejection::MethodNotFound(method.to_owned()).to_jsonrpc()
}

fn refuse(e: ErrorObject) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
    Box::pin(async move { Err(e) })
}

#[cfg(test)]
mod tests;
