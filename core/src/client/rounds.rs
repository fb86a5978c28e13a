//! 2026-07-28 input-required rounds, client side. A `tools/call`, `prompts/get` or
//! `resources/read` may be answered with `resultType: "input_required"`: the server asks
//! for sampling, elicitation or roots first. The client turns each input request into the
//! [`Event::Request`] the session era has (under a local id the app answers with
//! [`Client::respond`](super::Client::respond), as always), and once every one is answered
//! retries the call with a new JSON-RPC id, carrying the answers in `inputResponses` and the
//! server's `requestState` byte for byte. The app's call keeps the id it was given: events
//! of a retry are renamed back to it.
//!
//! Bounded: a call's hard cap (its `max_total`, else the config's `max_request_timeout`)
//! counts from its first send across every round, the time the app takes to answer
//! included; past it the call fails [`RequestError::TimedOut`] and its unanswered asks are
//! cancelled. A server may ask for input [`MAX_ROUNDS`] times per call, no more.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Client, Event, ServerRequest};
use crate::error::{CloseReason, RequestError};
use crate::jsonrpc::key_search::Needle;
use crate::jsonrpc::own_ids::OwnIdMap;
use crate::jsonrpc::{codes, ErrorObject, RawJson, RequestId};
use crate::rpc::RequestOptions;
use crate::schema::RESULT_INPUT_REQUIRED;

/// The calls that may come back asking for input, and those that did.
#[derive(Debug, Default)]
pub(super) struct Rounds {
    /// Calls in flight that may be answered with input required, by wire id.
    sent: OwnIdMap<RequestId, Sent>,
    /// Wire ids of retries, to the app's id.
    renamed: OwnIdMap<RequestId, RequestId>,
    /// Calls whose asks the app is answering, by the app's id.
    waiting: OwnIdMap<RequestId, Waiting>,
    /// Local ids of asks, to their call (the app's id) and key.
    asks: OwnIdMap<RequestId, (RequestId, String)>,
    /// Asks whose call ended first, newest last: answering them is allowed and does nothing.
    dropped: std::collections::VecDeque<RequestId>,
    next_ask: u64,
}

/// How many dropped asks are remembered.
const DROPPED_MEMORY: usize = 256;

/// What a retry repeats.
#[derive(Debug)]
struct Sent {
    method: String,
    params: Option<RawJson>,
    opts: RequestOptions,
    /// Times this call was sent again after its stream broke.
    reissued: u8,
    /// Rounds of input this call has answered.
    rounds: u8,
    /// The call's hard cap, from its first send.
    deadline: Instant,
}

/// How many rounds of input one call may ask for.
pub(super) const MAX_ROUNDS: u8 = 32;

/// How many times a 2026-07-28 request whose stream broke is sent again.
const MAX_REISSUES: u8 = 2;

#[derive(Debug)]
struct Waiting {
    sent: Sent,
    state: Option<String>,
    answers: Map<String, Value>,
    left: usize,
}

/// The members of an input-required result.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InputRequired {
    result_type: Option<String>,
    #[serde(default)]
    input_requests: BTreeMap<String, AskedFor>,
    request_state: Option<String>,
}

#[derive(Deserialize)]
struct AskedFor {
    method: String,
    params: Option<Box<serde_json::value::RawValue>>,
}

/// The methods whose results may ask for input.
pub(super) fn may_ask(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get" | "resources/read")
}

impl Rounds {
    /// Remembers a 2026-07-28 request sent as `id`, to send it again if its stream breaks
    /// or (a call) it comes back asking for input.
    pub(super) fn sent(
        &mut self,
        id: &RequestId,
        method: &str,
        params: Option<RawJson>,
        opts: &RequestOptions,
        deadline: Instant,
    ) {
        let sent = Sent {
            method: method.to_owned(),
            params,
            opts: opts.clone(),
            reissued: 0,
            rounds: 0,
            deadline,
        };
        self.sent.insert(id.clone(), sent);
    }

    /// The app's id of the call now in flight as `wire`.
    fn app_id(&self, wire: &RequestId) -> RequestId {
        self.renamed.get(wire).cloned().unwrap_or_else(|| wire.clone())
    }

    /// The id an event of a retry carries for the app (its call's first id).
    pub(super) fn rename(&mut self, event: Event) -> Event {
        if self.sent.is_empty() && self.renamed.is_empty() {
            // The session era, or no call that may ask: nothing to look up.
            return event;
        }
        match event {
            Event::Response { id, result } => {
                self.sent.remove(&id);
                let id = self.renamed.remove(&id).unwrap_or(id);
                Event::Response { id, result }
            }
            Event::Progress { id, progress } => Event::Progress { id: self.app_id(&id), progress },
            other => other,
        }
    }

    /// The wire id the app's call `app` is in flight as, if it is (it may be waiting for the
    /// app's answers instead).
    pub(super) fn wire_of(&self, app: &RequestId) -> Option<RequestId> {
        self.renamed.iter().find(|(_, a)| *a == app).map(|(wire, _)| wire.clone())
    }

