//! The rule tables: method directions, revisions and capabilities; phase gates.

use serde_json::{Map, Value};

use crate::error::Rejection;
use crate::schema::{ClientCapabilities, Era, ProtocolVersion, ServerCapabilities};

/// Who sends a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sender {
    Client,
    Server,
    Either,
}

/// Whether a method is a request (answered) or a notification (never answered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Notification,
    Request,
}

/// A capability a method depends on, declared by the receiving side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Capability {
    Completions,
    Elicitation,
    Logging,
    Prompts,
    Resources,
    ResourcesSubscribe,
    Roots,
    Sampling,
    /// `tasks` (2025-11-25), any sub-capability.
    Tasks,
    /// `tasks.cancel`.
    TasksCancel,
    /// `tasks.list`.
    TasksList,
    Tools,
}

impl Capability {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Completions => "completions",
            Self::Elicitation => "elicitation",
            Self::Logging => "logging",
            Self::Prompts => "prompts",
            Self::Resources => "resources",
            Self::ResourcesSubscribe => "resources.subscribe",
            Self::Roots => "roots",
            Self::Sampling => "sampling",
            Self::Tasks => "tasks",
            Self::TasksCancel => "tasks.cancel",
            Self::TasksList => "tasks.list",
            Self::Tools => "tools",
        }
    }

    pub(crate) fn offered_by_server(self, caps: &ServerCapabilities) -> bool {
        match self {
            Self::Completions => caps.completions.is_some(),
            Self::Logging => caps.logging.is_some(),
            Self::Prompts => caps.prompts.is_some(),
            Self::Resources => caps.resources.is_some(),
            Self::ResourcesSubscribe => {
                caps.resources.as_ref().and_then(|r| r.subscribe).unwrap_or(false)
            }
            Self::Tools => caps.tools.is_some(),
            Self::Tasks | Self::TasksCancel | Self::TasksList => self.in_tasks(&caps.extra),
            Self::Elicitation | Self::Roots | Self::Sampling => false,
        }
    }

    pub(crate) fn offered_by_client(self, caps: &ClientCapabilities) -> bool {
        match self {
            Self::Elicitation => caps.elicitation.is_some(),
            Self::Roots => caps.roots.is_some(),
            Self::Sampling => caps.sampling.is_some(),
            Self::Tasks | Self::TasksCancel | Self::TasksList => self.in_tasks(&caps.extra),
            _ => false,
        }
    }

    /// The typed capability structs keep `tasks` (2025-11-25) among their unknown fields.
    fn in_tasks(self, extra: &Map<String, Value>) -> bool {
        let Some(Value::Object(tasks)) = extra.get("tasks") else { return false };
        let sub = match self {
            Self::TasksCancel => "cancel",
            Self::TasksList => "list",
            _ => return true,
        };
        tasks.get(sub).is_some_and(Value::is_object)
    }
}

/// One method: who sends it and in which revisions, as a request or a notification.
///
/// A method whose direction changed between revisions has one row per direction, with eras
/// that do not overlap.
pub(crate) struct MethodRule {
    pub(crate) method: &'static str,
    pub(crate) kind: Kind,
    pub(crate) sender: Sender,
    /// The revisions that have it: the one it starts in and the last one that has it (`None`
    /// while it is in the newest). Always a named era of `schema::version`, or the overlap
    /// of two.
    pub(crate) era: Era,
    /// The receiver's capability a request needs, if any. Not modelled for notifications,
    /// whose conditions are on the sender's own capabilities.
    pub(crate) capability: Option<Capability>,
}

impl MethodRule {
    fn sent_by(&self, sender: Sender) -> bool {
        self.sender == sender || self.sender == Sender::Either
    }
}

const fn request(
    method: &'static str,
    sender: Sender,
    era: Era,
    capability: Option<Capability>,
) -> MethodRule {
    MethodRule { method, kind: Kind::Request, sender, era, capability }
}

