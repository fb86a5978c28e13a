//! Client configuration and what the handshake settled.

use std::time::Duration;

use crate::framing::lines::DEFAULT_MAX_LINE;
use crate::schema::{ClientCapabilities, Implementation, ProtocolVersion, ServerCapabilities};

/// How a [`Client`](super::Client) behaves. Build with [`ClientConfig::new`] and adjust fields.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClientConfig {
    /// Our name and version, sent in `initialize`.
    pub client_info: Implementation,
    /// What we offer: declare `sampling`, `elicitation` or `roots` only if the app answers
    /// those requests.
    pub capabilities: ClientCapabilities,
    /// The revision offered first. The default, 2026-07-28, starts the era ladder:
    /// `server/discover` first, and on any answer that does not list it (an error, a
    /// timeout of `init_timeout`), `initialize` with the newest session-era revision in
    /// `supported_versions`. A session-era revision is offered in `initialize` at once
    /// ([`session_era`](Self::session_era)).
    pub protocol_version: ProtocolVersion,
    /// Revisions accepted in the server's answer.
    pub supported_versions: Vec<ProtocolVersion>,
    /// Idle timeout of a request (restarted by progress when asked). Default 60 s.
    pub request_timeout: Duration,
    /// Hard cap on any request, progress or not. Default 10 min. In 2026-07-28 it counts
    /// from a call's first send across all its input rounds, the app's answering included.
    pub max_request_timeout: Duration,
    /// How long `initialize` may take. Default 30 s.
    pub init_timeout: Duration,
    /// Largest message accepted from the server, in bytes, on every transport: a stdio line
    /// (its line ending excluded), a JSON response body, one SSE event. Default 64 MiB
    /// ([`DEFAULT_MAX_LINE`]), so results of several MiB (screenshots, files as base64) pass.
    /// A larger message is dropped and reported; when its first 256 bytes hold the id of a
    /// request of ours (a JSON body always belongs to its POST's request), that request ends
    /// at once with [`RequestError::TooLarge`](crate::error::RequestError::TooLarge).
    pub max_message: usize,
    /// Most of our requests sent to the server and unanswered at once. Default 1024. Past it a
    /// request is not refused but held, in order, and sent when an earlier one ends; its
    /// timeout counts from the call, and cancelling it while held sends nothing. Only past 64
    /// times this many held requests is a request refused (`UsageError::TooManyInFlight`).
    pub max_in_flight: usize,
    /// Refuse (with a `UsageError`) requests for capabilities the server did not declare.
    /// Off by default, like the TypeScript SDK, because some servers under-declare.
    pub strict_capabilities: bool,
}

impl ClientConfig {
    /// A config with our name and version and every default.
    pub fn new(name: &str, version: &str) -> Self {
        Self {
            client_info: Implementation::new(name, version),
            capabilities: ClientCapabilities::default(),
            protocol_version: ProtocolVersion::V2026_07_28,
            supported_versions: ProtocolVersion::ALL.to_vec(),
            request_timeout: Duration::from_secs(60),
            max_request_timeout: Duration::from_secs(600),
            init_timeout: Duration::from_secs(30),
            max_message: DEFAULT_MAX_LINE,
            max_in_flight: 1024,
            strict_capabilities: false,
        }
    }
}

impl ClientConfig {
    /// Offers 2026-07-28 first and keeps every revision supported: the era ladder (the
    /// default; this undoes [`session_era`](Self::session_era)).
    #[must_use]
    pub fn prefer_modern(mut self) -> Self {
        self.protocol_version = ProtocolVersion::V2026_07_28;
        if !self.supported_versions.contains(&ProtocolVersion::V2026_07_28) {
            self.supported_versions.push(ProtocolVersion::V2026_07_28);
        }
        self
    }

    /// Speaks the session era only: `initialize` with the newest session-era revision at
    /// once, no `server/discover` probe (for servers known to predate 2026-07-28, or that
    /// mishandle an unknown first request).
    #[must_use]
    pub fn session_era(mut self) -> Self {
        self.protocol_version = ProtocolVersion::LATEST_SESSION;
        self.supported_versions = ProtocolVersion::SESSION_ERA.to_vec();
        self
    }
}

crate::builder::setters!(ClientConfig {
    capabilities: ClientCapabilities,
    protocol_version: ProtocolVersion,
    supported_versions: Vec<ProtocolVersion>,
    request_timeout: Duration,
    max_request_timeout: Duration,
    init_timeout: Duration,
    max_message: usize,
    max_in_flight: usize,
    strict_capabilities: bool,
});

/// What the handshake settled, as the server stated it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Negotiated {
    /// The revision both sides now speak.
    pub protocol_version: ProtocolVersion,
    /// The server's name and version.
    pub server_info: Implementation,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Hints for the model, if the server gave any.
    pub instructions: Option<String>,
}