    /// Ends a call that was waiting for the app's answers (cancelled, or the session
    /// closed); the local ids of its unanswered asks, which the app should stop answering.
    pub(super) fn drop_waiting(&mut self, app: &RequestId) -> Option<Vec<RequestId>> {
        self.waiting.remove(app)?;
        let asks: Vec<RequestId> =
            self.asks.iter().filter(|(_, (a, _))| a == app).map(|(id, _)| id.clone()).collect();
        for id in &asks {
            self.asks.remove(id);
            if self.dropped.len() == DROPPED_MEMORY {
                self.dropped.pop_front();
            }
            self.dropped.push_back(id.clone());
        }
        Some(asks)
    }

    /// Every call waiting for the app's answers.
    pub(super) fn waiting_calls(&self) -> Vec<RequestId> {
        self.waiting.keys().cloned().collect()
    }

    /// The earliest hard cap of a call waiting for the app's answers.
    pub(super) fn poll_timeout(&self) -> Option<Instant> {
        self.waiting.values().map(|w| w.sent.deadline).min()
    }

    /// True for a local id of an ask, answerable or dropped (answering that does nothing).
    pub(super) fn is_ask(&self, id: &RequestId) -> bool {
        self.asks.contains_key(id) || self.dropped.contains(id)
    }
}

impl Client {
    /// A response to `wire` that asks for input: becomes the app's asks (true), or is none
    /// of this module's business (false: deliver it as it is).
    pub(super) fn input_required(
        &mut self,
        now: Instant,
        wire: &RequestId,
        result: &RawJson,
    ) -> bool {
        if !self.rounds.sent.get(wire).is_some_and(|s| may_ask(&s.method)) {
            return false;
        }
        // Most results are complete: a search for the marker is far cheaper than a parse
        // of a result that may be megabytes long.
        static MARKER: Needle = Needle::new(RESULT_INPUT_REQUIRED);
        if !MARKER.is_in(result.get().as_bytes()) {
            return false;
        }
        let Ok(asked) = result.parse::<InputRequired>() else { return false };
        if asked.result_type.as_deref() != Some(RESULT_INPUT_REQUIRED) {
            return false;
        }
        let mut sent = self.rounds.sent.remove(wire).expect("checked above");
        let app = self.rounds.renamed.remove(wire).unwrap_or_else(|| wire.clone());
        let refused = if asked.input_requests.is_empty() && asked.request_state.is_none() {
            Some("an input-required result with neither inputRequests nor requestState".into())
        } else if sent.rounds >= MAX_ROUNDS {
            Some(format!("the server asked for input more than {MAX_ROUNDS} times for one call"))
        } else {
            None
        };
        if let Some(why) = refused {
            let result = Err(RequestError::InvalidResult(why));
            self.events.push_back(Event::Response { id: app, result });
            return true;
        }
        sent.rounds += 1;
        let mut requests = Vec::new();
        for (key, AskedFor { method, params }) in asked.input_requests {
            let params = params.map(RawJson::from_raw);
            let parsed = ServerRequest::parse(&method, params.as_ref());
            let refused = match &parsed {
                Some(Ok(request)) if self.declares(request) => self.not_offered(request),
                Some(Ok(_)) => Some(format!("this client did not declare what {method} needs")),
                Some(Err(detail)) => Some(format!("invalid {method} input request: {detail}")),
                None => Some(format!("{method} is not an input request this client knows")),
            };
            let request = match (parsed, refused) {
                (Some(Ok(request)), None) => request,
                (_, why) => {
                    let why = why.unwrap_or_default();
                    let why = format!("the server asked for input this client cannot give: {why}");
                    let result = Err(RequestError::InvalidResult(why));
                    self.events.push_back(Event::Response { id: app, result });
                    return true;
                }
            };
            requests.push((key, request));
        }
        let left = requests.len();
        let waiting = Waiting { sent, state: asked.request_state, answers: Map::new(), left };
        self.rounds.waiting.insert(app.clone(), waiting);
        for (key, request) in requests {
            self.rounds.next_ask += 1;
            let local = RequestId::String(format!("zest-input-{}", self.rounds.next_ask));
            self.rounds.asks.insert(local.clone(), (app.clone(), key));
            self.events.push_back(Event::Request { id: local, request });
        }
        if left == 0 {
            // Only a state to echo: the client MAY retry at once, and nothing else would.
            self.retry(now, app);
        }
        true
    }

