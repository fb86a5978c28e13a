//! Protocol revisions and the features each one has.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use ProtocolVersion as V;

/// A revision of the MCP specification, ordered oldest first.
///
/// The feature predicates are the branch points between revisions
/// (docs/design-notes.md#revisions-as-feature-predicates): code asks
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
    /// 2026-07-28: the stateless era (no `initialize`). Known, parsed and described by the
    /// predicates, but never offered in an `initialize` handshake: it is not in
    /// [`SESSION_ERA`](Self::SESSION_ERA).
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
        Era::SESSION.contains(self)
    }
    /// Stateless: protocol data in every request's `_meta`, no handshake (2026-07-28+).
    pub fn is_stateless(self) -> bool {
        Era::STATELESS.contains(self)
    }
    /// JSON-RPC batches may be sent and must be accepted (2025-03-26 only).
    pub fn has_batching(self) -> bool {
        Era::BATCHING.contains(self)
    }
    /// Tool annotations, audio content, progress `message`, `completions` capability.
    pub fn has_tool_annotations(self) -> bool {
        Era::TOOL_ANNOTATIONS.contains(self)
    }
    /// `completion/complete` is gated on the server's `completions` capability (2025-03-26+;
    /// 2024-11-05 had the method but no capability to declare it).
    pub fn has_completions_capability(self) -> bool {
        Era::TOOL_ANNOTATIONS.contains(self)
    }
    /// `outputSchema` and `structuredContent` on tools.
    pub fn has_structured_output(self) -> bool {
        Era::STRUCTURED_OUTPUT.contains(self)
    }
    /// `elicitation/create` (form mode).
    pub fn has_elicitation(self) -> bool {
        Era::ELICITATION.contains(self)
    }
    /// URL-mode elicitation.
    pub fn has_url_elicitation(self) -> bool {
        Era::URL_ELICITATION.contains(self)
    }
    /// `notifications/elicitation/complete` and `elicitationId` (2025-11-25 only).
    pub fn has_elicitation_complete(self) -> bool {
        Era::ELICITATION_COMPLETE.contains(self)
    }
    /// `resource_link` content, `title`, completion `context`.
    pub fn has_resource_links(self) -> bool {
        Era::RESOURCE_LINKS.contains(self)
    }
    /// `MCP-Protocol-Version` required on every HTTP request after initialization.
    pub fn requires_version_header(self) -> bool {
        Era::VERSION_HEADER.contains(self)
    }
    /// SSE answers start with a priming event (an id and empty data) and may be polled:
    /// the server may drop the connection after `retry` and the client resumes.
    pub fn has_sse_priming(self) -> bool {
        Era::SSE_PRIMING.contains(self)
    }
    /// Icons and `Implementation.description` / `websiteUrl`.
    pub fn has_icons(self) -> bool {
        Era::ICONS.contains(self)
    }
    /// `tools` and `toolChoice` in sampling requests.
    pub fn has_sampling_tools(self) -> bool {
        Era::SAMPLING_TOOLS.contains(self)
    }
    /// Experimental tasks in the core protocol (2025-11-25 only; an extension later).
    pub fn has_core_tasks(self) -> bool {
        Era::CORE_TASKS.contains(self)
    }
    /// `ping` exists (removed in 2026-07-28).
    pub fn has_ping(self) -> bool {
        Era::PING.contains(self)
    }
    /// `logging/setLevel` exists (removed in 2026-07-28).
    pub fn has_set_level(self) -> bool {
        Era::SET_LEVEL.contains(self)
    }
    /// `resources/subscribe` and `resources/unsubscribe` exist (2026-07-28 replaces them with
    /// `subscriptions/listen`).
    pub fn has_resource_subscribe(self) -> bool {
        Era::RESOURCE_SUBSCRIBE.contains(self)
    }
    /// `notifications/roots/list_changed` exists (removed in 2026-07-28).
    pub fn has_roots_list_changed(self) -> bool {
        Era::ROOTS_LIST_CHANGED.contains(self)
    }
    /// Server-to-client JSON-RPC requests exist (removed in 2026-07-28, replaced by MRTR).
    pub fn has_server_requests(self) -> bool {
        Era::SERVER_REQUESTS.contains(self)
    }
    /// `server/discover` and `subscriptions/listen` exist (2026-07-28+).
    pub fn has_discover(self) -> bool {
        Era::STATELESS.contains(self)
    }
}

