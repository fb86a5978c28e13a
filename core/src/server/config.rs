//! Server configuration and what a client told us in `initialize`.

use std::time::Duration;

use super::RequestStateConfig;
use crate::framing::lines::DEFAULT_MAX_LINE;
use crate::schema::{
    CacheScope, ClientCapabilities, Implementation, ProtocolVersion, ServerCapabilities,
};

/// How a [`Server`](super::Server) behaves. Build with [`ServerConfig::new`] and adjust fields.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Our name and version, sent in the `initialize` result.
    pub server_info: Implementation,
    /// Hints for the model, sent in the `initialize` result.
    pub instructions: Option<String>,
    /// What we offer. `None` (the default) derives it from the registry at `initialize`:
    /// tools, resources, prompts and completions when registered, and logging; with
    /// [`announce_changes`](Self::announce_changes), tools, resources and prompts always, with
    /// `listChanged`, and resources with `subscribe`.
    pub capabilities: Option<ServerCapabilities>,
    /// The app can change its lists and report resource updates while sessions are open
    /// ([`Session::notify_list_changed`](super::Session::notify_list_changed),
    /// [`Session::resource_updated`](super::Session::resource_updated)), so the derived
    /// capabilities declare `listChanged` for tools, resources and prompts (each declared
    /// even while empty, so that items added later can be listed) and `subscribe` for
    /// resources. Off by default: a client is then promised fixed lists and offered no
    /// subscriptions. The runtimes set it whenever the app holds a server handle (an HTTP
    /// server, a stdio server started with a handle).
    pub announce_changes: bool,
    /// Revisions we speak; the best common one is chosen at `initialize`. Default: every
    /// revision, 2026-07-28 included ([`session_era`](Self::session_era) drops it): a
    /// session also answers that revision's requests (`server/discover`, and any request
    /// whose `_meta` names it) until a client sends `initialize`; each such request stands
    /// alone.
    pub supported_versions: Vec<ProtocolVersion>,
    /// 2026-07-28: how long a client may reuse a list, `resources/read` or `server/discover`
    /// result (`ttlMs`). Default 0: ask again every time.
    pub cache_ttl_ms: u64,
    /// 2026-07-28: who may reuse those results (`cacheScope`). Default `private`.
    pub cache_scope: CacheScope,
    /// 2026-07-28: how `requestState` is sealed and checked (the key, the wall clock, its
    /// age and size bounds). Every runtime fills it in when it is `None` (a fresh key from
    /// the OS): set it, with one key, on every process that may receive a call's retry.
    /// While it is `None` a run that asks the client is answered with an internal error.
    pub request_state: Option<RequestStateConfig>,
    /// Items per page of `tools/list`, `resources/list`, `resources/templates/list` and
    /// `prompts/list`. Default 100.
    pub page_size: usize,
    /// Reject requests that arrive after the `initialize` result but before
    /// `notifications/initialized` (with -32600). Off by default, as in rmcp and the
    /// TypeScript SDK, because on HTTP the two can race.
    pub strict_initialized: bool,
    /// Idle timeout of our requests to the client (sampling, elicitation, roots). Default 60 s.
    pub request_timeout: Duration,
    /// Hard cap on our requests to the client. Default 10 min.
    pub max_request_timeout: Duration,
    /// Longest stdio line accepted from the client, line ending excluded. Default 64 MiB
    /// ([`DEFAULT_MAX_LINE`]), so results of several MiB (screenshots, files as base64) pass.
    /// A longer line is dropped and reported; when its first 256 bytes hold the id, the request
    /// it is or answers ends at once (see [`LineViolation::TooLong`]).
    ///
    /// [`LineViolation::TooLong`]: crate::framing::lines::LineViolation::TooLong
    pub max_line: usize,
    /// Most of our requests sent to the client and unanswered at once. Default 1024. Past it a
    /// request is not refused but held, in order, and sent when an earlier one ends; its
    /// timeout counts from the call, and cancelling it while held sends nothing. Only past 64
    /// times this many held requests is a request refused (`UsageError::TooManyInFlight`).
    pub max_in_flight: usize,
    /// Most resource subscriptions one session may hold. Default 10,000.
    pub max_subscriptions: usize,
    /// Over stdio (and in memory): while more than this many bytes wait unwritten for the
    /// client, besides the largest message among them (one message is never refused for its
    /// size), nothing more is read from it; a client that takes no byte meanwhile for
    /// [`BACKLOG_STALL`](crate::runtime::BACKLOG_STALL) does not read, and the session ends with
    /// a transport failure instead of holding ever more. Default 8 MiB, the HTTP servers'
    /// `max_backlog_bytes`.
    pub max_backlog_bytes: usize,
}

impl ServerConfig {
    /// A config with our name and version and every default.
    pub fn new(name: &str, version: &str) -> Self {
        Self {
            server_info: Implementation::new(name, version),
            instructions: None,
            capabilities: None,
            announce_changes: false,
            supported_versions: ProtocolVersion::ALL.to_vec(),
            cache_ttl_ms: 0,
            cache_scope: CacheScope::Private,
            request_state: None,
            page_size: 100,
            strict_initialized: false,
            request_timeout: Duration::from_secs(60),
            max_request_timeout: Duration::from_secs(600),
            max_line: DEFAULT_MAX_LINE,
            max_in_flight: 1024,
            max_subscriptions: 10_000,
            max_backlog_bytes: crate::http1::DEFAULT_MAX_BACKLOG_BYTES,
        }
    }

    /// Sets the instructions for the model sent in the `initialize` result.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Seals `requestState` with `config` (see [`request_state`](Self::request_state)).
    #[must_use]
    pub fn request_state(mut self, config: RequestStateConfig) -> Self {
        self.request_state = Some(config);
        self
    }

    /// Declares `capabilities` instead of deriving them from the registry.
    #[must_use]
    pub fn capabilities(mut self, capabilities: ServerCapabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Speaks the session era only: 2026-07-28 requests (`server/discover` included) are
    /// refused as coming before `initialize`, so dual-era clients step down to it.
    #[must_use]
    pub fn session_era(mut self) -> Self {
        self.supported_versions = ProtocolVersion::SESSION_ERA.to_vec();
        self
    }
}

crate::builder::setters!(ServerConfig {
    announce_changes: bool,
    supported_versions: Vec<ProtocolVersion>,
    cache_ttl_ms: u64,
    cache_scope: CacheScope,
    page_size: usize,
    strict_initialized: bool,
    request_timeout: Duration,
    max_request_timeout: Duration,
    max_line: usize,
    max_in_flight: usize,
    max_subscriptions: usize,
    max_backlog_bytes: usize,
});

/// What the client said about itself, and the revision chosen.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct SessionInfo {
    /// The revision both sides now speak.
    pub protocol_version: ProtocolVersion,
    /// The client's name and version.
    pub client_info: Implementation,
    /// What the client offers (sampling, elicitation, roots).
    pub client_capabilities: ClientCapabilities,
    /// What we answered with.
    pub server_capabilities: ServerCapabilities,
}