    /// The app answered ask `local`; once every ask of its call is answered, the call is
    /// retried. An error answer ends the call with that error.
    pub(super) fn answer_ask(
        &mut self,
        now: Instant,
        local: &RequestId,
        result: Result<RawJson, ErrorObject>,
    ) {
        let Some((app, key)) = self.rounds.asks.remove(local) else { return };
        let answer = match result {
            Ok(raw) => raw.to_value().unwrap_or(Value::Null),
            Err(error) => {
                for sibling in self.rounds.drop_waiting(&app).unwrap_or_default() {
                    self.events.push_back(Event::Cancelled { id: sibling });
                }
                // -32602: the input request itself does not fit its method (the handler's
                // decoding found it so): the server's result is at fault, not the app.
                let result = Err(if error.code == codes::INVALID_PARAMS {
                    RequestError::InvalidResult(format!(
                        "the server asked for input this client cannot give: {}",
                        error.message
                    ))
                } else {
                    RequestError::Remote(error)
                });
                self.events.push_back(Event::Response { id: app, result });
                return;
            }
        };
        let Some(waiting) = self.rounds.waiting.get_mut(&app) else { return };
        waiting.answers.insert(key, answer);
        waiting.left -= 1;
        if waiting.left == 0 {
            self.retry(now, app);
        }
    }

    /// The stream of 2026-07-28 request `wire` broke before its answer: the server has
    /// forgotten it (it cannot be resumed), so it is sent again, as it was, under a new id
    /// the app never sees; at most [`MAX_REISSUES`] times. False when it is not sent again
    /// (then it fails as any lost request does).
    pub(super) fn reissue(&mut self, now: Instant, wire: &RequestId) -> bool {
        let Some(mut sent) = self.rounds.sent.remove(wire) else { return false };
        if sent.reissued >= MAX_REISSUES {
            return false;
        }
        let Some(_) = self.endpoint.forget(wire) else { return false };
        sent.reissued += 1;
        let app = self.rounds.renamed.remove(wire).unwrap_or_else(|| wire.clone());
        self.send_for(now, app, sent);
        true
    }

    /// Calls waiting for the app's answers past their hard cap fail `TimedOut`; their
    /// unanswered asks are cancelled.
    pub(super) fn expire_rounds(&mut self, now: Instant) {
        let due: Vec<RequestId> = (self.rounds.waiting.iter())
            .filter(|(_, w)| w.sent.deadline <= now)
            .map(|(app, _)| app.clone())
            .collect();
        for app in due {
            for ask in self.rounds.drop_waiting(&app).unwrap_or_default() {
                self.events.push_back(Event::Cancelled { id: ask });
            }
            self.events.push_back(Event::Response { id: app, result: Err(RequestError::TimedOut) });
        }
    }

    /// Sends `sent` under a new id, on behalf of the app's call `app`, with what is left of
    /// its hard cap; if it cannot go, the call fails with why.
    fn send_for(&mut self, now: Instant, app: RequestId, sent: Sent) {
        let left = sent.deadline.saturating_duration_since(now);
        if left.is_zero() {
            self.events.push_back(Event::Response { id: app, result: Err(RequestError::TimedOut) });
            return;
        }
        let opts = RequestOptions { max_total: Some(left), ..sent.opts.clone() };
        match self.endpoint.request(now, &sent.method, sent.params.clone(), &opts, true, None) {
            Ok(wire) => {
                self.rounds.renamed.insert(wire.clone(), app);
                self.rounds.sent.insert(wire, sent);
            }
            Err(usage) => {
                let why = format!("the call could not be sent again: {usage}");
                let result =
                    Err(RequestError::Remote(ErrorObject::new(codes::INTERNAL_ERROR, why)));
                self.events.push_back(Event::Response { id: app, result });
            }
        }
    }

    /// Sends the call again with a new id, the answers and the state.
    fn retry(&mut self, now: Instant, app: RequestId) {
        let Some(waiting) = self.rounds.waiting.remove(&app) else { return };
        let Waiting { sent, state, answers, .. } = waiting;
        let mut params = match sent.params.as_ref().map(RawJson::to_value) {
            Some(Ok(Value::Object(map))) => map,
            _ => Map::new(),
        };
        params.remove("requestState");
        params.insert("inputResponses".into(), Value::Object(answers));
        if let Some(state) = state {
            params.insert("requestState".into(), Value::String(state));
        }
        // What was sent is what a broken exchange sends again; the next round replaces the
        // answers and the state.
        let params = Some(RawJson::from(Value::Object(params)));
        self.send_for(now, app, Sent { reissued: 0, params, ..sent });
    }

    /// The session ends: calls waiting for the app's answers get their one outcome.
    pub(super) fn close_rounds(&mut self, reason: &CloseReason) {
        for app in self.rounds.waiting_calls() {
            self.rounds.drop_waiting(&app);
            let result = Err(RequestError::Closed(reason.clone()));
            self.events.push_back(Event::Response { id: app, result });
        }
    }

    /// The client declared the capability `request` needs.
    fn declares(&self, request: &ServerRequest) -> bool {
        let caps = &self.config.capabilities;
        match request {
            ServerRequest::CreateMessage(_) => caps.sampling.is_some(),
            ServerRequest::Elicit(_) => caps.elicitation.is_some(),
            ServerRequest::ListRoots(_) => caps.roots.is_some(),
        }
    }
}
