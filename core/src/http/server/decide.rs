//! When a POST that started handlers is answered, and how: one JSON body when its requests
//! are all answered with nothing else to send, an SSE stream otherwise. The router decides
//! as soon as the answer is clear (the last reply arrived, or a related message did), when
//! the runtime says its handlers had their first poll ([`Router::decide_answers`]), or when
//! the POST has waited [`RouterConfig::json_wait`](super::RouterConfig::json_wait).

use std::time::Instant;

use http::{HeaderMap, HeaderValue, StatusCode};

use super::streams::Mode;
use super::{Router, SessionId, SlotKind};
use crate::io::StreamId;
use crate::jsonrpc::codes;
use crate::jsonrpc::key_search::Needle;

/// A POST whose handlers run, not yet answered.
#[derive(Debug)]
pub(super) struct Undecided {
    session: SessionId,
    origin: StreamId,
    /// The head announces the session id (an `initialize` POST).
    announce: bool,
    /// Decided as an SSE stream at this time if nothing decided it before; `None` for a POST
    /// that stands alone (2026-07-28, sessionless), decided only when its answer is clear:
    /// its HTTP status depends on its reply (an error is 400 or 404), which an SSE head sent
    /// before the reply would hide.
    until: Option<Instant>,
}

impl<H: Clone> Router<H> {
    /// Decides how the POSTs that started handlers are answered. Call it once the handlers
    /// the drained outputs asked for have had their first poll: a POST whose requests are all
    /// answered by then, with nothing else to send, gets one JSON body; the others an SSE
    /// stream. A runtime whose handlers run elsewhere (threads) does not call it: each POST
    /// is decided when its answer is clear or after
    /// [`json_wait`](super::RouterConfig::json_wait). A POST that stands alone (2026-07-28,
    /// sessionless) is decided only when its answer is clear, whatever the runtime. Drain
    /// [`poll_output`](Self::poll_output) after.
    pub fn decide_answers(&mut self) {
        let waiting = take_where(&mut self.undecided, |u| u.until.is_some());
        self.settle_all(waiting);
    }

    fn settle_all(&mut self, picked: Vec<Undecided>) {
        for u in picked {
            self.settle(&u.session, u.origin, u.announce);
        }
    }

    /// Leaves the answer to the POST on `origin` undecided while its handlers run.
    pub(super) fn hold_answer(
        &mut self,
        now: Instant,
        session: SessionId,
        origin: StreamId,
        announce: bool,
    ) {
        let alone = self.sessions.get(&session).is_some_and(|s| s.kind == SlotKind::Ephemeral);
        let until = (!alone).then(|| now + self.config.json_wait);
        self.undecided.push(Undecided { session, origin, announce, until });
    }

    /// Decides the answers of `session` that are clear now: every request answered, or a
    /// message other than a reply to send.
    pub(super) fn decide_clear(&mut self, session: &SessionId) {
        let Some(slot) = self.sessions.get(session) else { return };
        let clear = take_where(&mut self.undecided, |u| {
            u.session == *session && slot.answers.get(&u.origin).is_some_and(|a| a.is_clear())
        });
        self.settle_all(clear);
    }

    /// Decides the answers that have waited until `now`.
    pub(super) fn decide_due(&mut self, now: Instant) {
        let due = take_where(&mut self.undecided, |u| u.until.is_some_and(|t| t <= now));
        self.settle_all(due);
    }

    /// Decides every answer of `session` (it ends: they end as streams, not refused).
    pub(super) fn decide_all_of(&mut self, session: &SessionId) {
        let mine = take_where(&mut self.undecided, |u| u.session == *session);
        self.settle_all(mine);
    }

    /// Forgets the undecided answer carried by `origin` (its client went away).
    pub(super) fn forget_answer(&mut self, origin: StreamId) {
        self.undecided.retain(|u| u.origin != origin);
    }

    /// When the first undecided answer stops waiting.
    pub(super) fn next_decision(&self) -> Option<Instant> {
        self.undecided.iter().filter_map(|u| u.until).min()
    }