/// The revisions a feature or method spans: from `since` through `until`, both inclusive;
/// `until: None` means it is still in the newest revision.
///
/// The named eras below are the one source of the feature matrix
/// (docs/design-notes.md#revisions-as-feature-predicates): the
/// predicates on [`ProtocolVersion`] and the method rule table both read them, and no other
/// code compares revisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Era {
    /// The first revision that has it.
    pub(crate) since: ProtocolVersion,
    /// The last revision that has it; `None` while no revision has removed it.
    pub(crate) until: Option<ProtocolVersion>,
}

impl Era {
    /// Every revision (the baseline methods).
    pub(crate) const ALL: Self = Self::starting(V::V2024_11_05);
    /// The `initialize` handshake: 2024-11-05 through 2025-11-25.
    pub(crate) const SESSION: Self = Self::between(V::V2024_11_05, V::V2025_11_25);
    /// No handshake, `_meta` on every request: 2026-07-28 on.
    pub(crate) const STATELESS: Self = Self::starting(V::V2026_07_28);
    /// Batches: 2025-03-26 only.
    pub(crate) const BATCHING: Self = Self::between(V::V2025_03_26, V::V2025_03_26);
    /// Tool annotations, audio, progress `message`, the `completions` capability.
    pub(crate) const TOOL_ANNOTATIONS: Self = Self::starting(V::V2025_03_26);
    /// `outputSchema` and `structuredContent`.
    pub(crate) const STRUCTURED_OUTPUT: Self = Self::starting(V::V2025_06_18);
    /// Elicitation (form mode); in 2026-07-28 it travels inside input-required results.
    pub(crate) const ELICITATION: Self = Self::starting(V::V2025_06_18);
    /// URL-mode elicitation.
    pub(crate) const URL_ELICITATION: Self = Self::starting(V::V2025_11_25);
    /// `notifications/elicitation/complete`: 2025-11-25 only.
    pub(crate) const ELICITATION_COMPLETE: Self = Self::between(V::V2025_11_25, V::V2025_11_25);
    /// `resource_link` content, `title`, completion `context`.
    pub(crate) const RESOURCE_LINKS: Self = Self::starting(V::V2025_06_18);
    /// The `MCP-Protocol-Version` header after initialization.
    pub(crate) const VERSION_HEADER: Self = Self::starting(V::V2025_06_18);
    /// Icons and the richer `Implementation`.
    pub(crate) const ICONS: Self = Self::starting(V::V2025_11_25);
    /// Digest §5.2.2 item 6.
    pub(crate) const SSE_PRIMING: Self = Self::starting(V::V2025_11_25);
    /// Sampling with tools.
    pub(crate) const SAMPLING_TOOLS: Self = Self::starting(V::V2025_11_25);
    /// Tasks in the core protocol: 2025-11-25 only (an extension in 2026-07-28).
    pub(crate) const CORE_TASKS: Self = Self::between(V::V2025_11_25, V::V2025_11_25);
    /// `ping`: removed in 2026-07-28.
    pub(crate) const PING: Self = Self::SESSION;
    /// `logging/setLevel`: removed in 2026-07-28.
    pub(crate) const SET_LEVEL: Self = Self::SESSION;
    /// `resources/subscribe` and `unsubscribe`: replaced in 2026-07-28.
    pub(crate) const RESOURCE_SUBSCRIBE: Self = Self::SESSION;
    /// `notifications/roots/list_changed`: removed in 2026-07-28.
    pub(crate) const ROOTS_LIST_CHANGED: Self = Self::SESSION;
    /// JSON-RPC requests from server to client: replaced by MRTR in 2026-07-28.
    pub(crate) const SERVER_REQUESTS: Self = Self::SESSION;

    /// From `since` on, with no end yet.
    pub(crate) const fn starting(since: ProtocolVersion) -> Self {
        Self { since, until: None }
    }

    /// From `since` through `until`.
    pub(crate) const fn between(since: ProtocolVersion, until: ProtocolVersion) -> Self {
        Self { since, until: Some(until) }
    }

