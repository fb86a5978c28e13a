//! The rule tables: method directions, revisions and capabilities; phase gates.

use crate::error::Rejection;
use crate::schema::{ClientCapabilities, ProtocolVersion, ServerCapabilities};

/// Who sends a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sender {
    Client,
    Server,
    Either,
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
            Self::Elicitation | Self::Roots | Self::Sampling => false,
        }
    }

    pub(crate) fn offered_by_client(self, caps: &ClientCapabilities) -> bool {
        match self {
            Self::Elicitation => caps.elicitation.is_some(),
            Self::Roots => caps.roots.is_some(),
            Self::Sampling => caps.sampling.is_some(),
            _ => false,
        }
    }
}

/// One request method of the session era.
pub(crate) struct MethodRule {
    pub(crate) method: &'static str,
    pub(crate) sender: Sender,
    pub(crate) since: ProtocolVersion,
    /// The receiver's capability the method needs, if any.
    pub(crate) capability: Option<Capability>,
}

const fn rule(
    method: &'static str,
    sender: Sender,
    since: ProtocolVersion,
    capability: Option<Capability>,
) -> MethodRule {
    MethodRule { method, sender, since, capability }
}

use Capability as C;
use ProtocolVersion as V;

/// Every session-era request method. (Tasks are not implemented yet; they are absent here,
/// so they are answered with -32601.)
pub(crate) static REQUESTS: &[MethodRule] = &[
    rule("initialize", Sender::Client, V::V2024_11_05, None),
    rule("ping", Sender::Either, V::V2024_11_05, None),
    rule("tools/list", Sender::Client, V::V2024_11_05, Some(C::Tools)),
    rule("tools/call", Sender::Client, V::V2024_11_05, Some(C::Tools)),
    rule("resources/list", Sender::Client, V::V2024_11_05, Some(C::Resources)),
    rule("resources/templates/list", Sender::Client, V::V2024_11_05, Some(C::Resources)),
    rule("resources/read", Sender::Client, V::V2024_11_05, Some(C::Resources)),
    rule("resources/subscribe", Sender::Client, V::V2024_11_05, Some(C::ResourcesSubscribe)),
    rule("resources/unsubscribe", Sender::Client, V::V2024_11_05, Some(C::ResourcesSubscribe)),
    rule("prompts/list", Sender::Client, V::V2024_11_05, Some(C::Prompts)),
    rule("prompts/get", Sender::Client, V::V2024_11_05, Some(C::Prompts)),
    // `completion/complete` exists since 2024-11-05; the capability came in 2025-03-26.
    rule("completion/complete", Sender::Client, V::V2024_11_05, Some(C::Completions)),
    rule("logging/setLevel", Sender::Client, V::V2024_11_05, Some(C::Logging)),
    rule("sampling/createMessage", Sender::Server, V::V2024_11_05, Some(C::Sampling)),
    rule("roots/list", Sender::Server, V::V2024_11_05, Some(C::Roots)),
    rule("elicitation/create", Sender::Server, V::V2025_06_18, Some(C::Elicitation)),
];

/// The rule for a request method, if it is one zest knows.
pub(crate) fn request_rule(method: &str) -> Option<&'static MethodRule> {
    REQUESTS.iter().find(|r| r.method == method)
}

/// The capability `method` needs from the receiver in `version`, if any.
pub(crate) fn needed_capability(version: ProtocolVersion, method: &str) -> Option<Capability> {
    let r = request_rule(method)?;
    // 2024-11-05 had completion without a capability to declare it.
    if r.capability == Some(C::Completions) && version < V::V2025_03_26 {
        return None;
    }
    r.capability
}

/// True when `method` is a request `sender` may send in `version`.
pub(crate) fn exists(version: ProtocolVersion, method: &str, sender: Sender) -> bool {
    request_rule(method)
        .is_some_and(|r| version >= r.since && (r.sender == sender || r.sender == Sender::Either))
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
    use super::*;

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