const fn notification(method: &'static str, sender: Sender, era: Era) -> MethodRule {
    MethodRule { method, kind: Kind::Notification, sender, era, capability: None }
}

use Capability as C;
use Sender::{Client as ByClient, Either as ByEither, Server as ByServer};

/// Every method of every revision (the schemas of every revision, e.g.
/// <https://modelcontextprotocol.io/specification/2026-07-28/schema>), with the revisions it
/// lives in.
///
/// The 2026-07-28 rows are what the machines speak in that revision. Server-to-client requests end in 2025-11-25: 2026-07-28 carries sampling,
/// elicitation and roots inside input-required results, never as JSON-RPC requests. Tasks are
/// in the table so the machines answer them with -32601 by name rather than by accident.
pub(crate) static METHODS: &[MethodRule] = &[
    // Lifecycle and utilities.
    request("initialize", ByClient, Era::SESSION, None),
    request("ping", ByEither, Era::PING, None),
    request("server/discover", ByClient, Era::STATELESS, None),
    notification("notifications/initialized", ByClient, Era::SESSION),
    notification("notifications/cancelled", ByEither, Era::ALL),
    notification("notifications/progress", ByEither, Era::SESSION),
    // 2026-07-28: only the server reports progress.
    notification("notifications/progress", ByServer, Era::STATELESS),
    // Server features.
    request("tools/list", ByClient, Era::ALL, Some(C::Tools)),
    request("tools/call", ByClient, Era::ALL, Some(C::Tools)),
    request("resources/list", ByClient, Era::ALL, Some(C::Resources)),
    request("resources/templates/list", ByClient, Era::ALL, Some(C::Resources)),
    request("resources/read", ByClient, Era::ALL, Some(C::Resources)),
    request("resources/subscribe", ByClient, Era::RESOURCE_SUBSCRIBE, Some(C::ResourcesSubscribe)),
    request(
        "resources/unsubscribe",
        ByClient,
        Era::RESOURCE_SUBSCRIBE,
        Some(C::ResourcesSubscribe),
    ),
    request("subscriptions/listen", ByClient, Era::STATELESS, None),
    request("prompts/list", ByClient, Era::ALL, Some(C::Prompts)),
    request("prompts/get", ByClient, Era::ALL, Some(C::Prompts)),
    // Exists since 2024-11-05; the capability gates it from 2025-03-26 (`needed_capability`).
    request("completion/complete", ByClient, Era::ALL, Some(C::Completions)),
    request("logging/setLevel", ByClient, Era::SET_LEVEL, Some(C::Logging)),
    notification("notifications/message", ByServer, Era::ALL),
    notification("notifications/resources/updated", ByServer, Era::ALL),
    notification("notifications/resources/list_changed", ByServer, Era::ALL),
    notification("notifications/prompts/list_changed", ByServer, Era::ALL),
    notification("notifications/tools/list_changed", ByServer, Era::ALL),
    notification("notifications/subscriptions/acknowledged", ByServer, Era::STATELESS),
    // Client features.
    request("sampling/createMessage", ByServer, Era::SERVER_REQUESTS, Some(C::Sampling)),
    request("roots/list", ByServer, Era::SERVER_REQUESTS, Some(C::Roots)),
    request(
        "elicitation/create",
        ByServer,
        Era::ELICITATION.and(Era::SERVER_REQUESTS),
        Some(C::Elicitation),
    ),
    notification("notifications/roots/list_changed", ByClient, Era::ROOTS_LIST_CHANGED),
    notification("notifications/elicitation/complete", ByServer, Era::ELICITATION_COMPLETE),
    // Tasks, experimental in 2025-11-25 (an extension afterwards, outside this table).
    request("tasks/get", ByEither, Era::CORE_TASKS, Some(C::Tasks)),
    request("tasks/result", ByEither, Era::CORE_TASKS, Some(C::Tasks)),
    request("tasks/list", ByEither, Era::CORE_TASKS, Some(C::TasksList)),
    request("tasks/cancel", ByEither, Era::CORE_TASKS, Some(C::TasksCancel)),
    notification("notifications/tasks/status", ByEither, Era::CORE_TASKS),
];

