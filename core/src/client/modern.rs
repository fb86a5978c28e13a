//! The client in revision 2026-07-28: no handshake. A client whose
//! [`ClientConfig::protocol_version`](super::ClientConfig::protocol_version) is 2026-07-28
//! asks `server/discover` first; a server that lists the revision is spoken to in it (every
//! request then carries the revision, the client's capabilities and info in its `_meta`),
//! and any other answer (an error, a list without it, a timeout) falls back to `initialize`
//! with the newest session-era revision in `supported_versions`: the era ladder. A client
//! that supports 2026-07-28 alone is pinned to it and closes instead of falling back.

use std::time::Instant;

use serde_json::{Map, Value};

use super::{Client, ClientConfig, Event, Negotiated, Phase, Transport};
use crate::error::{CloseReason, ProtocolViolation, UsageError};
use crate::jsonrpc::key_search::Keys;
use crate::jsonrpc::{codes, ErrorObject, RawJson, RequestId};
use crate::lifecycle::rules::{self, Sender};
use crate::rpc::RequestOptions;
use crate::schema::{
    DiscoverResult, Implementation, LoggingLevel, ProtocolVersion, SetLevelParams,
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY,
};

/// The revision this module speaks.
pub(super) const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;

impl Client {
    /// True while the client speaks 2026-07-28 (after a discovery that chose it).
    pub(super) fn is_modern(&self) -> bool {
        self.version() == Some(MODERN)
    }

    /// Queues `server/discover`, the first step of the era ladder.
    pub(super) fn send_discover(&mut self, now: Instant) -> RequestId {
        let timeout = self.config.init_timeout;
        let opts = RequestOptions::default().timeout(timeout).max_total(timeout);
        let params = self.with_protocol_meta(None);
        self.endpoint
            .request(now, "server/discover", Some(params), &opts, false, None)
            // Invariant: nothing is in flight yet and the params are an object.
            .expect("server/discover always fits")
    }

    /// The answer to `server/discover` (`None`: it timed out): speak 2026-07-28, or step down
    /// the ladder to `initialize`.
    pub(super) fn on_discover(
        &mut self,
        now: Instant,
        outcome: Option<Result<RawJson, ErrorObject>>,
    ) {
        if let Some(Err(error)) = &outcome {
            // -32022 naming 2026-07-28 among the supported: the refusal was not about the
            // revision we speak (a server may refuse a first choice to test us): ask again,
            // once.
            let supported = error.data.as_ref().and_then(|d| d.get("supported"));
            let listed = supported.and_then(Value::as_array).is_some_and(|versions| {
                versions.iter().any(|v| v.as_str() == Some(MODERN.as_str()))
            });
            if error.code == codes::UNSUPPORTED_PROTOCOL_VERSION && listed && !self.asked_again {
                self.asked_again = true;
                let discover = self.send_discover(now);
                self.phase =
                    Phase::AwaitingInitResult { init: discover, again: false, discover: true };
                return;
            }
        }
        let discovered = match outcome {
            Some(Ok(raw)) => match raw.parse::<DiscoverResult>() {
                Ok(result) => Some(result),
                Err(detail) => {
                    self.violation(ProtocolViolation::InvalidInitializeResult(detail));
                    None
                }
            },
            // A session-era server refuses a request before `initialize`, or knows no such
            // method: either way it is not modern.
            Some(Err(_)) | None => None,
        };
        let modern = discovered
            .filter(|d| d.supported_versions.iter().any(|v| v == MODERN.as_str()))
            .filter(|_| self.config.supported_versions.contains(&MODERN));
        if let Some(result) = modern {
            let server_info = result
                .meta
                .as_ref()
                .and_then(|m| m.get(SERVER_INFO_KEY))
                .and_then(|info| serde_json::from_value(info.clone()).ok())
                .unwrap_or_else(|| Implementation::new("unnamed-server", "0"));
            let negotiated = Box::new(Negotiated {
                protocol_version: MODERN,
                server_info,
                capabilities: result.capabilities,
                instructions: result.instructions,
            });
            self.phase = Phase::Ready(negotiated.clone());
            self.ready_and_listen(now, negotiated);
            return;
        }
        if let Transport::Http(http) = &mut self.transport {
            http.set_modern(false);
        }
        let fallback =
            self.config.supported_versions.iter().copied().filter(|v| v.is_session_era()).max();
        let Some(version) = fallback else {
            let why = "the server does not speak 2026-07-28, the only revision configured".into();
            return self.close_with(CloseReason::InitializeInvalid(why));
        };
        self.config.protocol_version = version;
        let init = self.send_initialize(now);
        self.phase = Phase::AwaitingInitResult { init, again: false, discover: false };
    }

    /// Refuses a method 2026-07-28 does not have (`ping`, `logging/setLevel`,
    /// `resources/subscribe`, …): the caller learns it before anything is sent.
    pub(super) fn check_modern_method(&self, method: &str) -> Result<(), UsageError> {
        if rules::exists(MODERN, method, Sender::Client) {
            return Ok(());
        }
        Err(UsageError::MethodNotInVersion { method: method.to_owned(), version: MODERN.as_str() })
    }

    /// `logging/setLevel` in 2026-07-28, which has no such request: the level is kept and
    /// goes in the `_meta` of every later request, and the call succeeds at once.
    pub(super) fn keep_log_level(
        &mut self,
        params: Option<&RawJson>,
    ) -> Result<RequestId, UsageError> {
        let params = params.ok_or(UsageError::ParamsNotAnObject)?;
        let level = params.parse::<SetLevelParams>().map_err(|_| UsageError::ParamsNotAnObject)?;
        self.log_level = Some(level.level);
        self.meta_member = None;
        let id = self.endpoint.outstanding.unsent_id();
        let result = Ok(RawJson::empty_object());
        self.events.push_back(Event::Response { id: id.clone(), result });
        Ok(id)
    }

    /// `params` with the protocol members of a 2026-07-28 request in their `_meta` (kept
    /// where the caller set them already).
    pub(super) fn with_protocol_meta(&mut self, params: Option<RawJson>) -> RawJson {
        let params = params.unwrap_or_else(RawJson::empty_object);
        // Params without a `_meta` of their own (nearly all) get ours spliced into their text:
        // a large argument is copied once, never rebuilt as a `Value`.
        static META: Keys = Keys::new(&["_meta"]);
        if !params.may_name(&META) {
            let member = self.meta_member.get_or_insert_with(|| {
                let meta = Value::Object(protocol_meta(&self.config, self.log_level));
                format!("\"_meta\":{meta}")
            });
            return params.with_leading_text(member);
        }
        let Ok(Value::Object(mut object)) = params.to_value() else { return params };
        let meta = object.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            for (key, value) in protocol_meta(&self.config, self.log_level) {
                meta.entry(key).or_insert(value);
            }
        }
        RawJson::from(Value::Object(object))
    }
}

/// The protocol members of every 2026-07-28 request's `_meta`.
fn protocol_meta(config: &ClientConfig, log_level: Option<LoggingLevel>) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(PROTOCOL_VERSION_KEY.into(), Value::from(MODERN.as_str()));
    meta.insert(CLIENT_CAPABILITIES_KEY.into(), json_of(&config.capabilities));
    meta.insert(CLIENT_INFO_KEY.into(), json_of(&config.client_info));
    if let Some(level) = log_level {
        meta.insert(LOG_LEVEL_KEY.into(), json_of(&level));
    }
    meta
}

fn json_of<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}
