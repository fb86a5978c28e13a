//! A fleet: routers in several processes sharing one store (Redis, say), so that any of
//! them may serve any request of a session-era session: `initialize` on one, calls on
//! another, a stream resumed on a third, `DELETE` on a fourth. (2026-07-28 requests stand
//! alone and need none of this.)
//!
//! What is shared, and how (the router does the choreography; a [`Fleet`] only stores and
//! carries):
//!
//! - **What a session is** ([`SavedSession`]: revision, client info and capabilities, log
//!   level, subscriptions, whether `initialized` came), saved whenever a client message
//!   changes it and loaded (its time to live refreshed) by every request for it, so each
//!   process serves with the newest state and a session ended anywhere is 404 everywhere.
//!   Keys are [`FleetKey`]s, digests of session ids: a store never holds an id in clear.
//! - **Requests to the client**: ids are `member << 32 | n`, so a response POSTed to any
//!   process is carried ([`FleetMessage::FromClient`]) to the member whose session sent it.
//!   A `notifications/cancelled` goes to every member (the request may run on any).
//! - **Answer streams**: numbered `member << 32 | n`; their events go to the store, so a
//!   client that lost one resumes it (`Last-Event-ID`) on any process and gets what was
//!   stored, then resumes again for what comes later (the stream's priming told it when).
//! - **The standalone (GET) stream** is one stream per session for the whole fleet, number
//!   [`STANDALONE_STREAM`]: every message for it, from any process, is appended to the store
//!   first ([`Fleet::append_standalone`], which wakes the members), and the process carrying
//!   the GET writes what the store holds. A process that dies while carrying it loses
//!   nothing: the client resumes on another, which writes from the store.
//! - **Broadcasts** (logs, resource updates, list changes) made on one process reach every
//!   session of the fleet, held anywhere or nowhere, through their standalone streams. A
//!   registry change changes the registry of the process it is made on.
//!
//! The router calls the store inline, while it handles the input that needs it: a store
//! that does not answer fails that request with 503 ([`Rejection::StoreUnavailable`]), which
//! a client may retry; nothing is half-done for it.
//!
//! [`Rejection::StoreUnavailable`]: crate::error::Rejection::StoreUnavailable

mod events;
mod memory;
pub(super) mod router;

use std::collections::BTreeSet;
use std::fmt;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use events::FleetEvents;
pub use memory::MemoryFleet;

use super::SessionId;
use crate::schema::LoggingLevel;
use crate::server::SessionInfo;

/// The number of every fleet session's standalone (GET) stream. Answer streams are numbered
/// `member << 32 | n` (`member` at least 1), so they never take it.
pub const STANDALONE_STREAM: u64 = 1;

/// How a store names a session: the SHA-256 of its id, in hex. A store that leaks keys
/// leaks no session id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FleetKey(String);

impl FleetKey {
    /// The key of `id`.
    pub fn of(id: &SessionId) -> Self {
        let digest = Sha256::digest(id.as_str().as_bytes());
        Self(crate::hex::lower_hex(&digest))
    }

    /// The key as text (64 hex digits).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A key read back from a store.
    pub fn from_stored(text: &str) -> Self {
        Self(text.to_owned())
    }
}

impl fmt::Display for FleetKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a session is, as every process of a fleet needs it to serve the session's requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedSession {
    /// `notifications/initialized` came (else only it, pings and cancellations are served).
    pub ready: bool,
    /// The revision and both sides' info and capabilities.
    pub info: SessionInfo,
    /// The level the client set (`logging/setLevel`), if any.
    pub log_level: Option<LoggingLevel>,
    /// The resources it subscribed to.
    pub subscriptions: BTreeSet<String>,
    /// The OAuth subject that opened it: the only one it answers.
    pub subject: Option<String>,
}