/// The rule for a request method, if it is one zest knows (in any revision).
pub(crate) fn request_rule(method: &str) -> Option<&'static MethodRule> {
    METHODS.iter().find(|r| r.kind == Kind::Request && r.method == method)
}

/// The capability `method` needs from the receiver in `version`, if any.
pub(crate) fn needed_capability(version: ProtocolVersion, method: &str) -> Option<Capability> {
    match request_rule(method)?.capability {
        Some(C::Completions) if !version.has_completions_capability() => None,
        capability => capability,
    }
}

/// True when `method` is a request `sender` may send in `version`.
pub(crate) fn exists(version: ProtocolVersion, method: &str, sender: Sender) -> bool {
    allows(Kind::Request, version, method, sender)
}

/// True when some row lets `sender` send `method` as `kind` in `version`.
fn allows(kind: Kind, version: ProtocolVersion, method: &str, sender: Sender) -> bool {
    METHODS.iter().any(|r| {
        r.kind == kind && r.method == method && r.sent_by(sender) && r.era.contains(version)
    })
}

/// The server's phases, named for what they wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ServerPhase {
    AwaitingInitialize,
    AwaitingInitialized,
    Ready,
    Closed,
}

impl ServerPhase {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::AwaitingInitialize => "awaiting initialize",
            Self::AwaitingInitialized => "awaiting notifications/initialized",
            Self::Ready => "ready",
            Self::Closed => "closed",
        }
    }
}

/// May the server accept a request for `method` now?
///
/// `ping` is always allowed. Before `initialize` nothing else is. Between the `initialize`
/// result and `notifications/initialized` requests are accepted unless `strict` (on HTTP the
/// two can race; rmcp and the TypeScript SDK accept them too).
pub(crate) fn server_gate(phase: ServerPhase, strict: bool, method: &str) -> Result<(), Rejection> {
    use ServerPhase as P;
    match (phase, method) {
        (_, "ping") => Ok(()),
        (P::AwaitingInitialize, "initialize") => Ok(()),
        (P::AwaitingInitialize, _) => Err(Rejection::NotInitialized),
        (_, "initialize") => Err(Rejection::AlreadyInitialized),
        (P::AwaitingInitialized, _) if strict => Err(Rejection::InitializedNotReceived),
        _ => Ok(()),
    }
}

/// The client's phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClientPhase {
    AwaitingInitResult,
    Ready,
}