    /// The revisions in both eras: the later start and the earlier end. Ends before it starts
    /// (contains nothing) when the two do not overlap.
    pub(crate) const fn and(self, other: Self) -> Self {
        let since = if (other.since as u8) > (self.since as u8) { other.since } else { self.since };
        let until = match (self.until, other.until) {
            (None, until) | (until, None) => until,
            (Some(a), Some(b)) => Some(if (b as u8) < (a as u8) { b } else { a }),
        };
        Self { since, until }
    }

    /// True when `version` is in this era. The only place revisions are compared.
    pub(crate) fn contains(self, version: ProtocolVersion) -> bool {
        self.since <= version && self.until.is_none_or(|until| version <= until)
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

    /// Each predicate against its row of the revisions' changelogs, for every revision (columns
    /// 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28).
    #[test]
    fn every_predicate_matches_its_row_of_the_matrix() {
        type Row = (&'static str, fn(ProtocolVersion) -> bool, [u8; 5]);
        let rows: [Row; 21] = [
            ("is_session_era", ProtocolVersion::is_session_era, [1, 1, 1, 1, 0]),
            ("is_stateless", ProtocolVersion::is_stateless, [0, 0, 0, 0, 1]),
            ("has_batching", ProtocolVersion::has_batching, [0, 1, 0, 0, 0]),
            ("has_tool_annotations", ProtocolVersion::has_tool_annotations, [0, 1, 1, 1, 1]),
            ("has_completions_cap", ProtocolVersion::has_completions_capability, [0, 1, 1, 1, 1]),
            ("has_structured_output", ProtocolVersion::has_structured_output, [0, 0, 1, 1, 1]),
            ("has_elicitation", ProtocolVersion::has_elicitation, [0, 0, 1, 1, 1]),
            ("has_url_elicitation", ProtocolVersion::has_url_elicitation, [0, 0, 0, 1, 1]),
            ("has_elicitation_done", ProtocolVersion::has_elicitation_complete, [0, 0, 0, 1, 0]),
            ("has_resource_links", ProtocolVersion::has_resource_links, [0, 0, 1, 1, 1]),
            ("version_header", ProtocolVersion::requires_version_header, [0, 0, 1, 1, 1]),
            ("has_icons", ProtocolVersion::has_icons, [0, 0, 0, 1, 1]),
            ("has_sampling_tools", ProtocolVersion::has_sampling_tools, [0, 0, 0, 1, 1]),
            ("has_core_tasks", ProtocolVersion::has_core_tasks, [0, 0, 0, 1, 0]),
            ("has_ping", ProtocolVersion::has_ping, [1, 1, 1, 1, 0]),
            ("has_set_level", ProtocolVersion::has_set_level, [1, 1, 1, 1, 0]),
            ("has_resource_subscribe", ProtocolVersion::has_resource_subscribe, [1, 1, 1, 1, 0]),
            ("has_roots_list_changed", ProtocolVersion::has_roots_list_changed, [1, 1, 1, 1, 0]),
            ("has_server_requests", ProtocolVersion::has_server_requests, [1, 1, 1, 1, 0]),
            ("has_discover", ProtocolVersion::has_discover, [0, 0, 0, 0, 1]),
            ("2026 not negotiated", |v| ProtocolVersion::SESSION_ERA.contains(&v), [1, 1, 1, 1, 0]),
        ];
        for (name, predicate, expected) in rows {
            for (v, want) in ProtocolVersion::ALL.into_iter().zip(expected) {
                assert_eq!(predicate(v), want == 1, "{name} in {v}");
            }
        }
    }

    #[test]
    fn eras_intersect_and_empty_intersections_contain_nothing() {
        use ProtocolVersion as V;
        let both = Era::ELICITATION.and(Era::SERVER_REQUESTS);
        assert_eq!(both, Era::between(V::V2025_06_18, V::V2025_11_25));
        assert_eq!(Era::ALL.and(Era::STATELESS), Era::STATELESS);
        let none = Era::BATCHING.and(Era::STATELESS);
        assert!(ProtocolVersion::ALL.into_iter().all(|v| !none.contains(v)));
    }
}