/// What one process of a fleet tells another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FleetMessage {
    /// A message a client POSTed to another process: a response to a request this member
    /// sent, or a cancellation of a request it may be serving.
    FromClient {
        /// The session.
        session: FleetKey,
        /// The JSON-RPC message, as the client sent it.
        json: String,
    },
    /// New messages wait on the session's standalone stream: its carrier writes them.
    Standalone {
        /// The session.
        session: FleetKey,
    },
    /// The session ended (`DELETE`): every member drops its copy and closes its streams.
    Ended {
        /// The session.
        session: FleetKey,
    },
}

impl FleetMessage {
    /// The session the message is about.
    pub fn session(&self) -> &FleetKey {
        match self {
            Self::FromClient { session, .. }
            | Self::Standalone { session }
            | Self::Ended { session } => session,
        }
    }
}

/// A store the fleet could not use: the request that needed it fails with 503.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FleetError(pub String);

impl fmt::Display for FleetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FleetError {}

/// The store and the carrier a fleet shares. Calls are synchronous and made while the router
/// handles an input: an implementation answers in one round trip where it can. Messages a
/// member is sent reach its router as [`Broadcast::Fleet`](crate::server::Broadcast::Fleet)
/// through the server's handle.
pub trait Fleet: fmt::Debug + Send + Sync {
    /// This process's number in the fleet: unique among the members, from 1 to 2^20 - 1.
    fn member(&self) -> u32;
    /// Saves what a session is (and refreshes its time to live).
    fn save(&self, key: &FleetKey, session: &SavedSession) -> Result<(), FleetError>;
    /// What a session is, its time to live refreshed; `None` once it ended or expired.
    fn load(&self, key: &FleetKey) -> Result<Option<SavedSession>, FleetError>;
    /// Ends a session: forgets it and its events, and tells every member
    /// ([`FleetMessage::Ended`]).
    fn remove(&self, key: &FleetKey) -> Result<(), FleetError>;
    /// Every live session, for broadcasts.
    fn sessions(&self) -> Result<Vec<(FleetKey, SavedSession)>, FleetError>;
    /// Carries `message` to member `to`, or to every member (itself included) when `None`.
    fn send(&self, to: Option<u32>, message: &FleetMessage) -> Result<(), FleetError>;
    /// Keeps event `seq` of answer stream `stream` (bounded; the oldest go first).
    fn store_event(
        &self,
        key: &FleetKey,
        stream: u64,
        seq: u64,
        event: &Bytes,
    ) -> Result<(), FleetError>;
    /// The events of answer stream `stream` after `seq`, oldest first.
    fn replay(&self, key: &FleetKey, stream: u64, after: u64) -> Result<Vec<Bytes>, FleetError>;
    /// Answer stream `stream` was written whole a while ago.
    fn forget_stream(&self, key: &FleetKey, stream: u64) -> Result<(), FleetError>;
    /// Appends a message to the session's standalone stream, numbering it (from 1), and
    /// wakes the members ([`FleetMessage::Standalone`]). Returns its number.
    fn append_standalone(&self, key: &FleetKey, json: &[u8]) -> Result<u64, FleetError>;
    /// The standalone messages after number `after`, oldest first (`None`: after the last
    /// one [`delivered`](Self::delivered), for a GET stream opened afresh), and the number
    /// they follow.
    fn standalone_after(
        &self,
        key: &FleetKey,
        after: Option<u64>,
    ) -> Result<(u64, Vec<(u64, Bytes)>), FleetError>;
    /// The standalone messages up to `seq` were written to a GET stream.
    fn delivered(&self, key: &FleetKey, seq: u64) -> Result<(), FleetError>;
}

/// The id base of requests a member's sessions send, so that ids never collide across the
/// fleet and a response names the member that waits for it.
pub(crate) fn request_id_base(member: u32) -> i64 {
    i64::from(member) << 32
}

/// The member a response's id belongs to (`None`: not a fleet id).
pub(crate) fn member_of(id: &crate::jsonrpc::RequestId) -> Option<u32> {
    match id {
        crate::jsonrpc::RequestId::Number(n) if *n >> 32 > 0 => u32::try_from(*n >> 32).ok(),
        _ => None,
    }
}
