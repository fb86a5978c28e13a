//! Asking the client for something while serving its request, in either era. The door is
//! the handler's context ([`PeerApi`](crate::api::PeerApi) on
//! [`RequestContext`](crate::runtime::RequestContext): `create_message`, `elicit`,
//! `list_roots`); what happens behind it depends on the call's era:
//!
//! - **Session era** (2024-11-05 … 2025-11-25): the session sends the client a request
//!   *related to* the call (over Streamable HTTP it travels on the call's own stream), and
//!   the handler awaits its answer.
//! - **2026-07-28**: servers send no requests. Each call of `tools/call`, `prompts/get` or
//!   `resources/read` has a [`Round`]: an ask whose answer the call carries (in its
//!   `inputResponses`, or from earlier rounds in its sealed `requestState`) is answered at
//!   once; any other ask is recorded and fails with
//!   [`UsageError::InputRequired`](crate::error::UsageError::InputRequired), which the
//!   handler returns with `?`. The call is then answered with an input-required result
//!   naming every ask recorded, and the retry runs the handler again from the start.
//!
//! So a handler's effects before its asks run again on every round; asks are keyed by
//! their order in the run (`ask-1`, `ask-2`, …) unless the handler names them
//! (`ctx.keyed("user_name").elicit(..)`), and the same answers give the same keys.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use serde_json::{json, Value};

use crate::api::CallError;
use crate::error::UsageError;
use crate::jsonrpc::RawJson;
use crate::schema::{ClientCapabilities, ProtocolVersion};

/// One run of a 2026-07-28 handler that may ask the client: the answers its call carries
/// and what the run asked. Shared by the handler's context and the session, which reads it
/// when the handler answers.
#[derive(Debug)]
pub struct Round {
    answers: BTreeMap<String, Value>,
    client: ClientCapabilities,
    resumed: bool,
    asked: Mutex<Asked>,
}

#[derive(Debug, Default)]
struct Asked {
    count: u32,
    /// `{method, params}` by key: what the input-required result asks for.
    requests: BTreeMap<String, Value>,
    /// Answers the run read, carried into the next round's state.
    used: BTreeMap<String, Value>,
    /// Capabilities the run needed and the client did not declare.
    missing: Vec<&'static str>,
}

/// How a run ended, as far as its asks go.
#[derive(Debug, PartialEq)]
pub(crate) enum RoundEnd {
    /// Nothing is missing: the handler's answer stands.
    Complete,
    /// Ask the client for `requests`; carry `used` into the state.
    InputRequired { requests: BTreeMap<String, Value>, used: BTreeMap<String, Value> },
    /// The run needed these capabilities of a client that lacks them.
    MissingCapabilities(Vec<&'static str>),
}

/// Two rounds are equal when they carry the same answers (what was asked is a run's).
impl PartialEq for Round {
    fn eq(&self, other: &Self) -> bool {
        self.answers == other.answers && self.resumed == other.resumed
    }
}

impl Round {
    /// A run whose call carries `answers` (`resumed`: some came from a verified state), for
    /// a client that declared `client`.
    pub(crate) fn new(
        answers: BTreeMap<String, Value>,
        client: ClientCapabilities,
        resumed: bool,
    ) -> Self {
        Self { answers, client, resumed, asked: Mutex::default() }
    }

    /// True when the call continues earlier rounds: it carried a `requestState` this
    /// server sealed, which was checked.
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    fn lock(&self) -> MutexGuard<'_, Asked> {
        // Nothing under the lock panics: go on with the state.
        self.asked.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Asks the client `method` with `params` under `key` (or the run's next `ask-N`): the
    /// answer the call carries, if `valid` accepts it; otherwise the ask is recorded and
    /// the run must end ([`UsageError::InputRequired`]).
    pub fn ask(
        &self,
        key: Option<&str>,
        method: &str,
        params: &RawJson,
        valid: impl Fn(&Value) -> bool,
    ) -> Result<RawJson, CallError> {
        let mut asked = self.lock();
        asked.count += 1;
        let key = key.map_or_else(|| format!("ask-{}", asked.count), str::to_owned);
        let (capability, declared) = match method {
            "elicitation/create" => ("elicitation", self.client.elicitation.is_some()),
            "sampling/createMessage" => ("sampling", self.client.sampling.is_some()),
            "roots/list" => ("roots", self.client.roots.is_some()),
            _ => {
                let version = ProtocolVersion::V2026_07_28.as_str();
                let method = method.to_owned();
                return Err(CallError::Usage(UsageError::MethodNotInVersion { method, version }));
            }
        };
        if !declared {
            asked.missing.push(capability);
            let method = method.to_owned();
            return Err(CallError::Usage(UsageError::CapabilityNotNegotiated {
                method,
                capability,
            }));
        }
        if let Some(answer) = self.answers.get(&key).filter(|a| valid(a)) {
            asked.used.insert(key, answer.clone());
            return Ok(RawJson::from(answer.clone()));
        }
        let params = params.parse::<Value>().unwrap_or_else(|_| json!({}));
        asked.requests.insert(key.clone(), json!({ "method": method, "params": params }));
        Err(CallError::Usage(UsageError::InputRequired { key }))
    }

    /// How the run ended; takes what it asked.
    pub(crate) fn end(&self) -> RoundEnd {
        let mut asked = self.lock();
        if !asked.requests.is_empty() {
            let requests = std::mem::take(&mut asked.requests);
            return RoundEnd::InputRequired { requests, used: std::mem::take(&mut asked.used) };
        }
        if !asked.missing.is_empty() {
            return RoundEnd::MissingCapabilities(std::mem::take(&mut asked.missing));
        }
        RoundEnd::Complete
    }
}

#[cfg(test)]
mod tests;