    /// Decides how the answer to the POST on `origin` goes out, now that the session has
    /// handled everything in it that needs no app code.
    pub(super) fn settle(&mut self, id: &SessionId, origin: StreamId, announce: bool) {
        let Some(slot) = self.sessions.get_mut(id) else { return };
        let primes = slot.primes();
        let next_stream = slot.next_stream;
        let Some(answer) = slot.answers.get_mut(&origin) else { return };
        let Mode::Undecided { held } = &mut answer.mode else { return };
        let held = std::mem::take(held);
        let related = held.iter().any(|(_, reply)| !reply);
        // A 2026-07-28 request (or a sessionless POST): no session, no GET stream.
        let alone = slot.kind == SlotKind::Ephemeral;
        let mut headers = HeaderMap::new();
        if announce {
            if let Ok(value) = HeaderValue::from_str(id.as_str()) {
                headers.insert("mcp-session-id", value);
            }
        }
        if !answer.had_requests && held.is_empty() {
            slot.answers.remove(&origin);
            self.exchanges.remove(&origin);
            self.wire.respond(origin, StatusCode::ACCEPTED, headers);
            self.wire.close(origin);
        } else if !answer.had_requests {
            // Only notifications or responses, and the session refused some: 400 and why.
            slot.answers.remove(&origin);
            self.exchanges.remove(&origin);
            self.wire.json(origin, StatusCode::BAD_REQUEST, headers, join(replies(held)));
        } else if answer.waiting.is_empty() && !related && !held.is_empty() {
            slot.answers.remove(&origin);
            self.exchanges.remove(&origin);
            let body = join(replies(held));
            let status = if alone { reply_status(&body) } else { StatusCode::OK };
            self.wire.json(origin, status, headers, body);
        } else if self.config.json_response && !alone {
            // (A request that stands alone has no GET stream for what relates to it: its
            // notifications, a listen's above all, go on its own SSE stream.)
            let (replies, related): (Vec<_>, Vec<_>) = held.into_iter().partition(|(_, r)| *r);
            answer.mode = Mode::Json { held: replies.into_iter().map(|(j, _)| j).collect() };
            answer.pending_head = Some(headers);
            let related: Vec<Vec<u8>> = related.into_iter().map(|(json, _)| json).collect();
            if slot.fleet.is_some() {
                // A fleet session's standalone stream is numbered in the store.
                self.append_standalone(id, related);
            } else {
                for json in related {
                    slot.standalone(id, json, &mut self.wire, self.config.max_backlog);
                }
            }
        } else {
            answer.logical.number = next_stream;
            slot.next_stream += 1;
            self.wire.open_sse(origin, headers);
            if primes {
                answer.logical.prime(&mut self.wire, self.config.retry);
            }
            for (json, _) in held {
                answer.logical.send(id, &json, &mut self.wire);
            }
            answer.mode = Mode::Sse;
        }
        self.complete(id);
    }
}

/// Takes the entries `pick` chooses out of `undecided`.
fn take_where(undecided: &mut Vec<Undecided>, pick: impl Fn(&Undecided) -> bool) -> Vec<Undecided> {
    if !undecided.iter().any(&pick) {
        return Vec::new();
    }
    let (picked, rest) = std::mem::take(undecided).into_iter().partition(pick);
    *undecided = rest;
    picked
}

fn replies(held: Vec<(Vec<u8>, bool)>) -> Vec<Vec<u8>> {
    held.into_iter().filter(|(_, reply)| *reply).map(|(json, _)| json).collect()
}

/// [`codes::MISSING_REQUIRED_CLIENT_CAPABILITY`] as written in JSON.
const MISSING_CAPABILITY_DIGITS: &str = "-32021";

/// The status of a JSON answer: 200, but 400 for a lone 2026-07-28
/// MissingRequiredClientCapabilityError (-32021), as that revision's HTTP transport requires.
pub(super) fn reply_status(body: &[u8]) -> StatusCode {
    #[derive(serde::Deserialize)]
    struct Lone {
        error: Option<Code>,
    }
    #[derive(serde::Deserialize)]
    struct Code {
        code: i64,
    }
    static CODE: Needle = Needle::new(MISSING_CAPABILITY_DIGITS);
    let code = codes::MISSING_REQUIRED_CLIENT_CAPABILITY;
    // Most answers are results: look for the code's digits before parsing anything.
    let maybe = CODE.is_in(body);
    match maybe
        && serde_json::from_slice::<Lone>(body)
            .is_ok_and(|l| l.error.is_some_and(|e| e.code == code))
    {
        true => StatusCode::BAD_REQUEST,
        false => StatusCode::OK,
    }
}

/// One JSON body from what a POST's answer held: one message as is, several as an array.
pub(super) fn join(mut held: Vec<Vec<u8>>) -> Vec<u8> {
    if held.len() <= 1 {
        return held.pop().unwrap_or_default();
    }
    let mut body = b"[".to_vec();
    for (i, json) in held.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(json);
    }
    body.push(b']');
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_missing_capability_error_is_400_and_anything_else_200() {
        let digits = codes::MISSING_REQUIRED_CLIENT_CAPABILITY.to_string();
        assert_eq!(digits, MISSING_CAPABILITY_DIGITS, "the digits searched for are the code's");
        let missing =
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"m","data":{}}}"#;
        assert_eq!(reply_status(missing), StatusCode::BAD_REQUEST);
        let other = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"-32021"}}"#;
        assert_eq!(reply_status(other), StatusCode::OK);
        let result = br#"{"jsonrpc":"2.0","id":1,"result":{"text":"-32021"}}"#;
        assert_eq!(reply_status(result), StatusCode::OK);
    }
}
