use super::*;
use crate::api::CallError;
use crate::io::TransportFailure;
use crate::jsonrpc::RawJson;
use crate::runtime::test_reply::Recorder;
use crate::schema::{EmptyParams, Implementation, ProtocolVersion, ServerCapabilities};

fn dispatch() -> (ClientDispatch<Recorder, &'static str>, Recorder) {
    let reason = Arc::new(OnceLock::new());
    let recorder = Recorder::new(reason.clone());
    (ClientDispatch::new(reason), recorder)
}

fn id(n: i64) -> RequestId {
    RequestId::Number(n)
}

fn negotiated() -> Box<Negotiated> {
    Box::new(Negotiated {
        protocol_version: ProtocolVersion::V2025_11_25,
        server_info: Implementation::new("s", "1"),
        capabilities: ServerCapabilities::default(),
        instructions: None,
    })
}

fn file(d: &mut ClientDispatch<Recorder, &'static str>, r: &Recorder, n: i64) {
    assert_eq!(d.start(Some(CallKey(n as u64)), r.clone(), None, || Ok(id(n))), Some(id(n)));
}

fn steps(d: &mut ClientDispatch<Recorder, &'static str>) -> Vec<String> {
    std::iter::from_fn(|| d.poll_step())
        .map(|step| match step {
            ClientStep::Deliver(delivery) => {
                delivery.deliver();
                "Deliver".to_owned()
            }
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn the_first_ready_connects_and_a_later_one_does_not() {
    let (mut d, _) = dispatch();
    d.route(Event::Ready(negotiated()));
    d.route(Event::SessionExpired);
    d.route(Event::Ready(negotiated()));
    assert_eq!(steps(&mut d), ["Connected(true)"]);
}

#[test]
fn a_close_reason_is_recorded_before_the_call_it_failed_hears_of_it() {
    let (mut d, r) = dispatch();
    file(&mut d, &r, 1);
    let reason = CloseReason::TransportEnded;
    d.route(Event::Response { id: id(1), result: Err(RequestError::Closed(reason.clone())) });
    assert_eq!(steps(&mut d), ["Deliver"]);
    let outcomes = r.outcomes.borrow();
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0].1, Some(reason));
}

#[test]
fn an_answer_for_nobody_is_no_step() {
    let (mut d, r) = dispatch();
    file(&mut d, &r, 1);
    d.route(Event::Response { id: id(9), result: Ok(RawJson::from_serialize(&1)) });
    assert!(d.poll_step().is_none());
    assert_eq!(d.calls_waiting(), 1);
}

#[test]
fn a_server_request_is_served_and_its_cancellation_stops_that_task_only() {
    let (mut d, _) = dispatch();
    d.route(Event::Request {
        id: id(5),
        request: ServerRequest::ListRoots(EmptyParams::default()),
    });
    d.route(Event::Request {
        id: id(6),
        request: ServerRequest::ListRoots(EmptyParams::default()),
    });
    let served = steps(&mut d);
    assert_eq!(served.len(), 2);
    assert!(served[0].starts_with("Serve"), "{served:?}");
    d.serving(id(5), "task 5");
    d.serving(id(6), "task 6");
    d.route(Event::Cancelled { id: id(5) });
    d.route(Event::Cancelled { id: id(7) });
    match d.poll_step() {
        Some(ClientStep::Stop(task)) => assert_eq!(task, "task 5"),
        other => panic!("expected a stop, got {other:?}"),
    }
    assert!(d.poll_step().is_none());
    assert_eq!(d.answered(&id(6)), Some("task 6"));
    assert_eq!(d.handlers_running(), 0);
}

#[test]
fn closing_fails_the_connection_stops_handlers_fails_calls_and_ends_last() {
    let (mut d, r) = dispatch();
    file(&mut d, &r, 1);
    d.serving(id(5), "task");
    let reason = CloseReason::TransportFailed(TransportFailure::Reset("gone".into()));
    d.route(Event::Closed(reason.clone()));
    let kinds = steps(&mut d);
    assert_eq!(kinds[0], "Connected(false)");
    assert_eq!(kinds[1], "Stop");
    assert_eq!(kinds[2], "Deliver");
    assert!(kinds[3].starts_with("Closed"), "{kinds:?}");
    assert_eq!(kinds.len(), 4);
    let outcomes = r.outcomes.borrow();
    let failed = CallError::Request(RequestError::Closed(reason.clone()));
    assert_eq!(outcomes[0], (Err(failed), Some(reason)));
}

#[test]
fn a_connected_session_that_closes_reports_no_second_handshake_outcome() {
    let (mut d, _) = dispatch();
    d.route(Event::Ready(negotiated()));
    d.route(Event::Closed(CloseReason::Local));
    assert_eq!(steps(&mut d), ["Connected(true)", "Closed(Local)"]);
}

#[test]
fn notifications_and_violations_pass_through_in_order() {
    let (mut d, _) = dispatch();
    d.route(Event::Notification(ServerNotification::ToolListChanged));
    d.route(Event::Violation(ProtocolViolation::BatchNotAllowed));
    assert_eq!(steps(&mut d), ["Notify(ToolListChanged)", "Violation(BatchNotAllowed)"]);
}
