use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use super::*;

/// A reply slot that records every outcome it is given (the table must give at most one).
#[derive(Clone, Default)]
struct Recorder(Rc<RefCell<Vec<Outcome>>>);

impl ReplySlot for Recorder {
    fn deliver(self, outcome: Outcome) {
        self.0.borrow_mut().push(outcome);
    }
}

impl Recorder {
    fn outcomes(&self) -> Vec<Outcome> {
        self.0.borrow().clone()
    }
}

fn raw(n: u32) -> RawJson {
    RawJson::from_serialize(&n)
}

fn id(n: i64) -> RequestId {
    RequestId::Number(n)
}

fn texts(outcomes: &[Outcome]) -> Vec<Result<String, CallError>> {
    outcomes.iter().map(|o| o.clone().map(|r| r.get().to_owned())).collect()
}

#[test]
fn an_outcome_reaches_its_caller_exactly_once() {
    let mut calls = Calls::new();
    let reply = Recorder::default();
    calls.insert(id(1), Some(CallKey(7)), reply.clone(), None);
    assert!(calls.contains(&id(1)));
    assert!(calls.complete(&id(1), Ok(raw(5))));
    assert!(!calls.complete(&id(1), Ok(raw(6))), "a second response finds nobody");
    assert_eq!(calls.close(&CloseReason::Local).len(), 0, "nor does the close");
    assert_eq!(texts(&reply.outcomes()), [Ok("5".to_owned())]);
    assert_eq!(calls.abandon(CallKey(7)), None, "completed calls are forgotten");
    assert!(calls.is_empty());
}

#[test]
fn a_refused_request_is_answered_at_once_with_the_usage_error() {
    let mut calls = Calls::new();
    let reply = Recorder::default();
    let started = calls.start(None, reply.clone(), None, || Err(UsageError::NotReady));
    assert_eq!(started, None);
    assert_eq!(reply.outcomes(), [Err(CallError::Usage(UsageError::NotReady))]);
    assert!(calls.is_empty());

    let reply = Recorder::default();
    assert_eq!(calls.start(Some(CallKey(1)), reply.clone(), None, || Ok(id(4))), Some(id(4)));
    assert_eq!(calls.len(), 1);
    assert!(reply.outcomes().is_empty(), "a sent request waits for its response");
}

#[test]
fn an_abandoned_call_names_its_id_once_and_ignores_its_late_outcome() {
    let mut calls = Calls::new();
    let reply = Recorder::default();
    calls.insert(id(9), Some(CallKey(3)), reply.clone(), None);
    assert_eq!(calls.abandon(CallKey(3)), Some(id(9)), "the loop cancels this id");
    assert_eq!(calls.abandon(CallKey(3)), None);
    // The machine answers the cancelled request; nobody waits any more.
    assert!(!calls.complete(&id(9), Err(RequestError::Cancelled)));
    assert!(reply.outcomes().is_empty(), "the caller that left gets nothing");
}

#[test]
fn a_call_cancelled_on_the_machine_gets_the_cancelled_outcome() {
    // The blocking runtime cancels by id and keeps waiting: the machine's `Response`
    // (cancelled) is the call's one outcome.
    let mut calls = Calls::new();
    let reply = Recorder::default();
    calls.insert(id(2), None, reply.clone(), None);
    assert!(calls.complete(&id(2), Err(RequestError::Cancelled)));
    assert_eq!(reply.outcomes(), [Err(CallError::Request(RequestError::Cancelled))]);
}

#[test]
fn progress_goes_to_the_callback_of_its_own_call() {
    let mut calls = Calls::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (a, b) = (seen.clone(), seen.clone());
    let fa: ProgressFn = Box::new(move |p| a.lock().unwrap().push(("a", p.progress)));
    let fb: ProgressFn = Box::new(move |p| b.lock().unwrap().push(("b", p.progress)));
    calls.insert(id(1), None, Recorder::default(), Some(fa));
    calls.insert(id(2), None, Recorder::default(), Some(fb));
    calls.insert(id(3), None, Recorder::default(), None);
    assert!(calls.progress(&id(2), ProgressParams::new(id(2), 1.0)));
    assert!(calls.progress(&id(1), ProgressParams::new(id(1), 2.0)));
    assert!(calls.progress(&id(3), ProgressParams::new(id(3), 3.0)), "no callback: ignored");
    assert!(!calls.progress(&id(4), ProgressParams::new(id(4), 4.0)), "not ours");
    assert_eq!(*seen.lock().unwrap(), [("b", 1.0), ("a", 2.0)]);
}

#[test]
fn a_panicking_progress_callback_is_dropped_and_the_call_goes_on() {
    let mut calls = Calls::new();
    let reply = Recorder::default();
    let f: ProgressFn = Box::new(|_| panic!("callback bug"));
    calls.insert(id(1), None, reply.clone(), Some(f));
    let report = || ProgressParams::new(id(1), 1.0);
    assert!(calls.progress(&id(1), report()));
    assert!(calls.progress(&id(1), report()), "no callback left to panic");
    calls.complete(&id(1), Ok(raw(3)));
    assert_eq!(texts(&reply.outcomes()), [Ok("3".to_owned())], "the call still completes");
}

#[test]
fn closing_settles_every_waiting_call_with_the_reason() {
    let mut calls = Calls::new();
    let replies: Vec<_> = (0..3).map(|_| Recorder::default()).collect();
    for (n, reply) in replies.iter().enumerate() {
        calls.insert(id(n as i64), Some(CallKey(n as u64)), reply.clone(), None);
    }
    let reason = CloseReason::TransportEnded;
    let deliveries = calls.close(&reason);
    assert!(calls.is_empty());
    assert_eq!(calls.abandon(CallKey(0)), None);
    assert!(replies.iter().all(|r| r.outcomes().is_empty()), "nothing before `deliver`");
    for delivery in deliveries {
        delivery.deliver();
    }
    let closed = Err(CallError::Request(RequestError::Closed(reason)));
    for reply in &replies {
        assert_eq!(reply.outcomes(), std::slice::from_ref(&closed));
    }
}

#[test]
fn a_settled_call_is_delivered_when_the_runtime_chooses() {
    let mut calls = Calls::new();
    let reply = Recorder::default();
    calls.insert(id(5), None, reply.clone(), None);
    let delivery = calls.settle(&id(5), Ok(raw(1))).expect("a call waits for id 5");
    assert!(!calls.contains(&id(5)));
    assert_eq!(delivery.outcome().as_ref().map(RawJson::get), Ok("1"));
    assert!(reply.outcomes().is_empty());
    delivery.deliver();
    assert_eq!(reply.outcomes().len(), 1);
}

#[test]
fn filing_an_id_twice_still_answers_the_first_call() {
    let mut calls = Calls::new();
    let (first, second) = (Recorder::default(), Recorder::default());
    calls.insert(id(1), Some(CallKey(1)), first.clone(), None);
    calls.insert(id(1), Some(CallKey(2)), second.clone(), None);
    let closed = Err(CallError::Request(RequestError::Closed(CloseReason::Local)));
    assert_eq!(first.outcomes(), [closed]);
    assert_eq!(calls.abandon(CallKey(1)), None, "the first key went with its call");
    assert_eq!(calls.abandon(CallKey(2)), Some(id(1)));
    assert!(second.outcomes().is_empty());
}

#[test]
fn keys_never_repeat() {
    let keys = CallKeys::new();
    let a = keys.next();
    let b = keys.next();
    assert_ne!(a, b);
    assert_eq!(a.to_string(), "call 0");
}
