use super::*;
use crate::api::CallError;
use crate::jsonrpc::RawJson;
use crate::runtime::test_reply::Recorder;
use crate::schema::CallToolParams;

type Dispatch = SessionDispatch<&'static str, &'static str, Recorder>;

fn dispatch() -> (Dispatch, Recorder) {
    let reason = Arc::new(OnceLock::new());
    let recorder = Recorder::new(reason.clone());
    (SessionDispatch::new(reason), recorder)
}

fn id(n: i64) -> RequestId {
    RequestId::Number(n)
}

fn call(n: i64) -> Event<&'static str> {
    let params: CallToolParams =
        serde_json::from_value(serde_json::json!({"name": "echo"})).expect("valid params");
    Event::Call {
        id: id(n),
        handler: "echo",
        call: Call::Tool(params),
        progress_token: None,
        context: CallContext::default(),
    }
}

/// Routes `event` and returns the cancellation flag of the one `Run` it produced.
fn run(d: &mut Dispatch, event: Event<&'static str>) -> CancelFlag {
    d.route(event);
    match d.poll_step() {
        Some(SessionStep::Run { cancelled, handler: "echo", .. }) => cancelled,
        other => panic!("expected a run, got {other:?}"),
    }
}

#[test]
fn a_call_runs_its_handler_and_a_cancellation_sets_its_flag_and_stops_its_task() {
    let (mut d, _) = dispatch();
    let flag = run(&mut d, call(1));
    assert_eq!(d.started(id(1), "task 1"), None);
    assert_eq!(d.handlers_running(), 1);
    d.route(Event::Cancelled { id: id(1) });
    assert!(flag.is_cancelled());
    assert!(matches!(d.poll_step(), Some(SessionStep::Stop("task 1"))));
    assert!(d.poll_step().is_none());
    assert_eq!(d.handlers_running(), 0);
}

#[test]
fn a_handler_answered_inline_is_never_stopped() {
    let (mut d, _) = dispatch();
    let flag = run(&mut d, call(1));
    d.finished(&id(1));
    d.route(Event::Cancelled { id: id(1) });
    assert!(d.poll_step().is_none());
    assert!(!flag.is_cancelled());
}

#[test]
fn a_call_cancelled_before_its_task_is_filed_gets_the_task_back_to_stop() {
    let (mut d, _) = dispatch();
    let flag = run(&mut d, call(1));
    d.route(Event::Cancelled { id: id(1) });
    assert!(flag.is_cancelled());
    assert!(d.poll_step().is_none(), "no task to stop yet");
    assert_eq!(d.started(id(1), "late task"), Some("late task"));
}

#[test]
fn closing_tells_every_handler_fails_every_request_to_the_client_and_ends_last() {
    let (mut d, r) = dispatch();
    let first = run(&mut d, call(1));
    let second = run(&mut d, call(2));
    assert_eq!(d.started(id(2), "task 2"), None);
    assert_eq!(d.start(Some(CallKey(0)), r.clone(), None, || Ok(id(7))), Some(id(7)));
    d.route(Event::Closed(CloseReason::TransportEnded));
    let mut kinds = Vec::new();
    while let Some(step) = d.poll_step() {
        kinds.push(format!("{step:?}"));
        if let SessionStep::Deliver(delivery) = step {
            delivery.deliver();
        }
    }
    assert_eq!(kinds, ["Stop", "Deliver", "Closed(TransportEnded)"]);
    assert!(first.is_cancelled() && second.is_cancelled());
    let closed = CallError::Request(RequestError::Closed(CloseReason::TransportEnded));
    assert_eq!(r.outcomes.borrow()[0], (Err(closed), Some(CloseReason::TransportEnded)));
}

#[test]
fn an_answer_from_the_client_reaches_the_handler_that_asked_once() {
    let (mut d, r) = dispatch();
    assert_eq!(d.start(Some(CallKey(0)), r.clone(), None, || Ok(id(7))), Some(id(7)));
    d.route(Event::Response { id: id(7), result: Ok(RawJson::from_serialize(&1)) });
    d.route(Event::Response { id: id(7), result: Ok(RawJson::from_serialize(&2)) });
    match d.poll_step() {
        Some(SessionStep::Deliver(delivery)) => delivery.deliver(),
        other => panic!("expected a delivery, got {other:?}"),
    }
    assert!(d.poll_step().is_none());
    let outcomes = r.outcomes.borrow();
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0].0.as_ref().map(|raw| raw.get().to_owned()), Ok("1".to_owned()));
}

#[test]
fn an_abandoned_request_hears_nothing() {
    let (mut d, r) = dispatch();
    assert_eq!(d.start(Some(CallKey(3)), r.clone(), None, || Ok(id(7))), Some(id(7)));
    assert_eq!(d.abandon(CallKey(3)), Some(id(7)));
    d.route(Event::Response { id: id(7), result: Ok(RawJson::from_serialize(&1)) });
    assert!(d.poll_step().is_none());
    assert_eq!(d.calls_waiting(), 0);
}
