//! Protocol revisions and the features each one has.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A revision of the MCP specification, ordered oldest first.
///
/// The feature predicates are the branch points of DESIGN.md §6 and MCP-DIGEST §1.2: code asks
/// `version.has_elicitation()` instead of comparing dates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05, the baseline.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, batching, tool annotations, audio.
    V2025_03_26,
    /// 2025-06-18: structured output, elicitation, resource links, no batching.
    V2025_06_18,
    /// 2025-11-25: icons, URL elicitation, sampling with tools, tasks.
    V2025_11_25,
    /// 2026-07-28: the stateless era (no `initialize`).
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [Self; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];
    /// The session-era revisions (negotiated with `initialize`), oldest first.
    pub const SESSION_ERA: [Self; 4] =
        [Self::V2024_11_05, Self::V2025_03_26, Self::V2025_06_18, Self::V2025_11_25];
    /// The newest session-era revision.
    pub const LATEST_SESSION: Self = Self::V2025_11_25;

    /// The wire string, e.g. `"2025-06-18"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a wire string; `None` for a revision this crate does not know.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Negotiated with `initialize` (revisions up to 2025-11-25).
    pub fn is_session_era(self) -> bool {
        self <= Self::V2025_11_25
    }
    /// Stateless: protocol data in every request's `_meta`, no handshake (2026-07-28+).
    pub fn is_stateless(self) -> bool {
        self >= Self::V2026_07_28
    }
    /// JSON-RPC batches may be sent and must be accepted (2025-03-26 only).
    pub fn has_batching(self) -> bool {
        self == Self::V2025_03_26
    }
    /// Tool annotations, audio content, progress `message`, `completions` capability.
    pub fn has_tool_annotations(self) -> bool {
        self >= Self::V2025_03_26
    }
    /// `outputSchema` and `structuredContent` on tools.
    pub fn has_structured_output(self) -> bool {
        self >= Self::V2025_06_18
    }
    /// `elicitation/create` (form mode).
    pub fn has_elicitation(self) -> bool {
        self >= Self::V2025_06_18
    }
    /// URL-mode elicitation.
    pub fn has_url_elicitation(self) -> bool {
        self >= Self::V2025_11_25
    }
    /// `resource_link` content, `title`, completion `context`.
    pub fn has_resource_links(self) -> bool {
        self >= Self::V2025_06_18
    }
    /// `MCP-Protocol-Version` required on every HTTP request after initialization.
    pub fn requires_version_header(self) -> bool {
        self >= Self::V2025_06_18
    }
    /// Icons and `Implementation.description` / `websiteUrl`.
    pub fn has_icons(self) -> bool {
        self >= Self::V2025_11_25
    }
    /// `tools` and `toolChoice` in sampling requests.
    pub fn has_sampling_tools(self) -> bool {
        self >= Self::V2025_11_25
    }
    /// Experimental tasks in the core protocol (2025-11-25 only; an extension later).
    pub fn has_core_tasks(self) -> bool {
        self == Self::V2025_11_25
    }
    /// `ping` exists (removed in 2026-07-28).
    pub fn has_ping(self) -> bool {
        self.is_session_era()
    }
    /// `logging/setLevel` exists (removed in 2026-07-28).
    pub fn has_set_level(self) -> bool {
        self.is_session_era()
    }
    /// Server-to-client JSON-RPC requests exist (removed in 2026-07-28, replaced by MRTR).
    pub fn has_server_requests(self) -> bool {
        self.is_session_era()
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown protocol version {s:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_round_trip_and_order_by_date() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
        }
        assert!(ProtocolVersion::V2024_11_05 < ProtocolVersion::V2026_07_28);
        assert_eq!(ProtocolVersion::parse("2099-01-01"), None);
    }

    #[test]
    fn feature_predicates_follow_the_digest_matrix() {
        use ProtocolVersion as V;
        assert!(V::V2025_03_26.has_batching());
        assert!(!V::V2025_06_18.has_batching() && !V::V2024_11_05.has_batching());
        assert!(V::V2025_06_18.has_elicitation() && !V::V2025_03_26.has_elicitation());
        assert!(V::V2025_11_25.has_url_elicitation() && !V::V2025_06_18.has_url_elicitation());
        assert!(!V::V2026_07_28.has_ping() && V::V2024_11_05.has_ping());
        assert!(V::V2026_07_28.is_stateless() && !V::V2025_11_25.is_stateless());
    }
}