/// May the client send a request for `method` now? Before the handshake only `ping`.
pub(crate) fn client_may_send(phase: ClientPhase, method: &str) -> bool {
    match phase {
        ClientPhase::AwaitingInitResult => method == "ping",
        ClientPhase::Ready => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use ProtocolVersion as V;

    /// Every row, as the revisions' schemas give it: method, kind, first and last revision.
    #[test]
    fn every_row_starts_and_ends_where_the_digest_says() {
        use Kind::{Notification as N, Request as R};
        let (v24, v25_06, v25_11, v26) =
            (V::V2024_11_05, V::V2025_06_18, V::V2025_11_25, V::V2026_07_28);
        let expected: &[(&str, Kind, ProtocolVersion, Option<ProtocolVersion>)] = &[
            ("initialize", R, v24, Some(v25_11)),
            ("ping", R, v24, Some(v25_11)),
            ("server/discover", R, v26, None),
            ("notifications/initialized", N, v24, Some(v25_11)),
            ("notifications/cancelled", N, v24, None),
            ("notifications/progress", N, v24, Some(v25_11)),
            ("notifications/progress", N, v26, None),
            ("tools/list", R, v24, None),
            ("tools/call", R, v24, None),
            ("resources/list", R, v24, None),
            ("resources/templates/list", R, v24, None),
            ("resources/read", R, v24, None),
            ("resources/subscribe", R, v24, Some(v25_11)),
            ("resources/unsubscribe", R, v24, Some(v25_11)),
            ("subscriptions/listen", R, v26, None),
            ("prompts/list", R, v24, None),
            ("prompts/get", R, v24, None),
            ("completion/complete", R, v24, None),
            ("logging/setLevel", R, v24, Some(v25_11)),
            ("notifications/message", N, v24, None),
            ("notifications/resources/updated", N, v24, None),
            ("notifications/resources/list_changed", N, v24, None),
            ("notifications/prompts/list_changed", N, v24, None),
            ("notifications/tools/list_changed", N, v24, None),
            ("notifications/subscriptions/acknowledged", N, v26, None),
            ("sampling/createMessage", R, v24, Some(v25_11)),
            ("roots/list", R, v24, Some(v25_11)),
            ("elicitation/create", R, v25_06, Some(v25_11)),
            ("notifications/roots/list_changed", N, v24, Some(v25_11)),
            ("notifications/elicitation/complete", N, v25_11, Some(v25_11)),
            ("tasks/get", R, v25_11, Some(v25_11)),
            ("tasks/result", R, v25_11, Some(v25_11)),
            ("tasks/list", R, v25_11, Some(v25_11)),
            ("tasks/cancel", R, v25_11, Some(v25_11)),
            ("notifications/tasks/status", N, v25_11, Some(v25_11)),
        ];
        let actual: Vec<_> =
            METHODS.iter().map(|r| (r.method, r.kind, r.era.since, r.era.until)).collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn the_2026_revision_drops_the_handshake_and_adds_discovery() {
        for (method, sender) in [
            ("initialize", Sender::Client),
            ("ping", Sender::Client),
            ("ping", Sender::Server),
            ("logging/setLevel", Sender::Client),
            ("resources/subscribe", Sender::Client),
            ("sampling/createMessage", Sender::Server),
            ("roots/list", Sender::Server),
            ("elicitation/create", Sender::Server),
            ("tasks/get", Sender::Client),
        ] {
            assert!(exists(V::V2025_11_25, method, sender), "{method} in 2025-11-25");
            assert!(!exists(V::V2026_07_28, method, sender), "{method} in 2026-07-28");
        }
        for method in ["server/discover", "subscriptions/listen"] {
            assert!(exists(V::V2026_07_28, method, Sender::Client), "{method}");
            assert!(!exists(V::V2026_07_28, method, Sender::Server), "{method} from a server");
            assert!(!exists(V::V2025_11_25, method, Sender::Client), "{method} in 2025-11-25");
        }
        let note = |v, m, s| allows(Kind::Notification, v, m, s);
        assert!(note(V::V2025_11_25, "notifications/initialized", Sender::Client));
        assert!(!note(V::V2026_07_28, "notifications/initialized", Sender::Client));
        assert!(note(V::V2026_07_28, "notifications/subscriptions/acknowledged", Sender::Server));
        assert!(note(V::V2025_11_25, "notifications/progress", Sender::Client));
        assert!(!note(V::V2026_07_28, "notifications/progress", Sender::Client));
        assert!(note(V::V2026_07_28, "notifications/progress", Sender::Server));
        assert!(note(V::V2026_07_28, "notifications/cancelled", Sender::Client));
    }

    /// The table and the predicates of `ProtocolVersion` read the same eras; this checks that
    /// no row was given a span of its own by hand.
    #[test]
    fn the_table_agrees_with_the_version_predicates() {
        for v in ProtocolVersion::ALL {
            let req = |m, s| exists(v, m, s);
            let note = |m, s| allows(Kind::Notification, v, m, s);
            assert_eq!(req("initialize", Sender::Client), v.is_session_era(), "{v}");
            assert_eq!(note("notifications/initialized", Sender::Client), v.is_session_era());
            assert_eq!(req("ping", Sender::Server), v.has_ping(), "{v}");
            assert_eq!(req("logging/setLevel", Sender::Client), v.has_set_level(), "{v}");
            assert_eq!(req("resources/subscribe", Sender::Client), v.has_resource_subscribe());
            assert_eq!(req("server/discover", Sender::Client), v.has_discover(), "{v}");
            assert_eq!(req("subscriptions/listen", Sender::Client), v.has_discover(), "{v}");
            assert_eq!(req("roots/list", Sender::Server), v.has_server_requests(), "{v}");
            assert_eq!(
                req("elicitation/create", Sender::Server),
                v.has_elicitation() && v.has_server_requests(),
                "{v}"
            );
            assert_eq!(req("tasks/result", Sender::Server), v.has_core_tasks(), "{v}");
            assert_eq!(
                note("notifications/roots/list_changed", Sender::Client),
                v.has_roots_list_changed()
            );
            assert_eq!(
                note("notifications/elicitation/complete", Sender::Server),
                v.has_elicitation_complete()
            );
            assert_eq!(
                needed_capability(v, "completion/complete").is_some(),
                v.has_completions_capability()
            );
        }
    }

    #[test]
    fn rows_of_one_method_never_overlap() {
        for (i, a) in METHODS.iter().enumerate() {
            for b in &METHODS[i + 1..] {
                if a.method == b.method && a.kind == b.kind {
                    let both = ProtocolVersion::ALL
                        .into_iter()
                        .find(|&v| a.era.contains(v) && b.era.contains(v));
                    assert_eq!(both, None, "{} has two rows in one revision", a.method);
                }
            }
        }
    }

    #[test]
    fn tasks_go_either_way_in_2025_11_25_behind_their_capabilities() {
        assert!(exists(V::V2025_11_25, "tasks/get", Sender::Server));
        assert!(exists(V::V2025_11_25, "tasks/get", Sender::Client));
        assert!(!exists(V::V2025_06_18, "tasks/get", Sender::Server));
        assert_eq!(needed_capability(V::V2025_11_25, "tasks/list"), Some(C::TasksList));
        let caps: ClientCapabilities =
            serde_json::from_value(json!({"tasks": {"list": {}}})).unwrap();
        assert!(C::Tasks.offered_by_client(&caps) && C::TasksList.offered_by_client(&caps));
        assert!(!C::TasksCancel.offered_by_client(&caps));
        assert!(!C::Tasks.offered_by_server(&ServerCapabilities::default()));
    }

    #[test]
    fn gate_table_matches_the_lifecycle() {
        use ServerPhase as P;
        assert_eq!(server_gate(P::AwaitingInitialize, false, "ping"), Ok(()));
        assert_eq!(
            server_gate(P::AwaitingInitialize, false, "tools/list"),
            Err(Rejection::NotInitialized)
        );
        assert_eq!(server_gate(P::AwaitingInitialized, false, "tools/list"), Ok(()));
        assert_eq!(
            server_gate(P::AwaitingInitialized, true, "tools/list"),
            Err(Rejection::InitializedNotReceived)
        );
        assert_eq!(server_gate(P::Ready, true, "initialize"), Err(Rejection::AlreadyInitialized));
    }

    #[test]
    fn elicitation_exists_from_2025_06_18_and_only_server_to_client() {
        assert!(!exists(V::V2025_03_26, "elicitation/create", Sender::Server));
        assert!(exists(V::V2025_06_18, "elicitation/create", Sender::Server));
        assert!(!exists(V::V2025_11_25, "elicitation/create", Sender::Client));
        assert!(exists(V::V2024_11_05, "ping", Sender::Server));
    }

    #[test]
    fn completion_needs_no_capability_in_2024() {
        assert_eq!(needed_capability(V::V2024_11_05, "completion/complete"), None);
        assert_eq!(needed_capability(V::V2025_03_26, "completion/complete"), Some(C::Completions));
    }
}
